// Planning cost of Zepp's routing (§5) for one layer invocation: EP 16, 32 and 128 GPUs (4 per
// node, a100) x 128 and 384 experts, top-8, 4,096 tokens per GPU. Selections are synthetic
// power-law draws (popularity of the r-th expert ~ (r + 1)^-1.2, ranks shuffled), placement is
// place_zepp with 2 extra slots per GPU on the same popularity, slack C = 0.1.
//   BM_CountLevel        Router::route_counts (expert-major demand -> slot-major M, router.hpp)
//   BM_CountLevelSparse  route_locality_counts, the vector<RouteCount> wrapper (transposes the
//                        demand, builds the replica tables, lists M sparsely)
//   BM_CountLevelLayers  route_counts_layers over 61 layers (DeepSeek-V3/Kimi-K2's MoE layer
//                        count), threads = 1 and 2: time per iteration of the model
//   BM_AssignPairs       Router::assign for every (token, expert) pair, threads = 1 and 2
//   BM_EvenSplit         route_even with pairs (the EPLB baseline's whole routing), for scale
// Every benchmark also times its baseline in the same run, on the same thread, for as many
// iterations, and reports the ratio: count levels against the even split's counts in the same
// layout (Router::even_counts), pair assignment against the even split's pair assignment
// (route_even), threaded runs also as speedup over one thread. Targets (issue 13): count level
// at EP32 x 384 at most 12 us CPU and EP128 within 100 us; pairs at least 150 M/s on one core.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "routing/router.hpp"
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
  std::vector<int64_t> demand;  // expert-major
  std::vector<int64_t> m;       // Zepp's counts, slot-major
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
  demand_by_expert(b, s.demand);
  Router router(s.placement, s.topo, kSlack);
  s.m.resize(size_t(router.num_slots()) * gpus);
  router.route_counts(s.demand, s.m);
  return s;
}

const Setup& setup(int gpus, int experts) {
  static std::map<std::pair<int, int>, Setup> cache;
  auto it = cache.find({gpus, experts});
  if (it == cache.end()) it = cache.emplace(std::pair(gpus, experts), make_setup(gpus, experts)).first;
  return it->second;
}

// CPU seconds of the calling thread.
double thread_cpu() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Seconds per call of fn, n calls, on the wall clock or this thread's CPU clock.
template <class Fn>
double per_call(int64_t n, bool wall, Fn&& fn) {
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu();
  for (int64_t x = 0; x < n; ++x) fn();
  return wall ? std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() / double(n)
              : (thread_cpu() - c0) / double(n);
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
  Router router(s.placement, s.topo, kSlack);
  std::vector<int64_t> m(s.m.size());
  const double c0 = thread_cpu();
  for (auto _ : state) {
    router.route_counts(s.demand, m);
    benchmark::DoNotOptimize(m.data());
  }
  const double ours = (thread_cpu() - c0) / double(state.iterations());
  const double even = per_call(state.iterations(), false, [&] {
    router.even_counts(s.demand, m);
    benchmark::DoNotOptimize(m.data());
  });
  state.counters["even_split_us"] = even * 1e6;
  state.counters["x_even_split"] = ours / even;
  int64_t remote = 0, pairs = 0;  // pairs served on another node
  for (int p = 0; p < router.num_slots(); ++p)
    for (int i = 0; i < router.num_gpus(); ++i) {
      const int64_t n = s.m[size_t(p) * router.num_gpus() + i];
      pairs += n;
      if (s.topo.node_of(s.placement.gpu_of_slot(p)) != s.topo.node_of(i)) remote += n;
    }
  state.counters["remote_share"] = double(remote) / double(pairs);
}

void BM_CountLevelSparse(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  const std::vector<int64_t> demand = s.batch.demand();  // the wrapper's source-major layout
  size_t entries = 0;
  const double c0 = thread_cpu();
  for (auto _ : state) {
    const std::vector<RouteCount> counts = route_locality_counts(demand, s.placement, s.topo, kSlack);
    entries = counts.size();
    benchmark::DoNotOptimize(counts.data());
  }
  const double ours = (thread_cpu() - c0) / double(state.iterations());
  Router router(s.placement, s.topo, kSlack);
  std::vector<int64_t> m(s.m.size());
  const double even = per_call(state.iterations(), false, [&] {
    router.even_counts(s.demand, m);
    benchmark::DoNotOptimize(m.data());
  });
  state.counters["count_entries"] = double(entries);
  state.counters["x_even_split"] = ours / even;
}

constexpr int kLayers = 61;

void BM_CountLevelLayers(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  const int threads = int(state.range(2));
  std::vector<Router> routers(kLayers, Router(s.placement, s.topo, kSlack));
  const std::vector<std::vector<int64_t>> demands(kLayers, s.demand);
  std::vector<std::vector<int64_t>> plans;
  const auto w0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    route_counts_layers(routers, demands, plans, threads);
    benchmark::DoNotOptimize(plans.data());
  }
  const double ours =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() / double(state.iterations());
  std::vector<int64_t> m(s.m.size());
  const double even = per_call(state.iterations(), true, [&] {
    for (int l = 0; l < kLayers; ++l) routers[l].even_counts(demands[l], m);
    benchmark::DoNotOptimize(m.data());
  });
  state.counters["layers"] = kLayers;
  state.counters["x_even_split"] = ours / even;
}

// One thread: CPU time of this thread (one core, as the target says); more: wall time.
void BM_AssignPairs(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  const int threads = int(state.range(2));
  const bool wall = threads > 1;
  Router router(s.placement, s.topo, kSlack);
  std::vector<int32_t> slots(s.batch.expert_ids.size());
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu();
  for (auto _ : state) {
    router.assign(s.batch, s.m, slots, threads);
    benchmark::DoNotOptimize(slots.data());
  }
  const double ours = (wall ? std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count()
                            : thread_cpu() - c0) /
                      double(state.iterations());
  const int64_t n = std::max<int64_t>(1, state.iterations());
  const double even = per_call(n, wall, [&] {
    Routing r = route_even(s.batch, s.placement);
    benchmark::DoNotOptimize(r.slot_of_pair.data());
  });
  const double pairs = double(s.batch.expert_ids.size());
  state.counters["pairs_per_s"] = pairs / ours;
  state.counters["even_split_pairs_per_s"] = pairs / even;
  state.counters["x_even_split"] = ours / even;
  if (threads > 1) {
    const double one = per_call(n, true, [&] {
      router.assign(s.batch, s.m, slots, 1);
      benchmark::DoNotOptimize(slots.data());
    });
    state.counters["speedup_vs_1_thread"] = one / ours;
  }
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

void ThreadedShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"gpus", "experts", "threads"})->Unit(benchmark::kMicrosecond)->UseRealTime();
  for (int g : {32, 128})
    for (int t : {1, 2}) b->Args({g, 384, t});
}

BENCHMARK(BM_CountLevel)->Apply(Shapes);
BENCHMARK(BM_CountLevelSparse)->Apply(Shapes);
BENCHMARK(BM_CountLevelLayers)->Apply(ThreadedShapes);
BENCHMARK(BM_AssignPairs)->Apply(ThreadedShapes);
BENCHMARK(BM_EvenSplit)->Apply(Shapes);

}  // namespace
}  // namespace zepp

BENCHMARK_MAIN();
