// Real distributed execution of one MoE layer invocation over MPI (DESIGN.md §1 "Executors",
// `mpi`): one rank per simulated GPU, rank g on node g / gpus_per_node. Real fp32 token
// activations move between ranks, real SwiGLU expert FFNs run (OpenBLAS), real gate-weighted
// outputs come back and are summed on each token's source rank.
//
// Units: rows are fp32 (4 bytes per element), so run plans built with
// ModelShape::bytes_per_elem = 4: then a Transfer's `bytes` is exactly what this executor puts
// on the wire (rows * hidden * 4, or 3 * hidden * ffn * 4 for expert weights). Times are
// seconds of MPI_Wtime, measured after a barrier that starts every rank together.
#pragma once
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "core/types.hpp"
#include "exec/result.hpp"
#include "plan/comm_plan.hpp"

namespace zepp::mpi {

struct ExecConfig {
  uint64_t data_seed = 7;   // seeds activations and expert weights (mpi/seeded.hpp)
  double nic_bytes_per_s = 0;  // > 0: pace inter-node sends (mpi/pacer.hpp); 0: unpaced
  // This rank's input rows [own tokens x hidden], in token order (a previous layer's output in
  // a stack of layers, mpi/stack.hpp); nullptr: seeded activations token_activation(data_seed, t).
  const std::vector<float>* input = nullptr;
  bool timeline = false;       // record RankOutput::timeline
};

// What one rank measured. Bytes are what this rank sent, by link class: NVLink = a rank of the
// same node, NIC = a rank of another node. `plan_*` are the same sums over the plan's Transfer
// tasks this rank sends (`bytes` by Task::link); the executor throws when they differ.
struct RankStats {
  double dispatch_s = 0;  // start -> last dispatch transfer (sent or received) done on this rank
  double compute_s = 0;   // busy time inside expert FFNs (GEMMs, activation, gate weighting)
  double combine_s = 0;   // first combine task started -> last combine task done on this rank
  double total_s = 0;     // start -> this rank's last task done
  double nvlink_bytes = 0, nic_bytes = 0;
  double plan_nvlink_bytes = 0, plan_nic_bytes = 0;
  int64_t pairs_computed = 0;  // (token, expert) pairs whose FFN ran here
  int64_t messages = 0;        // data messages sent (zero-byte dependency signals excluded)
  uint64_t wire_hash = 0;      // FNV-1a of every payload sent, folded in task (or peer) order
  // Per-rank planning before the layer (mpi/rank_plan.hpp; 0 for strategies that decide nothing
  // per batch on the rank): the counts all-gather and the rank's own planning, seconds.
  double metadata_s = 0, planning_s = 0;
};

struct RankOutput {
  std::vector<float> y;  // [own tokens x hidden]: outputs of this rank's tokens, in token order
  RankStats stats;
  // With ExecConfig::timeline: this rank's events on the `sim` executor's tracks (exec/sim.hpp),
  // seconds since the common start. "compute": each expert GEMM and reduction, start to end;
  // "nvlink-out" / "nic-out": each message this rank sends, from when its NIC began serialising
  // it (paced) or when it was posted (unpaced) to when MPI reported the send complete. Named as
  // the simulator names the same task (task_label). The unpaced a2av collective is one event per
  // exchange on the NIC track when the rank sends over a NIC, else on the NVLink track.
  std::vector<TimelineEvent> timeline;
};

// Runs `plan` on `comm` (size plan.num_gpus; this rank is GPU `rank`). Every rank passes the same
// plan and batch. Each rank executes the tasks it takes part in, respecting dependencies:
// receives are posted up front, every Transfer is one MPI message from its sender to its
// receiver with tag = task index and exactly the task's rows; a dependency on a task this rank
// does not take part in arrives as a zero-byte signal from the rank that finished it. Among
// ready tasks of the compute stream the lowest (priority, index) runs first; ready sends go out
// in that order too (NIC sends through the pacer).
// Throws ArgumentError("plan"/"batch"/"comm") on shapes that disagree (size, token_bytes not
// hidden * 4, a pair of another expert) and std::logic_error when the plan asks for a row this
// rank does not hold or counted bytes differ from the plan's.
RankOutput execute_plan(const CommPlan& plan, const RoutingBatch& batch, const ExecConfig& cfg, MPI_Comm comm);

// The plain EP baseline (`a2av`): every (token, expert) pair's activation goes to the GPU of its
// slot with one MPI_Alltoallv (self-blocks copied locally, not sent), experts compute, weighted
// outputs return with a second MPI_Alltoallv and are summed on the source rank in k order. No
// replicas, no merge. With pacing the same blocks go as point-to-point messages, inter-node ones
// through the pacer (a collective cannot be paced). plan_* stats are filled by the caller.
// Throws ArgumentError("routing") when slot_of_pair is missing.
RankOutput execute_alltoallv(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                             const ModelShape& model, int gpus_per_node, const ExecConfig& cfg, MPI_Comm comm);

// Bytes of the plan's Transfer tasks sent by `gpu`, by link: {NVLink, NIC}.
std::pair<double, double> plan_sent_bytes(const CommPlan& plan, int gpu);

}  // namespace zepp::mpi
