// Compute starts when rows are there (PlanOptions::local_first, plan/builder.cpp
// local_first_slots): hand-counted cases on 2 nodes x 1 GPU.
//
// Units (plan/fixture.hpp): rows of 16 B, NIC 10 B/s, no latency; an expert GEMM takes
// T(n) = max(0.048 n, 0.48) s (48 FLOP per row at 1000 FLOP/s, 48 B of weights at 100 B/s), so
// the ridge is 10 rows. Expert 0 sits on GPU 0 (node 0), expert 1 on GPU 1 (node 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "../common/plan_check.hpp"
#include "fixture.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {
namespace {

struct LocalFirst : ::testing::Test {
  Topology topo = test::small_topology(2, 1);
  ModelShape model = test::small_model(2, 1);
  Placement placement = test::identity_placement(2);

  // `own` tokens of GPU 0 and `remote` tokens of GPU 1, all choosing expert 0.
  std::vector<const Task*> groups(int own, int remote, bool local_first, CommPlan& plan) {
    const RoutingBatch batch = test::make_batch(
        2, 1, {std::vector<std::vector<int>>(own, {0}), std::vector<std::vector<int>>(remote, {0})});
    const Routing routing = test::first_replica(batch, placement);
    PlanOptions o{true, true, true, 0.0};
    o.local_first = local_first;
    plan = build_comm_plan(batch, placement, routing, topo, model, o);
    EXPECT_EQ(test::check_plan(plan, batch, placement, routing), "");
    std::vector<const Task*> out;
    for (const Task& t : plan.tasks)
      if (t.kind == TaskKind::Compute) out.push_back(&t);
    return out;
  }
};

TEST_F(LocalFirst, OwnRowsBelowTheRidgeComputeFirstWhileRemoteRowsTravel) {
  // 5 own rows and 20 remote: delivery order folds the 5 (below the ridge) into the remote group,
  // which waits for the dispatch put. Idle window: 20 rows x 16 B / 10 B/s = 32 s; gain of
  // splitting T(25) - T(20) = 1.2 - 0.96 = 0.24 s > 0, cost T(5) = 0.48 s <= 32 s: split.
  CommPlan plan;
  const auto merged = groups(5, 20, false, plan);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(plan.pairs(*merged[0]).size(), 25u);
  const auto split = groups(5, 20, true, plan);
  ASSERT_EQ(split.size(), 2u);
  const Task* own = plan.pairs(*split[0]).size() == 5 ? split[0] : split[1];
  const Task* remote = own == split[0] ? split[1] : split[0];
  EXPECT_EQ(test::pairs_of(plan, *own), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(own->priority, 2);  // the own node's delivery rank N: remote rows go first once there
  EXPECT_TRUE(plan.deps(*own).empty());  // GPU 0's own tokens: nothing to wait for
  EXPECT_EQ(plan.pairs(*remote).size(), 20u);
  EXPECT_EQ(remote->priority, 1);
  EXPECT_EQ(plan.deps(*remote).size(), 1u);  // the dispatch put from node 1
}

TEST_F(LocalFirst, NoSplitWhenItOnlyAddsAWeightRead) {
  // 5 own rows and 5 remote: both parts below the ridge, T(10) - T(5) = 0.48 - 0.48 = 0: a split
  // would read the weights twice for no work taken off the time after arrival. One group.
  CommPlan plan;
  const auto g = groups(5, 5, true, plan);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(plan.pairs(*g[0]).size(), 10u);
}

TEST_F(LocalFirst, AGroupStartsWhileTheWindowIsOpenEvenIfItOutlastsIt) {
  // 40 own rows and 1 remote row: delivery order puts the remote row first and, below the ridge,
  // the 40 own rows join its group, which would wait 1 x 16 / 10 = 1.6 s for that one row. The
  // GPU is idle at 0 < 1.6 s and gain T(41) - T(1) = 1.968 - 0.48 > 0: the own rows form their
  // own group (run while the remote row travels), although T(40) = 1.92 s outlasts the window.
  CommPlan plan;
  const auto merged = groups(40, 1, false, plan);
  ASSERT_EQ(merged.size(), 1u);
  const auto g = groups(40, 1, true, plan);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(plan.pairs(*g[0]).size() + plan.pairs(*g[1]).size(), 41u);
  EXPECT_EQ((plan.pairs(*g[0]).size() == 40 ? g[0] : g[1])->priority, 2);
}

TEST_F(LocalFirst, AnOwnGroupDeliveryOrderAlreadyMakesIsTheSameWithOrWithout) {
  // 20 own rows and 20 remote: both at the ridge, so delivery order already makes the own rows a
  // group of their own at rank N = 2, after the remote group; local-first changes nothing (it
  // counts that group as work the GPU holds in its window).
  CommPlan plan;
  for (bool lf : {false, true}) {
    const auto g = groups(20, 20, lf, plan);
    ASSERT_EQ(g.size(), 2u) << lf;
    const Task* own = plan.pairs(*g[0]).front() == 0 ? g[0] : g[1];
    const Task* remote = own == g[0] ? g[1] : g[0];
    EXPECT_EQ(plan.pairs(*own).size(), 20u);
    EXPECT_EQ(own->priority, 2) << lf;
    EXPECT_EQ(remote->priority, 1) << lf;
  }
}

TEST(LocalFirstChunks, TheWindowEndsWhenTheFirstDispatchChunkArrives) {
  // 3 slots per GPU (expert e on slot e; GPU 0 holds experts 0-2, node 0). GPU 0 has 1000 own
  // rows on expert 0 (T = 48 s, work it holds anyway) and 5 own rows on expert 1; GPU 1 sends
  // 20 rows to expert 1 and 20 to expert 2. Slot 1's 5 own rows fold into its remote group
  // (rank 2), slot 2's group has rank 1, so with chunks flow 1 -> 0 has C = min(16, 2 slots) = 2:
  // slot 2 takes chunk floor(2 x 0 / 40) = 0, slot 1 chunk floor(2 x 20 / 40) = 1; the first
  // chunk carries 20 of the 40 rows. Window without chunks: 40 x 16 / 10 = 64 s > 48 s, so slot 1
  // splits (gain T(25) - T(20) = 0.24 s); with chunks: 0.5 x 64 = 32 s <= 48 s, the GPU is busy
  // when the first remote rows arrive, and a split would only add a weight read: one group.
  const Topology topo = test::small_topology(2, 1);
  const ModelShape model = test::small_model(6, 1);
  const Placement placement{2, 6, 3, {0, 1, 2, 3, 4, 5}};
  std::vector<std::vector<int>> gpu0(1000, {0}), gpu1(20, {1});
  gpu0.insert(gpu0.end(), 5, {1});
  gpu1.insert(gpu1.end(), 20, {2});
  const RoutingBatch batch = test::make_batch(6, 1, {gpu0, gpu1});
  const Routing routing = test::first_replica(batch, placement);
  for (int chunks : {1, 16}) {
    PlanOptions o{true, true, true, 0.0};
    o.local_first = true;
    o.dispatch_chunks = chunks;
    const CommPlan plan = build_comm_plan(batch, placement, routing, topo, model, o);
    EXPECT_EQ(test::check_plan(plan, batch, placement, routing), "");
    std::vector<size_t> slot1, puts;
    for (const Task& t : plan.tasks) {
      if (t.kind == TaskKind::Compute && t.slot == 1) slot1.push_back(plan.pairs(t).size());
      if (t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch && t.hop == Hop::Put) puts.push_back(t.rows());
    }
    std::sort(slot1.begin(), slot1.end());
    std::sort(puts.begin(), puts.end());
    if (chunks == 1) {
      EXPECT_EQ(slot1, (std::vector<size_t>{5, 20}));
      EXPECT_EQ(puts, (std::vector<size_t>{40}));
    } else {
      EXPECT_EQ(slot1, (std::vector<size_t>{25}));
      EXPECT_EQ(puts, (std::vector<size_t>{20, 20}));  // the first chunk: slot 2's rows
    }
  }
}

}  // namespace
}  // namespace zepp
