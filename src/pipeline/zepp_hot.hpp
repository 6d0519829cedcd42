// zepp+hot (issue 25 item 5, docs/zepp-hot.md): Zepp's static placement (zepp.txt §4.1) and
// locality-preferred routing across nodes, plus per-invocation hot replicas inside each NVLink
// domain (node) for the load the relaxed bound C leaves above the node's mean (swap/hot.hpp,
// after HALO-Q's replication and ISER-MoE's in-switch multicast, iser-moe.txt §4.1-4.4).
#pragma once
#include "pipeline/strategy.hpp"

namespace zepp {

// Zepp's decision (placement kept in in.state across iterations, routing with slack C), then
// plan_hot with S = in.opt.extra_slots helper slots per GPU and the helper slots' residents kept
// in in.state. When no replica is made the decision is zepp's exactly (placement, routing, plan);
// otherwise the plan is Zepp's (split, merge, Algorithm 1 overlap) on the placement with helper
// slots, its copies issued at once beside the shared experts (PlanOptions::shared_expert_window)
// and each helper GEMM waiting for its weights. Planning charged: E counts per GPU all-gathered,
// Zepp's count-level plan (E x G cells), the hot pass on its slot loads (HotPlan::cells; every
// rank runs it for every node, since its own pairs may move inside any node) and the own pairs
// assigned (each rank re-targets its moved pairs while assigning them).
// Its parts, each with an ablation (a registered strategy):
//  - multicast: copies by in-switch multicast (SAMI); throws ArgumentError ("strategy") on a
//    topology without it (NvlinkModel::Switch and multicast_port_output > 0). Without it
//    (`zepp+hot/no-multicast`) the owner copies point to point, on any topology;
//  - resident: helper slots keep their experts across iterations (in.state), so a recurring
//    replica is not copied again; without it (`zepp+hot/no-resident`) every replica is copied.
struct ZeppHotParts {
  bool multicast = true, resident = true;
};
StrategyDecision decide_zepp_hot(const StrategyInput& in, const ZeppHotParts& parts = {});

}  // namespace zepp
