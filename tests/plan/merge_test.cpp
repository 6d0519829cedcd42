// Merge and split on a two-node example counted by hand (paper §4.2, Figure 4).
//
// 2 nodes x 2 GPUs, expert g on GPU g, top-2, rows of 16 bytes. GPU 0 holds three tokens:
//   t0 -> experts {2, 3} (pairs 0, 1), t1 -> {0, 2} (pairs 2, 3), t2 -> {1, 3} (pairs 4, 5).
// Remote pairs: 0, 1, 3, 5 (node 1); intra-node: 4 (GPU 1); on GPU 0 itself: 2.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"

#include "../common/plan_check.hpp"
#include "fixture.hpp"
#include "plan/comm_plan.hpp"
#include "plan_util.hpp"

namespace zepp {
namespace {

using test::Rows;

struct TwoNodes : ::testing::Test {
  Topology topo = test::small_topology(2, 2);
  ModelShape model = test::small_model(4, 2);
  RoutingBatch batch = test::make_batch(4, 2, {{{2, 3}, {0, 2}, {1, 3}}, {}, {}, {}});
  Placement placement = test::identity_placement(4);
  Routing routing = test::first_replica(batch, placement);

  CommPlan plan(bool split, bool merge) {
    return build_comm_plan(batch, placement, routing, topo, model, PlanOptions{split, merge, true, 0.0});
  }
};

TEST_F(TwoNodes, WithoutMergeEveryPairTravels) {
  const CommPlan p = plan(false, false);
  EXPECT_EQ(test::bytes_on(p, Link::NIC, Phase::Dispatch), 4 * 16);  // pairs 0, 1, 3, 5
  EXPECT_EQ(test::bytes_on(p, Link::NVLink, Phase::Dispatch), 16);   // pair 4
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 2, Phase::Dispatch, Hop::Put)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 3, Phase::Dispatch, Hop::Put)), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 1, Phase::Dispatch, Hop::Direct)), (std::vector<int64_t>{2}));
  EXPECT_EQ(test::bytes_on(p, Link::NIC, Phase::Combine), 4 * 16);
  EXPECT_EQ(test::bytes_on(p, Link::NVLink, Phase::Combine), 16);
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 2, 0, Phase::Combine, Hop::Put)), (Rows{{0, {0}}, {1, {3}}}));
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 3, 0, Phase::Combine, Hop::Put)), (Rows{{0, {1}}, {2, {5}}}));
  EXPECT_EQ(test::count_kind(p, TaskKind::PreReduce), 0);
}

TEST_F(TwoNodes, MergeSendsEachTokenToANodeOnce) {
  const CommPlan p = plan(false, true);
  // Dispatch: one put to GPU 2 (peer of NIC 0), which forwards t0 and t2 to GPU 3.
  EXPECT_EQ(test::bytes_on(p, Link::NIC, Phase::Dispatch), 3 * 16);
  EXPECT_EQ(test::bytes_on(p, Link::NVLink, Phase::Dispatch), 3 * 16);
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 2, Phase::Dispatch, Hop::Put)), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 2, 3, Phase::Dispatch, Hop::Forward)), (std::vector<int64_t>{0, 2}));
  // Combine: GPU 3's outputs gather on GPU 2, pre-reduce into one row per token, one put back.
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 3, 2, Phase::Combine, Hop::Gather)), (Rows{{0, {1}}, {2, {5}}}));
  const Task* pre = nullptr;
  for (const Task& t : p.tasks)
    if (t.kind == TaskKind::PreReduce) pre = &t;
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->gpu, 2);
  EXPECT_EQ(pre->node, 0);
  EXPECT_EQ(test::rows_of(p, *pre), (Rows{{0, {0, 1}}, {1, {3}}, {2, {5}}}));
  EXPECT_EQ(pre->bytes, 4 * 16);  // inputs: t0 from GPUs 2 and 3, t1 and t2 once each
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 2, 0, Phase::Combine, Hop::Put)), (Rows{{0, {0, 1}}, {1, {3}}, {2, {5}}}));
  EXPECT_EQ(test::bytes_on(p, Link::NIC, Phase::Combine), 3 * 16);
  EXPECT_EQ(test::bytes_on(p, Link::NVLink, Phase::Combine), 3 * 16);  // gather 2 rows + GPU 1 -> 0
}

