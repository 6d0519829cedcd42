// Hand-computed routing cases on tiny clusters; every expected value is worked out in the
// comments from the rules in src/routing/locality.cpp and assign_pairs.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "routing/routing.hpp"
#include "helpers.hpp"

namespace zepp {
namespace {
using test::as_map;
using test::CountMap;

// 2 nodes x 2 GPUs (GPUs 0,1 on node 0; 2,3 on node 1), two slots per GPU:
//   GPU0: slots 0,1 = experts 0,1   GPU1: slots 2,3 = experts 0,2
//   GPU2: slots 4,5 = experts 0,3   GPU3: slots 6,7 = experts 3,1
const Topology kTopo = test::tiny_topo(2, 2);
const Placement kPlace = test::make_placement(4, 4, {0, 1, 0, 2, 0, 3, 3, 1});
// d[i][e], C = 0.25.
const std::vector<int64_t> kDemand = {
    12, 2, 1, 0,  // GPU0
    0,  6, 2, 0,  // GPU1
    0,  0, 3, 3,  // GPU2
    0,  2, 4, 1,  // GPU3
};

TEST(RoutingHand, ReplicaBoundsRoundOutward) {
  // e0: T = 12 over 3 slots, q = 4 -> [floor 3, ceil 5]; e1: T = 10 over 2, q = 5 ->
  // [floor 3.75, ceil 6.25] = [3, 7]; e2: T = 10 over 1 -> [7, 13]; e3: T = 4 over 2 -> [1, 3].
  const ReplicaBounds b = replica_bounds(kDemand, kPlace, 0.25);
  EXPECT_EQ(b.lower, (std::vector<int64_t>{3, 3, 3, 7, 3, 1, 1, 3}));
  EXPECT_EQ(b.upper, (std::vector<int64_t>{5, 7, 5, 13, 5, 3, 3, 7}));
  // C = 0: floor(q) and ceil(q) (e1 with q = 5 exactly: [5, 5]).
  const ReplicaBounds b0 = replica_bounds(kDemand, kPlace, 0.0);
  EXPECT_EQ(b0.lower, (std::vector<int64_t>{4, 5, 4, 10, 4, 2, 2, 5}));
  EXPECT_EQ(b0.upper, (std::vector<int64_t>{4, 5, 4, 10, 4, 2, 2, 5}));
}

TEST(RoutingHand, PairCost) {
  EXPECT_EQ(pair_cost(1, 1, kTopo, 8), 0.0);
  EXPECT_EQ(pair_cost(0, 1, kTopo, 8), 2.0);
  EXPECT_EQ(pair_cost(1, 2, kTopo, 8), 8.0);
}

TEST(RoutingHand, WaterFillingCounts) {
  const CountMap expected = {
      // e0, slots 0 (GPU0), 2 (GPU1), 4 (GPU2), bounds [3, 5], all 12 tokens on GPU0. The
      // RESERVE RULE bites at level 1: level 0 gives slot 0 min(12, cap 5, 3 + slack 3) = 5;
      // level 1 gives slot 2 min(7, cap 5, unmet 3 + slack 1) = 4, not 5, so that 3 tokens stay
      // for slot 4's lower bound; level 2 sends those 3 to slot 4.
      {{0, 0, 0}, 5}, {{0, 0, 2}, 4}, {{0, 0, 4}, 3},
      // e1, slots 1 (GPU0), 7 (GPU3), bounds [3, 7]. Level 0: GPU0 -> slot 1: 2, GPU3 -> slot
      // 7: 2. Level 1: GPU1 -> slot 1 is LIMITED BY THE UPPER BOUND: min(6, cap 7 - 2 = 5,
      // unmet 1 + slack 4) = 5. Level 2: GPU1's last token goes to slot 7.
      {{1, 0, 1}, 2}, {{1, 1, 1}, 5}, {{1, 1, 7}, 1}, {{1, 3, 7}, 2},
      // e2: one slot (3, GPU1) takes everything.
      {{2, 0, 3}, 1}, {{2, 1, 3}, 2}, {{2, 2, 3}, 3}, {{2, 3, 3}, 4},
      // e3, slots 5 (GPU2), 6 (GPU3), bounds [1, 3]: level 0 GPU2 -> 5: min(3, 3, 1 + 2) = 3,
      // GPU3 -> 6: 1.
      {{3, 2, 5}, 3}, {{3, 3, 6}, 1},
  };
  const std::vector<RouteCount> counts = route_locality_counts(kDemand, kPlace, kTopo, 0.25);
  EXPECT_EQ(as_map(counts), expected);
  for (size_t x = 1; x < counts.size(); ++x)
    EXPECT_LT(std::tuple(counts[x - 1].expert, counts[x - 1].src_gpu, counts[x - 1].slot),
              std::tuple(counts[x].expert, counts[x].src_gpu, counts[x].slot));
  // Cost (token_bytes 1): e0 4 * 0.25 + 3 * 1; e1 5 * 0.25 + 1; e2 0.25 + 3 + 4; e3 0.
  EXPECT_DOUBLE_EQ(routing_cost(counts, kPlace, kTopo, 1.0), 13.5);
}

TEST(RoutingHand, ExactOptimumMatchesHandOptimum) {
  // Every remote or NVLink token above is forced (e0: slot 4 can only be fed from GPU0; e1:
  // node 0 wants 8 but its slot holds 7; e2: one slot), so the optimum is 13.5 as well.
  const std::vector<RouteCount> opt = route_optimal_counts(kDemand, kPlace, kTopo, 0.25);
  EXPECT_DOUBLE_EQ(routing_cost(opt, kPlace, kTopo, 1.0), 13.5);
}

// Calibrated topologies hold figures like "1.07 GB/s", which parse to 1070000000.0000001: the
// exact solver takes them as whole bytes per second (it refused them, intermittently failing
// Calibrated.WritesATopologyFileThatSimulateAccepts), with the same optimum as the integers.
TEST(RoutingHand, ExactOptimumTakesDecimalBandwidths) {
  Topology parsed = kTopo, whole = kTopo;
  parsed.nvlink_bw = 1.07 * 1e9;
  parsed.nic_bw = 0.0157 * 1e9;
  ASSERT_NE(parsed.nvlink_bw, std::round(parsed.nvlink_bw));  // the parse's rounding is there
  whole.nvlink_bw = 1070000000;
  whole.nic_bw = 15700000;
  const auto a = route_optimal_counts(kDemand, kPlace, parsed, 0.25), b = route_optimal_counts(kDemand, kPlace, whole, 0.25);
  EXPECT_EQ(as_map(a), as_map(b));
  whole.nic_bw = 3;  // 1070000000 : 3 has no common divisor, and both terms are below 2^31
  EXPECT_NO_THROW(route_optimal_counts(kDemand, kPlace, whole, 0.25));
  whole.nvlink_bw = 0x1p40 + 1;  // odd and above 2^31: no exact ratio small enough
  EXPECT_THROW(route_optimal_counts(kDemand, kPlace, whole, 0.25), ArgumentError);
}

TEST(RoutingHand, RemoteLowerBoundIsFedAcrossNodes) {
  // slots_per_gpu 1: slot g on GPU g, experts {0, 1, 0, 1}. e0: GPU0 4, GPU1 4 tokens, T = 8,
  // q = 4, C = 0.25 -> bounds [3, 5]. Level 0: GPU0 -> slot 0: min(4, 5, 3 + 2) = 4. Level 1:
  // GPU1 -> slot 0: min(4, cap 1, 0 + 1) = 1. Level 2: GPU1 -> slot 2: 3 (its lower bound).
  // e1: GPU2 1, GPU3 1, T = 2, bounds [floor 0.75, ceil 1.25] = [0, 2]. Level 0: GPU3 -> slot
  // 3: 1; level 1: GPU2 -> slot 3: 1 (NVLink beats the remote slot 1).
  const Placement p = test::make_placement(4, 2, {0, 1, 0, 1});
  const std::vector<int64_t> d = {4, 0, 4, 0, 0, 1, 0, 1};
  const CountMap expected = {{{0, 0, 0}, 4}, {{0, 1, 0}, 1}, {{0, 1, 2}, 3}, {{1, 2, 3}, 1}, {{1, 3, 3}, 1}};
  const auto greedy = route_locality_counts(d, p, kTopo, 0.25);
  EXPECT_EQ(as_map(greedy), expected);
  // 0.25 + 3 + 0.25. Slot 2 needs >= 3 tokens that all live on node 0, and node 0's 8 tokens
  // need at least one NVLink hop into slot 0's 5, so this is also the optimum.
  EXPECT_DOUBLE_EQ(routing_cost(greedy, p, kTopo, 1.0), 3.5);
  EXPECT_DOUBLE_EQ(routing_cost(route_optimal_counts(d, p, kTopo, 0.25), p, kTopo, 1.0), 3.5);
}

TEST(RoutingHand, ConsolidatesATokensRemoteExpertsOnOneNode) {
  // 3 nodes x 1 GPU. GPU0 holds expert 2 twice; GPUs 1 and 2 each hold experts 0 and 1.
  const Topology topo = test::tiny_topo(3, 1);
  const Placement p = test::make_placement(3, 3, {2, 2, 0, 1, 0, 1});
  // GPU0's tokens in order: B = {0, 2}, A = {0, 1}, C = {1, 2}. C = 0: every slot gets exactly
  // q = 1, so e0 and e1 each send one token to GPU1 and one to GPU2.
  const RoutingBatch b = test::make_batch(3, 2, {{{0, 2}, {0, 1}, {1, 2}}, {}, {}});
  RoutingWork work;
  const Routing r = route_locality(b, p, topo, 0.0, true, {}, nullptr, &work);
  EXPECT_EQ(as_map(r.counts), (CountMap{{{0, 0, 2}, 1}, {{0, 0, 4}, 1}, {{1, 0, 3}, 1}, {{1, 0, 5}, 1},
                                        {{2, 0, 0}, 1}, {{2, 0, 1}, 1}}));
  // B: e2 local (slot 0); e0 opens a node: both candidates tie, the earlier entry (slot 2,
  // GPU1) wins. A: e0's only quota left is slot 4 (GPU2), so A goes to GPU2 and e1 joins it
  // there (slot 5) instead of slot 3 on GPU1. In-order first-fit would have split A over both
  // nodes. C: e1 takes the remaining slot 3, e2 the local slot 1.
  EXPECT_EQ(r.slot_of_pair, (std::vector<int32_t>{2, 0, 4, 5, 3, 1}));
  EXPECT_EQ(p.gpu_of_slot(r.slot_of_pair[2]), p.gpu_of_slot(r.slot_of_pair[3]));
  // Every token ran the node choice: B and A hold e0, C holds e1, and GPU0's keys of both have
  // two remote entries (the planning cost model's rule pairs: 3 tokens x k = 2). The count level
  // visited two remote replicas for each of e0 and e1 (GPU0 is their only source).
  EXPECT_EQ(work.rule_pairs, (std::vector<int64_t>{6, 0, 0}));
  EXPECT_EQ(work.remote_visits, 4);
}

TEST(RoutingHand, OpensTheNodeMostOtherExpertsCanJoin) {
  // 3 nodes x 1 GPU, 3 slots per GPU: GPU0 {3, 4, 5}, GPU1 {0, 3, 4}, GPU2 {0, 1, 2}
  // (slots 0..8). GPU0's tokens: {0, 1, 2} then {0, 3, 4}; C = 0.
  const Topology topo = test::tiny_topo(3, 1);
  const Placement p = test::make_placement(3, 6, {3, 4, 5, 0, 3, 4, 0, 1, 2});
  const RoutingBatch b = test::make_batch(6, 3, {{{0, 1, 2}, {0, 3, 4}}, {}, {}});
  RoutingWork work;
  const Routing r = route_locality(b, p, topo, 0.0, true, {}, nullptr, &work);
  // e0: T = 2 over slots 3 (GPU1) and 6 (GPU2), bounds [1, 1]: one each. e1 -> slot 7, e2 ->
  // slot 8 (single replicas). e3, e4: T = 1 over two slots, bounds [0, 1]: level 0 keeps them
  // on GPU0 (slots 0 and 1).
  EXPECT_EQ(as_map(r.counts), (CountMap{{{0, 0, 3}, 1}, {{0, 0, 6}, 1}, {{1, 0, 7}, 1}, {{2, 0, 8}, 1},
                                        {{3, 0, 0}, 1}, {{4, 0, 1}, 1}}));
  // Token 1: e0 opens GPU2 (slot 6), where its other pending experts e1 and e2 also have quota
  // (2 joins against 0 on GPU1), though slot 3 comes first; the token then crosses to one node.
  // Token 2: e0 gets the remaining slot 3; e3 and e4 stay local.
  EXPECT_EQ(r.slot_of_pair, (std::vector<int32_t>{6, 7, 8, 3, 0, 1}));
  EXPECT_EQ(work.rule_pairs, (std::vector<int64_t>{6, 0, 0}));  // both hold e0 (two remote entries): 2 x k = 3
}

TEST(RoutingHand, EvenSplitRoundRobinWithSourceOffset) {
  // Placement kPlace (e0 on slots 0, 2, 4; e1 on slots 1, 7), k = 1.
  const RoutingBatch b = test::make_batch(4, 1, {{{0}, {0}}, {{0}, {0}, {0}, {0}}, {{1}}, {}});
  const Routing r = route_even(b, kPlace);
  // GPU0 (offset 0): replicas 0, 1 -> slots 0, 2. GPU1 (offset 1): replicas 1, 2, 0, 1 -> slots
  // 2, 4, 0, 2. GPU2, e1 (offset 2 mod 2 = 0): slot 1.
  EXPECT_EQ(r.slot_of_pair, (std::vector<int32_t>{0, 2, 2, 4, 0, 2, 1}));
  EXPECT_EQ(as_map(r.counts),
            (CountMap{{{0, 0, 0}, 1}, {{0, 0, 2}, 1}, {{0, 1, 0}, 1}, {{0, 1, 2}, 2}, {{0, 1, 4}, 1}, {{1, 2, 1}, 1}}));
  EXPECT_TRUE(route_even(b, kPlace, false).slot_of_pair.empty());
}

TEST(RoutingHand, EvenSplitWithOneReplicaIsHomeRouting) {
  // Contiguous: expert e on GPU e / 2.
  const Placement p = test::make_placement(4, 8, {0, 1, 2, 3, 4, 5, 6, 7});
  const RoutingBatch b = test::make_batch(8, 2, {{{7, 0}}, {{3, 4}, {5, 6}}, {}, {{1, 2}}});
  EXPECT_EQ(route_even(b, p).slot_of_pair, (std::vector<int32_t>{7, 0, 3, 4, 5, 6, 1, 2}));
}

}  // namespace
}  // namespace zepp
