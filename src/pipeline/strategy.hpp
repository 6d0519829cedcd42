// Strategies as compositions of stages (DESIGN.md §2): placement -> routing -> comm plan ->
// executor. Every strategy runs on the same workload and the same executor; a strategy is a
// function that makes its decisions (placement, routing, plan), registered by name.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "exec/result.hpp"
#include "placement/placement.hpp"
#include "plan/planning.hpp"
#include "plan/comm_plan.hpp"
#include "routing/routing.hpp"
#include "swap/swap.hpp"
#include "workload/workload.hpp"

namespace zepp {

// Whether the sim executor charges each strategy's per-batch metadata exchange and planning on
// its critical path (plan/planning.hpp): Model does; Free leaves them out (the numbers before
// issue 20, for comparison).
enum class PlanningMode { Model, Free };

enum class ExecutorKind {
  Estimate,  // barrier-separated phases, closed form (src/exec/estimate.hpp)
  Sim,       // SimGrid flow-level cluster running the strategy's CommPlan
};

// Default --swap-horizon (iterations); the reason is in pipeline/strategies.cpp (zepp+swaps).
inline constexpr int kDefaultSwapHorizon = 8;

struct StrategyOptions {
  int extra_slots = 2;        // R: extra expert slots per GPU (paper §6.1 uses R = 2)
  double balance_slack = 0.1; // C of equation (1)
  double nic_slack = 0.0;     // C_NIC of equation (2)
  int eplb_groups = 0;        // EPLB expert groups; 0 = one per node when E % nodes == 0 (hierarchical), else 1
  // Zepp's ablation switches (paper Figure 12); ignored by the other strategies.
  bool split = true, merge = true, overlap = true, locality = true;
  // Zepp's stages beyond the figure's four, each with its ablation (issue 24): combine in
  // completion waves, each NIC's after its dispatch (plan/combine.cpp, plan/nic_order.cpp); Zepp's round-order rule, which keeps Algorithm 1's
  // order as priorities only, false: as dependencies in both phases (plan/rounds.cpp states the
  // rule and its measurements); own-node rows computed first while the GPU would wait for
  // dispatch (plan/builder.cpp, local_first_slots).
  bool waves = true, round_order_rule = true, local_first = true;
  // Zepp's dispatch in chunks ordered by the destination's GEMMs (plan/dispatch_chunks.cpp;
  // `zepp/no-dispatch-chunks` is its ablation: one put per NIC and peer per node pair).
  bool dispatch_chunks = true;
  // Zepp's consolidation by GEMM time after the locality routing (routing/consolidate.cpp,
  // beyond the paper): a weight-bound replica's rows join another replica of its expert while
  // that lowers the busiest GPU's roofline GEMM time (`zepp/no-consolidate` is its ablation).
  bool consolidate = true;
  // zepp+swaps: iterations a swap's saving is summed over before it is weighed against the
  // unhidden part of its weight transfer (swap/swap.hpp, SwapCosts::horizon).
  int swap_horizon = kDefaultSwapHorizon;
  // epic: Zepp's §4.1 placement instead of its own co-activation placement (the report's
  // comparison of how much of epic's latency its placement accounts for).
  bool epic_zepp_placement = false;
  // zepp: §4.1's placement; false: DeepSeek EPLB's placement with the same extra slots
  // (`zepp/eplb-placement`, the ablation of the placement rule, issue 24), all else Zepp's.
  bool zepp_placement_rule = true;
  // zepp, zepp+swaps: §4.1's placement weighed in roofline time at the expected batch instead of
  // tokens (placement/roofline.cpp; `zepp/roofline-placement`, `--roofline-placement`). Off: it
  // lost on data it was not chosen on (issue 24; docs/baselines/epic.md, "Roofline placement").
  bool roofline_placement = false;
  bool timeline = false;      // record timeline events (sim executor)
  bool optimal = true;        // also solve equation (1) exactly (LEMON) for routing_cost_optimal_s
  PlanningMode planning = PlanningMode::Model;
};

// What a strategy decides for one layer invocation, before anything runs.
// zepp+swaps' swap rule on one batch (paper §4.3, swap/swap.hpp): swaps accepted, swaps refused
// as not paying and the best refused one's figures, whether the trigger fired, and the horizon the
// saving was summed over (iterations).
struct SwapOutcome {
  int accepted = 0, refused = 0;
  bool triggered = false;
  int horizon = 0;
  SwapPlan::Refusal best_refused;
};

struct StrategyDecision {
  Placement placement;
  Routing routing;           // counts and slot_of_pair
  double routing_wall_s = 0; // wall time its routing took (planning cost)
  // Whether the routing keeps every replica's load within equation (1)'s balance bound
  // (locality-preferred and even-split routing do; nearest-replica routing and the replication
  // systems' own assignments do not). Only then is equation (1)'s optimum a lower bound on its
  // routing cost, so only then is routing_cost_optimal_s reported.
  bool balanced_routing = true;
  // Routed by Zepp's locality-preferred rule (Router) on `placement`: a rank can then route its
  // own tokens from the all-gathered counts alone (mpi/rank_plan.hpp).
  bool locality_routing = false;
  // The GEMM cost the locality routing consolidated by (disabled: rows only); a rank routing its
  // own tokens binds its Router to it, as to the placement.
  GemmCost routing_gemm;
  // Entries of the S x G count plan the consolidation read (ConsolidateStats::cells), charged
  // as planning work by Zepp's strategies (pipeline/strategies.cpp).
  double consolidate_cells = 0;
  // The locality routing's own work beyond cells and pairs (remote visits, rule pairs), charged as
  // planning work by Zepp's strategies; zeros unless routed by locality.
  RoutingWork routing_work;
  // What it computes per batch before dispatch (metadata exchange, per-rank planning), charged
  // by the executors under PlanningMode::Model (plan/planning.hpp lists each strategy's).
  PlanningWork planning;
  // zepp+swaps: its swap rule's outcome on this batch (so the output can say why none was
  // accepted) and the wall time of planning the swaps; empty and 0 for every other strategy.
  std::optional<SwapOutcome> swap;
  double swap_wall_s = 0;
  // Builds the strategy's comm plan for the sim executor from this decision's placement and
  // routing (most use build_comm_plan with their PlanOptions; baselines with their own dispatch
  // build their own). Valid while the workload, model and topology it was decided on live.
  std::function<CommPlan(const Placement&, const Routing&)> make_plan;
};

// What a strategy keeps between invocations of one layer (the iteration loop, serving/serve.hpp):
// the placement it made from history, which a static strategy reuses instead of placing again
// (placement changes only when the cluster rebalances, paper §5), or the one zepp+swaps evolves.
// Empty before the first invocation.
struct StrategyState {
  Placement placement;
  // zepp+hot: the expert each GPU's helper slots hold after the invocation ([G * S], -1: none;
  // swap/hot.hpp HotOptions::resident), so a replica that recurs in its slot is not copied again.
  std::vector<int32_t> resident;
};

struct StrategyInput {
  const Workload& workload;
  const ModelShape& model;
  const Topology& topo;
  const StrategyOptions& opt;
  StrategyState* state = nullptr;  // null: one invocation, placement from history
};

using StrategyFn = std::function<StrategyDecision(const StrategyInput&)>;

struct StrategyEntry {
  std::string name;
  std::string summary;  // one line: placement / routing / dispatch-combine / overlap
  StrategyFn decide;
};

// The consolidation's planning work (routing/consolidate.cpp) in count-plan cells: the entries
// of the S x G plan it read (StrategyDecision::consolidate_cells) times kConsolidateCellShare.
// Its pass sums contiguous rows, cheaper per entry than the water-filling's cells on which
// plan/planning.cpp's per-cell cost was measured: on one core, timed against Router::plan in
// the same process (2 Dec 2026, a loaded machine, so as ratios; Kimi-K2-like EP64 and EP128 x
// 384, Llama-4-like EP16, EP32, EP64 x 128), each entry it read added 0.14-0.54 of the plan's
// time per (expert, GPU) cell; the share is the top of that range.
inline constexpr double kConsolidateCellShare = 0.5;
double consolidate_work(const StrategyDecision& d);
// Adds d.routing_work to d.planning: the remote visits of `water_fillings` count plans (every
// GPU computes them) and each GPU's rule pairs.
void add_routing_work(StrategyDecision& d, int water_fillings = 1);

// Every strategy of this build, in the order tables list them (strategies.cpp).
const std::vector<StrategyEntry>& strategy_registry();
std::vector<std::string> strategy_names();
// The registered strategy called `name`. Throws ArgumentError("strategies: unknown strategy
// '<name>', expected one of ...") otherwise.
const StrategyEntry& find_strategy(const std::string& name);

struct StrategyOutcome {
  std::string name;
  Placement placement;
  Routing routing;
  LayerResult result;
  double imbalance = 0;              // max / mean (token, expert) pairs computed per GPU
  double routing_cost_s = 0;         // equation (1) objective of the routing used, seconds
  double routing_cost_optimal_s = 0; // exact optimum of equation (1) on the same placement; NaN
                                     // when not solved (opt.optimal false, or the link
                                     // bandwidths have no exact ratio: exact_optimum_possible)
                                     // or when the strategy's routing ignores the bound
                                     // (balanced_routing)
  double routing_wall_s = 0;         // wall time spent routing (planning cost)
  // The per-batch metadata exchange and planning charged (0 under PlanningMode::Free), seconds,
  // included in result.latency_s: when the counts all-gather ended, the longest per-GPU planning.
  double metadata_s = 0, planning_s = 0;
  std::optional<SwapOutcome> swap;  // StrategyDecision::swap
};

// Runs one strategy end to end. Throws ArgumentError("strategies: unknown ...") for an unknown
// name, and whatever the stages throw for shapes that do not fit.
StrategyOutcome run_strategy(const std::string& name, const Workload& workload, const ModelShape& model,
                             const Topology& topo, const StrategyOptions& opt, ExecutorKind executor);

// The plan the sim executor runs for decision `d`: its comm plan, with its per-batch work charged
// (charge_planning) when opt.planning is Model.
CommPlan plan_to_simulate(const StrategyDecision& d, const StrategyOptions& opt);

// Helpers shared by strategy definitions.
int eplb_groups_for(const ModelShape& m, const Topology& t, int requested);
int base_slots_per_gpu(const ModelShape& m, const Topology& t);  // ceil(E / G)
// Routes on `placement` (locality-preferred or even split), timing it; the plan is built with
// build_comm_plan and `plan` when an executor asks.
StrategyDecision decide_with(Placement placement, const StrategyInput& in, bool locality, const PlanOptions& plan);
// Runs `route` and stores its result and wall time (the strategy's planning cost) in `d`: the one
// place where routing is timed. Inline, as static_placement: the baselines' and swap's libraries
// use them and link below this one.
inline void route_timed(StrategyDecision& d, const std::function<Routing()>& route) {
  const auto t0 = std::chrono::steady_clock::now();
  d.routing = route();
  d.routing_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
// A static placement: the one kept in in.state when there is one, else `place()` (then kept).
inline Placement static_placement(const StrategyInput& in, const std::function<Placement()>& place) {
  if (in.state && !in.state->placement.phy2log.empty()) return in.state->placement;
  Placement p = place();
  if (in.state) in.state->placement = p;
  return p;
}

// Zepp's placement (§4.1) from the history, in tokens as §4.1 states; with opt.roofline_placement
// (an experiment, off by default) weighed in roofline time at the workload's tokens per GPU
// (placement/roofline.cpp) when that is known (> 0). Inline, as above.
inline Placement zepp_placement(const StrategyInput& in) {
  if (!in.opt.roofline_placement || in.workload.tokens_per_gpu <= 0)
    return place_zepp(in.workload.history_load, in.topo, in.opt.extra_slots);
  const RooflineBatch b = roofline_batch(in.model, in.topo, in.workload.tokens_per_gpu);
  return place_zepp(in.workload.history_load, in.topo, in.opt.extra_slots, &b);
}

// Completion waves of Zepp's combine (PlanOptions::combine_waves) when opt.waves: a wave per
// GEMM of each node's busiest GPU (plan/combine.cpp), at most 16, and each NIC's combine after
// its dispatch (PlanOptions::combine_after_dispatch). The cap bounds the simulator's work, not
// a latency we aimed at: with up to 64 waves the Kimi-K2 32 x 4 A100 64 MB layer took 279 s of
// simulation instead of 37 s (and 37.9 ms simulated against 37.4); on 4-node layers 64 was up
// to 2% faster than 16 (issue 24, measured in one build; docs/drift.md, "The swap rule,
// checked on the timeline").
inline constexpr int kZeppCombineWaves = 16;

// Most chunks of one inter-node dispatch flow when opt.dispatch_chunks (PlanOptions::
// dispatch_chunks; plan/dispatch_chunks.cpp chooses each flow's count by its rule, this only
// caps it): the same cap, for the same reason, as kZeppCombineWaves.
inline constexpr int kZeppDispatchChunks = 16;

// Zepp's plan options (§4.2 and its stages) from the strategy options: the one source for
// `zepp`, `zepp+swaps` and `zepp-overlap`.
PlanOptions zepp_plan_options(const StrategyOptions& opt);

}  // namespace zepp
