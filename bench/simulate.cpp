// Time to build and simulate one MoE layer's comm plan with the `sim` executor at 4, 16 and 32
// nodes x 4 GPUs (a100 preset), Qwen3-235B-A22B shape, 64 MiB of BF16 activations per GPU
// (8192 tokens x top-8). Synthetic batch: expert popularity ~ rank^-1.2 over a fixed random
// expert order, top-k distinct experts per token. Strategies: a2av (contiguous placement, home
// routing, no split/merge/overlap) and zepp (Zepp placement R = 2, locality routing C = 0.1,
// split + merge + overlap). Counters: simulated layer latency, tasks in the plan; BM_BuildPlan
// for zepp also builds the a2av plan of the same batch in the same run (the simplest plan:
// contiguous placement, even split, no split/merge/overlap) and reports x_a2av_plan, the ratio.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <memory>
#include <numeric>
#include <random>

#include "core/presets.hpp"
#include "exec/sim.hpp"
#include "placement/placement.hpp"
#include "plan/comm_plan.hpp"
#include "routing/routing.hpp"

namespace zepp {
namespace {

struct Layer {
  Topology topo;
  ModelShape model;
  RoutingBatch batch;
  Placement placement;
  Routing routing;
  CommPlan plan;
  Placement a2av_placement;  // zepp layers: the a2av baseline on the same batch
  Routing a2av_routing;
};

RoutingBatch synthetic_batch(const ModelShape& m, int gpus, int64_t tokens_per_gpu, std::vector<double>& load) {
  std::mt19937_64 rng(42);
  std::vector<int> order(m.num_experts);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> pop(m.num_experts);
  for (int r = 0; r < m.num_experts; ++r) pop[order[r]] = std::pow(r + 1.0, -1.2);
  std::discrete_distribution<int> pick(pop.begin(), pop.end());
  RoutingBatch b;
  b.num_gpus = gpus;
  b.num_experts = m.num_experts;
  b.top_k = m.top_k;
  load.assign(m.num_experts, 0.0);
  for (int g = 0; g <= gpus; ++g) b.token_offset.push_back(g * tokens_per_gpu);
  std::vector<int> chosen;
  for (int64_t t = 0; t < gpus * tokens_per_gpu; ++t) {
    chosen.clear();
    while (int(chosen.size()) < m.top_k) {
      const int e = pick(rng);
      if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
    }
    for (int k = 0; k < m.top_k; ++k) {
      b.expert_ids.push_back(chosen[k]);
      b.gate_weights.push_back(1.0f / float(m.top_k));
      load[chosen[k]] += 1;
    }
  }
  return b;
}

// The last (nodes, strategy) built, kept between the benchmarks that use it: generating up to
// 1M tokens is not what is measured. Only one is kept (the 32-node layer needs GBs).
const Layer& layer(int nodes, bool zepp) {
  static std::pair<int, bool> key{-1, false};
  static std::unique_ptr<Layer> slot;
  if (key != std::pair{nodes, zepp}) {
    slot.reset();
    key = {nodes, zepp};
    auto l = std::make_unique<Layer>();
    l->topo = topology_preset("a100", nodes);
    l->model = model_preset("qwen3-235b-a22b");
    const int64_t tokens = int64_t(64.0 * (1 << 20) / l->model.token_bytes());
    std::vector<double> load;
    l->batch = synthetic_batch(l->model, l->topo.num_gpus(), tokens, load);
    if (zepp) {
      l->placement = place_zepp(load, l->topo, 2);
      l->routing = route_locality(l->batch, l->placement, l->topo, 0.1);
      l->a2av_placement = place_contiguous(l->model.num_experts, l->topo);
      l->a2av_routing = route_even(l->batch, l->a2av_placement);
    } else {
      l->placement = place_contiguous(l->model.num_experts, l->topo);
      l->routing = route_even(l->batch, l->placement);
    }
    const PlanOptions opt{zepp, zepp, zepp, 0.0};
    l->plan = build_comm_plan(l->batch, l->placement, l->routing, l->topo, l->model, opt);
    slot = std::move(l);
  }
  return *slot;
}

void BM_BuildPlan(benchmark::State& state) {
  const bool zepp = state.range(1) != 0;
  const Layer& l = layer(int(state.range(0)), zepp);
  const PlanOptions opt{zepp, zepp, zepp, 0.0};
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(build_comm_plan(l.batch, l.placement, l.routing, l.topo, l.model, opt));
  const double ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (zepp) {
    const PlanOptions plain{false, false, false, 0.0};
    const auto a0 = std::chrono::steady_clock::now();
    for (int64_t x = 0; x < state.iterations(); ++x)
      benchmark::DoNotOptimize(build_comm_plan(l.batch, l.a2av_placement, l.a2av_routing, l.topo, l.model, plain));
    const double a2av = std::chrono::duration<double>(std::chrono::steady_clock::now() - a0).count();
    state.counters["x_a2av_plan"] = ours / a2av;
  }
  state.counters["tasks"] = double(l.plan.tasks.size());
  state.SetLabel(zepp ? "zepp" : "a2av");
}

void BM_Simulate(benchmark::State& state) {
  const bool zepp = state.range(1) != 0;
  const Layer& l = layer(int(state.range(0)), zepp);
  LayerResult r;
  for (auto _ : state) r = simulate_plan(l.plan, l.topo);
  state.counters["latency_ms"] = r.latency_s * 1e3;
  state.counters["tasks"] = double(l.plan.tasks.size());
  state.SetLabel(zepp ? "zepp" : "a2av");
}

}  // namespace
}  // namespace zepp

int main(int argc, char** argv) {
  // Build and simulate of one layer run back to back, so each layer is generated once.
  for (int nodes : {4, 16, 32})
    for (int zepp : {0, 1}) {
      benchmark::RegisterBenchmark("BM_BuildPlan", zepp::BM_BuildPlan)
          ->Args({nodes, zepp})->ArgNames({"nodes", "zepp"})->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark("BM_Simulate", zepp::BM_Simulate)
          ->Args({nodes, zepp})->ArgNames({"nodes", "zepp"})->Unit(benchmark::kMillisecond);
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
