// The `sim` executor against times computed by hand (bytes / bandwidth + latency, max-min
// sharing, dependencies, per-resource order). Topology of tests/plan/fixture.hpp: NVLink
// 100 B/s, NIC 10 B/s, 1000 FLOP/s, HBM 100 B/s; model hidden 8, ffn 1, so an expert GEMM over
// n tokens takes max(48 n / 1000, 48 / 100) s.
#include <gtest/gtest.h>

#include "../plan/fixture.hpp"
#include "core/error.hpp"
#include "exec/sim.hpp"

namespace zepp {
namespace {

struct HandPlan {
  Topology topo;
  CommPlan plan;

  HandPlan(int nodes, int gpus) : topo(test::small_topology(nodes, gpus)) {
    plan.nodes = nodes;
    plan.gpus_per_node = gpus;
    plan.num_gpus = nodes * gpus;
    plan.top_k = 1;
    plan.model = test::small_model(4, 1);
    plan.token_bytes = plan.model.token_bytes();
  }
  int transfer(int src, int dst, double bytes, std::vector<int32_t> deps = {}, int64_t priority = 0) {
    Task t;
    t.kind = TaskKind::Transfer;
    t.phase = Phase::Dispatch;
    t.gpu = src;
    t.dst_gpu = dst;
    t.link = topo.node_of(src) == topo.node_of(dst) ? Link::NVLink : Link::NIC;
    t.bytes = bytes;
    t.priority = priority;
    const int32_t id = plan.add_task(t);
    plan.set_deps(id, deps);
    return id;
  }
  int compute(int gpu, int tokens, std::vector<int32_t> deps = {}, int64_t priority = 0) {
    Task t;
    t.kind = TaskKind::Compute;
    t.phase = Phase::Compute;
    t.gpu = gpu;
    t.priority = priority;
    const int32_t id = plan.add_task(t);
    std::vector<int32_t> pairs;
    for (int i = 0; i < tokens; ++i) pairs.push_back(i);
    plan.set_rows(id, {}, {}, pairs);
    plan.set_deps(id, deps);
    return id;
  }
  LayerResult run() { return simulate_plan(plan, topo, true); }
};

const TimelineEvent& event(const LayerResult& r, int gpu, const std::string& track, int nth = 0) {
  for (const TimelineEvent& e : r.timeline)
    if (e.gpu == gpu && e.track == track && nth-- == 0) return e;
  throw std::runtime_error("no such event");
}

TEST(Sim, OneFlowTakesBytesOverBandwidthPlusLatency) {
  HandPlan h(2, 1);
  h.topo.nic_latency = 0.5;
  h.transfer(0, 1, 100);
  const LayerResult r = h.run();
  EXPECT_NEAR(r.latency_s, 0.5 + 100.0 / 10, 1e-9);
  EXPECT_EQ(r.inter_node_bytes, 100);
  EXPECT_EQ(r.nvlink_bytes, 0);
  EXPECT_EQ(r.max_nic_bytes, 100);
  EXPECT_EQ(r.gpus[0].nic_out_bytes, 100);
  EXPECT_EQ(r.gpus[1].nic_in_bytes, 100);
  EXPECT_NEAR(r.gpus[1].finish_s, 10.5, 1e-9);
}

TEST(Sim, NvlinkFlowUsesNvlinkBandwidth) {
  HandPlan h(1, 2);
  h.topo.nvlink_latency = 0.25;
  h.transfer(1, 0, 100);
  const LayerResult r = h.run();
  EXPECT_NEAR(r.latency_s, 0.25 + 1.0, 1e-9);
  EXPECT_EQ(r.nvlink_bytes, 100);
  EXPECT_EQ(r.gpus[1].nvlink_out_bytes, 100);
}

TEST(Sim, TwoFlowsIntoOneNicShareItEvenly) {
  // Two senders into one receiver: GPUs 0 and 1 (node 0) both send 100 bytes to GPU 2
  // (node 1); its ingress link gives each 5 B/s, so both take 20 s.
  HandPlan h(2, 2);
  h.transfer(0, 2, 100);
  h.transfer(1, 2, 100);
  const LayerResult r = h.run();
  EXPECT_NEAR(event(r, 0, "nic-out").end_s, 20.0, 1e-9);
  EXPECT_NEAR(event(r, 1, "nic-out").end_s, 20.0, 1e-9);
  EXPECT_NEAR(r.latency_s, 20.0, 1e-9);
  EXPECT_EQ(r.max_nic_bytes, 200);  // GPU 2's ingress
}

TEST(Sim, UnequalFlowsGetTheBandwidthBackWhenOneEnds) {
  // 50 and 150 bytes into one ingress: both at 5 B/s until 10 s, then the rest (100 bytes) at
  // 10 B/s: 20 s.
  HandPlan h(2, 2);
  h.transfer(0, 2, 50);
  h.transfer(1, 2, 150);
  const LayerResult r = h.run();
  EXPECT_NEAR(event(r, 0, "nic-out").end_s, 10.0, 1e-9);
  EXPECT_NEAR(event(r, 1, "nic-out").end_s, 20.0, 1e-9);
}

TEST(Sim, ComputeWaitsForItsTransfer) {
  // 100 bytes over NVLink: 1 s; then 20 tokens: max(0.96, 0.48) = 0.96 s.
  HandPlan h(1, 2);
  const int x = h.transfer(0, 1, 100);
  h.compute(1, 20, {x});
  const LayerResult r = h.run();
  const TimelineEvent& c = event(r, 1, "compute");
  EXPECT_NEAR(c.start_s, 1.0, 1e-9);
  EXPECT_NEAR(c.end_s, 1.96, 1e-9);
  EXPECT_NEAR(r.latency_s, 1.96, 1e-9);
  EXPECT_NEAR(r.gpus[1].compute_s, 0.96, 1e-9);
  EXPECT_EQ(r.gpus[1].tokens_computed, 20);
  EXPECT_DOUBLE_EQ(r.comm_hidden_fraction, 0.0);  // nothing computes while the bytes move
}

TEST(Sim, MemoryBoundGemmAndLaunchCost) {
  // 5 tokens: 0.24 s of FLOPs < 0.48 s reading weights; plus a 0.1 s launch.
  HandPlan h(1, 1);
  h.topo.compute.kernel_launch = 0.1;
  h.compute(0, 5);
  EXPECT_NEAR(h.run().latency_s, 0.58, 1e-9);
}

TEST(Sim, ComputeStreamRunsLowestPriorityFirstAndOneAtATime) {
  HandPlan h(1, 1);
  h.compute(0, 20, {}, 2);  // 0.96 s
  h.compute(0, 10, {}, 1);  // 0.48 s, runs first
  const LayerResult r = h.run();
  EXPECT_EQ(event(r, 0, "compute", 0).name, "expert GEMM");
  EXPECT_EQ(event(r, 0, "compute", 0).rows, 10);
  EXPECT_NEAR(event(r, 0, "compute", 0).end_s, 0.48, 1e-9);
  EXPECT_NEAR(event(r, 0, "compute", 1).start_s, 0.48, 1e-9);
  EXPECT_NEAR(r.latency_s, 1.44, 1e-9);
}

TEST(Sim, KFlowsLeavingOneNicShareItAndEachPaysLatencyOnce) {
  // k = 3 puts of 100 bytes from GPU 0 to GPUs on three other nodes start together: each pays
  // the 0.5 s latency once, then gets 10/3 B/s of the egress link: 0.5 + 300 / 10 = 30.5 s.
  HandPlan h(4, 1);
  h.topo.nic_latency = 0.5;
  for (int d = 1; d <= 3; ++d) h.transfer(0, d, 100, {}, d);
  const LayerResult r = h.run();
  for (int d = 1; d <= 3; ++d) EXPECT_NEAR(r.gpus[d].finish_s, 30.5, 1e-9) << "receiver " << d;
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(event(r, 0, "nic-out", k).start_s, 0.0, 1e-12);
  EXPECT_EQ(r.max_nic_bytes, 300);
}

TEST(Sim, SerialLinkSharingSendsOnePutAtATime) {
  // The same three puts with LinkSharing::Serial: one after the other in priority order,
  // each 0.5 + 10 s.
  HandPlan h(4, 1);
  h.topo.nic_latency = 0.5;
  h.topo.link_sharing = LinkSharing::Serial;
  for (int d = 1; d <= 3; ++d) h.transfer(0, d, 100, {}, 4 - d);
  const LayerResult r = h.run();
  EXPECT_NEAR(r.gpus[3].finish_s, 10.5, 1e-9);
  EXPECT_NEAR(r.gpus[2].finish_s, 21.0, 1e-9);
  EXPECT_NEAR(r.gpus[1].finish_s, 31.5, 1e-9);
}

TEST(Sim, PairLinkSharingQueuesAPairsPutsAndSharesTheLinkBetweenPairs) {
  // GPU 0 puts 100 bytes twice to GPU 1 (priorities 1 and 2) and once to GPU 2. Fair: three
  // flows share the 10 B/s egress, all end at 30 s. Pair: GPU 1's second put waits for its
  // first; the first and GPU 2's share the egress (5 B/s each) and end at 20 s, then the second
  // has it alone: 20 + 10 = 30 s.
  for (const LinkSharing mode : {LinkSharing::Fair, LinkSharing::Pair}) {
    HandPlan h(3, 1);
    h.topo.link_sharing = mode;
    h.transfer(0, 1, 100, {}, 2);
    h.transfer(0, 1, 100, {}, 1);
    h.transfer(0, 2, 100, {}, 3);
    const LayerResult r = h.run();
    const bool pair = mode == LinkSharing::Pair;
    SCOPED_TRACE(to_string(mode));
    EXPECT_NEAR(r.gpus[2].finish_s, pair ? 20.0 : 30.0, 1e-9);
    EXPECT_NEAR(r.gpus[1].finish_s, 30.0, 1e-9);
    double second_start = 0;  // of GPU 0's puts to GPU 1, the later start
    for (const TimelineEvent& e : r.timeline)
      if (e.gpu == 0 && e.track == "nic-out" && e.peer == 1) second_start = std::max(second_start, e.start_s);
    EXPECT_NEAR(second_start, pair ? 20.0 : 0.0, 1e-9);
  }
  EXPECT_EQ(parse_link_sharing("pair", "--link-sharing"), LinkSharing::Pair);
  EXPECT_STREQ(to_string(LinkSharing::Pair), "pair");
}

TEST(Sim, RelayThenPut) {
  // Split's path: 50 bytes relayed over NVLink 0 -> 1 (0.25 + 50 / 100 = 0.75 s), then GPU 1's
  // NIC puts them to node 1 (0.5 + 50 / 10 = 5.5 s): 6.25 s. Meanwhile GPU 0's own put of 50
  // bytes to GPU 3 runs on its own NIC and GPU 3's ingress alone: 5.5 s.
  HandPlan h(2, 2);
  h.topo.nvlink_latency = 0.25;
  h.topo.nic_latency = 0.5;
  const int relay = h.transfer(0, 1, 50);
  h.transfer(1, 2, 50, {relay});
  h.transfer(0, 3, 50);
  const LayerResult r = h.run();
  EXPECT_NEAR(event(r, 1, "nic-out").start_s, 0.75, 1e-9);
  EXPECT_NEAR(r.gpus[2].finish_s, 6.25, 1e-9);
  EXPECT_NEAR(r.gpus[3].finish_s, 5.5, 1e-9);
}

TEST(Sim, NicEgressSendsOnePutAtATimeUnderSerialSharing) {
  // Two puts from GPU 0 to different nodes: 10 s each, one after the other.
  HandPlan h(3, 1);
  h.topo.link_sharing = LinkSharing::Serial;
  h.transfer(0, 2, 100, {}, 2);
  h.transfer(0, 1, 100, {}, 1);
  const LayerResult r = h.run();
  EXPECT_NEAR(r.gpus[1].finish_s, 10.0, 1e-9);
  EXPECT_NEAR(r.gpus[2].finish_s, 20.0, 1e-9);
}

TEST(Sim, OverlapCountsEachTransferOnceAtItsSender) {
  // GPU 0 sends 100 bytes over NVLink to GPU 1 (1 s) while computing 20 tokens (0.96 s):
  // hidden 0.96 of 1 s. The receiver's side is not counted a second time.
  HandPlan h(1, 2);
  h.transfer(0, 1, 100);
  h.compute(0, 20);
  EXPECT_NEAR(h.run().comm_hidden_fraction, 0.96, 1e-9);
  // Computing on the receiver instead hides nothing of the sender's transfer.
  HandPlan g(1, 2);
  g.transfer(0, 1, 100);
  g.compute(1, 20);
  EXPECT_NEAR(g.run().comm_hidden_fraction, 0.0, 1e-9);
}

TEST(Sim, ConcurrentTransfersOfOneSenderCountOnce) {
  // Two 100-byte NVLink transfers from GPU 0 (to GPUs 1 and 2) in flight together for 1 s,
  // GPU 0 computing 0.96 s of it: 0.96 hidden of 1 s, not of 2 s.
  HandPlan h(1, 3);
  h.transfer(0, 1, 100);
  h.transfer(0, 2, 100);
  h.compute(0, 20);
  EXPECT_NEAR(h.run().comm_hidden_fraction, 0.96, 1e-9);
}

TEST(Sim, EachCallIsAFreshSimulation) {
  HandPlan h(2, 1);
  h.transfer(0, 1, 100);
  const double first = h.run().latency_s;
  EXPECT_EQ(h.run().latency_s, first);  // no clock carried over from the first engine
}

TEST(Sim, RejectsMismatchedTopologyAndBadPlans) {
  HandPlan h(2, 1);
  h.transfer(0, 1, 100);
  EXPECT_THROW(simulate_plan(h.plan, test::small_topology(1, 2)), ArgumentError);
  Topology no_nic = h.topo;
  no_nic.nic_bw = 0;
  EXPECT_THROW(simulate_plan(h.plan, no_nic), ArgumentError);
  HandPlan bad = h;
  bad.plan.tasks[0].dst_gpu = 5;
  EXPECT_THROW(simulate_plan(bad.plan, bad.topo), ArgumentError);
}

TEST(Sim, ReportsADependencyCycleFromTheChildProcess) {
  HandPlan h(1, 2);
  h.transfer(0, 1, 100, {1});
  h.compute(1, 1, {0});
  try {
    simulate_plan(h.plan, h.topo);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("never ran"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zepp
