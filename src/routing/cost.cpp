// The objective of equation (1) for a given plan.
#include "core/error.hpp"
#include "routing/detail.hpp"
#include "routing/routing.hpp"

namespace zepp {
using namespace routing_detail;

double routing_cost(const std::vector<RouteCount>& counts, const Placement& placement, const Topology& topo,
                    double token_bytes) {
  check_placement(placement);
  check_topology(topo, placement);
  check_costs(topo, token_bytes);
  const double node_cost = token_bytes / topo.nvlink_bw, remote_cost = token_bytes / topo.nic_bw;
  int64_t node_tokens = 0, remote_tokens = 0;  // exact integer totals per cost class
  for (size_t x = 0; x < counts.size(); ++x) {
    const RouteCount& c = counts[x];
    if (!(c.src_gpu >= 0 && c.src_gpu < placement.num_gpus && c.slot >= 0 && c.slot < placement.num_slots() &&
          c.tokens >= 0))
      throw ArgumentError("counts: entry " + std::to_string(x) + " has a src_gpu, slot or token count out of range");
    const int dst = placement.gpu_of_slot(c.slot);
    if (dst == c.src_gpu) continue;
    (topo.node_of(dst) == topo.node_of(c.src_gpu) ? node_tokens : remote_tokens) += c.tokens;
  }
  return double(node_tokens) * node_cost + double(remote_tokens) * remote_cost;
}

double routing_cost(const Routing& routing, const Placement& placement, const Topology& topo, double token_bytes) {
  return routing_cost(routing.counts, placement, topo, token_bytes);
}

}  // namespace zepp
