// The registry of strategies (DESIGN.md §2 table). Add a strategy by defining its decide
// function in its own file and listing it here.
#include <chrono>

#include "baselines/baselines.hpp"
#include "core/error.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"
#include "pipeline/strategy.hpp"
#include "pipeline/zepp_hot.hpp"
#include "swap/strategies.hpp"
#include "swap/swap.hpp"

namespace zepp {
namespace {

// Plain EP (A2AV+GEMM): one replica per expert, home routing, all-to-allv, no overlap.
StrategyDecision decide_a2av(const StrategyInput& in) {
  Placement p = static_placement(in, [&] { return place_contiguous(in.model.num_experts, in.topo); });
  return decide_with(std::move(p), in, false, PlanOptions{false, false, false, 0.0});
}

// DeepSeek EPLB: its replicas and placement, even split over replicas, all-to-allv, no overlap.
StrategyDecision decide_eplb(const StrategyInput& in) {
  Placement p = static_placement(in, [&] {
    const int slots = base_slots_per_gpu(in.model, in.topo) + in.opt.extra_slots;
    return place_eplb(in.workload.history_load, in.topo, slots, eplb_groups_for(in.model, in.topo, in.opt.eplb_groups));
  });
  return decide_with(std::move(p), in, false, PlanOptions{false, false, false, 0.0});
}

// Zepp (paper §4): placement §4.1, locality-preferred routing, split + merge, Algorithm 1.
StrategyDecision decide_zepp(const StrategyInput& in) {
  Placement p = static_placement(in, [&] {
    if (in.opt.zepp_placement_rule) return zepp_placement(in);
    const int slots = base_slots_per_gpu(in.model, in.topo) + in.opt.extra_slots;
    return place_eplb(in.workload.history_load, in.topo, slots, eplb_groups_for(in.model, in.topo, in.opt.eplb_groups));
  });
  StrategyDecision d = decide_with(std::move(p), in, in.opt.locality, zepp_plan_options(in.opt));
  // Per batch (§5): E counts per GPU all-gathered, the count-level plan, the own pairs.
  const int E = in.model.num_experts, G = in.topo.num_gpus();
  d.planning = per_batch_work(in.workload.batch, E, double(E) * G + consolidate_work(d), true);
  add_routing_work(d);
  return d;
}

// Zepp with intra-node swaps (§4.3): Zepp's placement from history, then on every invocation
// swaps planned on the batch's demand and applied to the placement kept from the previous one
// (StrategyInput::state), locality-preferred routing on it, and the §4.2 plan in which the
// swapped slots' computation waits for its weights (Weights transfers over NVLink, after
// dispatch: weights_after_dispatch).
StrategyDecision decide_zepp_swaps(const StrategyInput& in) {
  const Placement start =
      static_placement(in, [&] { return zepp_placement(in); });
  // A swap stays in the kept placement until demand moves it again, so its saving recurs every
  // iteration (§4.3). Default horizon (kDefaultSwapHorizon = 8): a choice, not a fit; with the
  // rotating drift of §6.5 (period 4) demand shifts every 4 iterations, and a swap made for one
  // phase of the rotation returns with it, so 8 (two periods) is a conservative expected life;
  // with --swap-horizon 1 a swap must pay inside its first iteration (the earlier rule, which
  // never fired on the DeepSeek trace).
  SwapCosts costs = swap_costs(in.model, in.topo);
  costs.horizon = in.opt.swap_horizon;
  const auto t0 = std::chrono::steady_clock::now();
  // The batch's count-level routing before swaps (what every rank has from the all-gathered
  // counts) gives each replica's rows; each rank's pairs routed on it give the rows it puts on
  // the NICs toward each node (N numbers per rank all-gathered): the dispatch time (weights move
  // after dispatch) and each node's combine, the floor under which GEMMs after dispatch save
  // nothing.
  const PlanOptions plan = zepp_plan_options(in.opt);
  const std::vector<RouteCount> counts =
      route_locality_counts(in.workload.batch.demand(), start, in.topo, in.opt.balance_slack,
                            in.opt.locality && in.opt.consolidate ? gemm_cost(in.model, in.topo) : GemmCost{});
  NicFloor nic = nic_floor(in.workload.batch, start, assign_pairs(in.workload.batch, start, in.topo, counts), in.topo,
                           plan, in.model);
  costs.dispatch_seconds = nic.dispatch_seconds;
  costs.combine_seconds = std::move(nic.combine_seconds);
  std::vector<double> slot_rows(start.num_slots(), 0.0), slot_remote_rows(start.num_slots(), 0.0);
  for (const RouteCount& c : counts) {
    slot_rows[c.slot] += double(c.tokens);
    if (c.src_gpu / in.topo.gpus_per_node != start.gpu_of_slot(c.slot) / in.topo.gpus_per_node)
      slot_remote_rows[c.slot] += double(c.tokens);
  }
  SwapPlan sp = plan_swaps(expert_demand(in.workload.batch), start, in.topo, in.opt.balance_slack, costs, slot_rows,
                           slot_remote_rows);
  const double swap_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (in.state) in.state->placement = sp.placement;
  StrategyDecision d = decide_with(std::move(sp.placement), in, in.opt.locality, plan);
  // Per batch: zepp's work (its count-level plan on the placement before swaps also gives the
  // rows per replica); each rank's N rows toward each node, all-gathered, and the NIC split of
  // every flow (N x G cells; the N counts go after the count-level plan, a second small
  // all-gather whose latency is charged only as bytes in the first); when the trigger fires, the
  // swap search, counted as one more count-level pass over E x G cells (plan_swaps has no
  // benchmark of its own); and when swaps moved experts, the count-level plan again on the new
  // placement. (The trigger itself is a maximum over G loads.)
  const int E = in.model.num_experts, G = in.topo.num_gpus(), N = in.topo.nodes;
  const double passes = 1.0 + (sp.triggered ? 1.0 : 0.0) + (sp.swaps.empty() ? 0.0 : 1.0);
  d.planning = per_batch_work(in.workload.batch, E + N, passes * (E * G + consolidate_work(d)) + double(N) * G, true);
  add_routing_work(d, sp.swaps.empty() ? 1 : 2);  // the water-filling before and after swaps
  d.swap = SwapOutcome{int(sp.swaps.size()), sp.refused_for_cost, sp.triggered, costs.horizon, sp.best_refused};
  d.swap_wall_s = swap_wall_s;
  d.make_plan = [in, plan, moves = std::move(sp.weight_moves)](const Placement& placement, const Routing& routing) {
    CommPlan c = build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model, plan, moves);
    weights_after_dispatch(c);
    return c;
  };
  return d;
}

// Zepp's split, merge and Algorithm 1 overlap alone, on contiguous experts without replicas
// routed home (the first step of the paper's Figure 12 ablation).
StrategyDecision decide_zepp_overlap(const StrategyInput& in) {
  Placement p = static_placement(in, [&] { return place_contiguous(in.model.num_experts, in.topo); });
  StrategyDecision d = decide_with(std::move(p), in, false, zepp_plan_options(in.opt));
  // Per batch, with split: the NIC split of each (source node, destination node) flow (eq. (2)/
  // (3)) needs the rows every GPU of the source node sends toward each node, so each GPU's N
  // counts are all-gathered, the split is solved over N x G cells and each GPU assigns its own
  // pairs to NICs (as FAST pays for its schedule). Home routing itself is a table lookup.
  if (in.opt.split) {
    const int N = in.topo.nodes, G = in.topo.num_gpus();
    d.planning = per_batch_work(in.workload.batch, N, double(N) * G, true);
  }
  return d;
}

}  // namespace

