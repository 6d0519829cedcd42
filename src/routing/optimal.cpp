// Exact reference for equation (1): a min-cost flow per expert with LEMON's NetworkSimplex, so
// the greedy's optimality gap is measured rather than assumed (DESIGN.md §1).
#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "core/error.hpp"
#include "routing/detail.hpp"
#include "routing/routing.hpp"

namespace zepp {
using namespace routing_detail;
namespace {

// v = mantissa * 2^exponent with an odd mantissa (exact for any positive finite double).
void dyadic(double v, int64_t& mantissa, int& exponent) {
  const double f = std::frexp(v, &exponent);
  mantissa = int64_t(std::ldexp(f, 53));
  exponent -= 53;
  while ((mantissa & 1) == 0) {
    mantissa >>= 1;
    ++exponent;
  }
}

// Integer arc costs proportional to a_ij = token_bytes / bandwidth: same-node : remote =
// 1/nvlink_bw : 1/nic_bw = nic_bw : nvlink_bw, reduced by their gcd.
struct ExactCosts {
  int64_t node, remote;
};
// Decimal figures ("1.07 GB/s", presets, calibrated files) are whole bytes per second, but
// 1.07 * 1e9 is 1070000000.0000001 in binary, whose exact binary fraction has a 53-bit
// numerator (about 4% of 3-digit GB/s figures; calibrated topologies failed intermittently).
// A value within 1e-12 of an integer is that integer: the rest is the parse's rounding.
double whole_bytes(double bw) {
  const double r = std::round(bw);
  return r >= 1 && std::abs(bw - r) <= 1e-12 * bw ? r : bw;
}

// The costs, or nothing when the ratio has no integer terms below 2^31.
std::optional<ExactCosts> find_exact_costs(const Topology& topo) {
  const double v = whole_bytes(topo.nvlink_bw), n = whole_bytes(topo.nic_bw);
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (v == std::floor(v) && n == std::floor(n) && v < 0x1p62 && n < 0x1p62) {  // integers: reduce by their gcd
    const int64_t node = int64_t(n), remote = int64_t(v), g = std::gcd(node, remote);
    if (node / g >= kLimit || remote / g >= kLimit) return std::nullopt;
    return ExactCosts{node / g, remote / g};
  }
  int64_t mv, mn;
  int xv, xn;
  dyadic(v, mv, xv);
  dyadic(n, mn, xn);
  const int lo = std::min(xv, xn);
  const auto too_big = [](int64_t m, int shift) { return shift > 31 || m > (int64_t(1) << (31 - shift)); };
  if (too_big(mn, xn - lo) || too_big(mv, xv - lo)) return std::nullopt;
  const int64_t node = mn << (xn - lo), remote = mv << (xv - lo), g = std::gcd(node, remote);
  return ExactCosts{node / g, remote / g};
}

ExactCosts exact_costs(const Topology& topo) {
  const std::optional<ExactCosts> c = find_exact_costs(topo);
  require(c.has_value(), "topo",
          "nvlink_bw / nic_bw has no exact integer ratio with terms below 2^31, which the exact solver needs");
  return *c;
}

}  // namespace

bool exact_optimum_possible(const Topology& topo) {
  return std::isfinite(topo.nvlink_bw) && std::isfinite(topo.nic_bw) && topo.nvlink_bw > 0 && topo.nic_bw > 0 &&
         find_exact_costs(topo).has_value();
}

std::vector<RouteCount> route_optimal_counts(const std::vector<int64_t>& demand, const Placement& placement,
                                             const Topology& topo, double balance_slack) {
  check_placement(placement);
  check_topology(topo, placement);
  check_demand(demand, placement);
  check_slack(balance_slack);
  check_costs(topo, 1.0);
  const ExactCosts w = exact_costs(topo);
  const int G = placement.num_gpus, E = placement.num_experts;
  const ReplicaIndex rep(placement);
  std::vector<RouteCount> out;
  using Graph = lemon::SmartDigraph;
  for (int e = 0; e < E; ++e) {
    int64_t total = 0;
    for (int i = 0; i < G; ++i) total += demand[size_t(i) * E + e];
    if (total == 0) continue;
    const int r = rep.count(e);
    const int32_t* slots = &rep.slot[rep.begin[e]];
    int64_t lower, upper;
    slot_bounds(total, r, balance_slack, lower, upper);

    Graph g;
    Graph::ArcMap<int64_t> lo(g), up(g), cost(g);
    Graph::NodeMap<int64_t> supply(g);
    const Graph::Node sink = g.addNode();
    supply[sink] = -total;
    std::vector<Graph::Node> slot_node(r);
    for (int j = 0; j < r; ++j) {
      slot_node[j] = g.addNode();
      supply[slot_node[j]] = 0;
      const Graph::Arc a = g.addArc(slot_node[j], sink);
      lo[a] = lower;
      up[a] = upper;
      cost[a] = 0;
    }
    std::vector<Graph::Arc> arcs;  // [source i with demand][j], in (i, j) order
    std::vector<int> arc_src;
    for (int i = 0; i < G; ++i) {
      const int64_t d = demand[size_t(i) * E + e];
      if (d == 0) continue;
      const Graph::Node s = g.addNode();
      supply[s] = d;
      for (int j = 0; j < r; ++j) {
        const int dst = placement.gpu_of_slot(slots[j]);
        const Graph::Arc a = g.addArc(s, slot_node[j]);
        lo[a] = 0;
        up[a] = d;
        cost[a] = dst == i ? 0 : topo.node_of(dst) == topo.node_of(i) ? w.node : w.remote;
        arcs.push_back(a);
        arc_src.push_back(i);
      }
    }
    lemon::NetworkSimplex<Graph, int64_t, int64_t> ns(g);
    ns.lowerMap(lo).upperMap(up).costMap(cost).supplyMap(supply);
    // The bounds are feasible by construction (replica_bounds), so anything else is a bug.
    if (ns.run() != decltype(ns)::OPTIMAL) throw std::logic_error("route_optimal_counts: min-cost flow not solved");
    for (size_t x = 0; x < arcs.size(); ++x)
      if (int64_t f = ns.flow(arcs[x])) out.push_back({e, arc_src[x], slots[x % r], f});
  }
  return out;
}

double routing_cost_optimal(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                            double balance_slack, double token_bytes) {
  check_placement(placement);
  check_batch(batch, placement);
  check_costs(topo, token_bytes);
  return routing_cost(route_optimal_counts(batch.demand(), placement, topo, balance_slack), placement, topo,
                      token_bytes);
}

}  // namespace zepp
