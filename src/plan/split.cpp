#include "plan/split.hpp"

#include <lemon/network_simplex.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace zepp {

int64_t nic_capacity(int64_t total, int gpus, double nic_slack) {
  require(gpus > 0, "gpus", "must be positive, got " + std::to_string(gpus));
  require(nic_slack >= 0 && std::isfinite(nic_slack), "nic_slack", "must be finite and >= 0");
  require(total >= 0, "total", "must be >= 0, got " + std::to_string(total));
  const int64_t even = (total + gpus - 1) / gpus;
  // The 1e-9 keeps (1 + C) * V / G from losing a whole row to floating-point rounding.
  const auto slack = int64_t(std::floor((1.0 + nic_slack) * double(total) / gpus + 1e-9));
  return std::max(even, slack);
}

static int64_t check_volumes(const std::vector<int64_t>& volumes, int64_t cap) {
  require(!volumes.empty(), "volumes", "needs at least one GPU");
  int64_t total = 0;
  for (size_t i = 0; i < volumes.size(); ++i) {
    require(volumes[i] >= 0, "volumes", "entry " + std::to_string(i) + " is negative");
    total += volumes[i];
  }
  require(cap >= 0 && cap * int64_t(volumes.size()) >= total, "cap",
          "G * cap = " + std::to_string(cap * int64_t(volumes.size())) + " cannot carry " + std::to_string(total) +
              " rows");
  return total;
}

SplitMatrix split_closed_form(const std::vector<int64_t>& volumes, int64_t cap) {
  check_volumes(volumes, cap);
  const size_t G = volumes.size();
  SplitMatrix x(G * G, 0);
  std::vector<int64_t> room(G);
  for (size_t j = 0; j < G; ++j) {
    x[j * G + j] = std::min(volumes[j], cap);
    room[j] = cap - x[j * G + j];
  }
  size_t j = 0;
  for (size_t i = 0; i < G; ++i) {
    for (int64_t excess = volumes[i] - x[i * G + i]; excess > 0;) {
      while (room[j] == 0) ++j;  // total room >= total excess, so j stays in range
      const int64_t m = std::min(excess, room[j]);
      x[i * G + j] += m;
      room[j] -= m;
      excess -= m;
    }
  }
  return x;
}

SplitMatrix split_min_cost(const std::vector<int64_t>& volumes, int64_t cap, const std::vector<int64_t>& cost) {
  const int64_t total = check_volumes(volumes, cap);
  const size_t G = volumes.size();
  require(cost.size() == G * G, "cost", "expected G * G = " + std::to_string(G * G) + " entries");
  for (int64_t c : cost) require(c >= 0, "cost", "entries must be >= 0");

  // Bipartite network: source GPU i -> NIC j (cost c_ij, 0 on the diagonal) -> sink (cap).
  lemon::SmartDigraph g;
  std::vector<lemon::SmartDigraph::Node> src(G), nic(G);
  for (size_t i = 0; i < G; ++i) src[i] = g.addNode();
  for (size_t j = 0; j < G; ++j) nic[j] = g.addNode();
  const auto sink = g.addNode();
  lemon::SmartDigraph::ArcMap<int64_t> upper(g), arc_cost(g);
  lemon::SmartDigraph::NodeMap<int64_t> supply(g, 0);
  std::vector<lemon::SmartDigraph::Arc> move(G * G);
  for (size_t i = 0; i < G; ++i) {
    supply[src[i]] = volumes[i];
    for (size_t j = 0; j < G; ++j) {
      move[i * G + j] = g.addArc(src[i], nic[j]);
      upper[move[i * G + j]] = volumes[i];
      arc_cost[move[i * G + j]] = i == j ? 0 : cost[i * G + j];
    }
  }
  for (size_t j = 0; j < G; ++j) {
    const auto a = g.addArc(nic[j], sink);
    upper[a] = cap;
    arc_cost[a] = 0;
  }
  supply[sink] = -total;

  lemon::NetworkSimplex<lemon::SmartDigraph, int64_t, int64_t> ns(g);
  ns.upperMap(upper).costMap(arc_cost).supplyMap(supply);
  // Feasible by the capacity check above; anything else is a bug, not bad input.
  if (ns.run() != decltype(ns)::OPTIMAL) throw std::logic_error("split_min_cost: flow infeasible");
  SplitMatrix x(G * G);
  for (size_t k = 0; k < G * G; ++k) x[k] = ns.flow(move[k]);
  return x;
}

bool split_pays(const std::vector<int64_t>& volumes, const SplitMatrix& x, const Topology& topo, double token_bytes) {
  const int G = int(volumes.size());
  int64_t busiest = 0, busiest_after = 0, largest_move = 0;
  for (int j = 0; j < G; ++j) {
    int64_t carried = 0;
    for (int i = 0; i < G; ++i) {
      carried += x[size_t(i) * G + j];
      if (i != j) largest_move = std::max(largest_move, x[size_t(i) * G + j]);
    }
    busiest = std::max(busiest, volumes[j]);
    busiest_after = std::max(busiest_after, carried);
  }
  if (largest_move == 0) return false;
  const double saved = double(busiest - busiest_after) * token_bytes / topo.nic_bw;
  const double hops = 2 * (topo.nvlink_latency + double(largest_move) * token_bytes / topo.nvlink_bw);
  return saved > hops;
}

SplitMatrix plan_split(const std::vector<int64_t>& volumes, const PlanOptions& opt, const Topology& topo,
                       double token_bytes) {
  const int G = int(volumes.size());
  SplitMatrix x(size_t(G) * G, 0);
  const auto keep = [&] {
    std::fill(x.begin(), x.end(), 0);
    for (int i = 0; i < G; ++i) x[size_t(i) * G + i] = volumes[i];
  };
  if (!opt.split) {
    keep();
    return x;
  }
  int64_t total = 0;
  for (int64_t v : volumes) total += v;
  const int64_t cap = nic_capacity(total, G, opt.nic_slack);
  if (opt.nic_slack == 0) {
    x = split_closed_form(volumes, cap);
  } else {
    const std::vector<int64_t> cost(size_t(G) * G, 1);  // NVLink is uniform inside a node
    x = split_min_cost(volumes, cap, cost);
  }
  if (opt.split_if_it_pays && !split_pays(volumes, x, topo, token_bytes)) keep();
  return x;
}

int64_t moved_rows(const SplitMatrix& x, int gpus) {
  int64_t moved = 0;
  for (int i = 0; i < gpus; ++i)
    for (int j = 0; j < gpus; ++j)
      if (i != j) moved += x[size_t(i) * gpus + j];
  return moved;
}

}  // namespace zepp
