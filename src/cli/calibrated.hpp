// The cluster a `zepp calibrate` file describes, as `zepp run --predict FILE` simulates it.
#pragma once
#include <string>

#include <vector>

#include "core/gemm_curve.hpp"
#include "core/types.hpp"

namespace zepp::cli {

struct CalibratedCluster {
  Topology topo;                // links as measured under the run's pacing
  std::vector<GemmCurve> gemm;  // the measured compute model (exec/sim_measured.hpp)
};

// Reads the calibrated topology `file` (docs/topology.md, "Calibrated files") for a run on
// `run` (its nodes, GPUs per node and link sharing, which the result keeps) whose inter-node sends are paced to `pacing` bytes/s (0:
// unpaced). The file's NIC is the one measured under the same pacing: a paced file serves paced
// runs at its rate, and unpaced runs through the unpaced figures it records. Throws
// ArgumentError("--predict: ...") when the file was calibrated for another GPUs-per-node or
// another pacing, has no compute model measured on the machine, or lacks its calibration record;
// InputError for a malformed file.
CalibratedCluster calibrated_topology_for_run(const std::string& file, const Topology& run, double pacing);

}  // namespace zepp::cli
