#include "plan/planning.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"

namespace zepp {

namespace {

// From bench_routing (bench/routing.cpp) with the water-filling's even level-2 spread, one core,
// CPU time, 3 Dec 2026 08:07-08:08 UTC, load 0.9-1.1, `--benchmark_repetitions=5`, medians
// (this machine's figures vary by up to 30% from run to run; the builds compared ran in turn):
//  - per cell: the count-level plan from the all-gathered counts (Router::plan) at EP128 x 384
//    experts, 197 us, i.e. 4.01 ns per (expert, GPU) cell (EP32 x 384: 18.9 us, 1.54 ns; the
//    larger is taken: a source's remote demand is spread over every remote replica, so a cell
//    costs more where experts have more replicas);
//  - per pair: one rank's assignment (Router::route_rank) at EP128 x 384 before the spread,
//    where nearly every key has one entry (the fixed-slot table), 310.9 M pairs/s, 3.22 ns;
//  - per rule token: the same with the spread, 888 us for 4,096 tokens of which 98.9% run the
//    node choice (Router::rule_tokens): (888 - 32,768 pairs x 3.22 ns) / 4,049 = 193 ns;
//  - per entry of the rank's count row (counting, quota setup, send lists per expert): the
//    residual of BM_RankLayer's Kimi-K2 16 x 4 at 1 MB, 134.0 us measured against 113.9 us from
//    the terms above, over 384 experts: 52 ns.
// Check on the other layer: BM_RankLayer's DeepSeek-V2-Lite 4 x 4 at 1 MB measured 35.3 us (and
// 44.9 us in a later run) where the model charges about 55 us: its rule tokens choose among 3
// remote nodes, not 15, and cost less than the EP128 figure. The model overstates Zepp's
// planning there rather than understate it anywhere measured.
// Before (2 Dec 2026, before the spread): 52.8 us per EP128 x 384 plan (1.07 ns per cell),
// 137.7 M pairs/s, 27.0 ns per entry, no per-token term.
constexpr double kPerCellS = 197e-6 / (128.0 * 384);
constexpr double kPerPairS = 1 / 310.9e6;
constexpr double kPerRuleTokenS = (888e-6 - 128.0 * 256 * kPerPairS) / (0.98863 * 4096);
constexpr double kPerEntryS = (134.0e-6 - 113.9e-6) / 384;

}  // namespace

PlanningCosts planning_costs() { return PlanningCosts{kPerCellS, kPerPairS, kPerEntryS, kPerRuleTokenS}; }

PlanningWork per_batch_work(const RoutingBatch& batch, int64_t counts_per_gpu, double cells, bool own_pairs) {
  PlanningWork w;
  w.metadata_bytes = counts_per_gpu * kCountBytes;
  w.cells = cells;
  w.row_entries = counts_per_gpu;
  if (own_pairs) {
    w.pairs.resize(size_t(batch.num_gpus));
    for (int g = 0; g < batch.num_gpus; ++g)
      w.pairs[size_t(g)] = (batch.token_offset[size_t(g) + 1] - batch.token_offset[size_t(g)]) * batch.top_k;
  }
  return w;
}

double planning_seconds(const PlanningWork& work, int gpu) {
  const PlanningCosts c = planning_costs();
  const double pairs = work.pairs.empty() ? 0.0 : double(work.pairs.at(size_t(gpu)));
  const double rule = work.rule_tokens.empty() ? 0.0 : double(work.rule_tokens.at(size_t(gpu)));
  return c.per_cell_s * work.cells + c.per_pair_s * pairs + c.per_entry_s * double(work.row_entries) +
         c.per_rule_token_s * rule;
}

void charge_planning(CommPlan& plan, const PlanningWork& work) {
  if (work.empty()) return;
  const int G = plan.num_gpus, gpn = plan.gpus_per_node, N = plan.nodes;
  require(work.pairs.empty() || work.pairs.size() == size_t(G), "plan",
          "planning work names " + std::to_string(work.pairs.size()) + " GPUs, the plan " + std::to_string(G));
  require(work.rule_tokens.empty() || work.rule_tokens.size() == size_t(G), "plan",
          "planning work's rule tokens name " + std::to_string(work.rule_tokens.size()) + " GPUs, the plan " +
              std::to_string(G));
  const int32_t existing = int32_t(plan.tasks.size());
  auto transfer = [&](int src, int dst, Link link, Hop hop, double bytes) {
    Task t;
    t.kind = TaskKind::Transfer;
    t.phase = Phase::Planning;
    t.gpu = src;
    t.dst_gpu = dst;
    t.link = link;
    t.hop = hop;
    t.round = 0;
    t.bytes = bytes;
    t.priority = std::numeric_limits<int64_t>::min();
    plan.tasks.push_back(std::move(t));
    return int32_t(plan.tasks.size() - 1);
  };
  std::vector<std::vector<int32_t>> into(static_cast<size_t>(G));  // metadata transfers arriving at each GPU
  if (work.metadata_bytes > 0) {
    std::vector<std::vector<int32_t>> intra(static_cast<size_t>(G));  // step (1) arrivals
    for (int g = 0; g < G; ++g)
      for (int l = 0; l < gpn; ++l) {
        const int dst = g / gpn * gpn + l;
        if (dst == g) continue;
        const int32_t t = transfer(g, dst, Link::NVLink, Hop::Direct, double(work.metadata_bytes));
        intra[size_t(dst)].push_back(t);
        into[size_t(dst)].push_back(t);
      }
    for (int g = 0; g < G; ++g)
      for (int m = 0; m < N; ++m) {
        if (m == g / gpn) continue;
        const int dst = m * gpn + g % gpn;
        const int32_t t = transfer(g, dst, Link::NIC, Hop::Put, double(gpn) * double(work.metadata_bytes));
        plan.set_deps(t, intra[size_t(g)]);
        into[size_t(dst)].push_back(t);
      }
  }
  std::vector<int32_t> planning(static_cast<size_t>(G));
  for (int g = 0; g < G; ++g) {
    Task t;
    t.kind = TaskKind::Planning;
    t.phase = Phase::Planning;
    t.gpu = g;
    t.seconds = planning_seconds(work, g);
    t.priority = std::numeric_limits<int64_t>::min();
    planning[size_t(g)] = plan.add_task(t);
    plan.set_deps(planning[size_t(g)], into[size_t(g)]);
  }
  // Every task of the layer on a GPU waits for its planning: the dependency lists rebuilt with
  // it appended, in one pass.
  CommPlan::Array index;
  index.reserve(plan.dep_index.size() + size_t(existing));
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    Task& t = plan.tasks[i];
    const auto deps = plan.deps(t);
    const auto begin = int64_t(index.size());
    index.insert(index.end(), deps.begin(), deps.end());
    if (int32_t(i) < existing && t.gpu >= 0) index.push_back(planning[size_t(t.gpu)]);
    t.deps_at = {begin, int64_t(index.size())};
  }
  plan.dep_index = std::move(index);
}

}  // namespace zepp
