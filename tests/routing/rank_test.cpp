// Per-rank planning (router.hpp): every rank routing its own tokens from the all-gathered counts
// gives, concatenated, the global routing bit for bit; padding passes through; bad input is named.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "routing/router.hpp"
#include "routing/routing.hpp"
#include "../common/errors.hpp"
#include "../common/rank_cases.hpp"
#include "helpers.hpp"

namespace zepp {
namespace {

// All ranks' tokens in one array, interleaved in a random order that keeps each rank's order
// (a serving engine's global view); src = each token's rank, where[i] = positions of rank i's.
struct Global {
  std::vector<int32_t> ids, src;
  std::vector<std::vector<int64_t>> where;
};
Global interleave(const test::RankCase& c) {
  const int G = c.placement.num_gpus, k = c.top_k;
  std::vector<int32_t> order;
  for (int i = 0; i < G; ++i) order.insert(order.end(), c.ids[i].size() / k, i);
  const auto keys = *rc::gen::container<std::vector<int>>(order.size(), rc::gen::arbitrary<int>());
  std::vector<size_t> idx(order.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  Global g;
  g.where.resize(G);
  std::vector<size_t> next(G, 0);
  for (size_t x : idx) {
    const int i = order[x];
    const size_t t = next[i]++;
    g.where[i].push_back(int64_t(g.src.size()));
    g.src.push_back(i);
    g.ids.insert(g.ids.end(), c.ids[i].begin() + t * k, c.ids[i].begin() + (t + 1) * k);
  }
  return g;
}

RC_GTEST_PROP(RankRouting, ConcatenatedRanksEqualGlobalRouting, ()) {
  const test::RankCase c = test::random_rank_case(*rc::gen::arbitrary<bool>());
  const int G = c.placement.num_gpus, E = c.placement.num_experts, S = c.placement.num_slots(), k = c.top_k;
  std::vector<int64_t> m;
  const auto slots = test::route_every_rank(c, m);

  const Global g = interleave(c);
  Router global(c.placement, c.topo, c.slack);
  std::vector<int32_t> want(g.ids.size());
  global.route_tokens(g.ids.data(), g.src.data(), int64_t(g.src.size()), k, want.data());
  for (int i = 0; i < G; ++i)
    for (size_t t = 0; t < g.where[i].size(); ++t)
      for (int q = 0; q < k; ++q) RC_ASSERT(slots[i][t * k + q] == want[g.where[i][t] * k + q]);

  // The count plan equals route_counts on the transposed (expert-major) demand.
  std::vector<int64_t> demand(size_t(E) * G, 0), m2(size_t(S) * G);
  for (int i = 0; i < G; ++i)
    for (int32_t e : c.ids[i])
      if (e >= 0) ++demand[size_t(e) * G + i];
  global.route_counts(demand, m2);
  RC_ASSERT(m == m2);
  // Padding stays padding, every pair goes to a slot of its expert.
  for (int i = 0; i < G; ++i)
    for (size_t p = 0; p < c.ids[i].size(); ++p)
      if (c.ids[i][p] < 0) RC_ASSERT(slots[i][p] == -1);
      else RC_ASSERT(c.placement.phy2log[slots[i][p]] == c.ids[i][p]);
}

RC_GTEST_PROP(RankRouting, Int64IdsGiveTheSameSlots, ()) {
  const test::RankCase c = test::random_rank_case(true);
  const int G = c.placement.num_gpus, E = c.placement.num_experts, k = c.top_k;
  std::vector<int64_t> m;
  const auto slots = test::route_every_rank(c, m);
  Router router(c.placement, c.topo, c.slack);
  std::vector<int64_t> counts(size_t(G) * E);
  for (int i = 0; i < G; ++i) {
    const std::vector<int64_t> ids(c.ids[i].begin(), c.ids[i].end());
    std::vector<int64_t> row(E);
    router.count_rank(ids.data(), int64_t(ids.size()) / k, k, row);
    std::copy(row.begin(), row.end(), counts.begin() + size_t(i) * E);
  }
  std::vector<int64_t> m64(m.size());
  router.plan(counts, m64);
  RC_ASSERT(m64 == m);
  for (int i = 0; i < G; ++i) {
    const std::vector<int64_t> ids(c.ids[i].begin(), c.ids[i].end());
    std::vector<int64_t> out(ids.size());
    router.route_rank(ids.data(), int64_t(ids.size()) / k, k, i, m, out.data());
    RC_ASSERT(std::equal(out.begin(), out.end(), slots[i].begin()));
  }
}

// The even split per rank (the baseline the benchmarks compare with) is route_even's.
RC_GTEST_PROP(RankRouting, EvenRankIsRouteEvenPerRank, ()) {
  const test::RankCase c = test::random_rank_case(false);
  const int G = c.placement.num_gpus, E = c.placement.num_experts, S = c.placement.num_slots(), k = c.top_k;
  RoutingBatch b;
  b.num_gpus = G;
  b.num_experts = E;
  b.top_k = k;
  b.token_offset = {0};
  for (int i = 0; i < G; ++i) {
    b.expert_ids.insert(b.expert_ids.end(), c.ids[i].begin(), c.ids[i].end());
    b.token_offset.push_back(b.token_offset.back() + int64_t(c.ids[i].size()) / k);
  }
  b.gate_weights.assign(b.expert_ids.size(), 1.0f);
  const Routing want = route_even(b, c.placement);
  Router router(c.placement, c.topo, c.slack);
  std::vector<int32_t> slots(b.expert_ids.size());
  for (int i = 0; i < G; ++i)
    router.even_rank(&b.expert_ids[b.token_offset[i] * k], b.token_offset[i + 1] - b.token_offset[i], k, i,
                     &slots[b.token_offset[i] * k]);
  RC_ASSERT(slots == want.slot_of_pair);
  std::vector<int64_t> m(size_t(S) * G), m2(m.size()), demand;
  router.even_plan(b.demand(), m);
  demand_by_expert(b, demand);
  router.even_counts(demand, m2);
  RC_ASSERT(m == m2);
}

// Up to 40 GPUs (Router::plan copies single-replica experts' columns 8 ranks at a time, then the
// remainder one rank at a time; level 2 of the water-filling has a fast path for a source whose
// demand fits the first remote slot): plan and even_plan on rank-major counts equal route_counts
// and even_counts on the same counts transposed, entry for entry.
RC_GTEST_PROP(RankRouting, PlanEqualsRouteCountsOnWideClusters, ()) {
  const int nodes = *rc::gen::inRange(1, 11), gpn = *rc::gen::inRange(1, 5), G = nodes * gpn;
  const int E = *rc::gen::inRange(1, 30), spg = (E + G - 1) / G + *rc::gen::inRange(0, 3);
  std::vector<int32_t> phy2log(size_t(G) * spg);
  for (size_t p = 0; p < phy2log.size(); ++p)
    phy2log[p] = p < size_t(E) ? int32_t(p) : *rc::gen::inRange(0, std::min(E, 4));  // hot experts replicated
  const auto keys = *rc::gen::container<std::vector<int>>(phy2log.size(), rc::gen::arbitrary<int>());
  std::vector<size_t> idx(phy2log.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return std::pair(keys[a], a) < std::pair(keys[b], b); });
  std::vector<int32_t> shuffled;
  for (size_t p : idx) shuffled.push_back(phy2log[p]);
  const Placement placement = test::make_placement(G, E, shuffled);
  const double slack = *rc::gen::elementOf(std::vector<double>{0.0, 0.1, 0.5});
  Router router(placement, test::tiny_topo(nodes, gpn), slack);
  // Rank-major counts, zero or skewed per entry.
  const auto c = *rc::gen::container<std::vector<int64_t>>(size_t(G) * E, rc::gen::inRange<int64_t>(0, 60));
  std::vector<int64_t> counts(c.size()), demand(c.size());
  for (size_t x = 0; x < c.size(); ++x) counts[x] = c[x] % 7 == 0 ? 0 : c[x] * c[x] / 7;
  for (int i = 0; i < G; ++i)
    for (int e = 0; e < E; ++e) demand[size_t(e) * G + i] = counts[size_t(i) * E + e];
  const size_t S = placement.phy2log.size();
  std::vector<int64_t> m(S * G, -5), want(S * G, -6);
  router.plan(counts, m);
  router.route_counts(demand, want);
  RC_ASSERT(m == want);
  std::fill(m.begin(), m.end(), -5);
  router.even_plan(counts, m);
  router.even_counts(demand, want);
  RC_ASSERT(m == want);
  // Every entry of column i is rank i's: the plan's rows of e's slots sum to counts(i, e).
  for (int i = 0; i < G; ++i)
    for (int e = 0; e < E; ++e) {
      int64_t sum = 0;
      for (size_t p = 0; p < S; ++p)
        if (placement.phy2log[p] == e) sum += want[p * G + i];
      RC_ASSERT(sum == counts[size_t(i) * E + e]);
    }
}

// One Router serving every rank in turn, in random order, between global calls: route_rank keeps
// one rank's keys in the first row of buffers that route_tokens sizes for all GPUs; nothing may
// leak from call to call.
RC_GTEST_PROP(RankRouting, ReusedRouterGivesFreshRoutersSlots, ()) {
  const test::RankCase c = test::random_rank_case(*rc::gen::arbitrary<bool>());
  const int G = c.placement.num_gpus, k = c.top_k;
  std::vector<int64_t> m;
  const auto want = test::route_every_rank(c, m);  // a fresh Router per rank
  const Global g = interleave(c);
  std::vector<int32_t> global_want(g.ids.size()), global_slots(g.ids.size());
  Router(c.placement, c.topo, c.slack).route_tokens(g.ids.data(), g.src.data(), int64_t(g.src.size()), k,
                                                    global_want.data());
  Router router(c.placement, c.topo, c.slack);
  const auto ranks = *rc::gen::container<std::vector<int>>(2 * G, rc::gen::inRange(0, G));
  for (int rank : ranks) {
    if (*rc::gen::arbitrary<bool>()) {
      std::fill(global_slots.begin(), global_slots.end(), -7);
      router.route_tokens(g.ids.data(), g.src.data(), int64_t(g.src.size()), k, global_slots.data());
      RC_ASSERT(global_slots == global_want);
    }
    std::vector<int32_t> slots(c.ids[rank].size(), -7);
    router.route_rank(c.ids[rank].data(), int64_t(c.ids[rank].size()) / k, k, rank, m, slots.data());
    RC_ASSERT(slots == want[rank]);
  }
}

// Two nodes x 2 GPUs, experts 0..3 one slot each on GPUs 0..3, expert 0 also on GPU 2:
// rank 0's tokens with hand-checked counts, plan and slots.
TEST(RankRouting, HandCaseWithPadding) {
  const Topology topo = test::tiny_topo(2, 2);
  const Placement p = test::make_placement(4, 4, {0, 1, 1, 3, 2, 0, 3, 2});  // 2 slots per GPU
  Router router(p, topo, 0.0);
  // Rank 0: three tokens of top-2; the last pads one pair.
  const std::vector<int32_t> ids0 = {0, 1, 0, 3, 2, -1};
  std::vector<int64_t> row(4);
  router.count_rank(ids0.data(), 3, 2, row);
  EXPECT_EQ(row, (std::vector<int64_t>{2, 1, 1, 1}));
  // Rank 2 (node 1) selects expert 0 twice; ranks 1 and 3 nothing.
  std::vector<int64_t> counts(16, 0);
  std::copy(row.begin(), row.end(), counts.begin());
  counts[2 * 4 + 0] = 2;
  std::vector<int64_t> m(8 * 4);
  router.plan(counts, m);
  // Expert 0: slots 0 (GPU 0) and 5 (GPU 2), 4 pairs, C = 0: 2 each. Level 0 keeps rank 0's two
  // on slot 0 and rank 2's two on slot 5.
  EXPECT_EQ(m[0 * 4 + 0], 2);
  EXPECT_EQ(m[5 * 4 + 2], 2);
  std::vector<int32_t> slots(6);
  router.route_rank(ids0.data(), 3, 2, 0, m, slots.data());
  // Expert 1 on slots 1 (GPU 0) and 2 (GPU 1), one pair: level 0 gives it slot 1. Expert 3 only
  // on slot 3 (GPU 1) and 6 (GPU 3): one pair, its own node first (slot 3). Expert 2 on slots 4
  // (GPU 2) and 7 (GPU 3), both remote: the token's other pair is padding, so the first with
  // the most room, slot 4.
  EXPECT_EQ(slots, (std::vector<int32_t>{0, 1, 0, 3, 4, -1}));
}

TEST(RankRouting, BadInputIsNamed) {
  const Topology topo = test::tiny_topo(1, 2);
  const Placement p = test::make_placement(2, 2, {0, 1});
  Router router(p, topo, 0.1);
  const std::vector<int32_t> ids = {0, 1, 1, -2};
  std::vector<int64_t> row(2), m(4);
  EXPECT_EQ(testing::argument_error([&] { router.count_rank(ids.data(), 2, 2, row); }),
            "topk_ids: entry [1, 1] is -2, expected [0, 2) or -1 (padding)");
  EXPECT_EQ(testing::argument_error([&] { router.plan(std::vector<int64_t>{1, 2, 3}, m); }).substr(0, 26), "counts: has 3 entries, exp");
  EXPECT_EQ(testing::argument_error([&] { router.plan(std::vector<int64_t>{1, 0, 0, -1}, m); }),
            "counts: entry [1, 1] (rank, expert) is negative (-1)");
  EXPECT_EQ(testing::argument_error([&] { router.plan(std::vector<int64_t>{1, 0, 0, 1}, row); }).substr(0, 20), "plan: has 2 entries,");
  router.plan(std::vector<int64_t>{1, 1, 0, 0}, m);  // rank 0: one pair of each expert
  std::vector<int32_t> out(4);
  EXPECT_EQ(testing::argument_error([&] { router.route_rank(ids.data(), 2, 2, 2, m, out.data()); }), "rank: expected [0, 2), got 2");
  EXPECT_EQ(testing::argument_error([&] { router.route_rank(ids.data(), 2, 2, 0, m, out.data()); }),
            "topk_ids: entry [1, 1] is -2, expected [0, 2) or -1 (padding)");
  // Tokens other than the ones counted: expert 1 twice where the plan has one.
  const std::vector<int32_t> other = {0, 1, 1, -1};
  EXPECT_EQ(testing::argument_error([&] { router.route_rank(other.data(), 2, 2, 0, m, out.data()); }),
            "plan: fewer tokens for (src_gpu 0, expert 1) than the batch selects");
  const std::vector<int32_t> fewer = {0, -1, -1, -1};
  EXPECT_EQ(testing::argument_error([&] { router.route_rank(fewer.data(), 2, 2, 0, m, out.data()); }),
            "plan: more tokens for (src_gpu 0, expert 1) than the batch selects");
  // A token naming an expert twice was routed twice; the trace readers refuse it, so does each
  // entry point (padding may repeat).
  const std::vector<int32_t> twice = {-1, -1, 1, 1};
  const std::string repeated =
      "topk_ids: token 1 selects expert 1 twice (entries [1, 0] and [1, 1]); expected distinct experts within a "
      "token's top-k (-1 pads)";
  EXPECT_EQ(testing::argument_error([&] { router.count_rank(twice.data(), 2, 2, row); }), repeated);
  EXPECT_EQ(testing::argument_error([&] { router.route_rank(twice.data(), 2, 2, 0, m, out.data()); }), repeated);
  const std::vector<int32_t> src = {0, 1};
  EXPECT_EQ(testing::argument_error([&] { router.route_tokens(twice.data(), src.data(), 2, 2, out.data()); }), repeated);
}

// Slots written over the ids (out = topk_ids, in place or shifted) are refused: the pair level
// reads a token's ids again after writing its slots, and read placeholders as expert ids far out
// of bounds (a segfault from Python's Router.route(ids, src, out=ids)).
TEST(RankRouting, SlotsOverlappingTheIdsAreRefused) {
  const Topology topo = test::tiny_topo(2, 2);
  const Placement p = test::make_placement(4, 4, {0, 1, 2, 3, 0, 1, 2, 3});
  Router router(p, topo, 0.1);
  std::vector<int64_t> ids = {0, 1, 2, 3, 3, 2, 1, 0, 0, 0}, src = {0, 1, 2, 3};
  EXPECT_EQ(testing::argument_error([&] { router.route_tokens(ids.data(), src.data(), 4, 2, ids.data()); }),
            "slot_of_pair: must not overlap topk_ids");
  EXPECT_EQ(testing::argument_error([&] { router.route_tokens(ids.data(), src.data(), 4, 2, ids.data() + 2); }),
            "slot_of_pair: must not overlap topk_ids");
  EXPECT_EQ(testing::argument_error([&] { router.route_tokens(ids.data(), ids.data() + 4, 2, 2, ids.data() + 4); }),
            "slot_of_pair: must not overlap src_rank");
  std::vector<int64_t> m(size_t(p.num_slots()) * 4);
  router.plan(std::vector<int64_t>{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, m);
  EXPECT_EQ(testing::argument_error([&] { router.route_rank(ids.data(), 1, 2, 0, m, ids.data()); }),
            "slot_of_pair: must not overlap topk_ids");
  EXPECT_EQ(testing::argument_error([&] { router.even_rank(ids.data(), 1, 2, 0, ids.data() + 1); }),
            "slot_of_pair: must not overlap topk_ids");
  // Counts written over the ids, a plan over the counts: wrong values rather than a crash, refused too.
  EXPECT_EQ(testing::argument_error([&] { router.count_rank(ids.data(), 2, 2, std::span<int64_t>(ids.data() + 3, 4)); }),
            "counts: must not overlap topk_ids");
  std::vector<int64_t> shared(size_t(p.num_slots()) * 4 + 16, 0);
  const std::span<const int64_t> counts_in(shared.data(), 16);
  const std::span<int64_t> m_over(shared.data() + 8, size_t(p.num_slots()) * 4);
  EXPECT_EQ(testing::argument_error([&] { router.plan(counts_in, m_over); }), "plan: must not overlap counts");
  EXPECT_EQ(testing::argument_error([&] { router.even_plan(counts_in, m_over); }), "plan: must not overlap counts");
  EXPECT_EQ(testing::argument_error([&] { router.route_counts(counts_in, m_over); }), "counts: must not overlap demand");
  // Beside the ids (adjacent, not overlapping) is fine.
  std::vector<int64_t> both = {0, 1, -9, -9};
  router.route_rank(both.data(), 1, 2, 0, m, both.data() + 2);
  EXPECT_EQ(both[2] % 4, 0);
  EXPECT_EQ(both[3] % 4, 1);
}

}  // namespace
}  // namespace zepp
