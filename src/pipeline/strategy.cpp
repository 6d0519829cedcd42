#include "pipeline/strategy.hpp"

#include <algorithm>
#include <chrono>

#include "core/error.hpp"
#include "exec/estimate.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"

namespace zepp {
namespace {

int default_eplb_groups(const ModelShape& m, const Topology& t, int requested) {
  if (requested > 0) return requested;
  return m.num_experts % t.nodes == 0 ? t.nodes : 1;
}

double imbalance_of(const Routing& routing, const Placement& placement) {
  std::vector<double> load(placement.num_gpus, 0.0);
  for (const RouteCount& c : routing.counts) load[placement.gpu_of_slot(c.slot)] += double(c.tokens);
  double sum = 0, mx = 0;
  for (double l : load) sum += l, mx = std::max(mx, l);
  return sum > 0 ? mx / (sum / load.size()) : 1.0;
}

}  // namespace

std::vector<std::string> strategy_names() { return {"a2av", "eplb", "zepp"}; }

StrategyOutcome run_strategy(const std::string& name, const Workload& w, const ModelShape& model,
                             const Topology& topo, const StrategyOptions& opt, ExecutorKind executor) {
  StrategyOutcome out;
  out.name = name;
  const int base_slots = (model.num_experts + topo.num_gpus() - 1) / topo.num_gpus();
  const bool is_zepp = name == "zepp";
  if (name == "a2av") {
    out.placement = place_contiguous(model.num_experts, topo);
  } else if (name == "eplb") {
    out.placement = place_eplb(w.history_load, topo, base_slots + opt.extra_slots,
                               default_eplb_groups(model, topo, opt.eplb_groups));
  } else if (is_zepp) {
    out.placement = place_zepp(w.history_load, topo, opt.extra_slots);
  } else {
    std::string names;
    for (const auto& n : strategy_names()) names += (names.empty() ? "" : ", ") + n;
    throw ArgumentError("strategies: unknown strategy '" + name + "', expected one of " + names);
  }

  const auto t0 = std::chrono::steady_clock::now();
  out.routing = is_zepp && opt.locality
                    ? route_locality(w.batch, out.placement, topo, opt.balance_slack)
                    : route_even(w.batch, out.placement);
  out.routing_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const double tb = model.token_bytes();
  out.imbalance = imbalance_of(out.routing, out.placement);
  out.routing_cost_s = routing_cost(out.routing, out.placement, topo, tb);
  if (opt.optimal) out.routing_cost_optimal_s = routing_cost_optimal(w.batch, out.placement, topo, opt.balance_slack, tb);

  switch (executor) {
    case ExecutorKind::Estimate:
      out.result = estimate_layer(w.batch, out.placement, out.routing, topo, model);
      break;
    case ExecutorKind::Sim:
      throw ArgumentError("executor: the SimGrid executor is not part of this build yet; use --executor estimate");
  }
  return out;
}

}  // namespace zepp
