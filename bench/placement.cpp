// Placement policies' cost: the EPLB rule at DeepSeek-V3 scale, Zepp's placement (§4.1) at
// Qwen3 (128 experts) and Kimi-K2 (384 experts) scale on 16 to 128 GPUs (4 GPUs per node).
#include <cmath>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"

namespace {

// Heavy-tailed loads (Pareto, shape 1.2), like the synthetic reference cases. Fixed seed.
std::vector<double> pareto_loads(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> w(n);
  for (double& x : w) x = 100.0 / std::pow(1.0 - u(rng), 1.0 / 1.2);
  return w;
}

// 61 layers x 256 experts, 288 physical experts on 32 GPUs in 4 nodes, 8 groups (hierarchical).
void BM_EplbRebalance(benchmark::State& state) {
  const auto loads = pareto_loads(61 * 256, 7);
  const std::vector<float> w(loads.begin(), loads.end());
  for (auto _ : state) {
    zepp::EplbResult r = zepp::eplb_rebalance(w, 61, 256, 288, 8, 4, 32);
    benchmark::DoNotOptimize(r.phy2log.data());
  }
  state.SetLabel("61 layers x 256 experts -> 288 slots, 4 nodes x 8 GPUs");
}
BENCHMARK(BM_EplbRebalance)->Unit(benchmark::kMillisecond);

// One layer, R = 2 extra slots per GPU. Args: experts, GPUs.
void BM_PlaceZepp(benchmark::State& state) {
  const int E = int(state.range(0)), G = int(state.range(1));
  const auto load = pareto_loads(E, 11);
  zepp::Topology topo;
  topo.gpus_per_node = 4;
  topo.nodes = G / 4;
  for (auto _ : state) {
    zepp::Placement p = zepp::place_zepp(load, topo, 2);
    benchmark::DoNotOptimize(p.phy2log.data());
  }
}
BENCHMARK(BM_PlaceZepp)
    ->ArgNames({"experts", "gpus"})
    ->ArgsProduct({{128, 384}, {16, 32, 128}})
    ->Unit(benchmark::kMicrosecond);

// Issue 21 item 4: Zepp's placement of every layer at the EPLB benchmark's size (61 layers x 256
// experts -> 288 slots, 4 nodes x 8 GPUs: S = 9, R = 1), same loads; compare with BM_EplbRebalance.
void BM_ZeppLayers(benchmark::State& state) {
  const int L = 61, E = 256;
  const auto loads = pareto_loads(size_t(L) * E, 7);
  zepp::Topology topo;
  topo.gpus_per_node = 8;
  topo.nodes = 4;
  for (auto _ : state)
    for (int l = 0; l < L; ++l) {
      zepp::Placement p = zepp::place_zepp({loads.begin() + l * E, loads.begin() + (l + 1) * E}, topo, 1);
      benchmark::DoNotOptimize(p.phy2log.data());
    }
  state.SetLabel("61 layers x 256 experts -> 288 slots, 4 nodes x 8 GPUs");
}
BENCHMARK(BM_ZeppLayers)->Unit(benchmark::kMillisecond);

// The same size rebalanced from the placement of drifted loads (each load times a seeded factor
// in [0.5, 1.5]): the `previous=` / `--previous` path, expert size unknown, no budget.
void BM_ZeppRebalancePrevious(benchmark::State& state) {
  const int L = 61, E = 256;
  const auto loads = pareto_loads(size_t(L) * E, 7);
  std::vector<double> before = loads;
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (double& x : before) x *= u(rng);
  zepp::Topology topo = zepp::topology_preset("h100", 4);  // as zepp.rebalance_experts: a NIC move costs 6 NVLink ones
  topo.gpus_per_node = 8;
  std::vector<zepp::RebalanceOptions> opts(L);
  for (int l = 0; l < L; ++l)
    opts[l].previous = zepp::place_zepp({before.begin() + l * E, before.begin() + (l + 1) * E}, topo, 1).phy2log;
  for (auto _ : state)
    for (int l = 0; l < L; ++l) {
      zepp::Rebalanced r = zepp::rebalance_zepp({loads.begin() + l * E, loads.begin() + (l + 1) * E}, topo, 9, opts[l]);
      benchmark::DoNotOptimize(r.placement.phy2log.data());
    }
  state.SetLabel("61 layers x 256 experts -> 288 slots from a previous placement");
}
BENCHMARK(BM_ZeppRebalancePrevious)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
