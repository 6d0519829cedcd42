// Internal: the state shared by the steps that build a CommPlan (dispatch.cpp, combine.cpp,
// flow.cpp, builder.cpp). Not part of the public API; see comm_plan.hpp for the semantics.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp::plan_detail {

// Arrays of a row, a pair or a token each (millions): on huge pages (core/huge_pages.hpp).
template <class T>
using Big = std::vector<T, HugePageAllocator<T>>;

// Rows of one inter-node flow (source node -> destination node), before split and merge
// choose their physical path. Pairs and targets are ranges into the flow's flat arrays; a
// row's range ends where the next row's begins (24 bytes a row: a flow holds a row per remote
// (token, node) or pair, and at scale its bytes, not its work, are what the build pays for).
struct FlowRow {
  int32_t token;     // below 2^31 (Builder checks)
  int32_t src_gpu;   // GPU holding the row
  int32_t dep;       // task that must finish before the row can leave (-1: none)
  int32_t wave;      // combine: completion wave (combine.cpp); dispatch rows: 0 (their chunk
                     // is chosen in route_flow, dispatch_chunks.cpp)
  uint32_t pair_begin;  // combine rows: the pairs the row sums
  uint32_t tgt_begin;   // GPUs of the destination node that need the row
};
struct Flow {
  Big<FlowRow> rows;
  Big<int32_t> pairs;
  Big<int32_t> targets;
  // [G] rows per GPU of the source node (by local index): the split's V_i, counted as rows are
  // added (a pass of its own over the rows read them from memory once more).
  std::vector<int64_t> volumes;
  uint32_t pair_end(size_t r) const { return r + 1 < rows.size() ? rows[r + 1].pair_begin : uint32_t(pairs.size()); }
  uint32_t tgt_end(size_t r) const { return r + 1 < rows.size() ? rows[r + 1].tgt_begin : uint32_t(targets.size()); }
  // Adds a row held by the GPU of local index `local` (pairs and targets follow it).
  void add(const FlowRow& row, int local) {
    rows.push_back(row);
    ++volumes[size_t(local)];
  }
  void clear(int gpus_per_node) {  // keeps the memory for reuse
    rows.clear(), pairs.clear(), targets.clear();
    volumes.assign(size_t(gpus_per_node), 0);
  }
};

// A token's pairs p0 .. p0 + k - 1 other than those served by `skip` (-1: none), ordered by
// serving GPU, keeping pair order among equal GPUs (as std::stable_sort does), into pairs[] and
// their GPUs into gpus[]; returns how many. Keys GPU << 32 | pair are distinct (pairs ascend, so
// equal GPUs keep their order), so each goes to the place given by the count of smaller keys:
// k^2 comparisons without a branch on the data, as a token has top_k pairs (the insertion sort
// this replaces mispredicted its branches on most tokens and was a tenth of a plan build).
// keys: k entries of room.
inline size_t pairs_by_gpu(int64_t p0, int k, int skip, const int32_t* gpu_of_pair, uint64_t* keys, int32_t* pairs,
                           int32_t* gpus) {
  size_t n = 0;
  for (int64_t p = p0; p < p0 + k; ++p) {
    const int32_t g = gpu_of_pair[p];
    keys[n] = uint64_t(uint32_t(g)) << 32 | uint32_t(p);
    n += g != skip;  // a skipped key is overwritten by the next
  }
  for (size_t i = 0; i < n; ++i) {
    size_t place = 0;
    for (size_t j = 0; j < n; ++j) place += keys[j] < keys[i];
    pairs[place] = int32_t(uint32_t(keys[i])), gpus[place] = int32_t(keys[i] >> 32);
  }
  return n;
}

// Rows and dependencies of one task as the steps add them (Arrays::staged_).
struct Staged {
  std::vector<int32_t> tokens, pair_begin, pairs, deps;
};

