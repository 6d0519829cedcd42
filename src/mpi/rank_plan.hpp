// Per-rank planning under MPI (issue 20 item 4; paper §5 "Routing": every rank re-plans at every
// MoE layer). A rank holds only its own tokens. Per layer it follows Router's per-rank protocol
// (routing/router.hpp):
//   1. count_rank: its own (token, expert) pairs per expert, E counts, sent as int32 (a rank's
//      pairs for one expert are at most its tokens; plan/planning.hpp's kCountBytes);
//   2. MPI_Allgather of the G rows (the metadata exchange);
//   3. plan: the count-level plan of Zepp's locality-preferred routing, the same on every rank;
//   4. route_rank: its own tokens' slots, then rank_layout: its own send lists
//      (plan/rank_layout.hpp).
// Steps 1-2 are timed as metadata_s, 3-4 as planning_s, on the rank's own clock.
#pragma once
#include <cstdint>
#include <vector>

#include <mpi.h>

#include "core/types.hpp"
#include "plan/rank_layout.hpp"
#include "routing/router.hpp"

namespace zepp::mpi {

class RankPlanner {
 public:
  // Binds the Router to the static `placement` and the decision's `gemm` (built once, outside
  // any timed region) and keeps rank `me`'s tokens of `batch`. Throws ArgumentError as Router
  // does, or naming "batch" when its GPU count differs from the topology's or the rank's pairs
  // do not fit int32 counts.
  RankPlanner(const Placement& placement, const Topology& topo, double balance_slack, const GemmCost& gemm,
              const RoutingBatch& batch, int me);

  // Collective over `comm` (size = GPUs): steps 1-4.
  void plan(MPI_Comm comm);

  double metadata_s = 0, planning_s = 0;  // the last plan()'s times on this rank
  // The slots of this rank's pairs ([own tokens * top_k], token order) from the last plan().
  const std::vector<int32_t>& slots() const { return slots_; }
  const RankLayout& layout() const { return layout_; }

 private:
  Router router_;
  Topology topo_;
  int me_, G_, E_, k_;
  int64_t T_;
  const int32_t* topk_;  // the rank's [T * k] expert ids inside the batch
  std::vector<int64_t> own_, counts_, m_;
  std::vector<int32_t> own32_, all32_;
  std::vector<int32_t> slots_;
  RankLayout layout_;
};

}  // namespace zepp::mpi
