// Time to build and simulate one MoE layer's comm plan with the `sim` executor at 4, 16 and 32
// nodes x 4 GPUs (a100 preset), Qwen3-235B-A22B shape, 64 MiB of BF16 activations per GPU
// (8192 tokens x top-8). Synthetic batch: expert popularity ~ rank^-1.2 over a fixed random
// expert order, top-k distinct experts per token. Strategies: a2av (contiguous placement, home
// routing, no split/merge/overlap) and zepp (Zepp placement R = 2, locality routing C = 0.1,
// split + merge + overlap; BM_BuildPlan zepp:2 builds on that layer the plan with every option
// the zepp strategy sets, zepp_plan_options, which has about twice the tasks). Counters: simulated layer latency, tasks in the plan; BM_BuildPlan
// for zepp also builds the a2av plan of the same batch in the same run (the simplest plan:
// contiguous placement, even split, no split/merge/overlap) and reports x_a2av_plan, the ratio
// of CPU times; reuse:1 times both through one CommPlanBuilder into one plan (a serving loop
// that plans layer after layer), reuse:0 as fresh build_comm_plan calls. Each of the two is timed after one untimed build of the same plan, so both run
// on a heap that already holds the pages a build needs (steady state, as when every layer is
// planned in turn); the first build in a process also pays a page fault per 4 KiB it writes,
// which on this machine was most of it (Zepp's plan at 4 nodes: 154 ms warm, 590-718 ms with
// the heap handed back to the system first), and timing one cold and one warm build made the
// ratio 2.9 instead of 1.1 at 32 nodes. Also ns_per_pair (CPU time per build and (token, expert) pair) and
// plan_B_per_pair (bytes of the plan's tasks and of their row and dependency lists per pair:
// what any builder of this plan writes, mostly into fresh memory), faults_per_build (minor page
// faults per timed build: fresh memory touched).
// BM_Simulate times the simulation itself (run_engine + summarize) on the CPU clock of the
// process that runs it, not the fork, result encoding and waitpid around it (manual time).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <string>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <utility>

#include "core/presets.hpp"
#include "exec/sim.hpp"
#include "exec/sim_detail.hpp"
#include "pipeline/strategy.hpp"
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

// Minor page faults of this process so far (a fresh page's first touch).
double page_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_minflt);
}

double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// Bytes of a plan's tasks and of their row and dependency lists.
double plan_bytes(const CommPlan& plan) {
  double b = double(plan.tasks.size() * sizeof(Task));
  for (const Task& t : plan.tasks)
    b += double((t.tokens_at.size() + t.pair_begin_at.size() + t.pairs_at.size() + t.deps_at.size() +
                 t.multicast_at.size()) * sizeof(int32_t));
  return b;
}

// zepp = 0: the a2av plan; 1: Zepp's split, merge and overlap; 2: the plan the zepp strategy
// makes, with every option it sets (zepp_plan_options: completion waves, dispatch chunks,
// local-first, split only where it pays, combine after dispatch), on the same layer as 1.
// reuse = 0: build_comm_plan, a fresh plan each time; 1: one CommPlanBuilder into one plan, as a
// serving loop that plans every layer would (its arrays and the plan's are reused).
void BM_BuildPlan(benchmark::State& state) {
  const int kind = int(state.range(1));
  const bool zepp = kind != 0, reuse = state.range(2) != 0;
  const Layer& l = layer(int(state.range(0)), zepp);
  CommPlanBuilder builder;
  CommPlan plan;
  auto build = [&](const Placement& p, const Routing& r, const PlanOptions& o) {
    if (reuse) builder.build(plan, l.batch, p, r, l.topo, l.model, o);
    else plan = build_comm_plan(l.batch, p, r, l.topo, l.model, o);  // frees the last plan, as a fresh build's end would
  };
  const PlanOptions opt = kind == 2 ? zepp_plan_options(StrategyOptions{}) : PlanOptions{zepp, zepp, zepp, 0.0};
  build(l.placement, l.routing, opt);  // warm-up
  const double c0 = cpu_seconds(), f0 = page_faults();
  for (auto _ : state) build(l.placement, l.routing, opt);
  const double ours = cpu_seconds() - c0;
  state.counters["faults_per_build"] = (page_faults() - f0) / double(state.iterations());
  const double pairs = double(l.batch.num_tokens()) * l.batch.top_k;
  state.counters["ns_per_pair"] = ours / double(state.iterations()) / pairs * 1e9;
  state.counters["plan_B_per_pair"] = plan_bytes(plan) / pairs;
  state.counters["tasks"] = double(plan.tasks.size());
  if (zepp) {
    const PlanOptions plain{false, false, false, 0.0};
    build(l.a2av_placement, l.a2av_routing, plain);
    const double a0 = cpu_seconds();
    for (int64_t x = 0; x < state.iterations(); ++x) build(l.a2av_placement, l.a2av_routing, plain);
    state.counters["x_a2av_plan"] = ours / (cpu_seconds() - a0);
  }
  state.SetLabel(std::string(kind == 2 ? "zepp, strategy's options" : zepp ? "zepp" : "a2av") +
                 (reuse ? ", reused builder and plan" : ", fresh"));
}

// One simulation timed inside its own process (SimGrid allows one engine per process):
// run_engine + summarize, the work simulate_plan does in its child, on the child's CPU clock
// (all its threads), so the fork, the result's encoding and waitpid stay outside the timing.
// Returns {CPU seconds, simulated latency seconds}.
std::pair<double, double> simulate_timed(const CommPlan& plan, const Topology& topo) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    double out[2] = {-1, 0};
    try {
      timespec a, b;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
      const LayerResult r = sim_detail::summarize(plan, sim_detail::run_engine(plan, topo), false);
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
      out[0] = double(b.tv_sec - a.tv_sec) + 1e-9 * double(b.tv_nsec - a.tv_nsec);
      out[1] = r.latency_s;
    } catch (...) {
    }
    [[maybe_unused]] const ssize_t n = ::write(fds[1], out, sizeof out);
    ::_exit(0);
  }
  ::close(fds[1]);
  double in[2] = {-1, 0};
  const ssize_t n = ::read(fds[0], in, sizeof in);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != ssize_t(sizeof in) || in[0] < 0) throw std::runtime_error("the simulation failed");
  return {in[0], in[1]};
}

void BM_Simulate(benchmark::State& state) {
  const bool zepp = state.range(1) != 0;
  const Layer& l = layer(int(state.range(0)), zepp);
  double latency = 0;
  for (auto _ : state) {
    const auto [cpu_s, latency_s] = simulate_timed(l.plan, l.topo);
    state.SetIterationTime(cpu_s);
    latency = latency_s;
  }
  state.counters["latency_ms"] = latency * 1e3;
  state.counters["tasks"] = double(l.plan.tasks.size());
  state.SetLabel(zepp ? "zepp" : "a2av");
}

}  // namespace
}  // namespace zepp

int main(int argc, char** argv) {
  // Build and simulate of one layer run back to back, so each layer is generated once.
  for (int nodes : {4, 16, 32})
    for (int zepp : {0, 1}) {
      for (int kind : zepp ? std::vector<int>{1, 2} : std::vector<int>{0})
        for (int reuse : {0, 1})
          benchmark::RegisterBenchmark("BM_BuildPlan", zepp::BM_BuildPlan)
              ->Args({nodes, kind, reuse})->ArgNames({"nodes", "zepp", "reuse"})->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark("BM_Simulate", zepp::BM_Simulate)
          ->Args({nodes, zepp})->ArgNames({"nodes", "zepp"})->Unit(benchmark::kMillisecond)->UseManualTime();
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
