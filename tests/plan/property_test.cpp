// Plans on random small layers conserve tokens, pairs and gate weights, respect the split
// bound and merge's one-crossing rule, have acyclic dependencies and are deterministic.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "../common/plan_check.hpp"
#include "random_case.hpp"

namespace zepp {
namespace {

bool same_task(const CommPlan& p, const Task& a, const CommPlan& q, const Task& b) {
  return a.kind == b.kind && a.phase == b.phase && a.gpu == b.gpu && a.dst_gpu == b.dst_gpu && a.link == b.link &&
         a.hop == b.hop && a.round == b.round && a.slot == b.slot && a.expert == b.expert && a.node == b.node &&
         a.bytes == b.bytes && test::tokens_of(p, a) == test::tokens_of(q, b) &&
         test::pair_begin_of(p, a) == test::pair_begin_of(q, b) && test::pairs_of(p, a) == test::pairs_of(q, b) &&
         test::deps_of(p, a) == test::deps_of(q, b) && a.priority == b.priority;
}

RC_GTEST_PROP(CommPlan, ConservesPairsAndRespectsBounds, ()) {
  const test::RandomCase c = test::random_case();
  const CommPlan plan = build_comm_plan(c.batch, c.placement, c.routing, c.topo, c.model, c.options, c.moves);
  const std::string problem = test::check_plan(plan, c.batch, c.placement, c.routing);
  if (!problem.empty()) RC_FAIL(problem);
  // Weight moves: one transfer each, and the slot's compute waits for it.
  for (const WeightMove& m : c.moves) {
    int32_t w = -1;
    for (size_t i = 0; i < plan.tasks.size(); ++i)
      if (plan.tasks[i].phase == Phase::Weights && plan.tasks[i].slot == m.slot) w = int32_t(i);
    RC_ASSERT(w >= 0);
    RC_ASSERT(plan.tasks[w].gpu == m.src_gpu);
    RC_ASSERT(plan.tasks[w].bytes == c.model.expert_weight_bytes());
    for (const Task& t : plan.tasks)
      if (t.kind == TaskKind::Compute && t.slot == m.slot)
        RC_ASSERT(std::ranges::find(plan.deps(t), w) != plan.deps(t).end());
  }
  const CommPlan again = build_comm_plan(c.batch, c.placement, c.routing, c.topo, c.model, c.options, c.moves);
  RC_ASSERT(again.tasks.size() == plan.tasks.size());
  for (size_t i = 0; i < plan.tasks.size(); ++i) RC_ASSERT(same_task(plan, plan.tasks[i], again, again.tasks[i]));
}

RC_GTEST_PROP(CommPlan, MergeNeverMovesMoreInterNodeRows, ()) {
  test::RandomCase c = test::random_case();
  auto nic_rows = [&](bool merge) {
    c.options.merge = merge;
    int64_t rows = 0;
    for (const Task& t : build_comm_plan(c.batch, c.placement, c.routing, c.topo, c.model, c.options).tasks)
      if (t.kind == TaskKind::Transfer && t.link == Link::NIC) rows += t.rows();
    return rows;
  };
  RC_ASSERT(nic_rows(true) <= nic_rows(false));
}

}  // namespace
}  // namespace zepp
