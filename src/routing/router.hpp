// Zepp's routing at serving speed: a planner bound to one placement (paper §5 "Routing" runs at
// every MoE layer of every iteration, so it must cost far less than the layer).
//
// Layouts. G GPUs, E experts, S slots (physical experts). Demand is expert-major,
// demand[e * G + i] = tokens of GPU i selecting expert e ([E * G]), so an expert's column is
// contiguous. The count plan M^e_ij (Table 1) is dense and slot-major, m[p * G + i] = tokens of
// GPU i served by slot p ([S * G]): an expert with one replica copies its demand column, one with
// several writes only its replicas' rows. Entries are int64 tokens.
//
// The replica tables (slots, GPUs and nodes of every expert's replicas) are built once by the
// constructor; route_counts and assign reuse the Router's buffers, so once they are warm the hot
// path allocates nothing. A Router is used by one thread at a time (assign starts its own
// threads).
//
// Results are exactly those of route_locality_counts and assign_pairs (routing.hpp), which are
// wrappers over this class; tests/routing/reference.hpp keeps a plain implementation of the same
// rules that the tests compare against.
//
// Per-rank planning (issue 20; paper §5 "Routing", §6.6: the metadata exchange and
// routing run at every layer on every rank). A serving engine's rank holds only its own
// tokens. The protocol, per layer:
//   1. count_rank: the rank counts its own pairs per logical expert, a row of E int64;
//   2. the G rows are all-gathered (the metadata exchange), giving counts [G * E], row i
//      from rank i (MPI_Allgather / dist.all_gather_into_tensor's layout);
//   3. plan: every rank computes the same count-level plan m [S * G] from them;
//   4. route_rank: the rank assigns its own tokens to slots using column `rank` of m.
// Invariant: routing every rank this way and concatenating the slots over ranks gives, bit
// for bit, route_tokens on all tokens at once (src = their ranks), for any interleaving of
// ranks that keeps each rank's token order. Proof. (a) The demand route_tokens counts is the
// sum of the ranks' rows, transposed: each pair of a token of rank i adds one to (e, i) in
// both, and -1 pairs to neither. (b) plan is route_counts read through the rank-major layout:
// the same operations on the same integers in the same order (experts ascending, sources
// ascending), so m is equal. It depends on nothing but the counts and the Router's tables
// (built from the placement, which every rank shares): no rank-local state, no reduction
// whose order could vary; the only floating-point operations are slot_bounds' q = T_e / r,
// (1 -+ C) q and floor/ceil, each correctly rounded by IEEE 754, so every rank running the
// same build gets the same bounds and hence the same m, bit for bit. (c) Assignment keeps its
// quotas per (source GPU, expert) key (assign_pairs.cpp): key (i, e) starts from m's entries
// of column i and is read and written only while a token of GPU i is assigned, and a token's
// slots depend only on its ids and its GPU's keys. route_tokens visits GPU i's tokens in the
// caller's order, route_rank visits the same tokens in the same order from the same initial
// keys, so every step, hence every slot, is the same. Tests: tests/routing/rank_test.cpp
// (random inputs, rapidcheck) and traces_test.cpp (the real traces).
//
// Padding: an id of -1 (SGLang pads its batches so) is no pair: not counted, not assigned,
// and its slot is -1. Any other negative id or one >= E is an error.
#pragma once
#include <cstdint>
#include <exception>
#include <span>
#include <utility>
#include <vector>

#include "core/types.hpp"
#include "routing/routing.hpp"

namespace zepp {

// Throws ArgumentError("<out_name>: must not overlap <in_name>") when the out_bytes at `out` and
// the in_bytes at `in` share a byte. The pair level writes slots while it still reads the ids and
// ranks (a token's ids are read again after its slots are written), so an alias would read slots
// or placeholders as expert ids: wrong slots, or reads far out of bounds.
void check_apart(const void* out, size_t out_bytes, const void* in, size_t in_bytes, const char* out_name,
                 const char* in_name);

class Router {
 public:
  // Throws ArgumentError naming "placement", "topo" or "balance_slack" (routing.hpp). With
  // `gemm` enabled every count plan (route_counts, plan, route_tokens) is consolidated by GEMM
  // time after the water-filling (routing/consolidate.cpp); every rank must then pass the same
  // `gemm`, as it passes the same placement.
  Router(const Placement& placement, const Topology& topo, double balance_slack, const GemmCost& gemm = {});

  int num_gpus() const { return G_; }
  int num_experts() const { return E_; }
  int num_slots() const { return S_; }
  const Placement& placement() const { return placement_; }
  const GemmCost& gemm() const { return gemm_; }
  // What the last count plan's consolidation did (zeros when `gemm` is disabled).
  int consolidated() const { return stats_.moves; }
  const ConsolidateStats& consolidate_stats() const { return stats_; }
  // [G] pairs of each source GPU's tokens that ran the pair level's node choice (assign_pairs.cpp:
  // a token with a key of two remote entries or more; k pairs each) in the last assign,
  // route_tokens or route_rank (only the rank's entry is set then). Empty before the first.
  const std::vector<int64_t>& rule_pairs() const { return rule_pairs_; }
  // Visits of remote replicas in level 2 of the last count plan's water-filling (locality.cpp).
  // Both are terms of the planning cost model (plan/planning.hpp).
  int64_t remote_visits() const { return remote_visits_; }

