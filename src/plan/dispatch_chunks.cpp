// Dispatch in chunks (PlanOptions::dispatch_chunks = C_max > 1; issue 24, beyond the paper).
//
// Why. Without chunks each inter-node flow (source node n -> destination node d) is one RDMA put
// per NIC and peer, and a compute group that needs any of its rows waits for the whole put. On
// DeepSeek-V2-Lite 4 x 4 A100 at 16 MB (layer 5) every GPU ran its own-node GEMMs from ~0.28 ms
// to ~0.95 ms and then idled 0.65-0.95 ms until dispatch ended at ~1.7 ms (`epic`, one put per
// GPU pair as well, starts its remote GEMMs only after ~1.4 ms). Here a flow is cut into chunks
// that leave one after another on each NIC, ordered by the GEMMs that need them on the
// destination, so a GPU computes on its first chunk while the rest is in flight; each compute
// group depends only on the chunks that carry its rows (through deliver_, as before). Measured
// (issue 24, one build, Figure 9's configurations, us, without -> with): that layer 3864.7 ->
// 3464.1, Kimi-K2 4 nodes 16 MB 4558.3 -> 3953.7, 8 nodes 4 MB 1826.9 -> 1548.2, Qwen3-235B 4
// nodes 1 MB 483.5 -> 423.2; none of the 36 slower; Llama-4 (top-1, GEMMs that are weight
// reads, dispatch over in ~50 us) within 0.7%.
//
// Chunk of a row. Per GPU h of node d, the slots of h with pairs from node n are ordered by
// their compute group's delivery rank (its priority on h's stream), then by slot; with c_s the
// pairs from n on slot s and P_h their sum, slot s gets chunk
//   k(s) = min(C - 1, floor(C · (pairs from n on the slots of h before s) / P_h)),
// so each chunk holds about 1/C of what h computes on the flow, and every slot's pairs from n
// sit in one chunk. A row (a token, once per destination node with merge) is needed by the
// slots of its pairs there and gets the earliest: chunk(row) = min over its pairs p of
// k(slot(p)).
//
// Chunk count of a flow, a stated rule from the plan's own quantities:
//   C = min(C_max, the most slots one GPU of d computes on the flow's rows,
//           floor(B / (nic_bw · nic_latency)))
// with B the bytes of the flow's busiest NIC after the split. More chunks than slots would
// leave a chunk that completes no GEMM of the GPU that receives most groups; a chunk whose bytes
// take less NIC time than one message's latency pays more in latency (each chunk is one more
// message on its NIC's chain) than it lets compute start early. C = 1: no chunks.
//
// Order on the links. Links are shared max-min (exec/sim.hpp), so chunks posted at once would
// share each NIC and all end together. Chunk k's relay and put of each (sender, receiver) pair of
// the flow wait for the end of chunk k-1's (chain_dispatch_chunks); forwards follow their put.
//
// Invariants, for every C_max >= 1:
//  (D1) Equations (2)-(3) hold as without chunks. The flow's split x is solved once, in
//       route_flow, from the per-GPU row counts of the whole flow, and rows take NICs in flow
//       order by the same cursor whatever their chunk. Proof: the chunk only enters the key under
//       which a row's relay, put and forward are coalesced (as a combine wave does, combine.cpp
//       (W1)), never x or the NIC a row takes, so every NIC carries exactly the rows it carries
//       with C = 1, and the same rows move over NVLink.
//  (D2) Every pair's token reaches the GPU serving the pair exactly once, by the same path as
//       with C = 1. Proof: chunk(row) is a function of the row; the row is added to exactly one
//       relay (if moved), put and forward per target of its chunk, as before; deliver_[p] names
//       the transfer of p's row to p's GPU.
//  (D3) A compute group waits for no chunk later than its own: a group holding the pairs from
//       n of slot s depends (through deliver_) only on transfers of chunks <= k(s). Proof: each
//       of its rows r from n has a pair on s, so chunk(r) = min over r's pairs <= k(s).
//  (D4) Chunks leave in order: for each (sender, receiver) of the flow's relays and puts, chunk
//       k's transfer starts no earlier than the end of the flow's chunk k' < k on that pair.
//       Proof: each gets the previous non-empty chunk's transfer on the pair as a dependency
//       (a chain, by induction over k).
//  (D5) No cycle is added: new edges go from a dispatch relay (put) of chunk k' to a dispatch
//       relay (put) of chunk k > k' of the same flow, and dispatch relays and puts depend only
//       on planning, shared experts, weights, relays and earlier chunks' puts, never on a task
//       of a later chunk or on compute or combine tasks.
//  (D6) C = 1 gives the plan without chunks, bit for bit: every row's wave stays 0 and no edge
//       is added.
//  (D7) Deterministic: chunks depend only on counts, ranks and slot numbers.
// Each chunk adds at most one relay, put and forward per path the flow has with C = 1, so
// dispatch grows by at most C x in inter-node transfers. Local-first (builder.cpp,
// local_first_slots) applies the same count and slot order (dispatch_chunk_count,
// assign_slot_chunks) to estimate when each node's first chunk arrives.
#include <algorithm>
#include <cmath>
#include <utility>

