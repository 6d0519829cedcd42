// Per-invocation replication baselines as strategies for the registry (src/pipeline/
// strategies.cpp; DESIGN.md §2). Both plan replicas from the current batch, copy their weights
// from the owners within the layer (Weights transfers the replica's computation waits for) and
// dispatch / combine by all-to-allv with phase barriers (PlanOptions all off); weight copies
// start at time zero, beside dispatch. extra_slots of StrategyOptions is their helper slots per
// GPU (R = 2 in the paper's §6.1, like Zepp).
#pragma once
#include "pipeline/strategy.hpp"

namespace zepp {

// plan_moonep (swap/replicate.hpp) on the batch's demand; routing_wall_s covers replication
// planning and pair assignment.
StrategyDecision decide_moonep(const StrategyInput& in);

// plan_haloq (swap/replicate.hpp, iser-moe.txt §4.1) on the batch's demand.
StrategyDecision decide_haloq(const StrategyInput& in);

// ISER-MoE (iser-moe.txt §4): HALO-Q with groups inside each NVLink domain (node; the paper's
// scope is one domain, §5), replicas installed by in-switch multicast, owner-direct or SAMI
// (swap/iser.hpp), planning and copy in the shared-expert window (PlanOptions::
// shared_expert_window), MegaMoE-style fused dispatch / GEMMs / combine in which only helper
// slots wait for their weights. Throws ArgumentError ("strategy") on a topology that cannot
// multicast.
StrategyDecision decide_iser_moe(const StrategyInput& in);

}  // namespace zepp
