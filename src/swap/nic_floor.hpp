// The NIC floor of a layer (issue 24): the rows every NIC carries across nodes as Zepp's plan
// puts them there, and the dispatch and per-node combine times they take. A GEMM that ends
// while its node's NICs still return rows does not end the layer, so moving compute off it
// saves nothing; the swap rule (swap.hpp, plan_swaps) counts a saving only above this floor.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

// The rows each GPU's NIC carries across nodes in one layer, as build_comm_plan puts them there
// (the swap rule's NIC figures; swaps keep every expert's nodes, so they leave them alone), from
// the pair-level routing `slot_of_pair` [T * top_k] of `batch` on `placement` (assign_pairs:
// each rank routes its own tokens, so rank i knows its rows toward each node, N numbers to
// all-gather). Per (source node n, destination node d) flow, rank i of n sends one dispatch row
// per token with a pair on d (opt.merge: Algorithm 1 lines 2-11; without merge one per pair);
// the flow is split over n's NICs by plan_split (eq. (2)/(3)), and the merged rows land on the
// rail of the NIC that carried them. Combine: with merge and pre_reduce those receivers return
// the token's contributions on d as one pre-reduced row (lines 19-25), otherwise every pair
// returns from its serving GPU; each return flow d -> n is split again by plan_split.
// Vectors [num_gpus], NIC g = node g / gpus_per_node, rail g % gpus_per_node; all zero on one
// node. Throws ArgumentError: "placement" (invalid), "topo" (GPU count other than the
// placement's, non-positive nic_bw with more than one node), "batch" (other GPU count),
// "slot_of_pair" (wrong size, a slot not holding its pair's expert).
struct NicRows {
  std::vector<int64_t> dispatch_sent, dispatch_received, combine_sent;
};
NicRows nic_rows(const RoutingBatch& batch, const Placement& placement, const std::vector<int32_t>& slot_of_pair,
                 const Topology& topo, const PlanOptions& opt, double token_bytes);

// The layer's dispatch on its busiest NIC, for SwapCosts::dispatch_seconds: the most rows one
// NIC sends or receives in dispatch, · token_bytes / nic_bw (per direction). 0 on one node.
double dispatch_time(const NicRows& rows, const Topology& topo, double token_bytes);

// Each node's combine on its NICs, for SwapCosts::combine_seconds: [nodes], the most combine
// rows one of the node's NICs sends, · token_bytes / nic_bw; zeros on one node. Rows, not
// (token, expert) pairs: with top-8 and pre-reduction a token's contributions on one node leave
// as one row (a count of pairs took Qwen3's 64 MB layers for NIC-bound and refused swaps that
// paid 1.0% on the timeline, issue 24).
std::vector<double> combine_time(const NicRows& rows, const Topology& topo, double token_bytes);

// A_g of the NIC-floor rule: the GEMM time a GPU has left once dispatch ends, from the roofline
// time of all its GEMMs and of those on rows of other nodes' tokens, which arrive with dispatch
// and so always run after it: max(gemm_seconds − dispatch_seconds, remote_gemm_seconds).
double gemms_after_dispatch(double gemm_seconds, double remote_gemm_seconds, double dispatch_seconds);

// What a node's layer gains when the latest GEMM end after dispatch of the GPUs a change touches
// goes from `before` to `after` seconds while its NICs return rows for `combine_seconds` after
// dispatch (combine_time): max(combine, before) − max(combine, after). Combine returns a node's
// rows in completion waves as its GEMMs end (plan/combine.cpp), so the NICs finish no earlier
// than the floor, and GEMM time that ends inside it leaves the layer's end alone. Used by the
// swap rule (plan_swaps) and zepp+hot's (plan_hot).
double saved_above_floor(double before, double after, double combine_seconds);

// The swap rule's NIC figures for a layer (SwapCosts::dispatch_seconds, combine_seconds):
// dispatch_time and combine_time of nic_rows on the pairs `slot_of_pair` routed on `placement`
// under plan options `opt`, rows of model.token_bytes(). Throws as nic_rows.
struct NicFloor {
  double dispatch_seconds = 0;
  std::vector<double> combine_seconds;  // [nodes]
};
NicFloor nic_floor(const RoutingBatch& batch, const Placement& placement, const std::vector<int32_t>& slot_of_pair,
                   const Topology& topo, const PlanOptions& opt, const ModelShape& model);

}  // namespace zepp
