#include "serving/serve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "placement/placement.hpp"
#include "swap/replicate.hpp"
#include "swap/swap.hpp"

namespace zepp {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double max_over_mean(const std::vector<double>& load) {
  const double sum = std::accumulate(load.begin(), load.end(), 0.0);
  return sum > 0 ? *std::max_element(load.begin(), load.end()) / (sum / double(load.size())) : 1.0;
}

double routed_imbalance(const Routing& r, const Placement& p) {
  std::vector<double> load(p.num_gpus, 0.0);
  for (const RouteCount& c : r.counts) load[p.gpu_of_slot(c.slot)] += double(c.tokens);
  return max_over_mean(load);
}

void count_bytes(const CommPlan& plan, IterationReport& it) {
  for (const Task& t : plan.tasks) {
    if (t.kind != TaskKind::Transfer) continue;
    const bool nic = t.link == Link::NIC;
    if (t.phase == Phase::Weights) {
      ++it.weight_moves;
      (nic ? it.weight_nic_bytes : it.weight_nvlink_bytes) += t.bytes;
    } else {
      (nic ? it.token_nic_bytes : it.token_nvlink_bytes) += t.bytes;
    }
  }
}

const StrategyEntry* registry_entry(const std::string& name) {
  for (const auto& s : strategy_registry())
    if (s.name == name) return &s;
  return nullptr;
}

template <class F>
double mean_of(const std::vector<IterationReport>& v, F f) {
  double s = 0;
  for (const auto& x : v) s += f(x);
  return v.empty() ? 0.0 : s / double(v.size());
}

}  // namespace

double ServeReport::total_latency_s() const {
  double s = 0;
  for (const auto& it : iterations) s += it.latency_s;
  return s;
}
double ServeReport::mean_imbalance() const { return mean_of(iterations, [](auto& x) { return x.imbalance; }); }
double ServeReport::mean_home_imbalance() const {
  return mean_of(iterations, [](auto& x) { return x.home_imbalance; });
}
double ServeReport::excess_removed() const {
  if (mean_home_imbalance() == 0) return std::nan("");  // no contiguous-home reference (E % G != 0)
  const double excess = mean_home_imbalance() - 1;
  return excess > 0 ? 1 - (mean_imbalance() - 1) / excess : 1.0;
}
double ServeReport::total_weight_bytes() const {
  double s = 0;
  for (const auto& it : iterations) s += it.weight_nic_bytes + it.weight_nvlink_bytes;
  return s;
}

std::vector<std::string> serve_system_names() {
  std::vector<std::string> names = strategy_names();
  names.push_back("zepp+swaps");
  names.push_back("zepp-overlap");
  return names;
}

ServeReport serve(DriftWorkload& workload, const ModelShape& model, const Topology& topo, const std::string& system,
                  int iterations, const StrategyOptions& opt, const PlanExecutor& execute,
                  const std::function<void(const IterationReport&, const LayerResult&)>& on_iteration) {
  const StrategyEntry* entry = registry_entry(system);
  const bool swaps = system == "zepp+swaps", overlap_only = system == "zepp-overlap";
  if (!entry && !swaps && !overlap_only) {
    std::string names;
    for (const auto& n : serve_system_names()) names += (names.empty() ? "" : ", ") + n;
    throw ArgumentError("system: unknown '" + system + "', expected one of " + names);
  }
  require(iterations >= 1, "iterations", "must be >= 1");
  const PlanOptions zepp_plan = zepp_plan_options(opt);
  const bool homes = model.num_experts % topo.num_gpus() == 0;

  ServeReport report;
  report.system = system;
  Placement state;  // zepp+swaps: the placement kept between iterations
  for (int i = 0; i < iterations; ++i) {
    IterationReport it;
    it.iteration = workload.next_iteration();
    it.dataset = workload.dataset_of(it.iteration);
    const Workload w{workload.description(), false, workload.layer(), workload.tokens_per_gpu(),
                     workload.history_load(), workload.batch(it.iteration), /*history_coactivation=*/{}};
    const StrategyInput in{w, model, topo, opt};
    StrategyDecision d;
    std::vector<WeightMove> moves;
    double planning = 0;
    if (swaps) {
      if (state.phy2log.empty()) state = place_zepp(w.history_load, topo, opt.extra_slots);
      const auto t0 = std::chrono::steady_clock::now();
      // A swap stays in `state` until demand moves it again, so its saving recurs every
      // iteration (§4.3). Default horizon (kDefaultSwapHorizon = 8): a choice, not a fit; with
      // the rotating drift of §6.5 (period 4) demand shifts every 4 iterations, and a swap made
      // for one phase of the rotation returns with it, so 8 (two periods) is a conservative
      // expected life; with --swap-horizon 1 a swap must pay inside its first iteration (the
      // earlier rule, which never fired on the DeepSeek trace).
      SwapCosts costs = swap_costs(model, topo);
      costs.horizon = opt.swap_horizon;
      SwapPlan sp = plan_swaps(expert_demand(w.batch), state, topo, opt.balance_slack, costs);
      it.swap_triggered = sp.triggered;
      it.swaps_refused = sp.refused_for_cost;
      it.best_refused = sp.best_refused;
      planning = seconds_since(t0);
      it.swaps = int(sp.swaps.size());
      moves = std::move(sp.weight_moves);
      state = std::move(sp.placement);
      d = decide_with(state, in, opt.locality, zepp_plan);
    } else if (overlap_only) {
      d = decide_with(place_contiguous(model.num_experts, topo), in, false, zepp_plan);
    } else {
      d = entry->decide(in);
    }
    it.routing_s = d.routing_wall_s;
    it.imbalance = routed_imbalance(d.routing, d.placement);
    if (homes) {
      const auto home = home_loads(w.batch.demand(), model.num_experts, topo);
      it.home_imbalance = max_over_mean(std::vector<double>(home.begin(), home.end()));
    }
    CommPlan plan;
    const auto t_plan = std::chrono::steady_clock::now();
    if (swaps) {
      plan = build_comm_plan(w.batch, d.placement, d.routing, topo, model, zepp_plan, moves);
      weights_after_dispatch(plan);
    } else {
      plan = d.make_plan(d.placement, d.routing);
    }
    it.plan_build_s = seconds_since(t_plan);
    it.planning_s = planning + it.routing_s + it.plan_build_s;
    count_bytes(plan, it);
    LayerResult result;
    if (execute) {
      result = execute(plan, topo, opt.timeline);
      it.latency_s = result.latency_s;
      it.comm_hidden_fraction = result.comm_hidden_fraction;
    }
    if (on_iteration) on_iteration(it, result);
    report.iterations.push_back(std::move(it));
  }
  return report;
}

}  // namespace zepp
