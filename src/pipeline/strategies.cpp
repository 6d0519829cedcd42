// The registry of strategies (DESIGN.md §2 table). Add a strategy by defining its decide
// function in its own file and listing it here.
#include "baselines/baselines.hpp"
#include "core/error.hpp"
#include "placement/placement.hpp"
#include "pipeline/strategy.hpp"
#include "swap/strategies.hpp"

namespace zepp {
namespace {

// Plain EP (A2AV+GEMM): one replica per expert, home routing, all-to-allv, no overlap.
StrategyDecision decide_a2av(const StrategyInput& in) {
  return decide_with(place_contiguous(in.model.num_experts, in.topo), in, false, PlanOptions{false, false, false, 0.0});
}

// DeepSeek EPLB: its replicas and placement, even split over replicas, all-to-allv, no overlap.
StrategyDecision decide_eplb(const StrategyInput& in) {
  const int slots = base_slots_per_gpu(in.model, in.topo) + in.opt.extra_slots;
  Placement p = place_eplb(in.workload.history_load, in.topo, slots, eplb_groups_for(in.model, in.topo, in.opt.eplb_groups));
  return decide_with(std::move(p), in, false, PlanOptions{false, false, false, 0.0});
}

// Zepp (paper §4): placement §4.1, locality-preferred routing, split + merge, Algorithm 1.
StrategyDecision decide_zepp(const StrategyInput& in) {
  Placement p = place_zepp(in.workload.history_load, in.topo, in.opt.extra_slots);
  return decide_with(std::move(p), in, in.opt.locality, zepp_plan_options(in.opt));
}

}  // namespace

PlanOptions zepp_plan_options(const StrategyOptions& opt) {
  PlanOptions plan{opt.split, opt.merge, opt.overlap, opt.nic_slack, /*round_order=*/true,
                   /*pre_reduce=*/true, /*split_if_it_pays=*/true};
  plan.combine_waves = opt.waves ? kZeppCombineWaves : 1;
  plan.round_order = !opt.round_order_rule;  // the rule: order by priorities only (rounds.cpp)
  plan.local_first = opt.local_first;
  return plan;
}

const std::vector<StrategyEntry>& strategy_registry() {
  static const std::vector<StrategyEntry> registry = {
      {"a2av", "contiguous experts, home routing, all-to-allv, no overlap", decide_a2av},
      {"eplb", "EPLB replicas and placement, even split over replicas, all-to-allv, no overlap", decide_eplb},
      {"fast", "contiguous experts, home routing, NIC split + peer puts in node-pair rounds (no incast), barriers", decide_fast},
      {"comet", "contiguous experts, home routing, dense all-gather dispatch, tiled compute/comm overlap", decide_comet},
      {"comet+eplb", "EPLB replicas and placement, even split, dense all-gather dispatch, tiled overlap", decide_comet_eplb},
      {"epic", "replicated placement, nearest-replica routing, per-node dispatch dedup, per-expert pipelining", decide_epic},
      {"moonep", "per-invocation replicas from the batch (owner copies, across nodes), exactly balanced routing, all-to-allv, barriers", decide_moonep},
      {"halo-q", "per-invocation hot-expert replicas on aligned rank groups, quota repair, local-first routes, all-to-allv, barriers", decide_haloq},
      {"sglang", "contiguous experts, home routing, dense all-gather, expert GEMMs, dense reduce-scatter, sequential (SGLang DP attention + EP, §6.4)", decide_sglang},
      {"zepp", "Zepp placement (§4.1), locality-preferred routing, split + merge (§4.2), Algorithm 1 overlap", decide_zepp},
  };
  return registry;
}

}  // namespace zepp
