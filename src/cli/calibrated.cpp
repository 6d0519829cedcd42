#include "cli/calibrated.hpp"

#include <cmath>
#include <cstdio>

#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "core/measured_compute.hpp"
#include "core/topology_file.hpp"

namespace zepp::cli {
namespace {

std::string gbps(double bytes_per_s) {
  if (bytes_per_s <= 0) return "off";
  char b[48];
  std::snprintf(b, sizeof b, "%g GB/s", bytes_per_s / 1e9);
  return b;
}

}  // namespace

CalibratedCluster calibrated_topology_for_run(const std::string& file, const Topology& run, double pacing) {
  CalibratedCluster c{read_topology_file(file, run.nodes), read_measured_compute(file)};
  Topology& t = c.topo;
  t.link_sharing = run.link_sharing;  // the run's --link-sharing: how the prediction shares links
  require(t.gpus_per_node == run.gpus_per_node, "--predict",
          file + " was calibrated for " + std::to_string(t.gpus_per_node) + " GPUs per node, the run has " +
              std::to_string(run.gpus_per_node) + " (zepp calibrate --gpus-per-node " + std::to_string(run.gpus_per_node) + ")");
  require(!c.gemm.empty(), "--predict", file + " has no compute model measured on this machine (write it with zepp calibrate)");
  std::string file_pacing;
  double unpaced_bw = 0, unpaced_latency = 0;
  try {
    const YAML::Node rec = YAML::LoadFile(file)["calibration"];
    require(rec && rec["nic_pacing"] && rec["nic_unpaced"], "--predict",
            file + " has no calibration record (write it with zepp calibrate)");
    file_pacing = rec["nic_pacing"].as<std::string>();
    unpaced_bw = rec["nic_unpaced"]["bandwidth_bytes_per_s"].as<double>();
    unpaced_latency = rec["nic_unpaced"]["latency_s"].as<double>();
  } catch (const YAML::Exception& e) {
    throw InputError(file + ":" + std::to_string(e.mark.line + 1) + ": calibration: " + e.msg);
  }
  const double file_rate = file_pacing == "off" ? 0 : parse_bandwidth(file_pacing, file + ": calibration.nic_pacing: ");
  if (pacing <= 0 && file_rate > 0) {  // an unpaced run: the unpaced inter-node figures
    require(unpaced_bw > 0 && std::isfinite(unpaced_bw) && unpaced_latency >= 0 && std::isfinite(unpaced_latency),
            "--predict", file + ": calibration.nic_unpaced must hold a positive bandwidth and a latency >= 0");
    t.nic_bw = unpaced_bw;
    t.nic_latency = unpaced_latency;
  } else {
    require(std::fabs(pacing - file_rate) <= 1e-6 * std::max(pacing, file_rate), "--predict",
            file + " was calibrated with NIC pacing " + gbps(file_rate) + ", the run paces at " + gbps(pacing) +
                " (zepp calibrate --nic-gbps with the run's rate)");
  }
  return c;
}

}  // namespace zepp::cli
