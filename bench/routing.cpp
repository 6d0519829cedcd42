// Planning cost of Zepp's routing (§5) for one layer invocation: EP 16, 32 and 128 GPUs (4 per
// node, a100) x 128 and 384 experts, top-8, 4,096 tokens per GPU. Selections are synthetic
// power-law draws (popularity of the r-th expert ~ (r + 1)^-1.2, ranks shuffled), placement is
// place_zepp with 2 extra slots per GPU on the same popularity, slack C = 0.1.
//   BM_CountLevel   route_locality_counts from the demand matrix: time per invocation
//   BM_AssignPairs  assign_pairs for every (token, expert) pair: counter pairs_per_s
//   BM_EvenSplit    route_even with pairs, the EPLB baseline's planning cost, for scale
// Targets on one core: count level at EP32 x 384 under 50 us; pairs above 50 M/s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"

namespace zepp {
namespace {

constexpr int kTopK = 8;
constexpr int64_t kTokensPerGpu = 4096;
constexpr double kSlack = 0.1;

struct Setup {
  Topology topo;
  Placement placement;
  RoutingBatch batch;
  std::vector<int64_t> demand;
  std::vector<RouteCount> counts;
};

Setup make_setup(int gpus, int experts) {
  Setup s;
  s.topo = topology_preset("a100", gpus / 4);
  std::mt19937_64 rng(12345 + gpus * 1000 + experts);
  std::vector<double> popularity(experts);
  std::vector<int> rank(experts);
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), rng);
  for (int e = 0; e < experts; ++e) popularity[e] = std::pow(rank[e] + 1.0, -1.2);
  s.placement = place_zepp(popularity, s.topo, 2);

  std::discrete_distribution<int> pick(popularity.begin(), popularity.end());
  RoutingBatch& b = s.batch;
  b.num_gpus = gpus;
  b.num_experts = experts;
  b.top_k = kTopK;
  for (int i = 0; i <= gpus; ++i) b.token_offset.push_back(i * kTokensPerGpu);
  b.expert_ids.reserve(size_t(gpus) * kTokensPerGpu * kTopK);
  for (int64_t t = 0; t < gpus * kTokensPerGpu; ++t) {
    const size_t start = b.expert_ids.size();
    while (b.expert_ids.size() < start + kTopK) {  // k distinct experts
      const int e = pick(rng);
      if (std::find(b.expert_ids.begin() + start, b.expert_ids.end(), e) == b.expert_ids.end())
        b.expert_ids.push_back(e);
    }
  }
  b.gate_weights.assign(b.expert_ids.size(), 1.0f / kTopK);
  s.demand = b.demand();
  s.counts = route_locality_counts(s.demand, s.placement, s.topo, kSlack);
  return s;
}

const Setup& setup(int gpus, int experts) {
  static std::map<std::pair<int, int>, Setup> cache;
  auto it = cache.find({gpus, experts});
  if (it == cache.end()) it = cache.emplace(std::pair(gpus, experts), make_setup(gpus, experts)).first;
  return it->second;
}

// Mean number of distinct remote nodes a token is sent to (what merged dispatch pays for).
double remote_nodes_per_token(const Setup& s, const std::vector<int32_t>& slot_of_pair) {
  int64_t sum = 0;
  for (int i = 0; i < s.batch.num_gpus; ++i)
    for (int64_t t = s.batch.token_offset[i]; t < s.batch.token_offset[i + 1]; ++t) {
      std::set<int> nodes;
      for (int q = 0; q < kTopK; ++q) {
        const int n = s.topo.node_of(s.placement.gpu_of_slot(slot_of_pair[t * kTopK + q]));
        if (n != s.topo.node_of(i)) nodes.insert(n);
      }
      sum += int64_t(nodes.size());
    }
  return double(sum) / double(s.batch.num_tokens());
}

void BM_CountLevel(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  size_t entries = 0;
  for (auto _ : state) {
    const std::vector<RouteCount> counts = route_locality_counts(s.demand, s.placement, s.topo, kSlack);
    entries = counts.size();
    benchmark::DoNotOptimize(counts.data());
  }
  state.counters["count_entries"] = double(entries);
  int64_t remote = 0;  // pairs served on another node
  for (const RouteCount& c : s.counts)
    if (s.topo.node_of(s.placement.gpu_of_slot(c.slot)) != s.topo.node_of(c.src_gpu)) remote += c.tokens;
  state.counters["remote_share"] = double(remote) / double(s.batch.expert_ids.size());
}

void BM_AssignPairs(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  std::vector<int32_t> slots;
  for (auto _ : state) {
    slots = assign_pairs(s.batch, s.placement, s.topo, s.counts);
    benchmark::DoNotOptimize(slots.data());
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(double(s.batch.expert_ids.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["remote_nodes_per_token"] = remote_nodes_per_token(s, slots);
}

void BM_EvenSplit(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  for (auto _ : state) {
    Routing r = route_even(s.batch, s.placement);
    benchmark::DoNotOptimize(r.slot_of_pair.data());
  }
  state.counters["pairs_per_s"] =
      benchmark::Counter(double(s.batch.expert_ids.size()), benchmark::Counter::kIsIterationInvariantRate);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"gpus", "experts"})->Unit(benchmark::kMicrosecond);
  for (int g : {16, 32, 128})
    for (int e : {128, 384}) b->Args({g, e});
}

BENCHMARK(BM_CountLevel)->Apply(Shapes);
BENCHMARK(BM_AssignPairs)->Apply(Shapes);
BENCHMARK(BM_EvenSplit)->Apply(Shapes);

}  // namespace
}  // namespace zepp

BENCHMARK_MAIN();
