// One rank's part of a layer's communication plan, built from its own tokens only (issue 20):
// what the rank sends where, and what it will receive, for the dispatch of paper §4.2.
//
// Why a split and not a second all-gather. build_comm_plan (comm_plan.hpp) is global: it reads
// every token's slots. Per rank, planning splits in two, as DeepEP splits get_dispatch_layout
// (each rank, from its own top-k) from dispatch:
//  - Count level, the same on every rank: the count plan m [S * G] (Router::plan from the
//    all-gathered counts) fixes how many pairs of each source GPU each slot serves, hence the
//    rank's receive side in pairs (recv_pairs, slot_pairs: GEMM sizes and the compute groups'
//    pairs per (slot, source node), which are sums of m) without any further exchange.
//  - Per rank: which of its own tokens go to which GPU and node (below), from its own slots.
// Merged rows (a token sent once per destination GPU or node, whatever its number of experts
// there) depend on how each token's pairs were consolidated, which only the token's rank
// knows, so no count-level plan can give a receiver its row counts. A second all-gather of
// every rank's row tallies (G * (G + N) integers to every rank) would make that global; instead
// each sender's rows_to_gpu is exchanged point to point inside the dispatch (one integer per
// peer, DeepEP's notify_dispatch), which is all a receiver needs to size its buffers. Not built
// here: NIC split (eq. (2)/(3)) of a node's flows needs the node's GPUs' rows_to_node (an
// intra-node all-gather of N integers per GPU); the global builder does it for the simulator.
//
// Invariant (tested in tests/plan/rank_layout_test.cpp): concatenated over ranks, the lists are
// the global plan's. With merge, build_comm_plan's intra-node dispatch transfer from GPU i to
// GPU h carries the tokens of rank i's gpu_pairs for h (each once), and its RDMA puts from node
// n to node d carry, among GPU i's tokens, those of rank i's node_tokens for d; recv_pairs and
// slot_pairs equal the tallies of all ranks' gpu_pairs. Proof: the lists apply to a token's
// slots the grouping collect_dispatch applies (pairs on another GPU of the node: one row per GPU;
// pairs on other nodes: one row per node), and the slots are the global ones (Router::route_rank
// equals the global routing, router.hpp); the receive side sums m, whose column i tallies rank
// i's slots exactly (route_rank checks that every quota is used up).
#pragma once
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// Tokens are the rank's own, local indices t in [0, T); pair p = t * top_k + q. Every list is
// in ascending order. Vectors are reused from call to call: once their capacity has grown, a
// layer's build allocates nothing.
struct RankLayout {
  int rank = -1;
  // Send side (DeepEP's is_token_in_rank / num_tokens_per_rank / num_tokens_per_rdma_rank).
  std::vector<int64_t> gpu_begin;    // [G + 1] CSR into gpu_pairs
  std::vector<int64_t> gpu_pairs;    // pairs served on GPU g; g == rank: computed here
  std::vector<int64_t> rows_to_gpu;  // [G] distinct tokens among GPU g's pairs (rows with merge per GPU)
  std::vector<int64_t> node_begin;   // [N + 1] CSR into node_tokens
  std::vector<int64_t> node_tokens;  // tokens with a pair on node d != own node: one row each
                                     // crosses to d (merged dispatch, §4.2); own node empty
  // Receive side, from the count plan alone.
  std::vector<int64_t> recv_pairs;   // [G] pairs of source GPU i that this rank's slots serve
  std::vector<int64_t> slot_pairs;   // [slots_per_gpu] pairs each of the rank's slots computes
  // Scratch: last token seen per GPU and node, fill cursors, GPU and node of every slot.
  std::vector<int64_t> seen_gpu_, seen_node_, cursor_;
  std::vector<int32_t> gpu_of_slot_, node_of_slot_;
  std::tuple<int, int, int> tables_{-1, -1, -1};  // (slots, slots per GPU, GPUs per node) they are for

  int64_t rows_to_node(int node) const { return node_begin[node + 1] - node_begin[node]; }
};

// Fills `out` for rank `rank`: slot_of_pair [T * top_k] is its route_rank result (-1: padding,
// no pair), m [S * G] the count plan it came from. Shapes: G = placement.num_gpus, S =
// placement.num_slots(), N = topo.nodes. Throws ArgumentError naming "rank" (outside [0, G)),
// "topo" (GPU count differs from the placement's), "plan" (size of m), "slot_of_pair" (a slot
// outside [-1, S), naming the entry) or "top_k" (< 1).
template <class Slot>
void rank_layout(const Placement& placement, const Topology& topo, std::span<const int64_t> m, int rank,
                 const Slot* slot_of_pair, int64_t T, int top_k, RankLayout& out);

}  // namespace zepp
