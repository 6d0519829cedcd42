// Multi-iteration serving (issue 6): one MoE layer invoked on the batches of a DriftWorkload in
// order, under one system, with placement state kept between iterations.
//
// Systems: every registry strategy (pipeline/strategies.cpp), each deciding through the registry
// as run_strategy does, with a StrategyState kept across iterations: static strategies place
// once from history and keep that placement, zepp+swaps evolves it by intra-node swaps (§4.3),
// moonep / halo-q replicate per iteration.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "exec/result.hpp"
#include "pipeline/strategy.hpp"
#include "plan/comm_plan.hpp"
#include "serving/drift.hpp"
#include "swap/swap.hpp"

namespace zepp {

struct IterationReport {
  int iteration = 0;
  std::string dataset;
  double latency_s = 0;           // executor's layer latency (0 without an executor)
  // Charged in latency_s (StrategyOptions::planning Model, plan/planning.hpp): the simulated
  // metadata exchange and the modelled per-rank planning of the slowest GPU.
  double metadata_s = 0, rank_planning_s = 0;
  // Measured on this machine for strategies routed by Zepp's rule (StrategyDecision::
  // locality_routing; 0 otherwise): each rank's planning as a deployment runs it (Router's
  // per-rank protocol with a warm Router: count_rank, plan on the all-gathered counts,
  // route_rank, rank_layout), the slowest rank's wall time. Its slots are checked equal to the
  // global routing's (std::logic_error otherwise).
  double rank_planning_wall_s = 0;
  double comm_hidden_fraction = 0;
  double imbalance = 0;           // max / mean routed (token, expert) pairs per GPU
  double home_imbalance = 0;      // the same with contiguous homes and no replicas (0 when E % G != 0)
  int swaps = 0;                  // zepp+swaps: swaps accepted this iteration
  bool swap_triggered = false;    // zepp+swaps: estimated max load above (1 + C) x mean
  int swaps_refused = 0;          // zepp+swaps: swaps that lowered a load but did not pay
  SwapPlan::Refusal best_refused; // zepp+swaps: the rule's figures for the best refused swap
  int swap_horizon = 0;           // zepp+swaps: iterations its saving is summed over; 0 otherwise
  int weight_moves = 0;           // expert weight transfers this iteration
  double token_nic_bytes = 0, token_nvlink_bytes = 0;    // dispatch + combine rows, all hops
  double weight_nic_bytes = 0, weight_nvlink_bytes = 0;  // expert weights
  // Planning wall time on this machine (paper §5: routing, swap planning and metadata take about
  // 5% of the iteration): routing_s for the routing, plan_build_s for the comm plan (the
  // metadata every GPU needs), planning_s = swap / replica planning + routing_s + plan_build_s.
  double routing_s = 0, plan_build_s = 0, planning_s = 0;
};

struct ServeReport {
  std::string system;
  std::vector<IterationReport> iterations;
  double total_latency_s() const;
  double mean_imbalance() const;
  double mean_home_imbalance() const;
  // Share of the excess load removed, as iser-moe.txt §6.1 reports it:
  // 1 - (mean imbalance - 1) / (mean home imbalance - 1); 1 when there was no excess, NaN when
  // the home reference is undefined (E % G != 0).
  double excess_removed() const;
  double total_weight_bytes() const;
};

// Runs one layer (timeline events are returned when opt.timeline is set).
using PlanExecutor = std::function<LayerResult(const CommPlan&, const Topology&, bool timeline)>;

// Serves `iterations` batches of `workload` (from its next iteration on). With an empty
// `execute` only the decisions are made (replay: imbalance, bytes, planning time). Every
// iteration's result is passed to `on_iteration` (if set) as soon as it exists, with the
// executor's LayerResult. Throws ArgumentError ("strategies: unknown strategy ..." listing the names, "iterations",
// "extra_slots" and what the stages throw).
ServeReport serve(DriftWorkload& workload, const ModelShape& model, const Topology& topo, const std::string& system,
                  int iterations, const StrategyOptions& opt, const PlanExecutor& execute,
                  const std::function<void(const IterationReport&, const LayerResult&)>& on_iteration = {});

}  // namespace zepp