// The builder's memory, kept by CommPlanBuilder from one build to the next so that a steady
// stream of builds writes into pages it already holds (no faults, no zeroing by the kernel).
// Every build sets or clears each member before reading it (Builder::Builder, collect_dispatch).
struct Arrays {
  // Coalesced transfers, by key (src, dst, phase, round, hop, wave), in dense tables (-1: none
  // yet). Every key lands in exactly one entry, as each table's scope fixes what it leaves out:
  //  - direct_ [phase (dispatch 0, combine 1)][src][local index of dst][wave]: hop Direct, round
  //    0 (intra-node flows), src and dst on one node.
  //  - gather_ [src][local index of dst][wave]: combine gathers for tokens of source node
  //    gather_node_. Tokens are visited by source GPU, so source nodes come in ascending order;
  //    the round (n - d) mod N is fixed by n and the gather's node d, so entries of an earlier n
  //    are never asked for again and are cleared (gather_used_) when n changes.
  //  - flow_ [flow_cell(hop, src, dst, wave)]: the relays, puts and forwards of the inter-node
  //    flow route_flow is routing, cleared (flow_used_) before each flow. A relay (both GPUs on
  //    the flow's source node), put (source node to destination node) or forward (both on the
  //    destination node) of a given phase and round belongs to exactly one flow: for a source
  //    node the round names the destination node, and back. flow_rows_ and flow_pairs_: the
  //    rows and pairs each will carry (route_flow counts them first).
  // transfer() serves hops Direct and Gather; route_flow the others.
  std::vector<int32_t> direct_, gather_, flow_;
  std::vector<int64_t> flow_rows_, flow_pairs_;
  std::vector<size_t> gather_used_, flow_used_;  // entries to clear
  Big<int32_t> src_gpu_of_token_;  // [T]
  Big<int32_t> gpu_of_pair_;       // [T * K]
  Big<int32_t> deliver_;           // [T * K] dispatch task delivering the pair's token (-1: local)
  Big<int32_t> receiver_;          // [T * K] merge with pre_reduce (else empty): GPU that received
                                   // the token on the pair's node
  Big<int32_t> compute_of_pair_;   // [T * K]
  std::vector<int32_t> weights_of_slot_;   // [slots] weight transfer task or -1
  std::vector<int32_t> final_of_task_;     // [tasks] arrival task -> its FinalReduce, or -1
  std::vector<int32_t> final_of_own_;      // [num_gpus] FinalReduce of the GPU's own computed pairs
  std::vector<int32_t> pre_reduce_;        // [num_gpus * N * waves] PreReduce task or -1
  std::vector<int64_t> remote_pairs_;      // [N * N] pairs of tokens of node n computed on node d (n != d)
  // [N * N] the inter-node flows, by (node of the tokens n, node of their experts d): dispatch's
  // flow n -> d and then combine's flow d -> n, which reuses its memory (each holds at most a
  // row, a pair and a target per pair of remote_pairs_[n * N + d]).
  std::vector<Flow> flows_;
  std::vector<int32_t> delivered_, nic_of_row_;  // route_flow's, per flow
  // Rows and dependencies as the steps add them, per task; finalize_rows and finalize_deps
  // move them into the plan's flat arrays, task after task. (One log of (task, row) in build
  // order, counting-sorted by task at the end, wrote every row twice more and scattered it over
  // all tasks: Zepp at 32 x 4 GPUs, 64 MiB took 5.3 s of CPU against 1.7 s this way.)
  std::vector<Staged> staged_;  // [tasks], grown as tasks are added
  std::vector<double> est_done_;           // [tasks] compute tasks: estimated finish (s)
  std::vector<double> node_span_;          // [N] latest est_done_ of the node's compute
  std::vector<int> node_waves_;            // [N] combine waves of the node (PlanOptions::combine_waves)
  std::vector<uint8_t> wave_of_task_;      // [tasks] compute tasks: combine wave of their outputs
  // Compute groups, planned before dispatch is routed (plan_compute_groups) so that dispatch can
  // order its chunks by them: [slot][source node] pairs, [slot][source node] -> group, [slot][group] ->
  // delivery rank of the group (its priority).
  std::vector<int64_t> slot_count_;
  std::vector<int32_t> group_of_, rank_of_group_;
  std::vector<int32_t> chunk_of_row_, chunk_of_slot_;  // dispatch_chunks.cpp, per flow
  std::vector<int64_t> split_of_flow_;  // [N * N][G * G] dispatch_split's, valid where split_known_
  std::vector<char> split_known_;       // [N * N]
  CommPlan::Array spare_deps_;  // finalize_deps' new dep_index; the old one is kept for the next build
};

