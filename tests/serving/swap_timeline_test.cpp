// A swapped replica's computation never starts before its weights arrive, while computation
// needing no moved weights runs meanwhile (paper §4.3), checked on the SimGrid timeline.
#include <cstdio>
#include <map>

#include <gtest/gtest.h>

#include "core/presets.hpp"
#include "exec/sim.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"
#include "swap/swap.hpp"

using namespace zepp;

TEST(SwapTimeline, ComputeWaitsForSwappedWeightsOnly) {
  const Topology topo = topology_preset("a100", 1);  // 4 GPUs on one node
  ModelShape m;
  m.name = "tiny";
  m.num_experts = 8;
  m.top_k = 1;
  m.hidden = 1024;
  m.ffn = 4096;  // 25 MB of weights per expert: 0.25 ms over NVLink
  const Placement p = place_contiguous(8, topo);  // GPU 0 holds experts 0, 1
  RoutingBatch b;
  b.num_gpus = 4;
  b.num_experts = 8;
  b.top_k = 1;
  for (int g = 0; g <= 4; ++g) b.token_offset.push_back(400 * g);
  for (int t = 0; t < 1600; ++t) {
    b.expert_ids.push_back(t % 10 < 3 ? 0 : t % 10 < 6 ? 1 : 2 + t % 6);  // experts 0, 1 hot
    b.gate_weights.push_back(1.0f);
  }
  const SwapPlan s = plan_swaps(expert_demand(b), p, topo, 0.1);
  ASSERT_TRUE(s.triggered);
  ASSERT_FALSE(s.weight_moves.empty());
  const Routing r = route_locality(b, s.placement, topo, 0.1);
  CommPlan plan = build_comm_plan(b, s.placement, r, topo, m, PlanOptions{}, s.weight_moves);
  weights_after_dispatch(plan);
  const LayerResult res = simulate_plan(plan, topo, true);

  // A "weights" event (expert E, peer D) ends at arrival; an "expert GEMM" of E on gpu D is its computation.
  std::map<std::pair<int, int>, double> arrival;
  for (const TimelineEvent& e : res.timeline) {
    if (e.name == "weights") arrival[{e.expert, e.peer}] = e.end_s;
  }
  ASSERT_EQ(arrival.size(), s.weight_moves.size());
  int waited = 0, ran_meanwhile = 0;
  for (const TimelineEvent& e : res.timeline) {
    if (e.track != "compute" || e.name != "expert GEMM") continue;
    const auto it = arrival.find({e.expert, e.gpu});
    if (it != arrival.end()) {
      EXPECT_GE(e.start_s, it->second) << e.name << " on gpu " << e.gpu;
      ++waited;
    } else {
      for (const auto& [key, at] : arrival) ran_meanwhile += key.second == e.gpu && e.start_s < at;
    }
  }
  EXPECT_GT(waited, 0);
  EXPECT_GT(ran_meanwhile, 0);  // groups needing no moved weights ran while weights moved
}
