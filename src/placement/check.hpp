// Argument checks shared by the placement policies (internal to src/placement).
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp::placement_detail {

// Throws ArgumentError("topo: ...") unless nodes >= 1 and gpus_per_node >= 1.
void check_topology(const Topology& topo);

// Throws ArgumentError("load: ...") unless load is non-empty and every value is finite and >= 0
// (and, when `float32`, fits a float, as EPLB reads it).
void check_load(const std::vector<double>& load, bool float32);

}  // namespace zepp::placement_detail
