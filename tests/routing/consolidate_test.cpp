// Consolidation by GEMM time (routing/consolidate.cpp): hand cases worked out from its rule, and
// its invariants on random clusters (rapidcheck) against the rows-only plan of the same batch.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/roofline.hpp"
#include "routing/router.hpp"
#include "routing/routing.hpp"
#include "helpers.hpp"
#include "random_case.hpp"

namespace zepp {
namespace {
using test::CountMap;

// A GEMM row costs 6 / 600 = 0.01 s of FLOPs, its weight read 1 s, no launch: weight-bound up
// to 100 rows, so t(n) = 1 s for 1 <= n <= 100.
const GemmCost kCost{1, 1, 600, 1.0, 0.0};

double busiest(const std::vector<RouteCount>& counts, const Placement& p, const GemmCost& g) {
  const std::vector<int64_t> load = test::slot_loads(counts, p);
  double worst = 0;
  for (int gpu = 0; gpu < p.num_gpus; ++gpu) {
    double t = 0;
    for (int s = gpu * p.slots_per_gpu; s < (gpu + 1) * p.slots_per_gpu; ++s) t += g.time(load[s]);
    worst = std::max(worst, t);
  }
  return worst;
}

// Rows from each source node to each destination node, [N * N].
std::vector<int64_t> node_rows(const std::vector<RouteCount>& counts, const Placement& p, const Topology& t) {
  std::vector<int64_t> rows(size_t(t.nodes) * t.nodes, 0);
  for (const RouteCount& c : counts)
    rows[size_t(c.src_gpu / t.gpus_per_node) * t.nodes + p.gpu_of_slot(c.slot) / t.gpus_per_node] += c.tokens;
  return rows;
}

// The most inter-node rows any node sends or receives.
int64_t busiest_nic(const std::vector<RouteCount>& counts, const Placement& p, const Topology& t) {
  const std::vector<int64_t> rows = node_rows(counts, p, t);
  int64_t worst = 0;
  for (int a = 0; a < t.nodes; ++a) {
    int64_t out = 0, in = 0;
    for (int b = 0; b < t.nodes; ++b)
      if (b != a) out += rows[size_t(a) * t.nodes + b], in += rows[size_t(b) * t.nodes + a];
    worst = std::max({worst, out, in});
  }
  return worst;
}

TEST(Consolidate, GemmCostIsTheRoofline) {
  ModelShape m;
  m.hidden = 5120;
  m.ffn = 8192;
  Topology t;
  t.compute.peak_flops = 312e12;
  t.compute.hbm_bw = 1.555e12;
  t.compute.kernel_launch = 5e-6;
  const GemmCost g = gemm_cost(m, t);
  for (int64_t n : {0, 1, 13, 100, 1000, 5000}) EXPECT_EQ(g.time(n), expert_compute_time(n, m, t)) << n;
  EXPECT_TRUE(g.weight_bound(13));
  EXPECT_FALSE(g.weight_bound(1000));
  t.compute.hbm_bw = 0;
  EXPECT_THROW(gemm_cost(m, t), ArgumentError);
}

// One node, 2 GPUs: GPU0 = slots 0, 1 = experts 0, 1; GPU1 = slots 2, 3 = experts 1, 2.
// Demand: GPU0 3 rows of e0 and 2 of e1, GPU1 2 rows of e1, nobody e2. Water-filling (C = 0)
// gives e1's two replicas 2 rows each (level 0), so GPU0 runs 2 GEMMs (2 s) and GPU1 one (1 s).
// Moving slot 1's 2 rows to slot 2 (same node) leaves 1 s on each: the busiest GPU drops from 2
// to 1 s, one GEMM fewer. Then GPU0 (the first of the busiest) has only e0, one replica: stop.
TEST(Consolidate, RemovesAWeightBoundGemmFromTheBusiestGpu) {
  const Topology topo = test::tiny_topo(1, 2);
  const Placement place = test::make_placement(2, 3, {0, 1, 1, 2});
  const std::vector<int64_t> demand = {3, 2, 0, /*GPU1*/ 0, 2, 0};
  const auto plain = route_locality_counts(demand, place, topo, 0.0);
  EXPECT_EQ(test::as_map(plain), (CountMap{{{0, 0, 0}, 3}, {{1, 0, 1}, 2}, {{1, 1, 2}, 2}}));
  const auto moved = route_locality_counts(demand, place, topo, 0.0, kCost);
  EXPECT_EQ(test::as_map(moved), (CountMap{{{0, 0, 0}, 3}, {{1, 0, 2}, 2}, {{1, 1, 2}, 2}}));
  EXPECT_EQ(busiest(plain, place, kCost), 2.0);
  EXPECT_EQ(busiest(moved, place, kCost), 1.0);
  Router r(place, topo, 0.0, kCost);
  std::vector<int64_t> by_expert = {3, 0, 2, 2, 0, 0}, m(8);
  r.route_counts(by_expert, m);
  EXPECT_EQ(r.consolidated(), 1);
}

// The same GPUs and a third, GPU2 = experts 3, 4 with 1 row each (2 s, tied with GPU0). The move
// of the first case lowers GPU0 to 1 s, but GPU2 stays at 2 s with nothing to move: the maximum
// never fell, so the move is undone and the plan is the rows-only one.
TEST(Consolidate, UndoesMovesThatLeaveTheMaximum) {
  const Topology topo = test::tiny_topo(1, 3);
  const Placement place = test::make_placement(3, 5, {0, 1, 1, 2, 3, 4});
  const std::vector<int64_t> demand = {3, 2, 0, 0, 0, /*GPU1*/ 0, 2, 0, 0, 0, /*GPU2*/ 0, 0, 0, 1, 1};
  EXPECT_TRUE(test::same_counts(route_locality_counts(demand, place, topo, 0.0, kCost),
                                route_locality_counts(demand, place, topo, 0.0)));
  Router r(place, topo, 0.0, kCost);
  std::vector<int64_t> by_expert = {3, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1}, m(18);
  r.route_counts(by_expert, m);
  EXPECT_EQ(r.consolidated(), 0);
}

// The margin M = 1% of the busiest GPU's time (consolidate.cpp, "Margin") and the exact early
// exit. Layout of the first case; GPU0 has 150 rows of e0 (compute-bound: 1.5 s) and 2 of e1
// (1 s), GPU1 2 of e1 and 148 of e2 (1.48 s): 2.5 s against 2.48 s. Moving slot 1's rows to slot
// 2 leaves GPU0 at 1.5 s and GPU1 at 2.48 s (e1's 4 rows are still one read): the maximum falls
// by 0.02 s < M = 0.025 s, so the move is refused, and since it is GPU0's only candidate the slot
// loads alone decide it: S = 4 cells read, not S x G = 8. Without e2's rows GPU1 ends at 1 s, the
// maximum falls by 1 s >= M, and the move is made.
TEST(Consolidate, RefusesAMoveWorthLessThanOnePercent) {
  const Topology topo = test::tiny_topo(1, 2);
  const Placement place = test::make_placement(2, 3, {0, 1, 1, 2});
  const std::vector<int64_t> close = {150, 2, 0, /*GPU1*/ 0, 2, 148};
  EXPECT_TRUE(test::same_counts(route_locality_counts(close, place, topo, 0.0, kCost),
                                route_locality_counts(close, place, topo, 0.0)));
  Router r(place, topo, 0.0, kCost);
  std::vector<int64_t> by_expert = {150, 0, 2, 2, 0, 148}, m(8);
  r.route_counts(by_expert, m);
  EXPECT_EQ(r.consolidate_stats().moves, 0);
  EXPECT_EQ(r.consolidate_stats().cells, 4.0);
  const std::vector<int64_t> apart = {150, 2, 0, /*GPU1*/ 0, 2, 0};
  const auto moved = route_locality_counts(apart, place, topo, 0.0, kCost);
  EXPECT_EQ(test::as_map(moved), (CountMap{{{0, 0, 0}, 150}, {{1, 0, 2}, 2}, {{1, 1, 2}, 2}}));
  EXPECT_EQ(busiest(moved, place, kCost), 1.5);
  by_expert = {150, 0, 2, 2, 0, 0};
  r.route_counts(by_expert, m);
  EXPECT_EQ(r.consolidate_stats().moves, 1);
  EXPECT_EQ(r.consolidate_stats().cells, 4.0 + 8.0 + 2.0 * 2);  // loads, the pass over m, the move
}

// The same layer with 150 rows of e1 on each GPU: FLOP time 1.5 s > the 1 s read, so the GEMMs
// are compute-bound and nothing moves (the plan is the rows-only one).
TEST(Consolidate, LeavesComputeBoundGemmsAlone) {
  const Topology topo = test::tiny_topo(1, 2);
  const Placement place = test::make_placement(2, 3, {0, 1, 1, 2});
  const std::vector<int64_t> demand = {3, 150, 0, /*GPU1*/ 0, 150, 0};
  EXPECT_TRUE(test::same_counts(route_locality_counts(demand, place, topo, 0.0, kCost),
                                route_locality_counts(demand, place, topo, 0.0)));
}

// Two nodes of one GPU: GPU0 (node 0) = experts 0, 1; GPU1 (node 1) = experts 1, 2. GPU0 sends
// 3 rows of e0, GPU1 4 rows of e1. Water-filling (C = 0, bounds [2, 2]) keeps 2 of GPU1's e1
// rows home and sends 2 across to slot 1: node 1 sends 2, node 0 receives 2, B = 2. Every row of
// slot 1 comes from node 1, where slot 2 is: moving them there sends node 0 nothing and node 1
// receives nothing more, so it is allowed (busiest GPU 2 -> 1 s, inter-node rows 2 -> 0). With
// GPU0 sending the 4 rows instead, slot 1 keeps 2 of its own node's and 2 go to slot 2 (B = 2):
// moving slot 1's 2 rows to node 1 would make node 0 send 4 > B, so it is refused.
TEST(Consolidate, CrossesNodesWithinTheBusiestNodesRows) {
  const Topology topo = test::tiny_topo(2, 1);
  const Placement place = test::make_placement(2, 3, {0, 1, 1, 2});
  const auto plain = route_locality_counts({3, 0, 0, /*GPU1*/ 0, 4, 0}, place, topo, 0.0);
  EXPECT_EQ(test::as_map(plain), (CountMap{{{0, 0, 0}, 3}, {{1, 1, 1}, 2}, {{1, 1, 2}, 2}}));
  const auto moved = route_locality_counts({3, 0, 0, /*GPU1*/ 0, 4, 0}, place, topo, 0.0, kCost);
  EXPECT_EQ(test::as_map(moved), (CountMap{{{0, 0, 0}, 3}, {{1, 1, 2}, 4}}));
  EXPECT_EQ(node_rows(plain, place, topo), (std::vector<int64_t>{3, 0, 2, 2}));
  EXPECT_EQ(node_rows(moved, place, topo), (std::vector<int64_t>{3, 0, 0, 4}));
  // GPU0: 3 of e0, 4 of e1 (2 stay on its own slot 1, 2 go to GPU1's slot 2): slot 1's rows are
  // node 0's own, so they may not move to node 1.
  const std::vector<int64_t> local = {3, 4, 0, /*GPU1*/ 0, 0, 0};
  EXPECT_TRUE(test::same_counts(route_locality_counts(local, place, topo, 0.0, kCost),
                                route_locality_counts(local, place, topo, 0.0)));
}

// property_test's random layer with a GEMM cost whose ridge (read / row time, 1 to 39 rows)
// falls among the slots' loads, so both weight- and compute-bound GEMMs occur.
struct Case : test::Case {
  GemmCost gemm;
};
Case random_case() {
  Case c{test::random_case(), {}};
  const double ridge = *rc::gen::inRange(1, 40);
  c.gemm = {1, 1, 600, ridge * 0.01, *rc::gen::elementOf(std::vector<double>{0.0, 0.001, 0.1})};
  return c;
}

RC_GTEST_PROP(ConsolidateProperty, ServesEveryPairAndNeverRaisesTheBusiestGpuOrNode, ()) {
  const Case c = random_case();
  const Routing plain = route_locality(c.batch, c.placement, c.topo, c.slack);
  ConsolidateStats stats;
  const Routing r = route_locality(c.batch, c.placement, c.topo, c.slack, true, c.gemm, &stats);
  const int moves = stats.moves;
  // Every pair served once by a slot of its expert, the counts being what the slots do.
  RC_ASSERT(r.slot_of_pair.size() == c.batch.expert_ids.size());
  for (size_t p = 0; p < r.slot_of_pair.size(); ++p)
    RC_ASSERT(c.placement.phy2log[r.slot_of_pair[p]] == c.batch.expert_ids[p]);
  RC_ASSERT(test::tally(c.batch, r.slot_of_pair) == test::as_map(r.counts));
  // (b): the busiest GPU's roofline time never rises, and falls whenever a move is kept.
  const double before = busiest(plain.counts, c.placement, c.gemm), after = busiest(r.counts, c.placement, c.gemm);
  RC_ASSERT(after <= before);
  if (moves > 0) RC_ASSERT(after < before);
  else RC_ASSERT(test::same_counts(r.counts, plain.counts));
  RC_CLASSIFY(moves > 0, "consolidated");
  // (c): no node sends or receives more inter-node rows than the busiest node did before.
  RC_ASSERT(busiest_nic(r.counts, c.placement, c.topo) <= busiest_nic(plain.counts, c.placement, c.topo));
  // (d): an expert whose rows differ from the rows-only plan lost a replica that had rows; every
  // other expert keeps the water-filling's rows, hence equation (1)'s bounds.
  const auto l0 = test::slot_loads(plain.counts, c.placement), l1 = test::slot_loads(r.counts, c.placement);
  int emptied = 0;
  for (int p = 0; p < c.placement.num_slots(); ++p) emptied += l0[p] > 0 && l1[p] == 0;
  RC_ASSERT(emptied == moves);
  for (int e = 0; e < c.placement.num_experts; ++e) {
    bool differs = false, lost = false;
    for (int p = 0; p < c.placement.num_slots(); ++p) {
      if (c.placement.phy2log[p] != e) continue;
      differs |= l0[p] != l1[p];
      lost |= l0[p] > 0 && l1[p] == 0;
    }
    RC_ASSERT(!differs || lost);
  }
  for (const RouteCount& x : r.counts) {
    bool touched = false;
    for (int p = 0; p < c.placement.num_slots(); ++p)
      touched |= c.placement.phy2log[p] == x.expert && l0[p] != l1[p];
    if (!touched) RC_ASSERT(test::as_map(plain.counts).at({x.expert, x.src_gpu, x.slot}) == x.tokens);
  }
}

// (f): the per-rank protocol plans the same consolidated m from the all-gathered counts, and the
// ranks' own slots, concatenated, are route_tokens' on the whole batch.
RC_GTEST_PROP(ConsolidateProperty, EveryRankPlansTheSameConsolidatedPlan, ()) {
  const Case c = random_case();
  const int G = c.placement.num_gpus, E = c.placement.num_experts, S = c.placement.num_slots(), k = c.batch.top_k;
  Router global(c.placement, c.topo, c.slack, c.gemm);
  std::vector<int64_t> by_expert;
  demand_by_expert(c.batch, by_expert);
  std::vector<int64_t> m(size_t(S) * G), plan(size_t(S) * G);
  global.route_counts(by_expert, m);
  std::vector<int64_t> rank_major(size_t(G) * E);
  for (int e = 0; e < E; ++e)
    for (int i = 0; i < G; ++i) rank_major[size_t(i) * E + e] = by_expert[size_t(e) * G + i];
  Router rank(c.placement, c.topo, c.slack, c.gemm);
  rank.plan(rank_major, plan);
  RC_ASSERT(plan == m);
  std::vector<int32_t> src;
  for (int i = 0; i < G; ++i) src.insert(src.end(), size_t(c.batch.token_offset[i + 1] - c.batch.token_offset[i]), i);
  std::vector<int32_t> all(c.batch.expert_ids.size()), own;
  global.route_tokens(c.batch.expert_ids.data(), src.data(), c.batch.num_tokens(), k, all.data());
  for (int i = 0; i < G; ++i) {
    const int64_t T = c.batch.token_offset[i + 1] - c.batch.token_offset[i];
    own.assign(size_t(T * k), -1);
    rank.route_rank(c.batch.expert_ids.data() + c.batch.token_offset[i] * k, T, k, i, plan, own.data());
    RC_ASSERT(std::equal(own.begin(), own.end(), all.begin() + c.batch.token_offset[i] * k));
  }
}

}  // namespace
}  // namespace zepp