class Builder : private Arrays {
 public:
  // Builds into `plan` (its contents are replaced, its memory reused) with `memory`'s arrays, which
  // build() hands back.
  Builder(const RoutingBatch& batch, const Placement& placement, const Routing& routing, const Topology& topo,
          const ModelShape& model, const PlanOptions& options, CommPlan&& plan, Arrays&& memory);
  // The plan, and the memory back into `memory`.
  CommPlan build(const std::vector<WeightMove>& weight_moves, const std::vector<MulticastMove>& multicasts,
                 Arrays& memory);

 private:
  // builder.cpp
  int32_t add_task(const Task& t);
  // The transfer of this (src, dst, phase, round, hop), created on first use (coalescing), for
  // hops Direct and Gather (route_flow coalesces the others). Combine transfers of different
  // completion waves are never coalesced (combine.cpp). Tables: direct_, gather_ (Arrays).
  int32_t transfer(int src, int dst, Phase phase, int round, Hop hop, int64_t priority, int wave = 0);
  int32_t new_transfer(int src, int dst, Phase phase, int round, Hop hop, int64_t priority);
  void add_dep(int32_t task, int32_t dep);
  // Appends a row to `task`'s staged rows; pairs null: a row without a pair list (dispatch).
  void add_row(int32_t task, int32_t token, const int32_t* pairs = nullptr, size_t n = 0);
  // Tables, not gpu / G_ and gpu % G_: the hot loops ask per pair, and G_ is not a constant.
  int node_of(int gpu) const { return node_of_gpu_[size_t(gpu)]; }
  int local_of(int gpu) const { return local_of_gpu_[size_t(gpu)]; }
  // x mod G for x in (-G, 2G): a cyclic lane (Algorithm 1 lines 10, 20).
  int wrap_lane(int x) const { return x < 0 ? x + G_ : x >= G_ ? x - G_ : x; }
  void add_weight_moves(const std::vector<WeightMove>& moves);
  void add_multicasts(const std::vector<MulticastMove>& moves);  // multicast.cpp's tasks
  // shared_expert_window: each GPU's SharedExpert task, which its dispatch and GEMMs wait for.
  void add_shared_experts();
  // The compute groups' pairs per (slot, source node), groups and ranks (slot_count_, group_of_,
  // rank_of_group_); add_compute_groups makes their tasks.
  void plan_compute_groups();
  void add_compute_groups();
  // Slots whose own-node rows form a group of their own, computed first (builder.cpp states the
  // rule), from the dispatch flows (collect_dispatch). count: [slot][source node] pairs.
  std::vector<char> local_first_slots(const std::vector<int64_t>& count);
  // The compute groups of every slot (group_of_, rank_of_group_) from slot_count_, each local_first
  // slot's own-node rows apart.
  void make_compute_groups(const std::vector<char>& local_first);
  void add_barriers();
  // The staged rows and dependencies into the plan's flat arrays, each task's in one range.
  void finalize_rows();
  void finalize_deps();

