// Layers of one forward step as a two-stage pipeline (paper §6.4): the host enqueues each
// layer's kernels, the GPUs run them; routing and planning run on the GPU, so there is no
// per-layer host synchronisation and the host enqueues layer l + 1 while layer l runs.
//
// Recurrence (stage times given per layer l = 0..L-1, host h_l >= 0, device d_l >= 0):
//   host_end[l]     = host_end[l-1] + h_l                (host_end[-1] = 0: the step starts
//                                                          after the previous step's sync)
//   device_start[l] = max(device_end[l-1], host_end[l])   (device_end[-1] = 0)
//   device_end[l]   = device_start[l] + d_l
//   step time       = device_end[L-1]
// Invariants: step time >= sum of d_l (the device runs layers one after another) and >= sum of
// h_l + d_{L-1}; it equals h_0 + sum of d_l whenever each layer's host work fits under the
// previous layer's device work (h_l <= d_{l-1}), since then host_end[l] <= device_end[l-1] by
// induction. With host synchronisation after every layer (not what §6.4 does) it would be
// sum of (h_l + d_l).
#pragma once
#include <vector>

namespace zepp::model {

struct StageTimes {
  double host_s = 0;    // enqueueing the layer's kernels
  double device_s = 0;  // the layer on the GPUs (non-MoE ops + MoE layer latency)
};

struct PipelineTimes {
  std::vector<double> device_start_s, device_end_s;  // [layers]
  double step_s = 0;                                 // device_end of the last layer (0 without layers)
};

// Throws ArgumentError("stages") on a negative or non-finite time.
PipelineTimes pipeline(const std::vector<StageTimes>& stages);

}  // namespace zepp::model
