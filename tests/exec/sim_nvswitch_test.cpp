// NVLink models of the `sim` executor by hand: on an NVSwitch node a GPU has one NVLink port
// per direction, shared by all its flows; with per-pair links each peer has its own link.
// Topology of tests/plan/fixture.hpp: NVLink 100 B/s, no latency.
#include <gtest/gtest.h>

#include "../plan/fixture.hpp"
#include "exec/sim.hpp"

namespace zepp {
namespace {

// One node of `gpus` GPUs running the given (src, dst, bytes) transfers, all ready at time 0.
LayerResult run(NvlinkModel model, int gpus, const std::vector<std::tuple<int, int, double>>& flows) {
  Topology topo = test::small_topology(1, gpus);
  topo.nvlink_model = model;
  CommPlan plan;
  plan.nodes = 1;
  plan.gpus_per_node = plan.num_gpus = gpus;
  plan.top_k = 1;
  plan.model = test::small_model(4, 1);
  plan.token_bytes = plan.model.token_bytes();
  for (const auto& [src, dst, bytes] : flows) {
    Task t;
    t.kind = TaskKind::Transfer;
    t.phase = Phase::Dispatch;
    t.gpu = src;
    t.dst_gpu = dst;
    t.link = Link::NVLink;
    t.bytes = bytes;
    plan.tasks.push_back(t);
  }
  return simulate_plan(plan, topo, false);
}

TEST(SimNvswitch, FlowsFromOneGpuShareItsPort) {
  // 100 B to each of two peers: per-pair links carry them side by side (1 s); one switch port
  // of 100 B/s carries 200 B (2 s).
  EXPECT_NEAR(run(NvlinkModel::PerPair, 3, {{0, 1, 100}, {0, 2, 100}}).latency_s, 1.0, 1e-9);
  EXPECT_NEAR(run(NvlinkModel::Switch, 3, {{0, 1, 100}, {0, 2, 100}}).latency_s, 2.0, 1e-9);
}

TEST(SimNvswitch, FlowsIntoOneGpuShareItsIngressPort) {
  EXPECT_NEAR(run(NvlinkModel::PerPair, 3, {{1, 0, 100}, {2, 0, 100}}).latency_s, 1.0, 1e-9);
  EXPECT_NEAR(run(NvlinkModel::Switch, 3, {{1, 0, 100}, {2, 0, 100}}).latency_s, 2.0, 1e-9);
}

TEST(SimNvswitch, DisjointPairsDoNotShare) {
  // 0 -> 1 and 2 -> 3 use four different ports: the switch is non-blocking.
  EXPECT_NEAR(run(NvlinkModel::Switch, 4, {{0, 1, 100}, {2, 3, 100}}).latency_s, 1.0, 1e-9);
  // A port shared by a 100 B and a 300 B flow: max-min fair, 50 B/s each until the first ends
  // at 2 s, then 100 B/s for the remaining 200 B: 4 s.
  EXPECT_NEAR(run(NvlinkModel::Switch, 3, {{0, 1, 100}, {0, 2, 300}}).latency_s, 4.0, 1e-9);
}

}  // namespace
}  // namespace zepp
