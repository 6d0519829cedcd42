// `zepp calibrate` (issue 16): measures, on MPI ranks as they are placed, what the `sim` executor
// needs to predict `zepp run` on this machine — the expert FFN time against tokens, the
// bandwidth the reductions see, and point-to-point bandwidth and per-message latency between
// ranks of the same "node" and of different "nodes", unpaced and through the NIC pacer.
//
// Every measurement runs on all ranks at once (pairs of ranks for the links), as in a run where
// every rank is busy computing, sending or polling MPI: on an oversubscribed machine the figures
// are what one rank gets with the others contending for the cores, which is what `zepp run`
// sees. Times are MPI_Wtime seconds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/gemm_curve.hpp"

namespace zepp::mpi {

// What calibrate() accepts, checked before it measures: at least two points per curve (a line
// is fitted through them), ascending, each in [1, the maximum].
inline constexpr size_t kMinCalibratePoints = 2;
inline constexpr int64_t kMaxCalibrateTokens = int64_t(1) << 16;
inline constexpr double kMaxCalibrateMessageBytes = double(1 << 28);

struct CalibrateOptions {
  int gpus_per_node = 1;                // consecutive ranks form a node, as in `zepp run`
  int hidden = 0, ffn = 0;              // expert shape to time
  std::vector<int64_t> tokens = {1, 4, 16, 64, 256, 1024};  // rows per expert GEMM to time
  int repeat = 5;                       // timed repetitions per point (the median is kept)
  double nic_bytes_per_s = 0;           // > 0: also measure sends paced to this rate (mpi/pacer.hpp)
  std::vector<double> message_bytes = {64, 16384, 262144, 1048576};  // ping-pong sizes
  uint64_t data_seed = 7;
};

// One kind of link as the simulator models it: a message of b bytes takes latency + b / bandwidth.
// Latency: the one-way time (half a round trip) of the smallest message; bandwidth: a stream of
// eight of the largest messages sent back to back, 8 b / (stream time - latency). Each figure is
// the median of repetitions, then of the rank pairs measured at once. Paced, the stream's
// departures are reserved together as the plan executor reserves its ready sends, and the
// latency includes the pacer's nap and wake-up (on a loaded machine, a scheduling delay).
struct LinkFit {
  bool measured = false;     // false: no pair of ranks of this kind; figures copied (see `note`)
  std::string note;
  int pairs = 0;             // rank pairs measured at once
  double latency_s = 0;
  double bytes_per_s = 0;
  std::vector<double> bytes, seconds;  // one-way time of every message size (ping-pong)
};

struct Calibration {
  int ranks = 0, gpus_per_node = 0;
  GemmCurve gemm;                 // median over ranks of each point, made non-decreasing in tokens
  std::vector<std::vector<double>> gemm_by_rank;  // [ranks][points]: each rank's median seconds
  double reduce_bytes_per_s = 0;  // rows read per second when a rank sums partial rows
  double gemm_peak_flops = 0;     // 6 * tokens * hidden * ffn / seconds at the largest point
  LinkFit nvlink;                 // ranks of the same node, unpaced
  LinkFit nic;                    // ranks of different nodes, unpaced
  LinkFit nic_paced;              // ranks of different nodes, through the pacer (nic_bytes_per_s > 0)
  double nic_pacing_bytes_per_s = 0;
  std::vector<double> load_before, load_after;  // /proc/loadavg 1, 5, 15 min (empty if unreadable)
  double wall_s = 0;
};

// Collective over `comm`; every rank returns the same Calibration. Throws ArgumentError naming
// the option ("gpus_per_node", "hidden", "ffn", "tokens", "repeat", "message_bytes",
// "nic_bytes_per_s") when it cannot work (gpus_per_node not dividing the ranks, fewer than two
// token counts, ...).
Calibration calibrate(const CalibrateOptions& opt, MPI_Comm comm);

// The calibration as a topology file (docs/topology.md, "Calibrated files"): gpus_per_node, the
// links (the NIC paced when the calibration was), the measured compute model, and a
// `calibration` record of every figure with the load average. `name` names the cluster.
nlohmann::json calibrated_topology(const Calibration& c, const std::string& name);

}  // namespace zepp::mpi
