// Per-GPU phases of one layer read back from its timeline, defined as the `mpi` executor measures
// them (mpi/executor.hpp RankStats), so simulated and measured phases compare (`zepp run --predict`).
#pragma once
#include <vector>

#include "exec/result.hpp"

namespace zepp {

struct PhaseTimes {
  double dispatch_end_s = 0;  // its last dispatch transfer (sent or received) ended
  double compute_s = 0;       // time in expert FFNs (events "expert ...")
  double combine_s = 0;       // first combine event it ran (a send or a reduction) started ->
                              // last combine event it sent, received or ran ended
};

// From `r.timeline` (events named by task_label, exec/task_label.hpp): [num_gpus]. A transfer's
// receiver is its event's `peer`. num_gpus >= the GPUs in the timeline
// (ArgumentError "num_gpus").
std::vector<PhaseTimes> phase_times(const LayerResult& r, int num_gpus);

}  // namespace zepp
