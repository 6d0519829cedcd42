// Planning cost of Zepp's routing (§5) for one layer invocation, one core, CPU time unless a
// benchmark says otherwise. Synthetic shapes: EP 16, 32 and 128 GPUs (4 per node, a100) x 128
// and 384 experts, top-8, 4,096 tokens per GPU, power-law selections (popularity of the r-th
// expert ~ (r + 1)^-1.2, ranks shuffled), placement place_zepp with 2 extra slots per GPU on the
// same popularity, slack C = 0.1.
//   BM_CountLevel        Router::route_counts (expert-major demand -> slot-major M, router.hpp)
//   BM_Plan              Router::plan: the same count level from the all-gathered counts in
//                        their rank-major layout (what every rank computes per layer)
//   BM_CountLevelSparse  route_locality_counts, the vector<RouteCount> wrapper (transposes the
//                        demand, builds the replica tables, lists M sparsely); its ratio
//                        x_router is against the same plan from a warm Router (route_counts)
//   BM_CountLevelLayers  route_counts_layers over 61 layers (DeepSeek-V3/Kimi-K2's MoE layer
//                        count), threads = 1 and 2: wall time per iteration of the model
//   BM_AssignPairs       Router::assign for every (token, expert) pair of every GPU, threads 1, 2
//   BM_RankAssign        Router::route_rank: one rank's own tokens (ranks in turn)
//   BM_EvenSplit         route_even with pairs (the EPLB baseline's whole global routing)
//   BM_RankLayer         one rank's whole planning of one real layer (below)
// Every ratio's two sides do the same work on the same thread for as many iterations: count
// levels against the even split's counts from the same input layout (Router::even_counts,
// even_plan); pair assignment against the even split's pair rule (Router::even_rank) writing
// into a preallocated output for the same pairs; BM_RankLayer against the even split's whole
// per-rank planning. Counters describing a result (remote_share, remote_nodes_per_token) are
// computed from the result the timed loop produced. Targets (issue 20): count level at EP32 x
// 384 at most 12 us and EP128 x 384 at most 100 us; per-rank assignment at least 150 M pairs/s;
// one rank's planning of a layer at most 5% of the layer's simulated latency.
//
// BM_RankLayer: DeepSeek-V2-Lite on 4 x 4 (a100) from the real trace deepseek-v2-lite-puffin,
// and Kimi-K2 on 16 x 4 from the synthetic workload `zepp simulate` uses without a trace, 1 MiB
// of activations per GPU, Zepp's placement (R = 2). Per iteration, for rank = iteration mod G:
// count_rank on its tokens, plan on the all-gathered counts (the other ranks' rows are input),
// route_rank, rank_layout (its send lists), all into a warm workspace (no allocation).
// layer_us is the layer's simulated latency with run_strategy("zepp", ..., Sim) -- the figure
// `zepp simulate` prints for zepp on the same workload -- and share = planning / layer_us.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include <filesystem>
#include <optional>

#include "core/presets.hpp"
#include "pipeline/strategy.hpp"
#include "placement/placement.hpp"
#include "plan/planning.hpp"
#include "plan/rank_layout.hpp"
#include "routing/router.hpp"
#include "routing/routing.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"

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
  std::vector<int64_t> counts;  // rank-major: the all-gathered per-rank counts
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
  s.counts = b.demand();
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

// Of a pair assignment (the timed result): mean number of distinct remote nodes a token is
// sent to (what merged dispatch pays for) and the share of pairs served on another node.
struct Remote {
  double nodes_per_token = 0, share = 0;
};
Remote remote_of(const Setup& s, const std::vector<int32_t>& slot_of_pair) {
  int64_t nodes_sum = 0, remote = 0;
  for (int i = 0; i < s.batch.num_gpus; ++i)
    for (int64_t t = s.batch.token_offset[i]; t < s.batch.token_offset[i + 1]; ++t) {
      std::set<int> nodes;
      for (int q = 0; q < kTopK; ++q) {
        const int n = s.topo.node_of(s.placement.gpu_of_slot(slot_of_pair[t * kTopK + q]));
        if (n != s.topo.node_of(i)) nodes.insert(n), ++remote;
      }
      nodes_sum += int64_t(nodes.size());
    }
  return {double(nodes_sum) / double(s.batch.num_tokens()), double(remote) / double(slot_of_pair.size())};
}

