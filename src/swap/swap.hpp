// Intra-node expert swaps (paper §4.3 equation (4), §5 "Expert Swapping"): when the current
// demand overloads a GPU under a placement made from history, exchange replicas between GPUs
// of the same node. Swaps keep every GPU's slot count, every expert's replica count and every
// expert's set of nodes, so expert weights move over NVLink only.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "plan/comm_plan.hpp"
#include "swap/nic_floor.hpp"

namespace zepp {

// Estimated compute load per GPU (paper §4.3, L̂_j), in tokens: each expert's current demand
// spread evenly over its replicas, summed over the GPU's slots. demand: [E] (token, expert)
// pairs selecting each expert in this batch. Returns [num_gpus]. Throws ArgumentError
// ("demand: ...", "placement: ...") for a wrong shape, a negative or non-finite demand, or an
// invalid placement.
std::vector<double> estimate_gpu_load(const std::vector<double>& demand, const Placement& placement);

// [E] demand of a batch: (token, expert) pairs per expert over all source GPUs.
std::vector<double> expert_demand(const RoutingBatch& batch);

// Exchange of the experts held by two slots on different GPUs of one node.
struct Swap {
  int32_t slot_a = -1;  // on the more loaded GPU when the swap was chosen
  int32_t slot_b = -1;  // on the less loaded GPU
};

struct SwapPlan {
  bool triggered = false;            // estimated max load > (1 + C) * mean before any swap
  double estimated_imbalance = 1.0;  // max_j L̂_j / mean before any swap (the trigger's figure)
  // After the swaps (the input placement when none). An expert a GPU holds before and after
  // stays in its slot, so a slot changes only when its GPU gains an expert.
  Placement placement;
  std::vector<Swap> swaps;           // in the order they were accepted (slots at that time)
  int refused_for_cost = 0;          // swaps that lowered a load but would not pay for their weights
  // The refused swap that saved the most (its rule's figures, for "why none"): compute removed
  // from the pair's maximum per iteration, the horizon it was summed over, and the part of its
  // weight transfer not hidden behind independent compute (all seconds; zero when none refused).
  // dispatch_s: the costs' dispatch_seconds (compute before it hid nothing).
  // after_dispatch_s: the pair's longest GEMM time after dispatch before the swap, and
  // combine_s its node's combine on the NICs (SwapCosts::combine_seconds; 0: none): when
  // after_dispatch_s <= combine_s the NICs, not the GEMMs, end the layer there.
  struct Refusal {
    double saved_per_iteration_s = 0, unhidden_s = 0, weight_s = 0, dispatch_s = 0;
    int horizon = 0;
    double after_dispatch_s = 0, combine_s = 0;
  } best_refused;
  // One per slot whose expert changed: its new expert's weights come from a GPU of the same
  // node that held that expert before the swaps (the one that gave it up). Feed to
  // build_comm_plan, which makes them Weights transfers that the slot's computation waits for.
  std::vector<WeightMove> weight_moves;
  std::vector<double> load_before, load_after;  // estimate_gpu_load, [num_gpus] tokens
};

// What a swap saves and costs, in seconds (§4.3: a swap must pay for itself).
struct SwapCosts {
  // Compute per (token, expert) pair on the GPU, at the roofline's FLOP rate:
  // 6 · hidden · ffn / peak_flops (core/roofline.hpp; the slope of a compute-bound GEMM).
  double pair_seconds = 0;
  // One expert's weights over one NVLink pair: expert_weight_bytes / nvlink_bw.
  double weight_seconds = 0;
  // Iterations a swap is expected to keep paying (it persists until demand moves again); the
  // saving is summed over them. >= 1.
  int horizon = 1;
  // The roofline's floor of one expert GEMM: its weights read once from HBM,
  // expert_weight_bytes / hbm_bw. A slot with rows computes for max(this, rows · pair_seconds)
  // (core/roofline.hpp), so below the ridge moving rows off a GPU saves nothing. 0: token
  // loads only (every GEMM compute-bound).
  double weight_read_seconds = 0;
  // The layer's dispatch on its busiest NIC (dispatch_time): a swap's weights move after
  // dispatch (weights_after_dispatch), so compute done during dispatch cannot hide them. 0: no
  // inter-node dispatch (one node) or not estimated.
  double dispatch_seconds = 0;
  // [nodes] Each node's combine on its NICs (combine_time): after dispatch, a node's NICs
  // return the rows it computed for other nodes, and its GEMMs after dispatch shorten the layer
  // only by what they take beyond that. Empty: no floor (every second of GEMM counts).
  std::vector<double> combine_seconds;
};
// The costs for `model` on `topo`. Throws ArgumentError ("topo") for a non-positive
// peak_flops, nvlink_bw or hbm_bw.
SwapCosts swap_costs(const ModelShape& model, const Topology& topo);

// Greedy swap search (§5). L̂_j sums the rows of GPU j's replicas: `slot_rows` [S], the rows
// the routing gives each slot (its count-level plan on the batch, route_locality_counts), or,
// when empty, each expert's demand spread evenly over its replicas (estimate_gpu_load). The
// routing's rows are what the GPUs compute: locality-preferred routing serves a node's tokens
// from its own replicas, so a replica's rows can be far from demand / replicas (DeepSeek 4 x 4
// A100 at 16 MB: a swap chosen on the even spread gave the lighter GPU of its pair a replica
// with 5,294 routed rows, and that GPU's GEMMs then ended last in the layer, 2,955 µs against
// 2,925 before). A swap moves a replica's rows with it.
// Triggered only when max_j L̂_j > (1 + balance_slack) · mean. Then,
// repeatedly, the most loaded GPU h above that bound is paired with the GPUs of its node that
// are less loaded, lightest first; for a pair (h, l) the swap (slot of h, slot of l) that
// minimises max(L̂_h, L̂_l) afterwards is accepted only if that maximum is below L̂_h (it lowers
// the pair's maximum) and it pays (§4.3):
//   saved · costs.horizon  >  unhidden,
// with saved the compute it removes from the layer's path after dispatch per iteration, summed
// over the iterations the swap lives: saved = max(F_n, A_h, A_l) − max(F_n, A'_h, A'_l), with
//   A_g = max(T_g − dispatch_seconds, R_g),
// the GEMM time GPU g has left once dispatch ends: T_g = Σ over g's slots with rows of
// max(weight_read_seconds, rows · pair_seconds), the roofline time of all its GEMMs, and R_g the
// same over the rows from other nodes' tokens (`slot_remote_rows`), which arrive with dispatch
// and so always run after it; before (A) and after (A') the swap. F_n = combine_seconds[n] of
// the pair's node (combine_time: its busiest NIC's pre-reduced combine rows): combine returns a
// node's rows in completion waves as its GEMMs end (plan/combine.cpp), so the node's NICs finish
// no earlier than F_n after dispatch, and GEMMs that end inside it leave the layer's end alone. DeepSeek-V2-Lite 4 x 4 A100 at 16 MB, 8
// iterations: each NIC carries 2.98-3.08 ms of dispatch and combine bytes in a 3.67-3.84 ms
// layer, GEMMs end by about 2.8 ms, and swaps leave every NIC's bytes as they are (they keep each
// expert's nodes); the 3 swaps accepted without F (mean R 1.111 -> 1.083) left the total at
// 30.082 ms against 30.081, single iterations moving by -2.0% to +3.6% with the schedule.
// With no dispatch, no remote rows given and no F this is max(T_h, T_l) − max(T'_h, T'_l) (with
// weight_read_seconds 0, (L̂_h − max) · pair_seconds);
// against the part of its weight transfer the schedule cannot hide. A swap brings one expert's
// weights into each GPU of the pair over NVLink after dispatch; while they move, the GPU
// computes the experts that need no moved weights (§4.3's overlap), so GPU g waits
//   wait_g = max(0, costs.weight_seconds · moved_in_g
//                   − max(0, (L̂_g − moved_load_g) · pair_seconds − dispatch_seconds)),
// with moved_in_g the experts moved into g so far (this swap included) and moved_load_g their
// load there: of the independent compute, only what is left once dispatch ends hides the
// weights (at least its total minus the dispatch time, however much ran during dispatch);
// unhidden is the largest rise of wait_g over the pair. Default costs (zero) accept on load
// alone. A swap never puts a second replica of an expert on a GPU. Stops when no GPU is above
// the bound or none of the overloaded GPUs has an accepted swap. Every accepted swap strictly
// lowers the sorted load vector, so the search ends. Deterministic: ties go to the lowest GPU
// and slot indices.
// Throws ArgumentError naming the argument: demand (shape, negative, non-finite), placement
// (invalid), topo (GPU count differs from the placement's), balance_slack (NaN or < 0), costs
// (negative or non-finite seconds, horizon < 1), slot_rows (size other than S, negative or
// non-finite rows, an expert's replicas summing to other than its demand), slot_remote_rows
// (size other than S, or a slot's remote rows negative or above its rows), costs
// (combine_seconds neither empty nor one finite value >= 0 per node).
// `slot_remote_rows` [S]: of each slot's rows, those of tokens from other nodes; empty: all
// (only with `slot_rows`; without it, all of every slot's demand).
SwapPlan plan_swaps(const std::vector<double>& demand, const Placement& placement, const Topology& topo,
                    double balance_slack, const SwapCosts& costs = {}, const std::vector<double>& slot_rows = {},
                    const std::vector<double>& slot_remote_rows = {});

// Lets dispatch rows go before swapped weights on a shared NVLink pair: every Weights transfer
// waits for the dispatch transfers on its (source, destination) pair and gets the priority
// right after the last dispatch transfer's (for serial link sharing; combine stays after it).
// Without this, one expert's weights (tens to hundreds of MB) take the pair's bandwidth from
// the tokens that groups needing no moved weights wait for (§4.3: those groups run while the
// weights are in transit).
void weights_after_dispatch(CommPlan& plan);

}  // namespace zepp
