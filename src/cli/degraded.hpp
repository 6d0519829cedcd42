// Lost nodes for `zepp simulate` and `zepp run` (elastic EP): the cluster that survives, a workload
// keeping the full cluster's batch on it, and the moves Zepp's rebalancing needs to get there.
#pragma once
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "pipeline/strategy.hpp"

namespace zepp::cli {

struct Degraded {
  WorkloadFlags flags;     // nodes: the survivors; size_mb x N / N', so the batch's tokens stay
  StrategyOptions opt;     // extra_slots such that every surviving GPU keeps its S slots
  nlohmann::json report;   // failed_nodes, nodes before / after, S, Zepp placement moves and imbalance
};

// `failed`: node ids of the full cluster `full`, resolved from `flags` with strategy options `opt`.
// Zepp's placement of the full cluster is rebalanced onto the survivors (rebalance_zepp with the
// lost GPUs) to report the weight moves and balance; the strategies then run on the surviving
// nodes with the same S. Throws ArgumentError("--failed-nodes: ...") for ids outside [0, N),
// repeated ids, no survivor, or survivors too few to hold every expert in S slots per GPU.
Degraded degrade(const WorkloadFlags& flags, const StrategyOptions& opt, const std::vector<int>& failed,
                 const ResolvedWorkload& full);

}  // namespace zepp::cli