// Of a count plan m (the timed result): the share of pairs served on another node.
double remote_share(const Setup& s, const std::vector<int64_t>& m) {
  const int G = s.batch.num_gpus;
  int64_t remote = 0, pairs = 0;
  for (int p = 0; p < s.placement.num_slots(); ++p)
    for (int i = 0; i < G; ++i) {
      const int64_t n = m[size_t(p) * G + i];
      pairs += n;
      if (s.topo.node_of(s.placement.gpu_of_slot(p)) != s.topo.node_of(i)) remote += n;
    }
  return double(remote) / double(pairs);
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
  state.counters["remote_share"] = remote_share(s, m);
  std::vector<int64_t> even_m(s.m.size());
  const double even = per_call(state.iterations(), false, [&] {
    router.even_counts(s.demand, even_m);
    benchmark::DoNotOptimize(even_m.data());
  });
  state.counters["even_split_us"] = even * 1e6;
  state.counters["x_even_split"] = ours / even;
  state.counters["even_remote_share"] = remote_share(s, even_m);
}

void BM_Plan(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  Router router(s.placement, s.topo, kSlack);
  std::vector<int64_t> m(s.m.size());
  const double c0 = thread_cpu();
  for (auto _ : state) {
    router.plan(s.counts, m);
    benchmark::DoNotOptimize(m.data());
  }
  const double ours = (thread_cpu() - c0) / double(state.iterations());
  if (m != s.m) state.SkipWithError("plan differs from route_counts");
  state.counters["remote_share"] = remote_share(s, m);
  state.counters["remote_visits"] = double(router.remote_visits());
  std::vector<int64_t> even_m(s.m.size());
  const double even = per_call(state.iterations(), false, [&] {
    router.even_plan(s.counts, even_m);
    benchmark::DoNotOptimize(even_m.data());
  });
  state.counters["even_split_us"] = even * 1e6;
  state.counters["x_even_split"] = ours / even;
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
  // The same plan from a warm Router (BM_CountLevel's call): what the wrapper adds.
  Router router(s.placement, s.topo, kSlack);
  std::vector<int64_t> m(s.m.size());
  const double dense = per_call(state.iterations(), false, [&] {
    router.route_counts(s.demand, m);
    benchmark::DoNotOptimize(m.data());
  });
  state.counters["count_entries"] = double(entries);
  state.counters["x_router"] = ours / dense;
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

// The even split's pair rule for every GPU's tokens into `slots` (the other side of
// BM_AssignPairs' ratio: the same pairs, a preallocated output, no counts).
void even_all(Router& router, const Setup& s, std::vector<int32_t>& slots) {
  const RoutingBatch& b = s.batch;
  for (int i = 0; i < b.num_gpus; ++i)
    router.even_rank(&b.expert_ids[b.token_offset[i] * kTopK], b.token_offset[i + 1] - b.token_offset[i], kTopK, i,
                     &slots[b.token_offset[i] * kTopK]);
}

// One thread: CPU time of this thread (one core, as the target says); more: wall time. Both
// sides take the counts as given (BM_CountLevel times them) and write a preallocated output.
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
  const Remote zepp = remote_of(s, slots);
  const int64_t n = std::max<int64_t>(1, state.iterations());
  std::vector<int32_t> even_slots(slots.size());
  const double even = per_call(n, wall, [&] {
    even_all(router, s, even_slots);
    benchmark::DoNotOptimize(even_slots.data());
  });
  const Remote spread = remote_of(s, even_slots);
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
  state.counters["remote_nodes_per_token"] = zepp.nodes_per_token;
  state.counters["remote_share"] = zepp.share;
  state.counters["even_remote_share"] = spread.share;
}

