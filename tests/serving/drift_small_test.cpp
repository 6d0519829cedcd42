// Multi-iteration workloads on traces too small for a split by requests: two requests, one
// request (issue: `--iterations` on any trace with at least two tokens).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "serving/drift.hpp"

#include "../common/drift_fixtures.hpp"

namespace zepp {
namespace {

// Layer 0, top-1, E = 4, requests "0", "1", ... (no dataset folders).
Trace tiny(const std::vector<std::vector<int>>& requests) {
  Trace t;
  t.path = "tiny";
  t.format = "selection-json";
  t.num_experts = 4;
  LayerTrace& L = t.layers[0];
  L.top_k = 1;
  for (size_t r = 0; r < requests.size(); ++r) {
    t.requests.push_back(std::to_string(r));
    for (int id : requests[r]) {
      L.expert_ids.push_back(id);
      L.request.push_back(int32_t(r));
      L.step.push_back(0);
    }
  }
  return t;
}

TEST(DriftSmall, TwoRequestsSplitAsOneDatasetWhenGroupsAreTooSmall) {
  // Four groups asked for, two requests: group2 would hold one token, so mode none splits the
  // whole trace: request 0 is history, request 1 evaluation.
  const Trace t = tiny({{0, 1}, {2}});
  DriftWorkload w(t, test::mib_token_model(4, 1), test::two_gpus(), DriftOptions{});
  EXPECT_EQ(w.history_load(), (std::vector<double>{1, 1, 0, 0}));
  EXPECT_EQ(w.batch(0).expert_ids, (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(w.batch(1).expert_ids, (std::vector<int32_t>{2, 2}));
}

TEST(DriftSmall, OneRequestIsSplitByTokens) {
  const Trace t = tiny({{0, 3}});
  DriftWorkload w(t, test::mib_token_model(4, 1), test::two_gpus(), DriftOptions{});
  EXPECT_EQ(w.history_load(), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(w.batch(0).expert_ids, (std::vector<int32_t>{3, 3}));
  EXPECT_NE(w.description().find("split by tokens in group1"), std::string::npos) << w.description();
  // A single token cannot be split.
  EXPECT_THROW(DriftWorkload(tiny({{1}}), test::mib_token_model(4, 1), test::two_gpus(), DriftOptions{}), ArgumentError);
}

// Drifting over more groups than requests was clamped to a group per request; it is refused,
// naming the counts. Mode none serves the groups as one stream, so its default stays.
TEST(DriftSmall, MoreGroupsThanRequestsAreRefusedWhenDriftingOverThem) {
  DriftOptions o;
  o.mode = DriftMode::Only;
  o.dataset = "group1";
  o.groups = 3;
  try {
    DriftWorkload(tiny({{0, 1}, {2, 3}}), test::mib_token_model(4, 1), test::two_gpus(), o);
    FAIL() << "3 groups of 2 requests accepted";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("asks for 3 groups of requests, but the trace has 2 requests"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zepp
