// First latency estimate of one MoE layer, without overlap (issue 2; the SimGrid executor of
// src/exec/sim_* replaces it as the default). Dispatch, expert compute and combine run as three
// barrier-separated phases, as plain EP's all-to-allv does; each phase lasts as long as its
// slowest GPU.
#pragma once
#include "core/types.hpp"
#include "exec/result.hpp"

namespace zepp {

// Every (token, k) pair travels separately from its source GPU to the GPU of its slot
// (dispatch) and its output comes back the same way (combine), token_bytes each way.
// A GPU's phase time is the largest of: NIC egress bytes / nic_bw, NIC ingress bytes / nic_bw,
// and each NVLink peer's bytes / nvlink_bw (on an NVSwitch node, NvlinkModel::Switch: the
// GPU's NVLink egress or ingress bytes, whichever is larger, / nvlink_bw), plus one per-message latency per destination GPU
// reached on that link class. Compute is the sum of expert_compute_time over the GPU's slots
// (src/core/roofline.hpp). latency_s = max dispatch + max compute + max combine.
// Requires routing.counts to match the batch and placement (ArgumentError otherwise).
LayerResult estimate_layer(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                           const Topology& topo, const ModelShape& model);

}  // namespace zepp