double consolidate_work(const StrategyDecision& d) { return kConsolidateCellShare * d.consolidate_cells; }

void add_routing_work(StrategyDecision& d, int water_fillings) {
  d.planning.remote_visits = double(water_fillings) * double(d.routing_work.remote_visits);
  d.planning.rule_pairs = d.routing_work.rule_pairs;
}

PlanOptions zepp_plan_options(const StrategyOptions& opt) {
  PlanOptions plan{opt.split, opt.merge, opt.overlap, opt.nic_slack, /*round_order=*/true,
                   /*pre_reduce=*/true, /*split_if_it_pays=*/true};
  plan.combine_waves = opt.waves ? kZeppCombineWaves : 1;
  plan.combine_after_dispatch = opt.waves;  // waves sent early would take the NIC from dispatch
  plan.dispatch_chunks = opt.dispatch_chunks ? kZeppDispatchChunks : 1;
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
      {"iser-moe", "HALO-Q replicas in NVLink-domain groups by in-switch multicast (owner-direct or SAMI), copy beside the shared expert, fused dispatch/GEMMs/combine", decide_iser_moe},
      {"sglang", "contiguous experts, home routing, dense all-gather, expert GEMMs, dense reduce-scatter, sequential (SGLang DP attention + EP, §6.4)", decide_sglang},
      {"zepp", "Zepp placement (§4.1), locality-preferred routing, split + merge (§4.2), Algorithm 1 overlap", decide_zepp},
      {"zepp+swaps", "zepp, plus intra-node swaps on each batch's demand (§4.3) kept across iterations", decide_zepp_swaps},
      {"zepp+hot", "zepp, plus per-invocation hot replicas in each NVLink domain for the excess over the node's mean, by in-switch multicast beside the shared expert, only when the copy hides", [](const StrategyInput& in) { return decide_zepp_hot(in); }},
      {"zepp+hot/no-multicast", "zepp+hot with its replicas copied point to point from the owner (the multicast ablation)", [](const StrategyInput& in) { return decide_zepp_hot(in, {false, true}); }},
      {"zepp+hot/no-resident", "zepp+hot with every replica copied again on every iteration (the residency ablation)", [](const StrategyInput& in) { return decide_zepp_hot(in, {true, false}); }},
      {"zepp-overlap", "contiguous experts, home routing, Zepp's split + merge + Algorithm 1 overlap (Figure 12's first step)", decide_zepp_overlap},
  };
  return registry;
}

}  // namespace zepp
