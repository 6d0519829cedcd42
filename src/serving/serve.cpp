#include "serving/serve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "placement/placement.hpp"
#include "plan/rank_layout.hpp"
#include "routing/router.hpp"
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

// Every rank's planning of one batch with Router's per-rank protocol (router.hpp), each rank
// timed alone; returns the slowest rank's seconds. Buffers live across iterations, so once warm
// nothing is allocated.
struct RankPlanning {
  std::optional<Router> router;
  std::vector<int64_t> counts, m;
  std::vector<int32_t> slots;
  RankLayout layout;

  double run(const RoutingBatch& b, const Placement& placement, const Topology& topo, double slack,
             const GemmCost& gemm, const std::vector<int32_t>& global_slots) {
    if (!router || router->placement().phy2log != placement.phy2log) router.emplace(placement, topo, slack, gemm);
    const int G = b.num_gpus, E = b.num_experts, k = b.top_k;
    counts.resize(size_t(G) * E);
    m.resize(size_t(placement.num_slots()) * G);
    auto tokens = [&](int g) { return b.token_offset[size_t(g) + 1] - b.token_offset[size_t(g)]; };
    for (int g = 0; g < G; ++g)  // the all-gathered rows
      router->count_rank(b.expert_ids.data() + b.token_offset[size_t(g)] * k, tokens(g), k,
                         std::span<int64_t>(counts).subspan(size_t(g) * E, size_t(E)));
    double worst = 0;
    for (int g = 0; g < G; ++g) {
      const int32_t* topk = b.expert_ids.data() + b.token_offset[size_t(g)] * k;
      slots.resize(size_t(tokens(g) * k));
      const auto t0 = std::chrono::steady_clock::now();
      router->count_rank(topk, tokens(g), k, std::span<int64_t>(counts).subspan(size_t(g) * E, size_t(E)));
      router->plan(counts, m);
      router->route_rank(topk, tokens(g), k, g, m, slots.data());
      rank_layout(placement, topo, m, g, slots.data(), tokens(g), k, layout);
      worst = std::max(worst, seconds_since(t0));
      if (!std::equal(slots.begin(), slots.end(), global_slots.begin() + b.token_offset[size_t(g)] * k))
        throw std::logic_error("serve: rank " + std::to_string(g) + "'s own routing differs from the global routing");
    }
    return worst;
  }
};

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
  RankPlanning ranks;
  for (int i = 0; i < iterations; ++i) {
    IterationReport it;
    it.iteration = workload.next_iteration();
    it.dataset = workload.dataset_of(it.iteration);
    const Workload w{workload.description(), false, workload.layer(), workload.tokens_per_gpu(),
                     workload.history_load(), workload.batch(it.iteration), /*history_coactivation=*/{}};
    const StrategyDecision d = entry.decide(StrategyInput{w, model, topo, opt, &state});
    const SwapOutcome swap = d.swap.value_or(SwapOutcome{});
    it.swaps = swap.accepted;
    it.swap_triggered = swap.triggered;
    it.swaps_refused = swap.refused;
    it.best_refused = swap.best_refused;
    it.swap_horizon = swap.horizon;
    it.routing_s = d.routing_wall_s;
    if (d.locality_routing)
      it.rank_planning_wall_s = ranks.run(w.batch, d.placement, topo, opt.balance_slack, d.routing_gemm, d.routing.slot_of_pair);
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
