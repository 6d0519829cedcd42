// The static baselines of the paper's evaluation (§6.1; DESIGN.md §2), as strategies for the
// registry in src/pipeline/strategies.cpp. Each one composes existing stages (placement,
// routing, build_comm_plan) and, where its dispatch differs from what build_comm_plan offers,
// edits that plan with the same Task semantics, so every executor runs it unchanged. What each
// models and leaves out: docs/baselines/<name>.md.
#pragma once
#include <vector>

#include "core/types.hpp"
#include "pipeline/strategy.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

// FAST+GEMM [22]: contiguous experts, home routing; inter-node rows split evenly over the
// node's NICs through intra-node links (eq. (3), the rebalancing of skewed traffic), sent in
// node-pair rounds with every put going to the peer GPU of the same local index (one-to-one,
// no incast) and forwarded there over NVLink; phase barriers, one GEMM per expert.
StrategyDecision decide_fast(const StrategyInput& in);

// COMET [44]: contiguous experts, home routing, dense all-gather dispatch (every token reaches
// every GPU), expert GEMM tiles per (expert, source node) that start as soon as their tokens
// arrive, each (token, k) output returned on its own.
StrategyDecision decide_comet(const StrategyInput& in);

// COMET+EPLB (§6.1): the `eplb` strategy's replicas, placement and even split, with COMET's
// all-gather dispatch and tiled overlap.
StrategyDecision decide_comet_eplb(const StrategyInput& in);

// EPIC [2]: communication-aware placement with replication (place_coactivation, or Zepp's §4.1
// placement when StrategyOptions::epic_zepp_placement; docs/baselines/epic.md), nearest-replica routing, per-node dedup of dispatched tokens (one
// put per (token, node), forwarded inside the node), each remote expert output returned on its
// own (no node-level pre-reduction: that is Zepp's, §4.2), pipelined by expert: each expert's
// GEMM starts when all its tokens arrived.
StrategyDecision decide_epic(const StrategyInput& in);

// SGLang's EP MoE under DP attention (paper §6.4 baseline): contiguous experts, home routing,
// dense all-gather of the whole batch to every GPU, one GEMM per expert, dense reduce-scatter,
// each phase after the previous one (allgather_reduce_scatter_plan).
StrategyDecision decide_sglang(const StrategyInput& in);

namespace baselines {

// The SGLang plan (sglang.cpp, which derives its bytes): hierarchical all-gather of every GPU's
// tokens to every GPU, global barrier, one compute task per slot with pairs, global barrier,
// hierarchical reduce-scatter of one (possibly zero) partial row per (token, GPU), pre-reduced
// per node. Throws ArgumentError ("batch", "routing") when shapes disagree.
CommPlan allgather_reduce_scatter_plan(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                                       const Topology& topo, const ModelShape& model);

// FAST's inter-node order. Every NIC put (hop Put) from GPU s to GPU d of another node is sent
// to the peer GPU p = node(d) * G + local(s) instead and forwarded p -> d over NVLink (hop
// Forward, same phase and round). Since build_comm_plan's rounds pair each source node with one
// destination node, each NIC then sends to, and receives from, exactly one NIC per round.
// Transfers that end up with the same (src, dst, phase, round, hop) are coalesced.
void reroute_via_peers(CommPlan& plan);

// COMET's dense all-gather dispatch. Replaces every dispatch transfer of `plan` by: per source
// GPU s with tokens and per other node m, one RDMA put of all of s's tokens to the peer GPU
// m * G + local(s) (round (node(s) - m) mod N), forwarded over NVLink to every other GPU of m;
// and one NVLink transfer of them to every other GPU of s's own node (round 0). Each compute
// task then waits for the transfers bringing its pairs' tokens to its GPU. `batch` must be the
// one the plan was built from (ArgumentError("batch: ...") when GPU counts differ).
void allgather_dispatch(CommPlan& plan, const RoutingBatch& batch);

// EPIC's pipelining by expert: merges all compute tasks of one slot into one (pairs ascending,
// dependencies united), with priority = the slot's index on its GPU (expert-group order).
void one_gemm_per_slot(CommPlan& plan);

// EPIC's placement (epic_placement.cpp states every rule): water-filled replica counts over
// topo.num_gpus() * slots_per_gpu slots; replicas, hottest first, onto the node with the highest
// co-activation affinity among those with a free slot, without the expert and not above the mean
// node load (each a preference in that order); then onto the node's least loaded GPUs.
// load: [E] history tokens per expert; coactivation: [E * E] history tokens selecting both
// (symmetric) or empty (no per-token history: affinity 0); top_k: selections per token.
// Throws ArgumentError ("load", "coactivation", "top_k", "topo", "slots_per_gpu") on bad shapes,
// negative or non-finite entries, or a slot count that cannot hold every expert once
// (E <= GPUs * slots_per_gpu, slots_per_gpu <= E).
Placement place_coactivation(const std::vector<double>& load, const std::vector<double>& coactivation, int top_k,
                             const Topology& topo, int slots_per_gpu);

// Nearest-replica routing (EPIC): each (token, k) pair goes to a replica of its expert on its
// own GPU if there is one, else on its own node, else on any node; among equally near
// replicas, a source GPU's successive requests for the expert rotate over them in slot order.
// No load bounds. Returns counts sorted by (expert, src_gpu, slot) and slot_of_pair [T * top_k].
// Throws ArgumentError ("batch", "placement") when GPU or expert counts of batch, placement and
// topology disagree or an expert id is out of range.
Routing route_nearest(const RoutingBatch& batch, const Placement& placement, const Topology& topo);

}  // namespace baselines
}  // namespace zepp
