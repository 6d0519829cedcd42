// The first latency estimate against hand-computed times (issue 2 item 8).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "exec/estimate.hpp"

namespace zepp {
namespace {

// 2 nodes x 2 GPUs, one expert per GPU. Units chosen so times are easy to add by hand:
// a token is 2 bytes, NVLink 100 B/s, NIC 25 B/s, one token-FLOP-unit per second plus 1 s launch.
struct Fixture {
  Topology topo;
  ModelShape model;
  RoutingBatch batch;
  Placement placement;
  Routing routing;
  Fixture() {
    topo.nodes = 2;
    topo.gpus_per_node = 2;
    topo.nvlink_bw = 100;
    topo.nic_bw = 25;
    topo.compute.peak_flops = 6;      // 6·tokens·hidden·ffn FLOPs at 6 FLOP/s = 1 s per token
    topo.compute.hbm_bw = 1e30;       // weights never the bound
    topo.compute.kernel_launch = 1;
    model.num_experts = 4;
    model.top_k = 2;
    model.hidden = 1;
    model.ffn = 1;
    // GPU 0 holds two tokens: {1, 2} and {2, 3}; the other GPUs none.
    batch.num_gpus = 4;
    batch.num_experts = 4;
    batch.top_k = 2;
    batch.token_offset = {0, 2, 2, 2, 2};
    batch.expert_ids = {1, 2, 2, 3};
    batch.gate_weights = {0.5f, 0.5f, 0.5f, 0.5f};
    placement = {4, 4, 1, {0, 1, 2, 3}};
    routing.counts = {{1, 0, 1, 1}, {2, 0, 2, 2}, {3, 0, 3, 1}};
  }
};

TEST(Estimate, HandComputedPhasesWithoutLatency) {
  Fixture f;
  const LayerResult r = estimate_layer(f.batch, f.placement, f.routing, f.topo, f.model);
  // Dispatch: GPU 0 sends 2 B over NVLink to GPU 1 (0.02 s) and 4 + 2 B through its NIC (6/25 = 0.24 s).
  // Compute: GPU 2 serves 2 tokens: 2 s + 1 s launch = 3 s (the slowest).
  // Combine mirrors dispatch: GPU 0's NIC receives 6 B = 0.24 s.
  EXPECT_NEAR(r.latency_s, 0.24 + 3.0 + 0.24, 1e-12);
  EXPECT_DOUBLE_EQ(r.inter_node_bytes, 12.0);  // 6 B out in dispatch, 6 B back in combine
  EXPECT_DOUBLE_EQ(r.nvlink_bytes, 4.0);       // 2 B each way between GPUs 0 and 1
  EXPECT_DOUBLE_EQ(r.max_nic_bytes, 6.0);
  ASSERT_EQ(r.gpus.size(), 4u);
  EXPECT_EQ(r.gpus[2].tokens_computed, 2);
  EXPECT_DOUBLE_EQ(r.gpus[2].compute_s, 3.0);
  EXPECT_DOUBLE_EQ(r.gpus[0].compute_s, 0.0);  // no tokens, no GEMM launched
  EXPECT_DOUBLE_EQ(r.gpus[0].nic_out_bytes, 6.0);
  EXPECT_DOUBLE_EQ(r.gpus[0].nic_in_bytes, 6.0);
}

TEST(Estimate, PerMessageLatencyCountsDestinations) {
  Fixture f;
  f.topo.nic_latency = 0.01;
  f.topo.nvlink_latency = 0.5;  // makes NVLink the bound on GPU 0's dispatch: 0.02 + 0.5
  const LayerResult r = estimate_layer(f.batch, f.placement, f.routing, f.topo, f.model);
  // Dispatch on GPU 0: max(NIC 0.24 + 2 messages x 0.01, NVLink 0.02 + 0.5) = 0.52.
  // Combine: GPU 1 -> GPU 0 over NVLink 0.02 + 0.5 = 0.52 dominates the NIC returns.
  EXPECT_NEAR(r.latency_s, 0.52 + 3.0 + 0.52, 1e-12);
}

TEST(Estimate, RejectsRoutingThatDoesNotServeTheBatch) {
  Fixture f;
  f.routing.counts.pop_back();
  EXPECT_THROW(estimate_layer(f.batch, f.placement, f.routing, f.topo, f.model), ArgumentError);
  Fixture g;
  g.routing.counts[0].slot = 9;
  EXPECT_THROW(estimate_layer(g.batch, g.placement, g.routing, g.topo, g.model), ArgumentError);
}

}  // namespace
}  // namespace zepp
