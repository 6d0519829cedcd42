// zepp+hot's per-invocation hot replicas (swap/hot.hpp, docs/zepp-hot.md) on a hand-computed case:
// which expert is replicated, to which GPUs, which pairs move, that no token changes nodes, and
// that nothing is replicated when the copy cannot hide, costs more than it saves or saves nothing
// above the node's NIC floor.
#include <filesystem>
#include <map>

#include <gtest/gtest.h>

#include "../common/synthetic_layer.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"
#include "pipeline/strategy.hpp"
#include "pipeline/zepp_hot.hpp"
#include "swap/hot.hpp"
#include "swap/nic_floor.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"

using namespace zepp;

namespace {

// 2 nodes x 4 GPUs, E = 8 experts, top-1, expert g on GPU g. Expert weights B = 3 * 64 * 64 * 2 =
// 24,576 bytes; tau = 6 * 64 * 64 / peak = 2^-20 s per pair (exact in binary), so loads in
// pairs and times in tau compare exactly; a weight read 10 tau; B / nvlink_bw = copy_us.
constexpr double kTau = 1.0 / (1 << 20);
ModelShape model(int shared = 0) {
  ModelShape m;
  m.name = "tiny";
  m.num_experts = 8;
  m.top_k = 1;
  m.hidden = m.ffn = 64;
  m.shared_experts = shared;
  return m;
}
Topology topo(double copy_us) {
  Topology t;
  t.name = "tiny-switch";
  t.nodes = 2;
  t.gpus_per_node = 4;
  t.nvlink_model = NvlinkModel::Switch;
  t.nvlink_bw = 24576 / (copy_us * 1e-6);
  t.multicast_port_output = 2 * t.nvlink_bw;
  t.nic_bw = 1e9;
  t.compute.peak_flops = 6.0 * 64 * 64 / kTau;
  t.compute.hbm_bw = 24576 / (10 * kTau);
  return t;
}

// GPU 0: 600 tokens of e0; GPU 1: 100 of e0, 200 of e1; GPUs 2, 3: 200 of their own; GPU 4
// (node 1): 300 of e0, 400 of e4; GPUs 5-7: 400 of their own. Routed home: node 0 computes
// 1000 / 200 / 200 / 200 tau (mean 400), node 1 400 each.
RoutingBatch batch() {
  RoutingBatch b;
  b.num_gpus = 8, b.num_experts = 8, b.top_k = 1;
  const std::vector<std::vector<std::pair<int, int>>> runs = {
      {{0, 600}}, {{0, 100}, {1, 200}}, {{2, 200}}, {{3, 200}}, {{0, 300}, {4, 400}}, {{5, 400}}, {{6, 400}}, {{7, 400}}};
  b.token_offset = {0};
  for (const auto& gpu : runs) {
    for (const auto& [e, n] : gpu)
      for (int i = 0; i < n; ++i) b.expert_ids.push_back(e), b.gate_weights.push_back(1.0f);
    b.token_offset.push_back(int64_t(b.expert_ids.size()));
  }
  return b;
}
Placement home() { return Placement{8, 8, 1, {0, 1, 2, 3, 4, 5, 6, 7}}; }
Routing home_routing(const RoutingBatch& b) { return Routing{{}, b.expert_ids}; }

// (source node, destination node) -> pairs, from slot_of_pair.
std::map<std::pair<int, int>, int64_t> node_pairs(const RoutingBatch& b, const Placement& p, const Routing& r) {
  std::map<std::pair<int, int>, int64_t> out;
  for (int g = 0; g < b.num_gpus; ++g)
    for (int64_t t = b.token_offset[g]; t < b.token_offset[g + 1]; ++t) ++out[{g / 4, p.gpu_of_slot(r.slot_of_pair[t]) / 4}];
  return out;
}

}  // namespace