// Router::route_rank on one rank's 4,096 tokens, ranks in turn, one core; against even_rank on
// the same ranks' tokens.
void BM_RankAssign(benchmark::State& state) {
  const Setup& s = setup(int(state.range(0)), int(state.range(1)));
  const RoutingBatch& b = s.batch;
  const int G = b.num_gpus;
  Router router(s.placement, s.topo, kSlack);
  std::vector<int32_t> slots(b.expert_ids.size());
  int rank = 0;
  int64_t pairs = 0, rule_pairs = 0;
  const double c0 = thread_cpu();
  for (auto _ : state) {
    const int64_t t0 = b.token_offset[rank], T = b.token_offset[rank + 1] - t0;
    router.route_rank(&b.expert_ids[t0 * kTopK], T, kTopK, rank, s.m, &slots[t0 * kTopK]);
    benchmark::DoNotOptimize(slots.data());
    pairs += T * kTopK;
    rule_pairs += router.rule_pairs()[rank];
    rank = rank + 1 == G ? 0 : rank + 1;
  }
  const double ours = thread_cpu() - c0;
  rank = 0;
  std::vector<int32_t> even_slots(slots.size());
  const double even = per_call(state.iterations(), false, [&] {
    const int64_t t0 = b.token_offset[rank], T = b.token_offset[rank + 1] - t0;
    router.even_rank(&b.expert_ids[t0 * kTopK], T, kTopK, rank, &even_slots[t0 * kTopK]);
    benchmark::DoNotOptimize(even_slots.data());
    rank = rank + 1 == G ? 0 : rank + 1;
  }) * double(state.iterations());
  state.counters["pairs_per_s"] = double(pairs) / ours;
  state.counters["rule_pair_share"] = double(rule_pairs) / double(pairs);
  state.counters["even_split_pairs_per_s"] = double(pairs) / even;
  state.counters["x_even_split"] = ours / even;
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

// A real layer for BM_RankLayer, with Zepp's placement and simulated latency (run_strategy, as
// `zepp simulate` runs it).
struct RealLayer {
  std::string label;
  Topology topo;
  ModelShape model;
  Workload w;
  Placement placement;
  double layer_us = 0;
  std::vector<int64_t> counts;  // all-gathered, rank-major
};

std::optional<RealLayer> make_real_layer(int which) {
  RealLayer l;
  std::optional<Trace> trace;
  if (which == 0 || which == 2) {
    const std::string path = std::string(ZEPP_SHARED_DIR) + "/data/traces/deepseek-v2-lite-puffin";
    if (!std::filesystem::exists(path)) return std::nullopt;
    trace = read_trace(path);
    l.label = which == 0 ? "deepseek-v2-lite 4x4 1MB (trace)" : "deepseek-v2-lite 4x4 16MB (trace)";
    l.model = model_preset("deepseek-v2-lite");
    l.topo = topology_preset("a100", 4);
  } else {
    l.label = "kimi-k2 16x4 1MB (synthetic)";
    l.model = model_preset("kimi-k2");
    l.topo = topology_preset("a100", 16);
  }
  WorkloadOptions opt;
  opt.size_mb = which == 2 ? 16.0 : 1.0;
  l.w = build_workload(trace ? &*trace : nullptr, l.model, l.topo, opt);
  StrategyOptions so;
  so.optimal = false;
  const StrategyOutcome zepp = run_strategy("zepp", l.w, l.model, l.topo, so, ExecutorKind::Sim);
  l.placement = zepp.placement;
  l.layer_us = zepp.result.latency_s * 1e6;
  l.counts = l.w.batch.demand();
  return l;
}

const std::optional<RealLayer>& real_layer(int which) {
  static std::map<int, std::optional<RealLayer>> cache;
  auto it = cache.find(which);
  if (it == cache.end()) it = cache.emplace(which, make_real_layer(which)).first;
  return it->second;
}

// One rank's whole planning of one layer, ranks in turn: count its tokens (into its row of
// the all-gathered counts), the count-level plan, its slots, its send lists. The even side does
// the same with the even split's rules (even_plan, even_rank).
void BM_RankLayer(benchmark::State& state) {
  const auto& layer = real_layer(int(state.range(0)));
  if (!layer) {
    state.SkipWithError("shared/data/traces/deepseek-v2-lite-puffin is absent");
    return;
  }
  const RealLayer& l = *layer;
  const RoutingBatch& b = l.w.batch;
  const int G = b.num_gpus, E = b.num_experts, k = b.top_k;
  Router router(l.placement, l.topo, StrategyOptions{}.balance_slack);
  std::vector<int64_t> counts = l.counts, m(size_t(l.placement.num_slots()) * G);
  std::vector<int32_t> slots(b.expert_ids.size());
  RankLayout layout;
  auto plan_rank = [&](int rank, bool zepp) {
    const int64_t t0 = b.token_offset[rank], T = b.token_offset[rank + 1] - t0;
    const int32_t* ids = &b.expert_ids[t0 * k];
    int32_t* out = &slots[t0 * k];
    router.count_rank(ids, T, k, std::span<int64_t>(counts).subspan(size_t(rank) * E, E));
    if (zepp) {
      router.plan(counts, m);
      router.route_rank(ids, T, k, rank, m, out);
    } else {
      router.even_plan(counts, m);
      router.even_rank(ids, T, k, rank, out);
    }
    rank_layout(l.placement, l.topo, m, rank, out, T, k, layout);
    benchmark::DoNotOptimize(layout.node_tokens.data());
  };
  for (int r = 0; r < G; ++r) plan_rank(r, true), plan_rank(r, false);  // warm the workspace
  int rank = 0;
  const double c0 = thread_cpu();
  for (auto _ : state) {
    plan_rank(rank, true);
    rank = rank + 1 == G ? 0 : rank + 1;
  }
  const double ours = (thread_cpu() - c0) / double(state.iterations());
  // What the planning cost model (plan/planning.cpp) charges, averaged over the ranks.
  double model = 0, rule_pairs = 0;
  for (int r = 0; r < G; ++r) {
    plan_rank(r, true);
    PlanningWork w = per_batch_work(b, E, double(E) * G, true);
    w.remote_visits = double(router.remote_visits());
    w.rule_pairs = router.rule_pairs();
    model += planning_seconds(w, r) / G;
    rule_pairs += double(w.rule_pairs[size_t(r)]) / G;
  }
  state.counters["remote_visits"] = double(router.remote_visits());
  state.counters["rule_pairs"] = rule_pairs;
  int64_t remote_rows = 0;  // of the last rank planned: rows it sends across nodes
  for (int n = 0; n < l.topo.nodes; ++n) remote_rows += layout.rows_to_node(n);
  rank = 0;
  const double even = per_call(state.iterations(), false, [&] {
    plan_rank(rank, false);
    rank = rank + 1 == G ? 0 : rank + 1;
  });
  state.counters["planning_us"] = ours * 1e6;
  state.counters["model_us"] = model * 1e6;
  state.counters["layer_us"] = l.layer_us;
  state.counters["share_of_layer"] = ours * 1e6 / l.layer_us;
  state.counters["even_split_us"] = even * 1e6;
  state.counters["x_even_split"] = ours / even;
  state.counters["tokens_per_rank"] = double(b.num_tokens()) / G;
  state.counters["last_rank_remote_rows"] = double(remote_rows);
  state.SetLabel(l.label);
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
BENCHMARK(BM_Plan)->Apply(Shapes);
BENCHMARK(BM_CountLevelSparse)->Apply(Shapes);
BENCHMARK(BM_CountLevelLayers)->Apply(ThreadedShapes);
BENCHMARK(BM_AssignPairs)->Apply(ThreadedShapes);
BENCHMARK(BM_RankAssign)->Apply(Shapes);
BENCHMARK(BM_EvenSplit)->Apply(Shapes);
BENCHMARK(BM_RankLayer)->ArgName("layer")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace zepp

BENCHMARK_MAIN();
