#include "plan/planning.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"

namespace zepp {

namespace {

// From bench_routing (bench/routing.cpp), one core, CPU time, 3 Dec 2026 08:23-08:24 UTC, load
// 1.3-1.6, two runs of `--benchmark_repetitions=3` each of this build (the water-filling's even
// level-2 spread) and of the build before it (commit 086de92) in turn, medians; the runs agreed
// within 3% (this machine's speed otherwise moves by up to 30% between runs):
//  - per cell: the count-level plan from the all-gathered counts (Router::plan) at EP128 x 384
//    before the spread, 62.4 us: 1.27 ns per (expert, GPU) cell;
//  - per remote visit: the same plan with the spread, 148 us, its level 2 visiting 17,789 remote
//    replicas (Router::remote_visits): (148 - 62.4) / 17,789 = 4.81 ns;
//  - per pair: one rank's assignment (Router::route_rank) at EP128 x 384 before the spread,
//    where nearly every key has one entry (the fixed-slot table), 92.8 us for 32,768 pairs:
//    2.83 ns;
//  - per rule pair: the same with the spread, 811 us, 98.9% of the pairs in tokens that run the
//    node choice (Router::rule_pairs): (811 - 92.8) / 32,406 = 22.2 ns;
//  - per entry of the rank's count row (counting, quota setup, send lists per expert): the
//    residual of BM_RankLayer's Kimi-K2 16 x 4 at 1 MB, 94.4 us measured against 80.6 us from
//    the terms above, over 384 experts: 36 ns.
// Checks: BM_RankAssign at EP32 x 384 (89% rule pairs) measured 510 us where these give 740 us,
// and BM_RankLayer's DeepSeek-V2-Lite 4 x 4 at 1 MB 28.9-30.8 us where they give 40.1 us: with
// fewer nodes a token's node choice has fewer candidates and costs less than at EP128. The model
// overstates Zepp's planning there. At 16 MB it is about right: on DeepSeek-V2-Lite 4 x 4
// (`zepp simulate ... --iterations 3 --size-mb 16`, 3 Dec 09:24 UTC, load 1.3) the slowest of
// 16 ranks in the worst of 3 iterations measured 569-738 us in four runs (a maximum of 48 noisy
// samples) where the model charges the slowest rank 561 us.
// Before (2 Dec 2026, the rule before the spread): 1.07 ns per cell, 7.26 ns per pair, 27.0 ns
// per entry, no visit or rule-pair term.
constexpr double kPerCellS = 62.4e-6 / (128.0 * 384);
constexpr double kPerRemoteVisitS = (148e-6 - 62.4e-6) / 17789;
constexpr double kPerPairS = 92.8e-6 / (128.0 * 256);
constexpr double kPerRulePairS = (811e-6 - 92.8e-6) / (0.988968 * 128 * 256);
constexpr double kPerEntryS = (94.4e-6 - 80.6e-6) / 384;

}  // namespace

PlanningCosts planning_costs() {
  return PlanningCosts{kPerCellS, kPerPairS, kPerEntryS, kPerRemoteVisitS, kPerRulePairS};
}

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
  const double rule = work.rule_pairs.empty() ? 0.0 : double(work.rule_pairs.at(size_t(gpu)));
  return c.per_cell_s * work.cells + c.per_pair_s * pairs + c.per_entry_s * double(work.row_entries) +
         c.per_remote_visit_s * work.remote_visits + c.per_rule_pair_s * rule;
}

void charge_planning(CommPlan& plan, const PlanningWork& work) {
  if (work.empty()) return;
  const int G = plan.num_gpus, gpn = plan.gpus_per_node, N = plan.nodes;
  require(work.pairs.empty() || work.pairs.size() == size_t(G), "plan",
          "planning work names " + std::to_string(work.pairs.size()) + " GPUs, the plan " + std::to_string(G));
  require(work.rule_pairs.empty() || work.rule_pairs.size() == size_t(G), "plan",
          "planning work's rule pairs name " + std::to_string(work.rule_pairs.size()) + " GPUs, the plan " +
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
