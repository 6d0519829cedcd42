#include "placement/check.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace zepp::placement_detail {

void check_topology(const Topology& topo) {
  require(topo.nodes >= 1, "topo", "nodes must be >= 1, got " + std::to_string(topo.nodes));
  require(topo.gpus_per_node >= 1, "topo", "gpus_per_node must be >= 1, got " + std::to_string(topo.gpus_per_node));
}

void check_load(const std::vector<double>& load, bool float32) {
  require(!load.empty(), "load", "is empty, expected one demand per expert");
  const double max = float32 ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
  for (size_t e = 0; e < load.size(); ++e)
    if (!(std::isfinite(load[e]) && load[e] >= 0 && load[e] <= max))  // message built only on failure
      throw ArgumentError("load: expert " + std::to_string(e) + " has demand " + std::to_string(load[e]) +
                          (float32 ? ", expected a finite float32 value >= 0" : ", expected a finite value >= 0"));
}

}  // namespace zepp::placement_detail