  // dispatch.cpp, in two steps: the intra-node transfers and the rows of each inter-node flow
  // (flows_), then (after plan_compute_groups, which reads the flows) their routes, which fill
  // deliver_[p] and receiver_[p].
  void collect_dispatch();
  void route_dispatch();
  // The split of dispatch flow src_node -> dst_node (plan_split of its volumes), solved once per
  // build: local-first reads it before route_flow does (split_of_flow_).
  const int64_t* dispatch_split(int src_node, int dst_node);
  // combine.cpp
  void add_combine();
  int32_t final_reduce(int gpu, int32_t arrival);  // arrival -1: the GPU's own computed pairs
  int32_t pre_reduce(int gpu, int dst_node, int wave);
  // The completion wave of a combine row whose pairs are [first, last) (all on one node).
  int wave_of(const int32_t* first, const int32_t* last) const;
  // est_done_ and node_span_: the finish time of each compute task on its GPU's stream, in
  // priority order, ignoring arrivals (an estimate of the order GEMMs complete in); node_waves_;
  // wave_of_task_.
  void estimate_compute_finish();
  // flow.cpp: split + merge path of one inter-node flow. Returns, aligned with flow.targets,
  // the task that delivers each row to each target (valid until the next call). Dispatch also
  // sets deliver_ and receiver_ of the flow's pairs.
  const std::vector<int32_t>& route_flow(Phase phase, int src_node, int dst_node, const Flow& flow);
  // dispatch_chunks.cpp: the chunk of each row of dispatch flow src_node -> dst_node into
  // chunk_of_row_ (aligned with flow.rows); busiest_rows: the most rows one NIC carries in the
  // flow after the split. Returns the flow's chunk count (1: no chunks, all rows 0).
  int assign_dispatch_chunks(int src_node, int dst_node, const Flow& flow, int64_t busiest_rows);
  // dispatch_chunks.cpp, its two steps: the flow's chunk count by the rule, and the chunk of each
  // slot of dst_node with pairs from src_node into chunk_of_slot_ (C > 1; by the compute groups'
  // delivery ranks, so plan_compute_groups must have run).
  int dispatch_chunk_count(int src_node, int dst_node, int64_t busiest_rows) const;
  void assign_slot_chunks(int src_node, int dst_node, int C);
  // dispatch_chunks.cpp: chunk k's relay and put of each (sender, receiver) of the flow route_flow
  // just routed wait for the end of chunk k-1's (the chunks leave one after another).
  void chain_dispatch_chunks();
  int64_t transfer_priority(Phase phase, int round, int lane) const;

  const RoutingBatch& batch_;
  const Placement& placement_;
  const Routing& routing_;
  const Topology& topo_;
  const PlanOptions& opt_;
  int N_, G_, K_;
  int W_ = 1;  // waves a flow table holds: max(combine_waves, dispatch_chunks)
  std::vector<int32_t> node_of_gpu_, local_of_gpu_;  // [num_gpus]
  CommPlan plan_;
  int gather_node_ = -1;  // gather_'s source node (builder.hpp, Arrays)
  // [hop (relay 0, put 1, forward 2)][local index of src][local index of dst][wave]
  size_t flow_cell(Hop hop, int src, int dst, int wave) const {
    const size_t h = hop == Hop::Relay ? 0 : hop == Hop::Put ? 1 : 2;
    return ((h * G_ + local_of(src)) * G_ + local_of(dst)) * size_t(W_) + wave;
  }
  Staged& staged(int32_t task) {
    if (size_t(task) >= staged_.size()) staged_.resize(plan_.tasks.size());
    return staged_[size_t(task)];
  }
};

// Inline: called per row and per pair from every step's file.
inline void Builder::add_dep(int32_t task, int32_t dep) {
  if (dep < 0) return;
  // A task's dependencies are a set (finalize_deps sorts and dedups them); skipping a repeat of
  // the last few keeps the lists short.
  auto& deps = staged(task).deps;
  for (size_t i = deps.size(), seen = 0; i > 0 && seen < 4; --i, ++seen)
    if (deps[i - 1] == dep) return;
  deps.push_back(dep);
}

inline void Builder::add_row(int32_t task, int32_t token, const int32_t* pairs, size_t n) {
  Staged& s = staged(task);
  s.tokens.push_back(token);
  if (pairs) {
    if (s.pair_begin.empty()) s.pair_begin.push_back(0);
    if (n == 1) s.pairs.push_back(*pairs);  // most rows without merge: no memmove call
    else s.pairs.insert(s.pairs.end(), pairs, pairs + n);
    s.pair_begin.push_back(int32_t(s.pairs.size()));
  }
  // Transfer and FinalReduce bytes: finalize_rows adds token_bytes per row.
}

}  // namespace zepp::plan_detail
