// Properties over random clusters, placements and batches (rapidcheck).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <numeric>

#include "routing/routing.hpp"
#include "helpers.hpp"
#include "random_case.hpp"

namespace zepp {
namespace {

using test::Case;
using test::random_batch;
using test::random_case;

// The invariants of DESIGN.md §5 for a full plan: every (token, k) pair is served exactly once
// by a slot holding its expert, and the counts are exactly what slot_of_pair does.
void check_plan(const Case& c, const Routing& r) {
  const RoutingBatch& b = c.batch;
  RC_ASSERT(r.slot_of_pair.size() == b.expert_ids.size());
  for (size_t p = 0; p < r.slot_of_pair.size(); ++p) {
    RC_ASSERT(r.slot_of_pair[p] >= 0 && r.slot_of_pair[p] < c.placement.num_slots());
    RC_ASSERT(c.placement.phy2log[r.slot_of_pair[p]] == b.expert_ids[p]);
  }
  RC_ASSERT(test::tally(b, r.slot_of_pair) == test::as_map(r.counts));
  for (size_t x = 0; x < r.counts.size(); ++x) {
    RC_ASSERT(r.counts[x].tokens > 0);
    if (x)
      RC_ASSERT(std::tuple(r.counts[x - 1].expert, r.counts[x - 1].src_gpu, r.counts[x - 1].slot) <
                std::tuple(r.counts[x].expert, r.counts[x].src_gpu, r.counts[x].slot));
  }
}

void check_bounds(const Case& c, const std::vector<RouteCount>& counts) {
  const ReplicaBounds bounds = replica_bounds(c.batch.demand(), c.placement, c.slack);
  const std::vector<int64_t> load = test::slot_loads(counts, c.placement);
  for (int p = 0; p < c.placement.num_slots(); ++p) {
    RC_ASSERT(load[p] >= bounds.lower[p]);
    RC_ASSERT(load[p] <= bounds.upper[p]);
  }
}

RC_GTEST_PROP(RoutingProperty, LocalityPlanServesEveryPairOnceWithinBounds, ()) {
  const Case c = random_case();
  const Routing r = route_locality(c.batch, c.placement, c.topo, c.slack);
  check_plan(c, r);
  check_bounds(c, r.counts);
  RC_ASSERT(test::same_counts(route_locality(c.batch, c.placement, c.topo, c.slack, false).counts, r.counts));
}

RC_GTEST_PROP(RoutingProperty, Deterministic, ()) {
  const Case c = random_case();
  const Routing a = route_locality(c.batch, c.placement, c.topo, c.slack);
  const Routing b = route_locality(c.batch, c.placement, c.topo, c.slack);
  RC_ASSERT(test::same_counts(a.counts, b.counts));
  RC_ASSERT(a.slot_of_pair == b.slot_of_pair);
  RC_ASSERT(route_even(c.batch, c.placement).slot_of_pair == route_even(c.batch, c.placement).slot_of_pair);
}

RC_GTEST_PROP(RoutingProperty, GreedyCostsNoLessThanTheExactOptimum, ()) {
  const Case c = random_case();
  const std::vector<RouteCount> opt = route_optimal_counts(c.batch.demand(), c.placement, c.topo, c.slack);
  check_bounds(c, opt);
  // The optimum serves exactly the demand.
  std::vector<int64_t> served(c.batch.demand().size(), 0);
  for (const auto& x : opt) served[size_t(x.src_gpu) * c.placement.num_experts + x.expert] += x.tokens;
  RC_ASSERT(served == c.batch.demand());
  const double greedy = routing_cost(route_locality(c.batch, c.placement, c.topo, c.slack, false), c.placement,
                                     c.topo, 1.0);
  const double best = routing_cost(opt, c.placement, c.topo, 1.0);
  RC_ASSERT(best == routing_cost_optimal(c.batch, c.placement, c.topo, c.slack, 1.0));
  RC_ASSERT(best <= greedy * (1 + 1e-12));
  RC_CLASSIFY(best < greedy * (1 - 1e-12), "greedy above optimum");
}

RC_GTEST_PROP(RoutingProperty, EvenSplitServesEveryPairOnce, ()) {
  const Case c = random_case();
  const Routing r = route_even(c.batch, c.placement);
  check_plan(c, r);
  // Per (source, expert), replica totals differ by at most one.
  for (const auto& x : r.counts)
    for (const auto& y : r.counts)
      if (x.expert == y.expert && x.src_gpu == y.src_gpu) RC_ASSERT(std::abs(x.tokens - y.tokens) <= 1);
}

// With every lower bound at 0 (C close to 1, few tokens) nothing forces a token away from its
// node: whenever a node's slots of an expert have room for the node's demand, no token of that
// expert crosses nodes, and when a GPU's own slots have room for its demand, none leaves it.
RC_GTEST_PROP(RoutingProperty, BigSlackKeepsTokensLocalWhenReplicasExist, ()) {
  const int nodes = *rc::gen::inRange(1, 4), gpn = *rc::gen::inRange(1, 4), G = nodes * gpn;
  const int E = *rc::gen::inRange(1, 7);
  const int spg = (E + gpn - 1) / gpn + *rc::gen::inRange(0, 2);
  // Each node holds every expert at least once (then random experts), laid over its GPUs.
  std::vector<int32_t> phy2log;
  for (int n = 0; n < nodes; ++n) {
    std::vector<int32_t> node_slots(size_t(gpn) * spg);
    for (size_t s = 0; s < node_slots.size(); ++s) node_slots[s] = s < size_t(E) ? int32_t(s) : *rc::gen::inRange(0, E);
    const int rot = *rc::gen::inRange(0, int(node_slots.size()));
    std::rotate(node_slots.begin(), node_slots.begin() + rot, node_slots.end());
    phy2log.insert(phy2log.end(), node_slots.begin(), node_slots.end());
  }
  Case c{test::tiny_topo(nodes, gpn), test::make_placement(G, E, phy2log), random_batch(G, E, 1, 6), 0.99};
  const Routing r = route_locality(c.batch, c.placement, c.topo, c.slack);
  check_plan(c, r);
  const ReplicaBounds bounds = replica_bounds(c.batch.demand(), c.placement, c.slack);
  const std::vector<int64_t> d = c.batch.demand();
  bool node_rule = false, gpu_rule = false;  // whether a locality assertion applied to some count
  for (int e = 0; e < E; ++e) {
    std::vector<int64_t> node_room(nodes, 0), gpu_room(G, 0), node_demand(nodes, 0);
    for (int p = 0; p < c.placement.num_slots(); ++p)
      if (c.placement.phy2log[p] == e) {
        RC_ASSERT(bounds.lower[p] == 0);
        node_room[c.topo.node_of(c.placement.gpu_of_slot(p))] += bounds.upper[p];
        gpu_room[c.placement.gpu_of_slot(p)] += bounds.upper[p];
      }
    for (int i = 0; i < G; ++i) node_demand[c.topo.node_of(i)] += d[size_t(i) * E + e];
    for (const auto& x : r.counts) {
      if (x.expert != e) continue;
      const int dst = c.placement.gpu_of_slot(x.slot), n = c.topo.node_of(x.src_gpu);
      if (node_room[n] >= node_demand[n]) RC_ASSERT(c.topo.node_of(dst) == n);
      if (gpu_room[x.src_gpu] >= d[size_t(x.src_gpu) * E + e]) RC_ASSERT(dst == x.src_gpu);
      node_rule |= node_room[n] >= node_demand[n] && nodes > 1;
      gpu_rule |= gpu_room[x.src_gpu] >= d[size_t(x.src_gpu) * E + e] && G > 1;
    }
  }
  RC_CLASSIFY(node_rule, "node-local assertion applied");
  RC_CLASSIFY(gpu_rule, "GPU-local assertion applied");
}

}  // namespace
}  // namespace zepp
