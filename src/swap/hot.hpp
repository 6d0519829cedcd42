// Per-invocation hot replicas inside each NVLink domain on top of a static placement and its
// routing (zepp+hot, issue 25 item 5; docs/zepp-hot.md). Zepp's relaxed bound C (zepp.txt §4.1,
// equation (1)) keeps every replica within (1 ± C) of its balanced share, so a hot expert's
// demand beyond its static replicas stays on their GPUs. Like HALO-Q (iser-moe.txt §4.1) this
// replicates such experts for one invocation, but only inside the owner's node and only for the
// load left after the given routing: tokens move from the owner's slot to helper slots of GPUs
// of the same node, so every token still crosses to the same nodes (inter-node traffic is the
// routing's). Weights travel by in-switch multicast (SAMI, iser-moe.txt §4.3: the owner is never
// a member, it already holds the expert) or point to point.
//
// Units: loads in tokens ((token, expert) pairs), times in seconds (roofline of
// core/roofline.hpp), bytes of BF16 weights (ModelShape::expert_weight_bytes()).
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

struct HotOptions {
  int helper_slots = 2;   // S: helper slots per GPU, after the placement's slots
  bool multicast = true;  // false: the owner copies to every member point to point
  // The expert in each helper slot left by the previous invocation ([G * S], -1: none; empty:
  // none anywhere). A replica of the same expert in the same slot needs no copy.
  std::vector<int32_t> resident;
  // The layer's NIC floor (swap/nic_floor.hpp, nic_floor on the routing given): its dispatch and
  // each node's combine on the NICs after it, seconds. Step 3(a) counts only the GEMM time an
  // export removes above its node's floor. Defaults: no dispatch, no floor.
  double dispatch_seconds = 0;
  std::vector<double> combine_seconds;  // [nodes] or empty
};

// One replica broadcast: `expert` of `owner` (in its placement slot `from_slot`) served this
// invocation also by members[i] in helper slot slots[i] (slots of HotPlan::placement), which
// take tokens[i] of the owner's pairs; copied[i] false when the slot already held it.
struct HotReplica {
  int32_t expert = -1, owner = -1, from_slot = -1;
  std::vector<int32_t> members, slots;
  std::vector<int64_t> tokens;
  std::vector<char> copied;
};

struct HotPlan {
  // The placement with S helper slots after each GPU's slots (GPU g's slot i is now
  // g * (slots + S) + i); a helper slot holds its replica, else its resident expert, else an
  // alias of the GPU's first expert (no tokens, no weights moved).
  Placement placement;
  Routing routing;  // counts and slot_of_pair on `placement`
  std::vector<HotReplica> replicas;
  std::vector<MulticastMove> multicasts;  // copies to two or more members, with multicast
  std::vector<WeightMove> weight_moves;   // the other copies, point to point from the owner
  std::vector<int32_t> resident;          // [G * S] after this invocation
  int refused = 0;                        // exports that would not pay
  // Planning work, in PlanningWork cells (plan/planning.hpp): every slot once, then per step of
  // the greedy the node's GPUs, the owner's slots and the members' slots it examines.
  double cells = 0;
};

// Estimated seconds to install `expert`-sized weights of `owner` on `copies` GPUs of its node,
// alone on the ports: multicast with copies >= 2 is SAMI (each member's ingress carries the whole
// expert plus its 1/g share, and one port's stores reach each receiver at most at
// multicast_port_output / g); otherwise the owner's port sends `copies` copies.
// nvlink_latency + bytes over the busiest port. 0 when copies is 0.
double hot_copy_seconds(int copies, bool multicast, const ModelShape& model, const Topology& topo);

// Plans the hot replicas of one invocation. Per node, with c[g] the roofline compute time of GPU
// g's slots under `routing` and c* the node's mean (a node whose helper slots hold no resident
// expert is skipped when max c - c* <= hot_copy_seconds(1, ...): step 3(a) fails for every GPU):
//  1. the GPU o with the largest c[o] - c* > 0 (the lowest on a tie) exports its heaviest slot
//     not yet exported (expert e, L pairs); it needs ceil((c[o] - c*) / tau) pairs moved, at most L,
//     tau = 6 * hidden * ffn / peak_flops, the compute-bound time of one pair;
//  2. members: GPUs of the node with c[m] < c*, no replica of e, a free helper slot; those that
//     already hold e in a free helper slot (resident) first, then the most room c* - c[m]; each
//     takes at most what keeps c[m] <= c* (a new GEMM reads e's weights: nothing below that);
//  3. it pays when nothing is copied, or (a) what it saves exceeds hot_copy_seconds for the
//     copies: by the swap rule's reasoning (plan_swaps), saved_above_floor of the latest
//     gemms_after_dispatch over o and its members before and after the move (each GPU's compute
//     and its compute on other nodes' rows, opt.dispatch_seconds; o counted at c*, the level the
//     node's exports bring it to) above o's node's opt.combine_seconds, so on a node whose NICs
//     end the layer nothing is copied; without a floor or dispatch this is c[o] - c*; and (b) the copies, queued behind this invocation's earlier ones on the same ports, end
//     before every copying member's window: its shared experts' time (plan/comm_plan.hpp
//     shared_expert_time, 0 without) plus its own slots' compute. Otherwise, or when o has no
//     slot left or no member, the node is done: its compute ends with o, so exports from less
//     busy GPUs would gain nothing;
//  4. each member's pairs are taken from e's pairs on o, sources in this order: the member
//     itself, other GPUs of the node, other nodes, the owner (ties: GPU, then token order), so
//     a token's nodes never change.
// Helper slots: the member's resident slot of e, else a free one without a resident expert,
// else the lowest free one. Copies with multicast and >= 2 copying members are one SAMI
// MulticastMove; others WeightMoves from the owner.
// Ports: each GPU's NVLink port carries its copies at nvlink_bw one after another (on per-pair
// NVLink, without multicast, this overstates the owner's time: its copies use separate links).
// Throws ArgumentError naming the argument: "placement" / "routing" / "batch" when shapes
// disagree with each other or the topology, "topo" with multicast on a topology without it
// (NvlinkModel::Switch, multicast_port_output > 0), "helper_slots" when negative, "resident"
// when not empty and not G * S long, "dispatch_seconds" / "combine_seconds" when negative or
// not finite, or combine_seconds neither empty nor one per node.
HotPlan plan_hot(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                 const Topology& topo, const ModelShape& model, const HotOptions& opt);

}  // namespace zepp
