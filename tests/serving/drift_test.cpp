// Drifting workloads (§6.5 analogues) on small in-memory traces: datasets, history mixes,
// iteration order, wrap-around, sampling from load tables.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "serving/drift.hpp"

#include "../common/drift_fixtures.hpp"

using namespace zepp;

namespace {

// Requests a/0 (history), a/1, b/0 (history), b/1; top-1 expert ids per token.
Trace token_trace() {
  Trace t;
  t.path = "mem";
  t.format = "selection-json";
  t.num_experts = 4;
  t.requests = {"a/0", "a/1", "b/0", "b/1"};
  LayerTrace& L = t.layers[1];
  L.layer = 1;
  L.top_k = 1;
  const std::vector<std::pair<int, int>> tokens = {{0, 0}, {0, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 3}, {3, 2}, {3, 1}};
  for (auto [req, expert] : tokens) {
    L.expert_ids.push_back(expert);
    L.request.push_back(req);
    L.step.push_back(0);
  }
  return t;
}

std::vector<int32_t> ids(DriftWorkload& w, int i) { return w.batch(i).expert_ids; }

}  // namespace

TEST(Drift, RotatingLeavesTargetOutOfHistoryAndCyclesDatasets) {
  const Trace t = token_trace();
  DriftOptions o;
  o.mode = DriftMode::Rotating;
  o.dataset = "b";
  o.period = 1;
  DriftWorkload w(t, test::mib_token_model(4, 1), test::two_gpus(), o);
  EXPECT_EQ(w.datasets(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(w.tokens_per_gpu(), 1);
  EXPECT_EQ(w.history_load(), (std::vector<double>{2, 0, 0, 0}));  // a's history only
  EXPECT_EQ(w.dataset_of(0), "a");
  EXPECT_EQ(ids(w, 0), (std::vector<int32_t>{1, 2}));  // a's evaluation tokens in order
  EXPECT_EQ(w.dataset_of(1), "b");
  EXPECT_EQ(ids(w, 1), (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(w.wrapped(), 0);
  EXPECT_EQ(ids(w, 2), (std::vector<int32_t>{3, 1}));  // a continues, then wraps
  EXPECT_EQ(w.wrapped(), 1);
  EXPECT_THROW(w.batch(5), ArgumentError);  // out of order
}

TEST(Drift, OnlyMixesHistoryEvenlyAndServesOneDataset) {
  const Trace t = token_trace();
  DriftOptions o;
  o.mode = DriftMode::Only;
  o.dataset = "b";
  DriftWorkload w(t, test::mib_token_model(4, 1), test::two_gpus(), o);
  // a's history (2 x expert 0) and b's (1 x expert 3) normalised and averaged, 3 tokens total.
  EXPECT_EQ(w.history_load(), (std::vector<double>{1.5, 0, 0, 1.5}));
  EXPECT_EQ(w.dataset_of(0), "b");
  EXPECT_EQ(w.dataset_of(7), "b");
  EXPECT_EQ(ids(w, 0), (std::vector<int32_t>{2, 1}));
  const RoutingBatch b = w.batch(1);
  EXPECT_EQ(b.token_offset, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(b.gate_weights, (std::vector<float>{1, 1}));  // derived: top-1 gets all
}

TEST(Drift, NoneWalksAllEvaluationTokensInSourceOrder) {
  const Trace t = token_trace();
  DriftWorkload w(t, test::mib_token_model(4, 1), test::two_gpus(), DriftOptions{});
  EXPECT_EQ(w.history_load(), (std::vector<double>{2, 0, 0, 1}));
  EXPECT_EQ(ids(w, 0), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(ids(w, 1), (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(ids(w, 2), (std::vector<int32_t>{1, 1}));
}

TEST(Drift, LoadTablesSampleDistinctExpertsOfTheServedTable) {
  Trace t;
  t.path = "mem";
  t.format = "load-csv";
  t.num_experts = 4;
  t.loads = {{"x/English", {{0, {1, 1, 0, 0}}}}, {"x/Hebrew", {{0, {0, 0, 2, 2}}}}};
  DriftOptions o;
  o.mode = DriftMode::Rotating;
  o.dataset = "x/Hebrew";
  o.period = 2;
  o.size_mb = 3;
  DriftWorkload w(t, test::mib_token_model(4, 2), test::two_gpus(), o);
  EXPECT_EQ(w.history_load(), (std::vector<double>{6, 6, 0, 0}));  // English only, 3 * 2 * 2 pairs
  for (int i = 0; i < 4; ++i) {
    const RoutingBatch b = w.batch(i);
    ASSERT_EQ(b.expert_ids.size(), 12u);
    const int low = i < 2 ? 0 : 2;  // iterations 0, 1 English; 2, 3 Hebrew
    for (size_t p = 0; p < b.expert_ids.size(); p += 2) {
      EXPECT_NE(b.expert_ids[p], b.expert_ids[p + 1]);
      EXPECT_GE(b.expert_ids[p], low);
      EXPECT_LE(b.expert_ids[p], low + 1);
    }
    EXPECT_FLOAT_EQ(b.gate_weights[0], 2.0f / 3);
    EXPECT_FLOAT_EQ(b.gate_weights[1], 1.0f / 3);
  }
}

TEST(Drift, BadOptionsNameTheOption) {
  const Trace t = token_trace();
  DriftOptions o;
  o.mode = DriftMode::Only;
  o.dataset = "c";
  try {
    DriftWorkload w(t, test::mib_token_model(4, 1), test::two_gpus(), o);
    FAIL() << "no error";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "dataset: 'c' is not a dataset of the trace (a, b)");
  }
  o = DriftOptions{};
  o.layer = 7;
  EXPECT_THROW(DriftWorkload(t, test::mib_token_model(4, 1), test::two_gpus(), o), ArgumentError);
  o = DriftOptions{};
  o.history_fraction = 1;
  EXPECT_THROW(DriftWorkload(t, test::mib_token_model(4, 1), test::two_gpus(), o), ArgumentError);
  EXPECT_THROW(parse_drift_mode("sometimes"), ArgumentError);
  EXPECT_THROW(DriftWorkload(t, test::mib_token_model(2, 1), test::two_gpus(), DriftOptions{}), ArgumentError);  // id 3 >= 2 experts
}
