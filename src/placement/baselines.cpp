// The baselines' placements: EPLB for one layer, and plain contiguous EP without replicas.
#include <numeric>

#include "core/error.hpp"
#include "placement/check.hpp"
#include "placement/placement.hpp"

namespace zepp {

Placement place_eplb(const std::vector<double>& load, const Topology& topo, int slots_per_gpu, int num_groups) {
  placement_detail::check_topology(topo);
  placement_detail::check_load(load, true);
  const int E = int(load.size()), G = topo.num_gpus();
  require(slots_per_gpu >= 1 && int64_t(slots_per_gpu) * G >= E, "slots_per_gpu",
          std::to_string(slots_per_gpu) + " slots on " + std::to_string(G) + " GPUs cannot hold " + std::to_string(E) +
              " experts");
  const std::vector<float> w(load.begin(), load.end());  // EPLB works in float32
  const EplbResult r = eplb_rebalance(w, 1, E, slots_per_gpu * G, num_groups, topo.nodes, G);
  Placement p{G, E, slots_per_gpu, std::vector<int32_t>(r.phy2log.begin(), r.phy2log.end())};
  return p;
}

Placement place_contiguous(int num_experts, const Topology& topo) {
  placement_detail::check_topology(topo);
  const int G = topo.num_gpus();
  require(num_experts >= 1 && num_experts % G == 0, "num_experts",
          std::to_string(num_experts) + " is not a positive multiple of the " + std::to_string(G) + " GPUs");
  Placement p{G, num_experts, num_experts / G, std::vector<int32_t>(num_experts)};
  std::iota(p.phy2log.begin(), p.phy2log.end(), 0);
  return p;
}

}  // namespace zepp
