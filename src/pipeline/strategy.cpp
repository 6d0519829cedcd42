#include "pipeline/strategy.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "exec/estimate.hpp"
#include "exec/sim.hpp"
#include "routing/routing.hpp"

namespace zepp {
namespace {

double imbalance_of(const Routing& routing, const Placement& placement) {
  std::vector<double> load(placement.num_gpus, 0.0);
  for (const RouteCount& c : routing.counts) load[placement.gpu_of_slot(c.slot)] += double(c.tokens);
  double sum = 0, mx = 0;
  for (double l : load) sum += l, mx = std::max(mx, l);
  return sum > 0 ? mx / (sum / load.size()) : 1.0;
}

}  // namespace

const StrategyEntry& find_strategy(const std::string& name) {
  for (const auto& s : strategy_registry())
    if (s.name == name) return s;
  std::string names;
  for (const auto& n : strategy_names()) names += (names.empty() ? "" : ", ") + n;
  throw ArgumentError("strategies: unknown strategy '" + name + "', expected one of " + names);
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& s : strategy_registry()) names.push_back(s.name);
  return names;
}

int eplb_groups_for(const ModelShape& m, const Topology& t, int requested) {
  if (requested > 0) return requested;
  return m.num_experts % t.nodes == 0 ? t.nodes : 1;
}

int base_slots_per_gpu(const ModelShape& m, const Topology& t) {
  return (m.num_experts + t.num_gpus() - 1) / t.num_gpus();
}

StrategyDecision decide_with(Placement placement, const StrategyInput& in, bool locality, const PlanOptions& plan) {
  StrategyDecision d;
  d.placement = std::move(placement);
  d.locality_routing = locality;
  if (locality && in.opt.consolidate) d.routing_gemm = gemm_cost(in.model, in.topo);
  ConsolidateStats consolidated;
  route_timed(d, [&] {
    return locality ? route_locality(in.workload.batch, d.placement, in.topo, in.opt.balance_slack, true,
                                     d.routing_gemm, &consolidated, &d.routing_work)
                    : route_even(in.workload.batch, d.placement);
  });
  // Consolidated experts leave equation (1)'s bounds, so its optimum is no lower bound then.
  if (consolidated.moves > 0) d.balanced_routing = false;
  d.consolidate_cells = consolidated.cells;
  d.make_plan = [in, plan](const Placement& placement, const Routing& routing) {
    return build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model, plan);
  };
  return d;
}

CommPlan plan_to_simulate(const StrategyDecision& d, const StrategyOptions& opt) {
  CommPlan plan = d.make_plan(d.placement, d.routing);
  if (opt.planning == PlanningMode::Model) charge_planning(plan, d.planning);
  return plan;
}

StrategyOutcome run_strategy(const std::string& name, const Workload& w, const ModelShape& model,
                             const Topology& topo, const StrategyOptions& opt, ExecutorKind executor) {
  const StrategyEntry& entry = find_strategy(name);
  StrategyDecision d = entry.decide(StrategyInput{w, model, topo, opt});

  StrategyOutcome out;
  out.name = name;
  out.routing_wall_s = d.routing_wall_s;
  const double tb = model.token_bytes();
  out.imbalance = imbalance_of(d.routing, d.placement);
  out.routing_cost_s = routing_cost(d.routing, d.placement, topo, tb);
  // Bandwidths without an exact integer ratio (exact_optimum_possible): not solved, as with
  // opt.optimal false; `zepp simulate` says why on stderr.
  out.routing_cost_optimal_s = opt.optimal && d.balanced_routing && exact_optimum_possible(topo)
                                   ? routing_cost_optimal(w.batch, d.placement, topo, opt.balance_slack, tb)
                                   : std::nan("");

  switch (executor) {
    case ExecutorKind::Estimate:
      out.result = estimate_layer(w.batch, d.placement, d.routing, topo, model);
      if (opt.planning == PlanningMode::Model && !d.planning.empty()) {
        // Closed form, as the estimate is: the two all-gather steps one message each, then the
        // slowest GPU's planning.
        const double bytes = double(d.planning.metadata_bytes);
        if (bytes > 0)
          out.result.metadata_s = (topo.gpus_per_node > 1 ? topo.nvlink_latency + bytes / topo.nvlink_bw : 0.0) +
                                  (topo.nodes > 1 ? topo.nic_latency + (topo.nodes - 1) * topo.gpus_per_node * bytes / topo.nic_bw : 0.0);
        for (int g = 0; g < topo.num_gpus(); ++g)
          out.result.planning_s = std::max(out.result.planning_s, planning_seconds(d.planning, g));
        out.result.latency_s += out.result.metadata_s + out.result.planning_s;
      }
      break;
    case ExecutorKind::Sim:
      out.result = simulate_plan(plan_to_simulate(d, opt), topo, opt.timeline);
      break;
  }
  out.metadata_s = out.result.metadata_s;
  out.planning_s = out.result.planning_s;
  out.swap = d.swap;
  out.placement = std::move(d.placement);
  out.routing = std::move(d.routing);
  return out;
}

}  // namespace zepp
