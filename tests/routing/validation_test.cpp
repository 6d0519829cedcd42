// Bad arguments give an ArgumentError that names the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "routing/routing.hpp"
#include "helpers.hpp"

namespace zepp {
namespace {

// Runs f and returns the ArgumentError message ("" if none was thrown).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ArgumentError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_NAMES(call, name) EXPECT_EQ(error_of([&] { call; }).rfind(name ": ", 0), 0u) << error_of([&] { call; })

const Topology kTopo = test::tiny_topo(2, 2);
const Placement kPlace = test::make_placement(4, 4, {0, 1, 0, 2, 0, 3, 3, 1});
const RoutingBatch kBatch = test::make_batch(4, 2, {{{0, 1}}, {{2, 3}}, {}, {{1, 0}}});

TEST(RoutingValidation, Slack) {
  for (double c : {-0.1, 1.0, 1.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_NAMES(route_locality(kBatch, kPlace, kTopo, c), "balance_slack");
    EXPECT_NAMES(replica_bounds(kBatch.demand(), kPlace, c), "balance_slack");
    EXPECT_NAMES(routing_cost_optimal(kBatch, kPlace, kTopo, c, 1.0), "balance_slack");
  }
}

TEST(RoutingValidation, BatchShape) {
  RoutingBatch b = kBatch;
  b.expert_ids[3] = 4;
  EXPECT_NAMES(route_locality(b, kPlace, kTopo, 0.1), "batch");
  EXPECT_NAMES(route_even(b, kPlace), "batch");
  b.expert_ids[3] = -1;
  EXPECT_NAMES(route_locality(b, kPlace, kTopo, 0.1), "batch");
  b = kBatch;
  b.num_experts = 5;
  EXPECT_NAMES(route_locality(b, kPlace, kTopo, 0.1), "batch");
  b = kBatch;
  b.num_gpus = 3;
  b.token_offset.pop_back();
  EXPECT_NAMES(route_locality(b, kPlace, kTopo, 0.1), "batch");
  b = kBatch;
  b.expert_ids.pop_back();
  EXPECT_NAMES(route_locality(b, kPlace, kTopo, 0.1), "batch");
  b = kBatch;
  b.token_offset[2] = 0;
  EXPECT_NAMES(routing_cost_optimal(b, kPlace, kTopo, 0.1, 1.0), "batch");
}

TEST(RoutingValidation, PlacementTopologyDemand) {
  Placement p = kPlace;
  p.phy2log[5] = 9;
  EXPECT_NAMES(route_locality(kBatch, p, kTopo, 0.1), "placement");
  p.phy2log[5] = 0;  // expert 3 keeps one replica (slot 6); fine
  p.phy2log[6] = 0;  // now expert 3 has none
  EXPECT_NAMES(route_locality(kBatch, p, kTopo, 0.1), "placement");
  EXPECT_NAMES(route_locality(kBatch, kPlace, test::tiny_topo(1, 2), 0.1), "topo");
  EXPECT_NAMES(route_locality_counts(std::vector<int64_t>(15, 1), kPlace, kTopo, 0.1), "demand");
  std::vector<int64_t> d(16, 1);
  d[7] = -2;
  EXPECT_NAMES(route_locality_counts(d, kPlace, kTopo, 0.1), "demand");
  EXPECT_NAMES(route_optimal_counts(d, kPlace, kTopo, 0.1), "demand");
  Topology t = kTopo;
  t.nic_bw = 0;
  EXPECT_NAMES(routing_cost(route_even(kBatch, kPlace), kPlace, t, 1.0), "topo");
  EXPECT_NAMES(pair_cost(0, 4, kTopo, 1.0), "dst_gpu");
  EXPECT_NAMES(pair_cost(0, 1, kTopo, std::nan("")), "token_bytes");
  t = kTopo;
  t.nic_bw = 1.0 / 3;  // 1/3 has a 53-bit odd mantissa: no exact small integer ratio
  EXPECT_NAMES(route_optimal_counts(kBatch.demand(), kPlace, t, 0.1), "topo");
}

TEST(RoutingValidation, CountsMustMatchTheBatch) {
  const Routing r = route_locality(kBatch, kPlace, kTopo, 0.1, false);
  std::vector<RouteCount> c = r.counts;
  c.back().tokens += 1;
  EXPECT_NAMES(assign_pairs(kBatch, kPlace, kTopo, c), "counts");  // more than the batch
  c = r.counts;
  c.pop_back();
  EXPECT_NAMES(assign_pairs(kBatch, kPlace, kTopo, c), "counts");  // fewer
  c = r.counts;
  c[0].slot = 1;  // slot 1 holds expert 1, not expert 0
  EXPECT_NAMES(assign_pairs(kBatch, kPlace, kTopo, c), "counts");
  c = r.counts;
  std::swap(c[0], c[1]);
  EXPECT_NAMES(assign_pairs(kBatch, kPlace, kTopo, c), "counts");  // unsorted
  c = r.counts;
  c[0].src_gpu = 7;
  EXPECT_NAMES(assign_pairs(kBatch, kPlace, kTopo, c), "counts");
  EXPECT_NAMES(routing_cost(c, kPlace, kTopo, 1.0), "counts");
  EXPECT_EQ(assign_pairs(kBatch, kPlace, kTopo, r.counts).size(), kBatch.expert_ids.size());
}

}  // namespace
}  // namespace zepp
