// Lookups over a CommPlan for tests.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "plan/comm_plan.hpp"
#include "fixture.hpp"
#include "../common/plan_check.hpp"

namespace zepp::test {

// The one transfer (src -> dst, phase, hop); fails the test if there is not exactly one.
inline const Task* find_transfer(const CommPlan& plan, int src, int dst, Phase phase, Hop hop) {
  const Task* found = nullptr;
  int count = 0;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.gpu == src && t.dst_gpu == dst && t.phase == phase && t.hop == hop) {
      found = &t;
      ++count;
    }
  EXPECT_EQ(count, 1) << "transfers " << src << "->" << dst << " " << to_string(phase) << " " << to_string(hop);
  return found;
}

inline double bytes_on(const CommPlan& plan, Link link, Phase phase) {
  double b = 0;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.link == link && t.phase == phase) b += t.bytes;
  return b;
}

inline int count_kind(const CommPlan& plan, TaskKind kind) {
  int n = 0;
  for (const Task& t : plan.tasks) n += t.kind == kind;
  return n;
}

// Rows of a combine-like task as (token, pairs) for comparisons.
inline std::vector<std::pair<int64_t, std::vector<int64_t>>> rows_of(const CommPlan& p, const Task& t) {
  std::vector<std::pair<int64_t, std::vector<int64_t>>> rows;
  const auto tokens = p.tokens(t);
  for (size_t r = 0; r < tokens.size(); ++r) {
    const auto pairs = p.row_pairs_of(t, int64_t(r));
    rows.emplace_back(tokens[r], std::vector<int64_t>(pairs.begin(), pairs.end()));
  }
  return rows;
}
using Rows = std::vector<std::pair<int64_t, std::vector<int64_t>>>;

// 2 nodes x 1 GPU; GPU 0 holds experts 0 and 1 (slots 0, 1), GPU 1 experts 2 and 3. GPU 1's
// tokens: t0 -> expert 0 (pair 0), t1 -> expert 1 (pair 1), both computed on GPU 0, so the flow
// node 1 -> node 0 carries two rows, one per slot of GPU 0, and both return to node 1. The hand
// cases of chunked dispatch and combine waves are counted on it (their tests say how).
struct TwoNodesTwoSlots {
  Topology topo = small_topology(2, 1);
  ModelShape model = small_model(4, 1);
  RoutingBatch batch = make_batch(4, 1, {{}, {{0}, {1}}});
  Placement placement{2, 4, 2, {0, 1, 2, 3}};
  Routing routing = first_replica(batch, placement);

  // Split, merge and overlap on; `set` changes the option under test.
  template <class Set>
  CommPlan plan(Set set) const {
    PlanOptions o{true, true, true, 0.0};
    set(o);
    return build_comm_plan(batch, placement, routing, topo, model, o);
  }
  // The compute task of `slot` (-1: none).
  static int32_t compute_of(const CommPlan& p, int slot) {
    for (size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].kind == TaskKind::Compute && p.tasks[i].slot == slot) return int32_t(i);
    return -1;
  }
};

}  // namespace zepp::test
