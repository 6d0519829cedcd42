// Token routing: which replica serves every (token, expert) pair (paper §4.1 equation (1), §5).
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// Integer per-replica load bounds of equation (1): q = total_e / replicas_e,
// lower = floor((1 - C) q), upper = ceil((1 + C) q) (rounded outward so integer loads are
// always feasible). Shape [num_slots] each.
struct ReplicaBounds {
  std::vector<int64_t> lower, upper;
};
ReplicaBounds replica_bounds(const std::vector<int64_t>& demand /*[G*E]*/, const Placement& placement,
                             double balance_slack);

// Inverse-bandwidth cost a_ij of equation (1) per token, in seconds: 0 on the same GPU,
// token_bytes / nvlink_bw within a node, token_bytes / nic_bw across nodes.
double pair_cost(int src_gpu, int dst_gpu, const Topology& topo, double token_bytes);

// Zepp's locality-preferred routing (§5): greedy water-filling (own GPU, then same node, then
// remote; never starving another replica's lower bound), then per-token assignment that
// consolidates each token's remote requests onto fewer nodes. assign_pairs = false returns the
// count-level plan only (slot_of_pair empty).
Routing route_locality(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                       double balance_slack, bool assign_pairs = true);

// EPLB-style even split: each source GPU's requests for an expert go round-robin over its
// replicas. With one replica per expert this is plain EP's home routing.
Routing route_even(const RoutingBatch& batch, const Placement& placement, bool assign_pairs = true);

// Objective of equation (1) for a routing, in seconds (sum of M^e_ij * a_ij).
double routing_cost(const Routing& routing, const Placement& placement, const Topology& topo, double token_bytes);

// Exact optimum of equation (1): a min-cost flow per expert with LEMON's NetworkSimplex, same
// bounds as route_locality. In seconds, comparable with routing_cost.
double routing_cost_optimal(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                            double balance_slack, double token_bytes);

}  // namespace zepp
