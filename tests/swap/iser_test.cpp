// ISER-MoE's per-slot rule (iser-moe.txt §4.3): owner-direct multicast when the owner is in a
// pure group or this is its widest broadcast into a group containing it, SAMI otherwise.
#include <gtest/gtest.h>

#include "../common/synthetic_layer.hpp"
#include "core/error.hpp"
#include "swap/iser.hpp"
#include "swap/strategies.hpp"

using namespace zepp;

namespace {

// 8 ranks, H = 1 home slot and S = 2 helper slots each (3 slots per rank).
ReplicationPlan plan_of(std::vector<ReplicaBroadcast> bs) {
  ReplicationPlan p;
  p.placement.num_gpus = 8;
  p.placement.slots_per_gpu = 3;
  p.broadcasts = std::move(bs);
  return p;
}

}  // namespace

TEST(IserRule, OwnerDirectOnlyForPureGroupsOrTheOwnersWidestBroadcast) {
  // b0: e0 of rank 0 into {0..3}; b1: e1 of rank 1 into all 8; b2: e2 of rank 2 into {4..7}
  // (owner outside); b3: e3 of rank 0 into all 8. {0..3} meets b1 and b3: not pure; rank 0's
  // widest broadcast is b3, so b0 goes by SAMI; b1 and b3 are their owners' widest; b2's owner
  // is outside its group: SAMI.
  const auto m = iser_multicasts(plan_of({{0, 0, 0, 4, 0}, {1, 1, 0, 8, 1}, {2, 2, 4, 4, 0}, {3, 0, 0, 8, 0}}), 1);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(m[0].sami);
  EXPECT_FALSE(m[1].sami);
  EXPECT_TRUE(m[2].sami);
  EXPECT_FALSE(m[3].sami);
  EXPECT_EQ(m[0].members, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(m[0].slots, (std::vector<int32_t>{1, 4, 7, 10}));  // rank r: r * 3 + H + helper 0
  EXPECT_EQ(m[1].slots.back(), 7 * 3 + 1 + 1);
  EXPECT_EQ(m[2].owner, 2);
  EXPECT_EQ(m[2].members.front(), 4);
}

TEST(IserRule, PureGroupKeepsEveryOwnerInsideOnItsOwnPort) {
  // Two experts of rank 4 into {4..7}, nothing else meets it: pure, both owner-direct (the
  // second is not rank 4's widest on the tie, which alone would make it SAMI).
  const auto m = iser_multicasts(plan_of({{8, 4, 4, 4, 0}, {9, 4, 4, 4, 1}}), 1);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_FALSE(m[0].sami);
  EXPECT_FALSE(m[1].sami);
  // The same with a broadcast of rank 0 into all ranks: {4..7} is no longer pure, the tie goes
  // to rank 4's first broadcast.
  const auto n = iser_multicasts(plan_of({{8, 4, 4, 4, 0}, {9, 4, 4, 4, 1}, {0, 0, 0, 8, 2}}), 1);
  EXPECT_FALSE(n[0].sami);
  EXPECT_TRUE(n[1].sami);
  EXPECT_FALSE(n[2].sami);
}

TEST(IserMoe, MulticastsItsReplicasBesideTheSharedExpertAndRefusesPerPairTopologies) {
  const test::SyntheticLayer l = test::synthetic_layer("kimi-k2", "dgx-h100", 1, 1);
  const ModelShape& m = l.model;
  const Topology& t = l.topo;
  const Workload& w = l.workload;
  StrategyOptions o;
  const StrategyDecision d = decide_iser_moe(StrategyInput{w, m, t, o});
  const CommPlan plan = d.make_plan(d.placement, d.routing);
  int shared = 0, multicasts = 0;
  for (const Task& task : plan.tasks) {
    shared += task.kind == TaskKind::SharedExpert;
    multicasts += !task.multicast_at.empty();
    if (task.kind == TaskKind::Transfer && task.phase == Phase::Weights)
      EXPECT_EQ(t.node_of(task.gpu), t.node_of(task.dst_gpu));  // one NVLink domain
  }
  EXPECT_EQ(shared, 8);  // Kimi-K2 has a shared expert: one window per GPU
  EXPECT_GT(multicasts, 0);
  EXPECT_GT(plan.shared_expert_s, 0);
  EXPECT_THROW(decide_iser_moe(StrategyInput{w, m, topology_preset("h100", 1), o}), ArgumentError);
}
