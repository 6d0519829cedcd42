// Topology files with a compute model measured on the machine (`compute.model: measured`,
// written by `zepp calibrate`; docs/topology.md "Calibrated files"). Read by
// core/topology_file.cpp like every topology file.
#pragma once
#include <string>
#include <vector>

#include "core/gemm_curve.hpp"

namespace zepp {

// The file's expert FFN curves (compute.gemm); empty for a roofline file. The same checks and
// errors as read_topology_file (core/topology_file.hpp). Simulate with them through
// simulate_plan_measured (exec/sim_measured.hpp).
std::vector<GemmCurve> read_measured_compute(const std::string& path);

}  // namespace zepp
