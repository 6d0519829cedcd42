// ISER-MoE's replication (iser-moe.txt §4.2-4.3): each HALO-Q broadcast becomes an in-switch
// multicast into its aligned group, owner-direct or SAMI by the paper's default per-slot rule.
#pragma once
#include <vector>

#include "plan/comm_plan.hpp"
#include "swap/replicate.hpp"

namespace zepp {

// One MulticastMove per broadcast of `plan` (ReplicationPlan::broadcasts), members the group's
// ranks, slots their helper slot (H home slots, then the helper index). The rule (§4.3): a
// broadcast is owner-direct if its owner belongs to the group G and either G is pure (every
// broadcast whose group meets G has group G and its owner inside) or it is the owner's widest
// broadcast into a group containing the owner (the first such in placement order on a tie);
// otherwise SAMI, which alone serves groups without their owner (a multicast writer must be a
// member). `home_slots`: H = E / P.
std::vector<MulticastMove> iser_multicasts(const ReplicationPlan& plan, int home_slots);

}  // namespace zepp
