// Limits checked before work starts (issue 15): what a run will take, from the shapes alone, and
// whether each strategy's placement fits the cluster, so a run that cannot work stops in
// milliseconds with the flag to change instead of after minutes of building.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/input_bounds.hpp"  // memory_budget_bytes
#include "core/types.hpp"
#include "pipeline/strategy.hpp"

namespace zepp {

struct CostEstimate {
  double pairs = 0;    // (token, expert) pairs of the batch: tokens_per_gpu x GPUs x top-k
  double tasks = 0;    // simulated tasks (messages and GEMMs) of one strategy's comm plan, at most
  double bytes = 0;    // peak memory of the workload, routing and plans of all strategies
  double seconds = 0;  // CPU time of the same, on one core of this 2-core machine (an upper bound)
  double gpus = 0, experts = 0;  // the sizes it was derived from, named in text()
  // "about 5.4 GB and 3 s (32 GPUs x 384 experts, 38.3 M pairs, 1.2 k tasks per strategy)"
  std::string text() const;
};

// The default time budget of a simulating command (--max-minutes): runs estimated longer are
// refused before they start.
constexpr double kDefaultSecondsBudget = 3600;

// The time budget of one placement or routing call, `zepp place` and the Python functions alike,
// so the program and the library refuse the same sizes (EPLB with num_replicas 4e8 took memory
// without end in `zepp place` while Python refused it): ZEPP_MAX_SECONDS when set, else 60 s.
// Throws ArgumentError "ZEPP_MAX_SECONDS: expected a positive number of seconds, got 'TEXT'".
constexpr double kCallSecondsBudget = 60;
double call_seconds_budget();

// Peak memory of building the workload and running `strategies` strategies on it: per pair the
// batch, each strategy's routing and plan; per (GPU, expert) the demand matrices and routing
// quotas; per task the plan and the simulation. The per-unit constants were measured (peak RSS
// of `zepp simulate`, cost.cpp says which runs); the estimate is for refusing runs that cannot
// fit, not a prediction to the megabyte.
// zepp_placement: a strategy packs replicas with Zepp's §4.1 rule (zepp, epic and their variants),
// whose refinement takes time quadratic in the expert count.
CostEstimate estimate_cost(const ModelShape& model, const Topology& topo, int64_t tokens_per_gpu, int strategies,
                           bool zepp_placement = true);

// Placing `slots` replicas of `experts` experts per layer on `gpus` GPUs for `layers` layers
// (zepp place, zepp.rebalance_experts): Zepp's rule (zepp) or EPLB's. Sizes as doubles so that
// no product overflows.
CostEstimate estimate_placement_cost(double layers, double experts, double slots, double gpus, bool zepp);

// Bytes `zepp place` holds to print those maps as JSON (phy2log, log2phy padded to the most
// replicas of an expert, logcnt; a document node and its text per entry), on top of
// estimate_placement_cost.
double placement_json_bytes(double layers, double experts, double slots);

// Routing `pairs` (token, k) pairs over a layer of `slots` slots, `experts` experts on `gpus`
// GPUs (zepp.route, zepp.Router): the replica tables, the per-(GPU, expert) demand and quotas.
CostEstimate estimate_routing_cost(double slots, double experts, double gpus, double pairs);

// Throws ArgumentError naming `flag` when `estimate` exceeds `budget_bytes`, `time_flag` when it
// exceeds `budget_seconds`: the estimate, the budget, and `smaller` (what makes the run smaller).
void check_budget(const CostEstimate& estimate, double budget_bytes, const std::string& flag, double budget_seconds,
                  const std::string& time_flag, const std::string& smaller =
                      "use a smaller --size-mb, fewer --nodes, --gpus-per-node or --experts, or fewer strategies");

// Throws the ArgumentError the strategy's placement would throw on this model and cluster
// (experts that do not divide over the GPUs for contiguous homes, EPLB groups that do not divide
// the experts, more slots per GPU than experts), placing a uniform load: O(E + GPUs x slots),
// before any workload exists. Unknown names throw as run_strategy does. `flags`: the caller's
// flags that change the placement, which the message suggests (a command has only some).
void check_strategy_fits(const std::string& name, const ModelShape& model, const Topology& topo,
                         const StrategyOptions& opt,
                         const std::string& flags = "--nodes, --gpus-per-node, --experts, --extra-slots or --eplb-groups");

}  // namespace zepp