TEST(ZeppHot, ReplicatesTheHotExpertIntoItsNodeByMulticastWithoutChangingNodes) {
  const RoutingBatch b = batch();
  const Topology t = topo(1.0);  // a copy: 1 us (SAMI into 3: 1.33 us), windows 200 tau
  const HotPlan h = plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, true, {}});
  // GPU 0 is 600 tau over the mean: it needs 600 pairs moved; GPUs 1-3 have 200 tau of room each
  // (ties to the lower GPU), so e0 goes to all three, 200 pairs each, into their helper slot
  // (slot 2g + 1 of the placement with 1 + 1 slots per GPU).
  ASSERT_EQ(h.replicas.size(), 1u);
  const HotReplica& r = h.replicas[0];
  EXPECT_EQ(r.expert, 0);
  EXPECT_EQ(r.owner, 0);
  EXPECT_EQ(r.members, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(r.slots, (std::vector<int32_t>{3, 5, 7}));
  EXPECT_EQ(r.tokens, (std::vector<int64_t>{200, 200, 200}));
  EXPECT_EQ(h.placement.phy2log, (std::vector<int32_t>{0, 0, 1, 0, 2, 0, 3, 0, 4, 4, 5, 5, 6, 6, 7, 7}));
  ASSERT_EQ(h.multicasts.size(), 1u);  // one SAMI store group: the owner is no member
  EXPECT_TRUE(h.multicasts[0].sami);
  EXPECT_EQ(h.multicasts[0].members, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(h.multicasts[0].slots, (std::vector<int32_t>{3, 5, 7}));
  EXPECT_TRUE(h.weight_moves.empty());
  EXPECT_EQ(h.resident, (std::vector<int32_t>{-1, 0, 0, 0, -1, -1, -1, -1}));
  EXPECT_EQ(h.refused, 0);
  // Pairs taken: GPU 1 its own 100 first, then node 1's (GPU 4) 100; GPU 2 GPU 4's other 200;
  // GPU 3 the owner's own, its first 200 tokens. (expert, source, slot, pairs):
  const std::vector<std::tuple<int, int, int, int64_t>> want = {
      {0, 0, 0, 400}, {0, 0, 7, 200}, {0, 1, 3, 100}, {0, 4, 3, 100}, {0, 4, 5, 200}, {1, 1, 2, 200},
      {2, 2, 4, 200}, {3, 3, 6, 200}, {4, 4, 8, 400}, {5, 5, 10, 400}, {6, 6, 12, 400}, {7, 7, 14, 400}};
  ASSERT_EQ(h.routing.counts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const RouteCount& c = h.routing.counts[i];
    EXPECT_EQ(std::make_tuple(int(c.expert), int(c.src_gpu), int(c.slot), c.tokens), want[i]) << "count " << i;
  }
  EXPECT_EQ(h.routing.slot_of_pair[0], 7);     // the owner's first token
  EXPECT_EQ(h.routing.slot_of_pair[200], 0);   // its 201st stays
  EXPECT_EQ(h.routing.slot_of_pair[1300], 3);  // GPU 4's first e0 token (GPUs 0-3 hold tokens 0-1299)
  // Every token reaches the same nodes as before: inter-node pairs are the routing's.
  EXPECT_EQ(node_pairs(b, h.placement, h.routing), node_pairs(b, home(), home_routing(b)));
  EXPECT_EQ(node_pairs(b, h.placement, h.routing).at({1, 0}), 300);

  // Point to point: the same replicas, three copies from the owner.
  const HotPlan p = plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, false, {}});
  EXPECT_EQ(p.routing.slot_of_pair, h.routing.slot_of_pair);
  EXPECT_TRUE(p.multicasts.empty());
  ASSERT_EQ(p.weight_moves.size(), 3u);
  EXPECT_EQ(p.weight_moves[2].slot, 7);
  EXPECT_EQ(p.weight_moves[2].src_gpu, 0);
}

TEST(ZeppHot, KeepsRecurringReplicasResidentWithoutCopying) {
  const RoutingBatch b = batch();
  const Topology t = topo(1.0);
  const HotPlan first = plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, true, {}});
  const HotPlan next = plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, true, first.resident});
  ASSERT_EQ(next.replicas.size(), 1u);
  EXPECT_EQ(next.replicas[0].slots, (std::vector<int32_t>{3, 5, 7}));
  EXPECT_EQ(next.replicas[0].copied, (std::vector<char>{0, 0, 0}));
  EXPECT_TRUE(next.multicasts.empty());
  EXPECT_TRUE(next.weight_moves.empty());
  EXPECT_EQ(next.routing.slot_of_pair, first.routing.slot_of_pair);
}

TEST(ZeppHot, MakesNoReplicaThatCannotPay) {
  const RoutingBatch b = batch();
  // A copy of 150 us: SAMI into 3 members takes 200 us, over the members' 200 tau (191 us)
  // window of home compute (no shared expert): refused, routing and placement stay.
  const HotPlan slow = plan_hot(b, home(), home_routing(b), topo(150), model(), HotOptions{1, true, {}});
  EXPECT_TRUE(slow.replicas.empty());
  EXPECT_TRUE(slow.multicasts.empty());
  EXPECT_EQ(slow.refused, 1);
  for (size_t p = 0; p < b.expert_ids.size(); ++p) ASSERT_EQ(slow.routing.slot_of_pair[p], 2 * b.expert_ids[p]);
  // With a shared expert the members' windows grow by their shared experts' time (GPU 1: 300
  // tokens, GPUs 2, 3: 200): 400 tau and more, so the same copy hides.
  EXPECT_EQ(plan_hot(b, home(), home_routing(b), topo(150), model(1), HotOptions{1, true, {}}).replicas.size(), 1u);
  // A copy of 500 us (667 us into 3) costs more than GPU 0's excess (600 tau, 572 us): refused
  // even though the shared expert would hide it.
  const HotPlan dear = plan_hot(b, home(), home_routing(b), topo(500), model(1), HotOptions{1, true, {}});
  EXPECT_TRUE(dear.replicas.empty());
  EXPECT_EQ(dear.refused, 1);
  EXPECT_NEAR(hot_copy_seconds(3, true, model(), topo(500)), 500e-6 * 4 / 3, 1e-12);
  EXPECT_NEAR(hot_copy_seconds(3, false, model(), topo(500)), 1500e-6, 1e-12);
}

