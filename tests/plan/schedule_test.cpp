// Algorithm 1's order for N = 3 nodes of G = 3 GPUs (paper §4.2). One token per GPU selects
// all nine experts (expert g on GPU g), so every node pair exchanges rows in both phases.
#include <gtest/gtest.h>

#include <map>

#include "fixture.hpp"
#include "plan/comm_plan.hpp"
#include "plan_util.hpp"

namespace zepp {
namespace {

struct ThreeNodes : ::testing::Test {
  Topology topo = test::small_topology(3, 3);
  ModelShape model = test::small_model(9, 9);
  RoutingBatch batch;
  Placement placement = test::identity_placement(9);

  ThreeNodes() {
    topo.compute.hbm_bw = 1e12;  // roofline ridge ~0 tokens: every source node's rows form their own group
    std::vector<std::vector<std::vector<int>>> per_gpu(9, {{0, 1, 2, 3, 4, 5, 6, 7, 8}});
    batch = test::make_batch(9, 9, per_gpu);
  }
  CommPlan plan(bool overlap) {
    return build_comm_plan(batch, placement, test::first_replica(batch, placement), topo, model,
                           PlanOptions{true, true, overlap, 0.0});
  }
};

TEST_F(ThreeNodes, DispatchRoundsGoToNodeMinusRCombineToNodePlusR) {
  const CommPlan p = plan(true);
  // GPU 0 (node 0): dispatch round 1 -> node 2, round 2 -> node 1 (line 3).
  const Task* d1 = test::find_transfer(p, 0, 6, Phase::Dispatch, Hop::Put);
  const Task* d2 = test::find_transfer(p, 0, 3, Phase::Dispatch, Hop::Put);
  EXPECT_EQ(d1->round, 1);
  EXPECT_EQ(d2->round, 2);
  EXPECT_LT(d1->priority, d2->priority);
  // Combine round 1 -> node 1, round 2 -> node 2 (line 17), after every dispatch put.
  const Task* c1 = test::find_transfer(p, 0, 3, Phase::Combine, Hop::Put);
  const Task* c2 = test::find_transfer(p, 0, 6, Phase::Combine, Hop::Put);
  EXPECT_EQ(c1->round, 1);
  EXPECT_EQ(c2->round, 2);
  EXPECT_LT(d2->priority, c1->priority);
  EXPECT_LT(c1->priority, c2->priority);
  // Volumes are even (one token per GPU), so each NIC carries its own token to its peer.
  EXPECT_EQ(test::tokens_of(p, *d1), (std::vector<int64_t>{0}));
}

TEST_F(ThreeNodes, ForwardingIsCyclicFromGPlusOnePlusR) {
  const CommPlan p = plan(true);
  // Receiver GPU 0: h = (0 + 1 + r + l) mod 3. Round 1 (from node 1): GPU 2, then GPU 1.
  // Round 2 (from node 2): GPU 1, then GPU 2.
  const Task* r1h2 = nullptr;
  const Task* r1h1 = nullptr;
  const Task* r2h1 = nullptr;
  const Task* r2h2 = nullptr;
  for (const Task& t : p.tasks)
    if (t.kind == TaskKind::Transfer && t.hop == Hop::Forward && t.phase == Phase::Dispatch && t.gpu == 0) {
      (t.round == 1 ? (t.dst_gpu == 2 ? r1h2 : r1h1) : (t.dst_gpu == 1 ? r2h1 : r2h2)) = &t;
      EXPECT_EQ(test::tokens_of(p, t), t.round == 1 ? (std::vector<int64_t>{3}) : (std::vector<int64_t>{6}));
    }
  ASSERT_TRUE(r1h2 && r1h1 && r2h1 && r2h2);
  EXPECT_LT(r1h2->priority, r1h1->priority);
  EXPECT_LT(r1h1->priority, r2h1->priority);
  EXPECT_LT(r2h1->priority, r2h2->priority);
}

TEST_F(ThreeNodes, ComputeFollowsDeliveryOrderLocalLast) {
  const CommPlan p = plan(true);
  std::map<int64_t, std::vector<int64_t>> by_priority;  // GPU 0's groups: priority -> pairs
  for (const Task& t : p.tasks)
    if (t.kind == TaskKind::Compute && t.gpu == 0) by_priority[t.priority] = test::pairs_of(p, t);
  ASSERT_EQ(by_priority.size(), 3u);
  // Expert 0 is choice k = 0 of every token: pair 9 t. Node 1's tokens 3-5 first, then
  // node 2's 6-8, then node 0's own 0-2 (lines 12-15).
  auto it = by_priority.begin();
  EXPECT_EQ(it->second, (std::vector<int64_t>{27, 36, 45}));
  EXPECT_EQ((++it)->second, (std::vector<int64_t>{54, 63, 72}));
  EXPECT_EQ((++it)->second, (std::vector<int64_t>{0, 9, 18}));
}

TEST_F(ThreeNodes, GroupsBelowTheRooflineRidgeMerge) {
  // Ridge = bytes_per_elem * peak / (2 * hbm) tokens. At 10 tokens the three groups of 3 pairs
  // each merge into one GEMM that runs after the last delivery (own node, priority N = 3).
  topo.compute.hbm_bw = 100;
  const CommPlan merged = plan(true);
  std::vector<const Task*> gpu0;
  for (const Task& t : merged.tasks)
    if (t.kind == TaskKind::Compute && t.gpu == 0) gpu0.push_back(&t);
  ASSERT_EQ(gpu0.size(), 1u);
  EXPECT_EQ(test::pairs_of(merged, *gpu0[0]), (std::vector<int64_t>{0, 9, 18, 27, 36, 45, 54, 63, 72}));
  EXPECT_EQ(gpu0[0]->priority, 3);
  // At 3 tokens each group reaches the ridge on its own.
  topo.compute.hbm_bw = 1000.0 / 3.0;
  int groups = 0;
  for (const Task& t : plan(true).tasks) groups += t.kind == TaskKind::Compute && t.gpu == 0;
  EXPECT_EQ(groups, 3);
  // At 5 tokens nodes 1 and 2 share a group (6 pairs) and the own node's 3-pair tail folds in.
  topo.compute.hbm_bw = 200;
  groups = 0;
  for (const Task& t : plan(true).tasks) groups += t.kind == TaskKind::Compute && t.gpu == 0;
  EXPECT_EQ(groups, 1);
}

TEST_F(ThreeNodes, WithoutOverlapPhasesAreSeparatedByBarriers) {
  const CommPlan p = plan(false);
  EXPECT_EQ(test::count_kind(p, TaskKind::Barrier), 3 * 9);
  EXPECT_EQ(test::count_kind(p, TaskKind::Compute), 9);  // one GEMM per slot
  for (const Task& t : p.tasks) {
    if (t.kind != TaskKind::Compute) continue;
    EXPECT_EQ(p.pairs(t).size(), 9u);
    bool waits_for_barrier = false;
    for (int32_t d : p.deps(t)) {
      const Task& dep = p.tasks[d];
      if (dep.kind == TaskKind::Barrier && dep.gpu == t.gpu) {
        waits_for_barrier = true;
        for (int32_t x : p.deps(dep)) {  // the barrier covers every dispatch transfer of this GPU
          EXPECT_EQ(p.tasks[x].phase, Phase::Dispatch);
          EXPECT_TRUE(p.tasks[x].gpu == t.gpu || p.tasks[x].dst_gpu == t.gpu);
        }
      }
    }
    EXPECT_TRUE(waits_for_barrier);
  }
}

}  // namespace
}  // namespace zepp
