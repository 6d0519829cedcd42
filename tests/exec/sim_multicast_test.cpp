// In-switch multicast, SAMI and the shared-expert window in the `sim` executor, by hand
// (iser-moe.txt §3.3, §4.2-4.4). Topology of tests/plan/fixture.hpp on one NVSwitch node: ports
// of 100 B/s per direction, no latency; one port's multicast output 200 B/s unless stated.
#include <gtest/gtest.h>

#include <algorithm>

#include "../plan/fixture.hpp"
#include "core/error.hpp"
#include "exec/sim.hpp"

namespace zepp {
namespace {

Topology switch_node(int gpus, double multicast_output = 200) {
  Topology t = test::small_topology(1, gpus);
  t.nvlink_model = NvlinkModel::Switch;
  t.multicast_port_output = multicast_output;
  return t;
}

CommPlan empty_plan(const Topology& topo) {
  CommPlan plan;
  plan.nodes = 1;
  plan.gpus_per_node = plan.num_gpus = topo.num_gpus();
  plan.top_k = 1;
  plan.model = test::small_model(4, 1);
  plan.token_bytes = plan.model.token_bytes();
  return plan;
}

double broadcast(const Topology& topo, int owner, std::vector<int32_t> members, double bytes, bool sami) {
  CommPlan plan = empty_plan(topo);
  MulticastMove m;
  m.expert = 0;
  m.owner = owner;
  m.members = members;
  m.slots = members;
  m.sami = sami;
  add_broadcast_tasks(plan, m, bytes, topo, 0);
  return simulate_plan(plan, topo).latency_s;
}

}  // namespace

TEST(SimMulticast, OwnerDirectStoreLeavesTheOwnerOnceAtOnePortsReplicationRate) {
  // 100 B from GPU 0 to {0, 1, 2, 3}: one flow over 0's egress (100 B/s), the port's replication
  // link 200 / 4 = 50 B/s and every member's ingress: 50 B/s, 2 s. Point to point, 0's egress
  // carries three copies: 300 B at 100 B/s, 3 s.
  EXPECT_NEAR(broadcast(switch_node(4), 0, {0, 1, 2, 3}, 100, false), 2.0, 1e-9);
  CommPlan p2p = empty_plan(switch_node(4));
  for (int d = 1; d < 4; ++d) {
    Task t;
    t.kind = TaskKind::Transfer;
    t.phase = Phase::Weights;
    t.gpu = 0, t.dst_gpu = d, t.link = Link::NVLink, t.bytes = 100;
    p2p.tasks.push_back(t);
  }
  EXPECT_NEAR(simulate_plan(p2p, switch_node(4)).latency_s, 3.0, 1e-9);
  // Two members: replication link 100 B/s, no longer below the port: 1 s.
  EXPECT_NEAR(broadcast(switch_node(2), 0, {0, 1}, 100, false), 1.0, 1e-9);
}

TEST(SimMulticast, SamiSpreadsTheInjectionOverTheMembersPorts) {
  // SAMI, owner 0 in {0..3}, shares of 25 B: pulls 0 -> 1, 2, 3 and a multicast from each
  // member. Each non-owner ingress carries 4 multicasts and its pull: 100 / 5 = 20 B/s per flow,
  // every flow crosses such a port, so all end at 25 / 20 = 1.25 s (= W (1 + 1/g) / port).
  EXPECT_NEAR(broadcast(switch_node(4), 0, {0, 1, 2, 3}, 100, true), 1.25, 1e-9);
  // Owner 4 outside the group: four pulls leave 4's egress (4 x 20 <= 100), same ingress load.
  EXPECT_NEAR(broadcast(switch_node(5), 4, {0, 1, 2, 3}, 100, true), 1.25, 1e-9);
  // A slow replication rate (40 B/s per port, 10 B/s per receiver): single port 100 / 10 =
  // 10 s; SAMI's four ports each push a 25 B share at 10 B/s: 2.5 s, 4x.
  EXPECT_NEAR(broadcast(switch_node(4, 40), 0, {0, 1, 2, 3}, 100, false), 10.0, 1e-9);
  EXPECT_NEAR(broadcast(switch_node(4, 40), 0, {0, 1, 2, 3}, 100, true), 2.5, 1e-9);
}

TEST(SimMulticast, RefusedWhereTheSwitchCannotMulticast) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message([] { broadcast(switch_node(4, 0), 0, {0, 1, 2, 3}, 100, false); }).rfind("multicasts[0]:", 0), 0u);
  Topology per_pair = switch_node(4);
  per_pair.nvlink_model = NvlinkModel::PerPair;
  EXPECT_EQ(message([&] { broadcast(per_pair, 0, {0, 1, 2, 3}, 100, false); }).rfind("multicasts[0]:", 0), 0u);
  EXPECT_EQ(message([] { broadcast(switch_node(4), 3, {0, 1, 2}, 100, false); }).rfind("multicasts[0]:", 0), 0u)
      << "owner-direct needs the owner in the group";
  EXPECT_EQ(message([] { broadcast(switch_node(4), 0, {2, 1}, 100, true); }).rfind("multicasts[0]:", 0), 0u);
  // A hand-made multicast task on a topology without multicast: the executor's check.
  CommPlan plan = empty_plan(switch_node(4));
  Task t;
  t.kind = TaskKind::Transfer;
  t.phase = Phase::Weights;
  t.gpu = 0, t.dst_gpu = 1, t.link = Link::NVLink, t.bytes = 100;
  plan.set_multicast(plan.add_task(t), {0, 1});
  EXPECT_EQ(message([&] { simulate_plan(plan, switch_node(4, 0)); }).rfind("topo:", 0), 0u);
}

