// Strategies as compositions of stages (DESIGN.md §2): placement -> routing -> comm plan ->
// executor. Every strategy runs on the same workload and the same executor.
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"
#include "exec/result.hpp"
#include "workload/workload.hpp"

namespace zepp {

enum class ExecutorKind {
  Estimate,  // barrier-separated phases, closed form (src/exec/estimate.hpp)
  Sim,       // SimGrid flow-level cluster (src/exec/sim_*)
};

struct StrategyOptions {
  int extra_slots = 2;        // R: extra expert slots per GPU (paper §6.1 uses R = 2)
  double balance_slack = 0.1; // C of equation (1)
  double nic_slack = 0.0;     // C_NIC of equation (2)
  int eplb_groups = 0;        // EPLB expert groups; 0 = one per node when E % nodes == 0 (hierarchical), else 1
  // Zepp's ablation switches (paper Figure 12); ignored by the other strategies.
  bool split = true, merge = true, overlap = true, locality = true;
  bool timeline = false;      // record timeline events (sim executor)
  bool optimal = true;        // also solve equation (1) exactly (LEMON) for routing_cost_optimal_s
};

struct StrategyOutcome {
  std::string name;
  Placement placement;
  Routing routing;
  LayerResult result;
  double imbalance = 0;              // max / mean (token, expert) pairs computed per GPU
  double routing_cost_s = 0;         // equation (1) objective of the routing used, seconds
  double routing_cost_optimal_s = 0; // exact optimum of equation (1) on the same placement
  double routing_wall_s = 0;         // wall time spent routing (planning cost)
};

// Strategy names this build runs: a2av, eplb, zepp.
std::vector<std::string> strategy_names();

// Runs one strategy end to end. Throws ArgumentError("strategies: unknown ...") for an unknown
// name, and whatever the stages throw for shapes that do not fit.
StrategyOutcome run_strategy(const std::string& name, const Workload& workload, const ModelShape& model,
                             const Topology& topo, const StrategyOptions& opt, ExecutorKind executor);

}  // namespace zepp