  // Count level (route_locality_counts' rules): demand [E * G] expert-major -> m [S * G]
  // slot-major, overwritten entirely. Throws ArgumentError("demand: ...") for a wrong size or a
  // negative entry, ArgumentError("counts: ...") for a wrong size of m or one overlapping demand.
  void route_counts(std::span<const int64_t> demand, std::span<int64_t> m);

  // The even split's counts (route_even's rule) in the same layouts: the baseline that the
  // benchmarks compare route_counts with.
  void even_counts(std::span<const int64_t> demand, std::span<int64_t> m) const;

  // Pair level (assign_pairs' rules) for a batch grouped by source GPU: the slot of every
  // (token, k) pair, written to slot_of_pair [T * top_k]. `threads` >= 1 threads split the
  // source GPUs (tokens of different GPUs never share a quota, so every thread count gives the
  // same slots); the split balances m's pairs per GPU. Throws ArgumentError("batch: ...") for a batch that does not fit the placement
  // and ArgumentError("counts: ...") when m does not match the batch's demand.
  void assign(const RoutingBatch& batch, std::span<const int64_t> m, std::span<int32_t> slot_of_pair,
              int threads = 1);

  // Both levels for T tokens in any order (a serving engine's layout): topk [T * k] expert ids,
  // src [T] the GPU of each token; writes slot_of_pair [T * k] in the caller's order. The same
  // slots as route_counts + assign on the batch that lists each GPU's tokens in the caller's
  // order; the tokens are read in place, in order (no regrouping). Throws ArgumentError naming
  // "topk_ids" or "src_rank" for an id out of range, "topk_ids" for a token naming an expert twice,
  // "slot_of_pair" when it overlaps either.
  template <class Id, class Src, class Out>
  void route_tokens(const Id* topk, const Src* src, int64_t T, int k, Out* slot_of_pair, int threads = 1);

  // ---- Per-rank planning (protocol, invariant and proof: the opening comment). ----

  // Step 1. counts [E] is overwritten with the rank's pairs per expert, topk [T * k] its
  // tokens' expert ids. Throws ArgumentError("topk_ids: ...") naming the first id out of range or
  // the first token naming an expert twice, ArgumentError("counts: ...") when counts overlaps topk.
  template <class Id>
  void count_rank(const Id* topk, int64_t T, int k, std::span<int64_t> counts) const;

  // Step 3. counts [G * E] rank-major (row i = rank i's count_rank) -> m [S * G] slot-major, as
  // route_counts (same values as route_counts on the transposed demand). Throws
  // ArgumentError("counts: ...") for a wrong size or a negative entry (naming rank and expert),
  // ArgumentError("plan: ...") for a wrong size of m or one overlapping counts.
  void plan(std::span<const int64_t> counts, std::span<int64_t> m);

  // Step 4. The slots of rank `rank`'s T tokens, topk [T * k] -> slot_of_pair [T * k] (the
  // caller's order), from m = plan's result. Allocates nothing once warm. Throws
  // ArgumentError("rank: ...") outside [0, G), ("topk_ids: ...") for an id out of range or a token
  // naming an expert twice, ("plan: ...") for a wrong size of m or, "plan: more/fewer tokens for
  // (src_gpu, expert) ...", when the tokens are not the ones counted into m's column `rank`;
  // ("slot_of_pair: ...") when it overlaps topk.
  template <class Id, class Out>
  void route_rank(const Id* topk, int64_t T, int k, int rank, std::span<const int64_t> m, Out* slot_of_pair);

  // The even split (route_even's rule) in the per-rank protocol: what a static EPLB map does
  // per batch, the baseline the benchmarks time route_rank and plan against. even_plan is
  // even_counts from plan's rank-major counts; even_rank gives rank `rank`'s j-th pair of
  // expert e (in token order) replica (rank + j) mod r_e, needing no count plan. Same errors
  // as plan and route_rank.
  void even_plan(std::span<const int64_t> counts, std::span<int64_t> m) const;
  template <class Id, class Out>
  void even_rank(const Id* topk, int64_t T, int k, int rank, Out* slot_of_pair);

  // m as the sparse list of route_locality_counts: sorted by (expert, src_gpu, slot), no zeros.
  void to_counts(std::span<const int64_t> m, std::vector<RouteCount>& out) const;
  // The inverse, validating `counts` as assign_pairs documents (ArgumentError "counts: ...").
  void from_counts(const std::vector<RouteCount>& counts, std::span<int64_t> m) const;

