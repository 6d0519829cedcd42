// EPLB-style even split over replicas (DESIGN.md §2, strategies eplb and comet+eplb).
#include "routing/detail.hpp"
#include "routing/routing.hpp"

namespace zepp {
using namespace routing_detail;

Routing route_even(const RoutingBatch& batch, const Placement& placement, bool assign) {
  check_placement(placement);
  check_batch(batch, placement);
  const int G = placement.num_gpus, E = placement.num_experts, k = batch.top_k;
  const ReplicaIndex rep(placement);
  const std::vector<int64_t> d = batch.demand();
  Routing out;
  // Request j of source i goes to replica (i + j) mod r, so replica t receives d / r requests
  // plus one when (t - i) mod r < d mod r.
  for (int e = 0; e < E; ++e) {
    const int r = rep.count(e);
    for (int i = 0; i < G; ++i) {
      const int64_t n = d[size_t(i) * E + e];
      for (int t = 0; t < r && n > 0; ++t) {
        const int64_t x = n / r + (((t - i) % r + r) % r < n % r);
        if (x > 0) out.counts.push_back({e, i, rep.slot[rep.begin[e] + t], x});
      }
    }
  }
  if (!assign) return out;
  out.slot_of_pair.resize(batch.expert_ids.size());
  std::vector<int64_t> seen(E);  // requests of the current source per expert so far
  for (int i = 0; i < G; ++i) {
    std::fill(seen.begin(), seen.end(), 0);
    for (int64_t p = batch.token_offset[i] * k; p < batch.token_offset[i + 1] * k; ++p) {
      const int e = batch.expert_ids[p];
      out.slot_of_pair[p] = rep.slot[rep.begin[e] + (i + seen[e]++) % rep.count(e)];
    }
  }
  return out;
}

}  // namespace zepp
