// Per-rank planning under MPI (issue 20 item 4; paper §5 "Routing": every rank re-plans at every
// MoE layer). A rank holds only its own tokens. Per layer it
//   1. counts its own (token, expert) pairs per expert: E counts, int32 on the wire (a rank's
//      pairs for one expert are at most its tokens; plan/planning.hpp's kCountBytes);
//   2. all-gathers the G rows with MPI_Allgather (the metadata exchange);
//   3. computes the count-level plan of Zepp's locality-preferred routing from them
//      (Router::route_counts, the same integers in the same order on every rank, so the same
//      plan: routing/router.hpp);
//   4. assigns its own tokens to slots with its column of that plan (Router::assign on a batch
//      of its tokens alone, the other columns zeroed: quotas are kept per (source GPU, expert),
//      so its slots are those the global routing gives its tokens).
// Steps 1-2 are timed as metadata_s, 3-4 as planning_s, each rank on its own clock.
#pragma once
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "core/types.hpp"
#include "routing/router.hpp"

namespace zepp::mpi {

class RankPlanner {
 public:
  // Binds the Router to the static `placement` (built once, outside any timed region) and keeps
  // rank `me`'s tokens of `batch`. Throws ArgumentError as Router does, or naming "batch" when its
  // GPU count differs from the topology's, or when the rank's pairs do not fit int32 counts.
  RankPlanner(const Placement& placement, const Topology& topo, double balance_slack, const RoutingBatch& batch, int me);

  // Collective over `comm` (size = GPUs): steps 1-4.
  void plan(MPI_Comm comm);

  double metadata_s = 0, planning_s = 0;  // the last plan()'s times on this rank
  // The slots of this rank's pairs ([own tokens * top_k], token order) from the last plan().
  const std::vector<int32_t>& slots() const { return slots_; }

 private:
  Router router_;
  int me_, G_, E_;
  RoutingBatch mine_;  // this rank's tokens, every other GPU empty
  std::vector<int32_t> own_, all_;
  std::vector<int64_t> demand_, m_;
  std::vector<int32_t> slots_;
};

}  // namespace zepp::mpi