 private:
  // One replica with quota for a (source GPU, expert) key.
  struct Entry {
    int32_t slot, node;
    int64_t quota;
  };
  // The entries of a key: [cur, local_end) on the source's node with quota left (own GPU first),
  // [local_end, remote_end) remote ones in ascending slot order (so by node), an exhausted one
  // left in place with quota 0; `live` counts those with quota and `remote` is their nodes as a
  // mask (node mod 64).
  struct Quota {
    int32_t cur = 0, local_end = 0, remote_end = 0, live = 0;
    uint64_t remote = 0;
  };
  template <class Id, class Src, class Out>
  struct Tokens;
  template <class Id, class Src, class Out>
  void assign_tokens(const Tokens<Id, Src, Out>& tokens, std::span<const int64_t> m, int threads);
  template <class Id, class Src, class Out>
  int64_t assign_gpus(const Tokens<Id, Src, Out>& tokens, int g0, int g1, int home, std::exception_ptr& error,
                      bool fixed_first);
  // route_counts on demand d read at d[e * se + i * si] (se, si: the layout's strides).
  // Both return false when an entry is negative (m then unspecified).
  bool count_plan(const int64_t* d, size_t se, size_t si, int64_t* m);
  bool even_count_plan(const int64_t* d, size_t se, size_t si, int64_t* m) const;
  uint64_t copy_single_rank_major(const int64_t* d, size_t si, int64_t* m, int64_t* load = nullptr) const;
  // consolidate.cpp: the GEMM-time step on a finished count plan m [S * G].
  void consolidate(int64_t* m);
  double gpu_time(int g, int p, int64_t load_p, int q, int64_t load_q) const;
  double time_after_move(int top, int p, int q) const;
  bool compute_allows_a_move(int top) const;
  void build_quotas(std::span<const int64_t> m, int g0, int g1, int home);
  // Throws "<plan_name>: more tokens for (src_gpu, expert) ..." for a key with quota left over.
  void check_quotas_used(int g0, int g1, int home, const char* plan_name) const;

  Placement placement_;
  double slack_;
  GemmCost gemm_;
  ConsolidateStats stats_;
  int G_, E_, S_, gpn_;
  // Replica tables: the replicas of e are [rep_begin_[e], rep_begin_[e + 1]) in ascending slot
  // order; rep_slot_, rep_gpu_, rep_node_ give each one's slot, GPU and node.
  std::vector<int32_t> rep_begin_, rep_slot_, rep_gpu_, rep_node_;
  std::vector<int32_t> single_;       // experts with one replica, ascending
  std::vector<int32_t> single_slot_;  // the slot of each
  std::vector<int32_t> slot_node_;  // [S]
  std::vector<int32_t> gpu_node_;   // [G]
  // route_counts' per-expert buffers.
  std::vector<int64_t> load_, rem_;
  std::vector<int32_t> order_, touched_;
  // consolidate's buffers: rows per slot [S], roofline time per GPU [G].
  std::vector<int64_t> slot_load_;
  std::vector<double> gpu_time_;
  std::vector<int64_t> node_out_, node_in_;  // inter-node rows each node sends, receives [N]
  std::vector<int64_t> source_rows_;         // rows of each source GPU [G]
  std::vector<std::pair<int32_t, int32_t>> undo_moves_;  // (from, to) slots of each move
  std::vector<int64_t> undo_rows_;                       // the rows each moved, [moves * G]
  // assign's buffers: quota entries per (source GPU, expert) key, [G * S], and the keys, [G * E]
  // (route_rank: one GPU's, row 0).
  std::vector<Entry> ents_;
  std::vector<Quota> keys_;
  // Per key, with a column for padding in front ([G * (E + 1)], key (i, e) at (i - home) *
  // (E + 1) + e + 1): fixed_ is 1 + the slot of a key with exactly one entry, 0 for padding and
  // negative for any other key; left_ counts down the fixed key's quota (assign_pairs.cpp).
  std::vector<int32_t> fixed_;
  std::vector<int64_t> left_;
  std::vector<int64_t> rule_pairs_;  // [G] (rule_pairs())
  int64_t remote_visits_ = 0;
  std::vector<int64_t> demand_, plan_;
  std::vector<int32_t> even_next_;  // even_rank's replica cursor per expert
  std::vector<int64_t> last_token_;  // check_distinct_ids' scratch [E] (route_tokens, route_rank)
};

// Route every MoE layer of one iteration: routers[l] is bound to layer l's placement,
// demands[l] is its expert-major demand and plans[l] receives its slot-major counts (resized to
// S * G). `threads` >= 1 threads take layers in turn; the result does not depend on it.
void route_counts_layers(std::span<Router> routers, std::span<const std::vector<int64_t>> demands,
                         std::vector<std::vector<int64_t>>& plans, int threads = 1);

// The batch's demand in Router's expert-major layout, [E * G]; `out` is resized and overwritten.
void demand_by_expert(const RoutingBatch& batch, std::vector<int64_t>& out);

}  // namespace zepp
