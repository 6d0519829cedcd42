#include "plan/planning.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"

namespace zepp {

namespace {

// From bench_routing (bench/routing.cpp) on main as of 1 Dec 2026 (commit 1079742, the README's
// "issue 20 run", one core, CPU time, load about 21): the count-level plan from the all-gathered
// counts (Router::plan) at EP128 x 384 experts 134 us, i.e. 2.73 ns per (expert, GPU) cell
// (EP32 x 384: 19.0 us, 1.55 ns; the larger per-cell cost is taken); one rank's assignment
// (Router::route_rank) at EP128 x 384 131 M pairs/s, i.e. 7.63 ns per pair (EP32: 140 M/s).
// The same run's BM_RankLayer, one rank's whole planning including its send lists
// (plan/rank_layout.hpp), saw 17.6 us on DeepSeek-V2-Lite 4 x 4 at 1 MB and 58.3 us on Kimi-K2
// 16 x 4 at 1 MB; this model gives 14.5 and 71.5 us there. Send lists are not charged apart: a
// GPU dispatch kernel fuses them into packing rows by slot (DeepEP's dispatch after its layout).
constexpr double kPerCellS = 134e-6 / (128.0 * 384);
constexpr double kPerPairS = 1 / 131e6;

}  // namespace

PlanningCosts planning_costs() { return PlanningCosts{kPerCellS, kPerPairS}; }

PlanningWork per_batch_work(const RoutingBatch& batch, int64_t counts_per_gpu, double cells, bool own_pairs) {
  PlanningWork w;
  w.metadata_bytes = counts_per_gpu * kCountBytes;
  w.cells = cells;
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
  return c.per_cell_s * work.cells + c.per_pair_s * pairs;
}

void charge_planning(CommPlan& plan, const PlanningWork& work) {
  if (work.empty()) return;
  const int G = plan.num_gpus, gpn = plan.gpus_per_node, N = plan.nodes;
  require(work.pairs.empty() || work.pairs.size() == size_t(G), "plan",
          "planning work names " + std::to_string(work.pairs.size()) + " GPUs, the plan " + std::to_string(G));
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
        plan.tasks[size_t(t)].deps = intra[size_t(g)];
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
    t.deps = std::move(into[size_t(g)]);
    t.priority = std::numeric_limits<int64_t>::min();
    plan.tasks.push_back(std::move(t));
    planning[size_t(g)] = int32_t(plan.tasks.size() - 1);
  }
  for (int32_t i = 0; i < existing; ++i) {
    Task& t = plan.tasks[size_t(i)];
    if (t.gpu >= 0) t.deps.push_back(planning[size_t(t.gpu)]);
  }
}

}  // namespace zepp
