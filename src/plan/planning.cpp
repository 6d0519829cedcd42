#include "plan/planning.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"

namespace zepp {

namespace {

// From bench_routing (bench/routing.cpp) at commit "routing: the pair assignment's local step
// branches again" (the faster count plan and send lists of issue 20), one core, CPU time, 2 Dec 2026 00:29-00:31 UTC, load 0.7-1.0,
// `--benchmark_repetitions=5`, medians; of three such runs (00:29, 00:31, 00:32 UTC) this one
// holds the median of the three for both figures: the count-level plan from the all-gathered
// counts (Router::plan) at EP128 x 384 experts 52.8 us, i.e. 1.07 ns per (expert, GPU) cell
// (EP32 x 384: 7.62 us, 0.62 ns; the larger per-cell cost is taken); one rank's assignment
// (Router::route_rank) at EP128 x 384 137.7 M pairs/s, i.e. 7.26 ns per pair (EP32: 131 M/s).
// The same run's BM_RankLayer, one rank's whole planning including its counts, quota setup and
// send lists (plan/rank_layout.hpp), saw 14.6 us on DeepSeek-V2-Lite 4 x 4 at 1 MB and 41.0 us
// on Kimi-K2 16 x 4 at 1 MB. Cells and pairs alone give 12.3 and 30.6 us there: a rank's work
// per entry of its count row (counting, quota setup, send-list bookkeeping per expert) is
// missing, so it is charged too, at Kimi-K2's residual: (41.0 - 26.4 cells - 584 pairs x
// 7.26 ns) / 384 experts = 27.0 ns per entry. Check on the other layer: DeepSeek's 1,024 cells,
// 1,536 pairs and 64 entries give 14.0 us against 14.6 measured. Send lists are not charged
// apart: a GPU dispatch kernel fuses them into packing rows by slot (DeepEP's dispatch after
// its layout). Before (1 Dec 2026, commit 1079742, load about 21): 134 us per EP128 x 384
// plan, 131 M pairs/s, nothing per entry.
// Not refitted after the fixed-slot table of issue 20 (commit 4de9d2d, 2 Dec 02:43-02:50 UTC,
// load 4.0-4.8): route_rank now runs 315-333 M pairs/s (3.0 ns per pair) and BM_RankLayer sees
// 12.4-13.2 / 38.3-39.8 us where this model charges 14.0 / 41.0 us, so it overstates Zepp's
// planning by 5-13%. A refit with the new per-pair cost predicts 7.6 us for DeepSeek against
// 12.6 measured (the residual is per token, not per entry), so the older, larger figures stay
// until the model has that term; every figure was made with them.
constexpr double kPerCellS = 52.8e-6 / (128.0 * 384);
constexpr double kPerPairS = 1 / 137.7e6;
constexpr double kPerEntryS = (41.0e-6 - 384.0 * 64 * kPerCellS - 584 * kPerPairS) / 384;

}  // namespace

PlanningCosts planning_costs() { return PlanningCosts{kPerCellS, kPerPairS, kPerEntryS}; }

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
  return c.per_cell_s * work.cells + c.per_pair_s * pairs + c.per_entry_s * double(work.row_entries);
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
