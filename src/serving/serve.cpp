#include "serving/serve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "placement/placement.hpp"
#include "swap/replicate.hpp"

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
    if (t.kind != TaskKind::Transfer || t.phase == Phase::Planning) continue;
    const bool nic = t.link == Link::NIC;
    if (t.phase == Phase::Weights) {
      ++it.weight_moves;
      (nic ? it.weight_nic_bytes : it.weight_nvlink_bytes) += t.bytes;
    } else {
      (nic ? it.token_nic_bytes : it.token_nvlink_bytes) += t.bytes;
    }
  }
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

ServeReport serve(DriftWorkload& workload, const ModelShape& model, const Topology& topo, const std::string& system,
                  int iterations, const StrategyOptions& opt, const PlanExecutor& execute,
                  const std::function<void(const IterationReport&, const LayerResult&)>& on_iteration) {
  const StrategyEntry& entry = find_strategy(system);
  require(iterations >= 1, "iterations", "must be >= 1");
  const bool homes = model.num_experts % topo.num_gpus() == 0;

  ServeReport report;
  report.system = system;
  StrategyState state;  // the placement kept between iterations
  for (int i = 0; i < iterations; ++i) {
    IterationReport it;
    it.iteration = workload.next_iteration();
    it.dataset = workload.dataset_of(it.iteration);
    const Workload w{workload.description(), false, workload.layer(), workload.tokens_per_gpu(),
                     workload.history_load(), workload.batch(it.iteration), /*history_coactivation=*/{}};
    const StrategyDecision d = entry.decide(StrategyInput{w, model, topo, opt, &state});
    it.swaps = d.swaps;
    it.swap_triggered = d.swap_triggered;
    it.swaps_refused = d.swaps_refused;
    it.best_refused = d.best_refused;
    it.routing_s = d.routing_wall_s;
    it.imbalance = routed_imbalance(d.routing, d.placement);
    if (homes) {
      const auto home = home_loads(w.batch.demand(), model.num_experts, topo);
      it.home_imbalance = max_over_mean(std::vector<double>(home.begin(), home.end()));
    }
    const auto t_plan = std::chrono::steady_clock::now();
    const CommPlan plan = plan_to_simulate(d, opt);
    it.plan_build_s = seconds_since(t_plan);
    it.planning_s = d.swap_wall_s + it.routing_s + it.plan_build_s;
    count_bytes(plan, it);
    LayerResult result;
    if (execute) {
      result = execute(plan, topo, opt.timeline);
      it.latency_s = result.latency_s;
      it.comm_hidden_fraction = result.comm_hidden_fraction;
      it.metadata_s = result.metadata_s;
      it.rank_planning_s = result.planning_s;
    }
    if (on_iteration) on_iteration(it, result);
    report.iterations.push_back(std::move(it));
  }
  return report;
}

}  // namespace zepp