TEST(SimMulticast, SharedExpertWindowHidesTheCopyAndOnlyTheHelperSlotWaits) {
  // 2 GPUs, experts 0 (GPU 0) and 1 (GPU 1), one shared expert; slots: GPU 0 [e0, e1 helper],
  // GPU 1 [e1, e1 helper]. Expert weights 3 * 8 * 1 * 2 = 48 B; one GEMM or the shared expert
  // over 1-2 tokens is memory-bound: 48 B / 100 B/s = 0.48 s. Replica of e1 multicast from GPU 1
  // to {0, 1} at a port output of 100 B/s (50 B/s per receiver): 0.96 s, from time 0.
  // GPU 0's tokens: e1 (its helper slot), e0; GPU 1's: e1, e0 (dispatched to GPU 0, 16 B, sharing
  // GPU 1's egress with the multicast's 50 B/s: 50 B/s, 0.32 s).
  const Topology topo = switch_node(2, 100);
  ModelShape model = test::small_model(2, 1);
  model.shared_experts = 1;
  const RoutingBatch batch = test::make_batch(2, 1, {{{1}, {0}}, {{1}, {0}}});
  Placement p;
  p.num_gpus = 2, p.num_experts = 2, p.slots_per_gpu = 2, p.phy2log = {0, 1, 1, 1};
  Routing r;
  r.slot_of_pair = {1, 0, 2, 0};
  r.counts = {{0, 0, 0, 1}, {0, 1, 0, 1}, {1, 0, 1, 1}, {1, 1, 2, 1}};
  PlanOptions o{false, false, true, 0.0};
  o.shared_expert_window = true;
  MulticastMove m;
  m.expert = 1, m.owner = 1, m.members = {0, 1}, m.slots = {1, 3}, m.sami = false;
  const CommPlan plan = build_comm_plan(batch, p, r, topo, model, o, {}, {m});
  EXPECT_NEAR(plan.shared_expert_s, 0.48, 1e-12);
  const LayerResult res = simulate_plan(plan, topo, true);
  auto events = [&](const std::string& name, int gpu) {
    std::vector<TimelineEvent> out;
    for (const auto& e : res.timeline)
      if (e.name == name && e.gpu == gpu) out.push_back(e);
    return out;
  };
  for (int g = 0; g < 2; ++g) {  // the shared expert first on both streams
    const auto s = events("shared expert", g);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_NEAR(s[0].start_s, 0.0, 1e-9);
    EXPECT_NEAR(s[0].end_s, 0.48, 1e-9);
  }
  const auto mc = events("weights multicast", 1);  // beside it, not after it
  ASSERT_EQ(mc.size(), 1u);
  EXPECT_NEAR(mc[0].start_s, 0.0, 1e-9);
  EXPECT_NEAR(mc[0].end_s, 0.96, 1e-9);
  const auto dispatch = events("dispatch direct", 1);  // dispatch waits for the shared expert
  ASSERT_EQ(dispatch.size(), 1u);
  EXPECT_NEAR(dispatch[0].start_s, 0.48, 1e-9);
  EXPECT_NEAR(dispatch[0].end_s, 0.80, 1e-9);
  // GPU 0: the home GEMM (slot 0) runs when its rows are there (0.80-1.28); only the helper
  // slot waits for the replica (there at 0.96) and runs next (1.28-1.76). The layer counts from
  // the window's end.
  std::vector<TimelineEvent> gemms = events("expert GEMM", 0);
  std::sort(gemms.begin(), gemms.end(), [](auto& a, auto& b) { return a.start_s < b.start_s; });
  ASSERT_EQ(gemms.size(), 2u);
  EXPECT_NEAR(gemms[0].start_s, 0.80, 1e-9);
  EXPECT_NEAR(gemms[1].start_s, 1.28, 1e-9);
  EXPECT_NEAR(gemms[1].end_s, 1.76, 1e-9);
  double last = 0;
  for (const auto& e : res.timeline) last = std::max(last, e.end_s);
  EXPECT_NEAR(res.latency_s, last - 0.48, 1e-9);
}

}  // namespace zepp