#include "plan/builder.hpp"

namespace zepp::plan_detail {

int Builder::dispatch_chunk_count(int src_node, int dst_node, int64_t busiest_rows) const {
  if (opt_.dispatch_chunks <= 1 || !opt_.overlap || busiest_rows <= 0) return 1;
  double bound = double(opt_.dispatch_chunks);
  if (topo_.nic_latency > 0)
    bound = std::min(bound, std::floor(double(busiest_rows) * plan_.token_bytes / (topo_.nic_bw * topo_.nic_latency)));
  const int spg = placement_.slots_per_gpu;
  int most = 0;  // the most slots one GPU of dst_node computes on the flow's rows
  for (int h = dst_node * G_; h < (dst_node + 1) * G_; ++h) {
    int slots = 0;
    for (int s = h * spg; s < (h + 1) * spg; ++s) slots += slot_count_[size_t(s) * N_ + src_node] > 0;
    most = std::max(most, slots);
  }
  return std::max(1, int(std::min(bound, double(most))));
}

void Builder::assign_slot_chunks(int src_node, int dst_node, int C) {
  const int spg = placement_.slots_per_gpu;
  chunk_of_slot_.resize(size_t(placement_.num_slots()));
  std::vector<std::pair<int32_t, int32_t>> order;  // (delivery rank of the slot's group, slot)
  for (int h = dst_node * G_; h < (dst_node + 1) * G_; ++h) {
    order.clear();
    int64_t total = 0;
    for (int s = h * spg; s < (h + 1) * spg; ++s) {
      const int64_t c = slot_count_[size_t(s) * N_ + src_node];
      if (c == 0) continue;
      order.push_back({rank_of_group_[size_t(s) * N_ + group_of_[size_t(s) * N_ + src_node]], s});
      total += c;
    }
    std::sort(order.begin(), order.end());
    int64_t before = 0;
    for (const auto& [rank, s] : order) {
      chunk_of_slot_[size_t(s)] = int32_t(std::min<int64_t>(C - 1, int64_t(C) * before / total));
      before += slot_count_[size_t(s) * N_ + src_node];
    }
  }
}

int Builder::assign_dispatch_chunks(int src_node, int dst_node, const Flow& flow, int64_t busiest_rows) {
  const int C = dispatch_chunk_count(src_node, dst_node, busiest_rows);
  if (C <= 1) return 1;
  assign_slot_chunks(src_node, dst_node, C);
  chunk_of_row_.resize(flow.rows.size());
  for (size_t r = 0; r < flow.rows.size(); ++r) {
    int32_t chunk = C - 1;
    for (uint32_t i = flow.rows[r].pair_begin; i < flow.pair_end(r); ++i)
      chunk = std::min(chunk, chunk_of_slot_[size_t(routing_.slot_of_pair[size_t(flow.pairs[i])])]);
    chunk_of_row_[r] = chunk;
  }
  return C;
}

void Builder::chain_dispatch_chunks() {
  // flow_cell's table holds the flow's relays and puts by (sender, receiver) and wave (D4).
  for (Hop hop : {Hop::Relay, Hop::Put}) {
    const size_t h = hop == Hop::Relay ? 0 : 1;
    for (size_t pair = 0; pair < size_t(G_) * G_; ++pair) {
      int32_t prev = -1;
      for (int w = 0; w < W_; ++w) {
        const int32_t id = flow_[(h * G_ * G_ + pair) * size_t(W_) + size_t(w)];
        if (id < 0) continue;
        add_dep(id, prev);
        prev = id;
      }
    }
  }
}

}  // namespace zepp::plan_detail
