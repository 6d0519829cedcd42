// The `sim` executor on plans from build_comm_plan: the two-node example of
// tests/plan/merge_test.cpp timed by hand, and conservation on random layers.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "../plan/fixture.hpp"
#include "../plan/random_case.hpp"
#include "exec/sim.hpp"

namespace zepp {
namespace {

// 2 nodes x 2 GPUs, expert g on GPU g; GPU 0 holds t0 -> {2, 3}, t1 -> {0, 2}, t2 -> {1, 3}.
// Rows are 16 bytes: 1.6 s on a NIC (10 B/s), 0.16 s on NVLink or through HBM (100 B/s).
// A GEMM over <= 10 tokens is memory-bound: 0.48 s.
struct TwoNodes : ::testing::Test {
  Topology topo = test::small_topology(2, 2);
  ModelShape model = test::small_model(4, 2);
  RoutingBatch batch = test::make_batch(4, 2, {{{2, 3}, {0, 2}, {1, 3}}, {}, {}, {}});
  Placement placement = test::identity_placement(4);
  Routing routing = test::first_replica(batch, placement);

  LayerResult run(PlanOptions o) {
    return simulate_plan(build_comm_plan(batch, placement, routing, topo, model, o), topo, true);
  }
};

TEST_F(TwoNodes, AllToAllvWithBarriers) {
  // Fair links: NIC 0 puts 2 rows to GPU 2 and 2 rows to GPU 3 at once, 5 B/s each (0-6.4 s).
  // Compute after each GPU's dispatch: GPUs 0, 2, 3 at 6.4-6.88. Combine: GPUs 2 and 3 each
  // return 2 rows into GPU 0's ingress at once (6.88-13.28). GPU 0 then reduces 6 rows: 0.96 s.
  const LayerResult r = run({false, false, false, 0.0});
  EXPECT_NEAR(r.latency_s, 14.24, 1e-9);
  // Serial links: NIC 0 puts to GPU 2 (0-3.2), then to GPU 3 (3.2-6.4); compute GPU 2
  // 3.2-3.68, GPU 3 6.4-6.88; combine GPU 2 -> 0 3.68-6.88, GPU 3 -> 0 6.88-10.08; reduce.
  topo.link_sharing = LinkSharing::Serial;
  EXPECT_NEAR(run({false, false, false, 0.0}).latency_s, 11.04, 1e-9);
  topo.link_sharing = LinkSharing::Fair;
  EXPECT_EQ(r.inter_node_bytes, 8 * 16);
  EXPECT_EQ(r.nvlink_bytes, 2 * 16);
  EXPECT_EQ(r.max_nic_bytes, 4 * 16);  // NIC 0 out and in
  EXPECT_EQ(r.gpus[2].tokens_computed, 2);
  EXPECT_NEAR(r.gpus[3].compute_s, 0.48, 1e-9);
}

TEST_F(TwoNodes, SplitMergeOverlap) {
  // Dispatch: t2's row to expert 1 and its relay towards GPU 3 share NVLink 0 -> 1 (0-0.32),
  // put t0,t1 0 -> 2 (0-3.2), put t2 1 -> 3 (0.32-1.92), forward t0 2 -> 3 (3.2-3.36).
  // Compute: GPU 0 0-0.48 (t1's expert 0), GPU 1 0.32-0.8, GPU 2 3.2-3.68, GPU 3 3.36-3.84.
  // Combine: gather t0 3 -> 2 (3.84-4.0), pre-reduce 3 rows on GPU 2 (4.0-4.48), put 2 -> 0
  // (4.48-7.68), final reduce of its 2 rows on GPU 0 (7.68-8.0). t2 returns via GPU 1 earlier:
  // GPU 3 pre-reduces it (3.84-4.0) and puts it to GPU 1 (4.0-5.6), which forwards it (5.6-5.76).
  const LayerResult r = run({true, true, true, 0.0});
  EXPECT_NEAR(r.latency_s, 8.0, 1e-9);
  EXPECT_EQ(r.inter_node_bytes, 6 * 16);
  EXPECT_EQ(r.max_nic_bytes, 2 * 16);  // split: no NIC carries more than 2 rows each way
  EXPECT_NEAR(r.gpus[3].finish_s, 5.6, 1e-9);  // its pre-reduced t2 leaves 4.0-5.6
  // Hidden share: time each GPU sends while it also computes or reduces, over the time it sends.
  // GPU 0 sends 0-3.2 and computes 0-0.48, reduces 0.48-0.64 and 0.96-1.12 (t1, then t2's expert
  // 1 row from GPU 1 at 0.8-0.96): 0.8 of 3.2. GPU 1 sends 0.32-1.92 and 5.6-5.76, computes
  // 0.32-0.8: 0.48 of 1.76. GPU 2 forwards 3.2-3.36 while computing, puts 4.48-7.68 after its
  // pre-reduce: 0.16 of 3.36. GPU 3 gathers 3.84-4.0 while pre-reducing, puts 4.0-5.6: 0.16 of
  // 1.76. In all 1.6 of 10.08 s.
  EXPECT_NEAR(r.comm_hidden_fraction, 1.6 / 10.08, 1e-9);
}

RC_GTEST_PROP(SimOnPlans, ConservesBytesAndWork, ()) {
  const test::RandomCase c = test::random_case(2, 2, 3);
  const CommPlan plan = build_comm_plan(c.batch, c.placement, c.routing, c.topo, c.model, c.options, c.moves);
  const LayerResult r = simulate_plan(plan, c.topo);
  double nic = 0, nvlink = 0;
  std::vector<double> nic_out(plan.num_gpus, 0);
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer) {
      (t.link == Link::NIC ? nic : nvlink) += t.bytes;
      if (t.link == Link::NIC) nic_out[t.gpu] += t.bytes;
    }
  RC_ASSERT(r.inter_node_bytes == nic);
  RC_ASSERT(r.nvlink_bytes == nvlink);
  int64_t computed = 0;
  for (int g = 0; g < plan.num_gpus; ++g) {
    computed += r.gpus[g].tokens_computed;
    RC_ASSERT(r.gpus[g].nic_out_bytes == nic_out[g]);
    RC_ASSERT(r.gpus[g].finish_s <= r.latency_s);
    RC_ASSERT(r.gpus[g].compute_s <= r.gpus[g].finish_s + 1e-12);
  }
  RC_ASSERT(computed == c.batch.num_tokens() * c.batch.top_k);
  RC_ASSERT(r.comm_hidden_fraction >= 0.0 && r.comm_hidden_fraction <= 1.0 + 1e-12);
}

}  // namespace
}  // namespace zepp