TEST(ZeppHot, CopiesOnlyWithGemmTimeAboveTheNodesNicFloor) {
  // The first case, copies of 1 us (SAMI into 3: 1.33 us). GPU 0's expert 0 has 1000 pairs, 300
  // of them from node 1 (GPU 4). With 500 tau of dispatch GPU 0 has max(1000 - 500, 300) = 500
  // tau of GEMMs left after it, its members none (200 - 500 < 0). After the replica (GPU 1: its
  // own 100 and 100 of GPU 4's; GPU 2: 200 of GPU 4's; GPU 3: 200 of the owner's) GPU 0 keeps 400
  // own pairs, the node's mean: max(400 - 500, 0) = 0; GPU 1 max(400 - 500, 100) = 100 tau, GPU 2
  // 200, GPU 3 0.
  // Node 0's NICs return rows for 450 tau after dispatch: the replica saves max(450, 500) -
  // max(450, 200) = 50 tau (47.7 us) > 1.33 us: copied. At 600 tau the NICs end node 0's layer
  // either way: nothing saved, refused, routing and placement as given.
  const RoutingBatch b = batch();
  const Topology t = topo(1.0);
  const HotPlan below = plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, true, {}, 500 * kTau, {450 * kTau, 0}});
  ASSERT_EQ(below.replicas.size(), 1u);
  EXPECT_EQ(below.replicas[0].tokens, (std::vector<int64_t>{200, 200, 200}));
  const HotPlan bound = plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, true, {}, 500 * kTau, {600 * kTau, 0}});
  EXPECT_TRUE(bound.replicas.empty());
  EXPECT_EQ(bound.refused, 1);
  for (size_t p = 0; p < b.expert_ids.size(); ++p) ASSERT_EQ(bound.routing.slot_of_pair[p], 2 * b.expert_ids[p]);
  // The floor's shape is checked: one entry per node.
  EXPECT_THROW(plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, true, {}, 0, {1.0}}), ArgumentError);
  EXPECT_THROW(plan_hot(b, home(), home_routing(b), t, model(), HotOptions{1, true, {}, -1.0, {}}), ArgumentError);
}

TEST(ZeppHot, StrategyIsZeppWhenNothingPaysAndRefusesTopologiesWithoutMulticast) {
  const test::SyntheticLayer l = test::synthetic_layer("kimi-k2", "dgx-h100", 1, 1);
  const ModelShape& m = l.model;
  const Topology& t = l.topo;
  const Workload& w = l.workload;
  StrategyOptions o;
  // Kimi-K2's 88 MB experts take 196 us to copy; at 1 MB (73 tokens per GPU) no excess is near.
  const StrategyDecision hot = decide_zepp_hot(StrategyInput{w, m, t, o});
  const StrategyDecision zepp = find_strategy("zepp").decide(StrategyInput{w, m, t, o});
  EXPECT_EQ(hot.placement.phy2log, zepp.placement.phy2log);
  EXPECT_EQ(hot.routing.slot_of_pair, zepp.routing.slot_of_pair);
  const test::SyntheticLayer lp = test::synthetic_layer("kimi-k2", "h100", 1, 1);  // NVLink per GPU pair: no switch
  const Topology& pairs = lp.topo;
  const Workload& wp = lp.workload;
  EXPECT_THROW(decide_zepp_hot(StrategyInput{wp, m, pairs, o}), ArgumentError);
  EXPECT_NO_THROW(decide_zepp_hot(StrategyInput{wp, m, pairs, o}, {false, true}));
  EXPECT_THROW(plan_hot(w.batch, zepp.placement, Routing{}, t, m, HotOptions{}), ArgumentError);
  const StrategyDecision zp = find_strategy("zepp").decide(StrategyInput{wp, m, pairs, o});
  try {
    plan_hot(wp.batch, zp.placement, zp.routing, pairs, m, HotOptions{});
    ADD_FAILURE() << "multicast on per-pair NVLink was accepted";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("topo:", 0), 0u) << e.what();
  }
}

