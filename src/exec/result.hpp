// What an executor reports for one MoE layer invocation (DESIGN.md §1 "Report").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zepp {

// One interval on a GPU's resource track, for timelines (Chrome trace JSON, Gantt SVG). The name
// is the kind of work (exec/task_label.hpp), so tools aggregate by it; what varies is in the fields
// after it (Chrome trace "args"), -1 where they do not apply.
struct TimelineEvent {
  int gpu = 0;
  std::string track;   // "compute", "nvlink-out", "nic-out"
  std::string name;    // e.g. "expert GEMM", "dispatch put", "pre-reduce", "final reduce"
  double start_s = 0, end_s = 0;
  int64_t rows = -1;   // token rows moved or reduced; (token, expert) pairs of a GEMM
  double bytes = -1;   // payload of a transfer; rows read by a reduction
  int expert = -1;     // logical expert of a GEMM or a weight transfer
  int peer = -1;       // receiving GPU of a transfer
  int node = -1;       // node a pre-reduction's partial sums go to
  int round = -1;      // Algorithm 1 round of an inter-node transfer
};

struct GpuStats {
  int64_t tokens_computed = 0;   // (token, expert) pairs computed on this GPU
  double compute_s = 0;          // time in expert FFNs
  double finish_s = 0;           // when its last activity ended
  double nvlink_out_bytes = 0, nic_out_bytes = 0, nic_in_bytes = 0;
};

struct LayerResult {
  double latency_s = 0;          // slowest GPU's finish time (paper §6.1)
  std::vector<GpuStats> gpus;    // [num_gpus]
  double inter_node_bytes = 0;   // all bytes over NICs
  double nvlink_bytes = 0;       // all bytes over NVLink
  double max_nic_bytes = 0;      // most bytes through one NIC (egress or ingress)
  double comm_hidden_fraction = 0;  // share of communication time overlapped by computation,
                                    // each transfer counted once (at its sender)
  // Per-batch metadata exchange and planning (Phase::Planning tasks, plan/planning.hpp),
  // included in latency_s but not in the byte figures or comm_hidden_fraction above:
  double metadata_s = 0;  // when the last metadata transfer arrived (0: none)
  double planning_s = 0;  // the longest planning task (0: none)
  std::vector<TimelineEvent> timeline;
};

}  // namespace zepp
