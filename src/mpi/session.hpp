// One strategy run end to end under MPI (issue 4): every rank decides the same placement and
// routing and builds the same comm plan (checked by hash), runs the executor, checks its own
// tokens' outputs against the dense reference, and all ranks share the gathered figures. With
// Zepp's routing every rank also plans per rank before each repeat (mpi/rank_plan.hpp: counts
// MPI_Allgather, count-level plan, its own tokens), timed, and checks it equals the global
// routing; the plan executed is still built globally (the builder is not split per rank yet).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "core/types.hpp"
#include "mpi/executor.hpp"
#include "pipeline/strategy.hpp"
#include "workload/workload.hpp"

namespace zepp::mpi {

struct SessionOptions {
  StrategyOptions strategy;
  ExecConfig exec;
  int repeat = 1;  // runs per strategy; wall time is the fastest, outputs and wire bytes must not change
};

struct StrategyRun {
  std::string strategy;
  std::string executor;            // "alltoallv" (a2av) or "plan"
  std::vector<RankStats> ranks;    // [num_gpus], the fastest repeat's (the one wall_s reports)
  double wall_s = 0;               // min over repeats of the slowest rank's total_s
  double max_rel_error = 0;        // mpi/reference.hpp, over every token of every rank
  uint64_t output_checksum = 0;    // FNV-1a over all outputs, ranks in order
  uint64_t wire_checksum = 0;      // FNV-1a over every rank's wire hash, ranks in order
  int64_t plan_tasks = 0, plan_transfers = 0;
  // Whether each rank routed its own tokens from the all-gathered counts (RankPlanner: Zepp's
  // locality routing) inside every repeat, checked equal to the global routing; false for
  // strategies that decide nothing per batch on the rank (metadata_s = planning_s = 0 then).
  bool rank_routing = false;
  // The comm plan this strategy decided (fp32 rows), for simulating the same plan (`a2av` runs as
  // MPI_Alltoallv, which moves the same rows as its plan's transfers).
  CommPlan plan;
  // zepp+swaps: its swap rule on this batch (StrategyDecision::swap); empty for other strategies.
  std::optional<SwapOutcome> swap;
  // With ExecConfig::timeline, on rank 0 only: every rank's events of the fastest repeat
  // (RankOutput::timeline), ranks in order; empty on the other ranks.
  std::vector<TimelineEvent> timeline;
  double nvlink_bytes() const;     // sums over ranks of bytes sent
  double nic_bytes() const;
};

// Runs `strategy` (a name of strategy_registry(); `a2av` runs execute_alltoallv, the others
// execute_plan) on the workload. The plan is built with `model` at bytes_per_elem = 4 (fp32 rows).
// Collective over `comm`; every rank returns the same StrategyRun. Throws ArgumentError for an
// unknown strategy or shapes that do not fit, std::logic_error when ranks built different plans,
// when bytes sent differ from the plan's, or when a repeat changed outputs or wire bytes.
StrategyRun run_strategy_mpi(const std::string& strategy, const Workload& workload, const ModelShape& model,
                             const Topology& topo, const SessionOptions& opt, MPI_Comm comm);

// FNV-1a of every field of every task: ranks compare it to show they built the same plan.
uint64_t plan_hash(const CommPlan& plan);
// Throws std::logic_error("ranks disagree on <what>") unless every rank of `comm` passes the same v.
void require_same(uint64_t v, const char* what, MPI_Comm comm);

// {"strategy", "executor", "wall_s", "max_rel_error", "output_checksum" (hex), "wire_checksum"
//  (hex), "nvlink_bytes", "nic_bytes", "plan_nvlink_bytes", "plan_nic_bytes", "bytes_match_plan",
//  "pairs_computed", "messages", "plan_tasks", "plan_transfers", "rank_routing", "metadata_s",
//  "planning_s" (the slowest rank's), "swaps" (zepp+swaps only: pipeline/swap_line.hpp swap_json), "ranks": [{"rank", "node", "dispatch_s", "compute_s",
//  "combine_s", "total_s" (the layer, after planning), "nvlink_bytes", "nic_bytes",
//  "pairs_computed", "messages", "metadata_s", "planning_s"}]}
nlohmann::json to_json(const StrategyRun& run, int gpus_per_node);

}  // namespace zepp::mpi