TEST_F(TwoNodes, SplitMovesTheExcessToTheOtherNic) {
  // Node 0 -> node 1: V = (3, 0), cap = 2: t2 (the last row) is relayed to GPU 1's NIC.
  const CommPlan p = plan(true, true);
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 1, Phase::Dispatch, Hop::Relay)), (std::vector<int64_t>{2}));
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 2, Phase::Dispatch, Hop::Put)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 1, 3, Phase::Dispatch, Hop::Put)), (std::vector<int64_t>{2}));
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 2, 3, Phase::Dispatch, Hop::Forward)), (std::vector<int64_t>{0}));
  EXPECT_EQ(test::bytes_on(p, Link::NIC, Phase::Dispatch), 3 * 16);
  EXPECT_EQ(test::bytes_on(p, Link::NVLink, Phase::Dispatch), 3 * 16);  // direct t2 -> GPU 1, relay, forward
  // Combine mirrors it: t2 pre-reduces on GPU 3 (its receiver), returns via GPU 1.
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 2, 0, Phase::Combine, Hop::Put)), (Rows{{0, {0, 1}}, {1, {3}}}));
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 3, 1, Phase::Combine, Hop::Put)), (Rows{{2, {5}}}));
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 1, 0, Phase::Combine, Hop::Forward)), (Rows{{2, {5}}}));
  EXPECT_EQ(test::rows_of(p, *test::find_transfer(p, 3, 2, Phase::Combine, Hop::Gather)), (Rows{{0, {1}}}));
  EXPECT_EQ(test::count_kind(p, TaskKind::PreReduce), 2);
}

TEST_F(TwoNodes, SplitOnlyWhenItPays) {
  // Node 0 -> node 1: V = (3, 0), cap = 2. Splitting takes one 16-byte row off NIC 0:
  // 16 / 10 = 1.6 s saved, against two NVLink hops of latency + 16 / 100 s each. It pays while
  // 2 * (latency + 0.16) < 1.6, i.e. latency < 0.64 s.
  PlanOptions opt{true, true, true, 0.0, /*round_order=*/true, /*pre_reduce=*/true, /*split_if_it_pays=*/true};
  topo.nvlink_latency = 0.6;
  CommPlan p = build_comm_plan(batch, placement, routing, topo, model, opt);
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 1, Phase::Dispatch, Hop::Relay)), (std::vector<int64_t>{2}));
  EXPECT_EQ(test::check_plan(p, batch, placement, routing), "");
  topo.nvlink_latency = 0.7;
  p = build_comm_plan(batch, placement, routing, topo, model, opt);
  EXPECT_EQ(std::count_if(p.tasks.begin(), p.tasks.end(), [](const Task& t) { return t.hop == Hop::Relay; }), 0);
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 2, Phase::Dispatch, Hop::Put)), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(test::check_plan(p, batch, placement, routing), "");  // NIC 0 over the bound, but unsplit
  opt.split_if_it_pays = false;  // FAST's rule: every flow over the bound is split
  p = build_comm_plan(batch, placement, routing, topo, model, opt);
  EXPECT_EQ(test::tokens_of(p, *test::find_transfer(p, 0, 1, Phase::Dispatch, Hop::Relay)), (std::vector<int64_t>{2}));
}

TEST_F(TwoNodes, ComputeWaitsForTheTransferThatDeliversItsInput) {
  const CommPlan p = plan(true, true);
  const Task* fwd = test::find_transfer(p, 2, 3, Phase::Dispatch, Hop::Forward);
  const Task* put = test::find_transfer(p, 1, 3, Phase::Dispatch, Hop::Put);
  for (const Task& t : p.tasks)
    if (t.kind == TaskKind::Compute && t.gpu == 3) {
      EXPECT_EQ(test::pairs_of(p, t), (std::vector<int64_t>{1, 5}));
      std::vector<int32_t> want = {int32_t(fwd - p.tasks.data()), int32_t(put - p.tasks.data())};
      std::sort(want.begin(), want.end());
      EXPECT_EQ(test::deps_of(p, t), want);
    }
}

TEST_F(TwoNodes, RejectsInconsistentArguments) {
  Routing bad = routing;
  bad.slot_of_pair[0] = 3;  // pair 0 selected expert 2
  EXPECT_THROW(build_comm_plan(batch, placement, bad, topo, model, {}), ArgumentError);
  bad.slot_of_pair.pop_back();
  EXPECT_THROW(build_comm_plan(batch, placement, bad, topo, model, {}), ArgumentError);
  EXPECT_THROW(build_comm_plan(batch, placement, routing, test::small_topology(1, 2), model, {}), ArgumentError);
  EXPECT_THROW(build_comm_plan(batch, placement, routing, topo, model, PlanOptions{true, true, true, -0.5}), ArgumentError);
  EXPECT_THROW(build_comm_plan(batch, placement, routing, topo, model, {}, {WeightMove{0, 0}}), ArgumentError);
}

}  // namespace
}  // namespace zepp