// DeepSeek-V2-Lite trace, dgx-h100, 64 MB per GPU (docs/zepp-hot.md's rows).
TEST(ZeppHot, RefusesOnTheNicBoundDeepSeekLayerAndCopiesWhereComputeBound) {
  const std::string dir = std::string(ZEPP_SHARED_DIR) + "/data/traces/deepseek-v2-lite-puffin";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "traces absent: " << dir;
  const Trace trace = read_trace(dir);
  const ModelShape m = model_preset("deepseek-v2-lite");
  WorkloadOptions wo;
  wo.layer = 1;
  wo.size_mb = 64;
  StrategyOptions o;
  o.optimal = false;
  const auto latency = [&](const char* name, const Workload& w, const Topology& t) {
    return run_strategy(name, w, m, t, o, ExecutorKind::Sim).result.latency_s;
  };

  // Two nodes: Zepp's combine streams its returns per GEMM (issue 24) and the NICs end the layer.
  const Topology t2 = topology_preset("dgx-h100", 2);
  const Workload w2 = build_workload(&trace, m, t2, wo);
  const StrategyDecision zepp = find_strategy("zepp").decide(StrategyInput{w2, m, t2, o});
  HotOptions ho;
  ho.helper_slots = o.extra_slots;
  // Without the floor the hot pass fires, and every pair stays on its node: the same NIC bytes,
  // weights only inside a node.
  const HotPlan fires = plan_hot(w2.batch, zepp.placement, zepp.routing, t2, m, ho);
  ASSERT_FALSE(fires.replicas.empty());
  for (size_t p = 0; p < w2.batch.expert_ids.size(); ++p)
    ASSERT_EQ(t2.node_of(fires.placement.gpu_of_slot(fires.routing.slot_of_pair[p])),
              t2.node_of(zepp.placement.gpu_of_slot(zepp.routing.slot_of_pair[p])));
  auto nic_bytes = [](const CommPlan& plan) {
    double b = 0;
    for (const Task& task : plan.tasks)
      if (task.kind == TaskKind::Transfer && task.link == Link::NIC) b += task.bytes;
    return b;
  };
  PlanOptions po = zepp_plan_options(o);
  po.shared_expert_window = true;
  const CommPlan hp = build_comm_plan(w2.batch, fires.placement, fires.routing, t2, m, po, fires.weight_moves, fires.multicasts);
  EXPECT_DOUBLE_EQ(nic_bytes(hp), nic_bytes(zepp.make_plan(zepp.placement, zepp.routing)));
  for (const Task& task : hp.tasks)
    if (task.phase == Phase::Weights && task.kind == TaskKind::Transfer) EXPECT_EQ(t2.node_of(task.gpu), t2.node_of(task.dst_gpu));
  // With Zepp's NIC floor (what zepp+hot passes) each node's GEMMs after dispatch end inside its
  // combine on the NICs: every export saves nothing and is refused, and zepp+hot is Zepp. When
  // it copied here anyway, it was 1.4% slower than zepp (4,153.1 against 4,094.7 us, before
  // Zepp's chunked dispatch).
  const NicFloor floor = nic_floor(w2.batch, zepp.placement, zepp.routing.slot_of_pair, t2, zepp_plan_options(o), m);
  ho.dispatch_seconds = floor.dispatch_seconds;
  ho.combine_seconds = floor.combine_seconds;
  const HotPlan refuses = plan_hot(w2.batch, zepp.placement, zepp.routing, t2, m, ho);
  EXPECT_TRUE(refuses.replicas.empty());
  EXPECT_GE(refuses.refused, 1);
  const StrategyDecision hot = decide_zepp_hot(StrategyInput{w2, m, t2, o});
  EXPECT_EQ(hot.placement.phy2log, zepp.placement.phy2log);
  EXPECT_EQ(hot.routing.slot_of_pair, zepp.routing.slot_of_pair);
  const double z2 = latency("zepp", w2, t2), h2 = latency("zepp+hot", w2, t2);
  EXPECT_NEAR(h2, z2, 0.005 * z2);  // only the hot pass's planning differs (3,863.4 against 3,862.9 us)

  // One node: no NICs, the GEMMs end the layer, and the copies beside the shared experts pay
  // (3,216.4 against 3,317.6 us, -3.0%).
  const Topology t1 = topology_preset("dgx-h100", 1);
  const Workload w1 = build_workload(&trace, m, t1, wo);
  const StrategyDecision hot1 = decide_zepp_hot(StrategyInput{w1, m, t1, o});
  EXPECT_EQ(hot1.placement.slots_per_gpu, find_strategy("zepp").decide(StrategyInput{w1, m, t1, o}).placement.slots_per_gpu +
                                                 o.extra_slots);  // it fired
  EXPECT_LT(latency("zepp+hot", w1, t1), 0.98 * latency("zepp", w1, t1));
}
