// replica_bounds and pair_cost: the constraints and the cost coefficients of equation (1).
#include "core/error.hpp"
#include "routing/detail.hpp"
#include "routing/routing.hpp"

namespace zepp {
using namespace routing_detail;

ReplicaBounds replica_bounds(const std::vector<int64_t>& demand, const Placement& placement, double balance_slack) {
  check_placement(placement);
  check_demand(demand, placement);
  check_slack(balance_slack);
  const int G = placement.num_gpus, E = placement.num_experts;
  std::vector<int64_t> total(E, 0);
  for (int i = 0; i < G; ++i)
    for (int e = 0; e < E; ++e) total[e] += demand[size_t(i) * E + e];
  const std::vector<int32_t> cnt = placement.logcnt();
  ReplicaBounds b;
  b.lower.resize(placement.num_slots());
  b.upper.resize(placement.num_slots());
  for (int p = 0; p < placement.num_slots(); ++p) {
    const int e = placement.phy2log[p];
    slot_bounds(total[e], cnt[e], balance_slack, b.lower[p], b.upper[p]);
  }
  return b;
}

double pair_cost(int src_gpu, int dst_gpu, const Topology& topo, double token_bytes) {
  for (auto [gpu, name] : {std::pair(src_gpu, "src_gpu"), std::pair(dst_gpu, "dst_gpu")})
    if (gpu < 0 || gpu >= topo.num_gpus())
      throw ArgumentError(std::string(name) + ": " + std::to_string(gpu) + " is outside [0, " +
                          std::to_string(topo.num_gpus()) + ")");
  check_costs(topo, token_bytes);
  if (src_gpu == dst_gpu) return 0;
  if (topo.node_of(src_gpu) == topo.node_of(dst_gpu)) return token_bytes / topo.nvlink_bw;
  return token_bytes / topo.nic_bw;
}

}  // namespace zepp
