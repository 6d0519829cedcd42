// build_workload with a separate history trace (--history) and with a single-request trace
// (split by tokens): which tokens count as history, which are sampled for evaluation.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "workload/workload.hpp"

namespace zepp {
namespace {

// Layer 0, top-1, E = 4; one request per entry of `requests`, each a list of expert ids.
Trace one_layer(const std::string& path, const std::vector<std::vector<int>>& requests) {
  Trace t;
  t.path = path;
  t.format = "selection-json";
  t.num_experts = 4;
  LayerTrace& lt = t.layers[0];
  lt.top_k = 1;
  for (size_t r = 0; r < requests.size(); ++r) {
    t.requests.push_back("r" + std::to_string(r));
    for (int id : requests[r]) {
      lt.expert_ids.push_back(id);
      lt.request.push_back(int32_t(r));
      lt.step.push_back(0);
    }
  }
  return t;
}

const ModelShape kModel{"small", 4, 1, 1024, 64, 1, 1, 0};

Topology two_gpus() {
  Topology t;
  t.nodes = 1;
  t.gpus_per_node = 2;
  return t;
}

std::set<int> sampled(const Workload& w) { return {w.batch.expert_ids.begin(), w.batch.expert_ids.end()}; }

TEST(History, SeparateTraceIsAllHistoryAndTheOtherAllEvaluation) {
  const Trace history = one_layer("hist", {{0, 0, 1}, {0}});
  const Trace trace = one_layer("eval", {{2}, {3, 3}});
  WorkloadOptions opt;
  opt.size_mb = 0.25;  // 128 tokens of 2 KiB per GPU
  const Workload w = build_workload(&trace, kModel, two_gpus(), opt, &history);
  EXPECT_EQ(w.history_load, (std::vector<double>{3, 1, 0, 0}));
  EXPECT_EQ(sampled(w), (std::set<int>{2, 3}));  // both evaluation requests, nothing of the history
  EXPECT_NE(w.description.find("history = all 2 requests of hist (4 tokens), evaluation = all 2 requests of eval (3 tokens)"),
            std::string::npos)
      << w.description;
}

TEST(History, NeedsTheLayerAndAnEvaluationTrace) {
  Trace history = one_layer("hist", {{0}});
  history.layers[5] = history.layers[0];
  history.layers.erase(0);
  const Trace trace = one_layer("eval", {{2}, {3}});
  EXPECT_THROW(build_workload(&trace, kModel, two_gpus(), WorkloadOptions{}, &history), ArgumentError);
  EXPECT_THROW(build_workload(nullptr, kModel, two_gpus(), WorkloadOptions{}, &trace), ArgumentError);
}

TEST(History, SingleRequestIsSplitByTokensAndSaysSo) {
  const Trace trace = one_layer("single", {{0, 1, 2, 3, 3}});
  WorkloadOptions opt;
  opt.size_mb = 0.25;
  opt.history_fraction = 0.4;  // floor(0.4 * 5) = 2 history tokens: experts 0 and 1
  const Workload w = build_workload(&trace, kModel, two_gpus(), opt);
  EXPECT_EQ(w.history_load, (std::vector<double>{1, 1, 0, 0}));
  EXPECT_EQ(sampled(w), (std::set<int>{2, 3}));
  EXPECT_NE(w.description.find("one request, so split by tokens: history = first 2 of 5 tokens, evaluation = the other 3"),
            std::string::npos)
      << w.description;
  // One token cannot be split.
  const Trace one = one_layer("one", {{1}});
  EXPECT_THROW(build_workload(&one, kModel, two_gpus(), opt), ArgumentError);
}

}  // namespace
}  // namespace zepp
