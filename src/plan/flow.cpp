// The physical path of one inter-node flow: split over the source node's NICs (eq. (2)/(3)),
// relay, RDMA put and, with merge, forwarding inside the destination node (Algorithm 1).
#include <algorithm>

#include "core/error.hpp"
#include "plan/builder.hpp"
#include "plan/split.hpp"

namespace zepp::plan_detail {

const int64_t* Builder::dispatch_split(int src_node, int dst_node) {
  const size_t f = size_t(src_node) * N_ + dst_node, GG = size_t(G_) * G_;
  int64_t* x = split_of_flow_.data() + f * GG;
  if (!split_known_[f]) {
    const SplitMatrix solved = plan_split(flows_[f].volumes, opt_, topo_, plan_.token_bytes);
    std::copy(solved.begin(), solved.end(), x);
    split_known_[f] = 1;
  }
  return x;
}

const std::vector<int32_t>& Builder::route_flow(Phase phase, int src_node, int dst_node, const Flow& flow) {
  // Dispatch round r sends to n - r; combine round r sends to n + r (Algorithm 1 lines 3, 17).
  const int round = phase == Phase::Dispatch ? (src_node - dst_node + N_) % N_ : (dst_node - src_node + N_) % N_;
  const int64_t prio = transfer_priority(phase, round, 0);
  const int lane_shift = ((-1 - round) % G_ + G_) % G_;  // forwards' lane offset (line 10)
  for (size_t i : flow_used_) flow_[i] = -1, flow_rows_[i] = 0, flow_pairs_[i] = 0;  // the last flow's
  flow_used_.clear();

  // Eq. (2)/(3), split.hpp; take_nic below uses up its copy.
  SplitMatrix x;
  if (phase == Phase::Dispatch) {
    const int64_t* known = dispatch_split(src_node, dst_node);
    x.assign(known, known + size_t(G_) * G_);
  } else {
    x = plan_split(flow.volumes, opt_, topo_, plan_.token_bytes);
  }

  // Dispatch chunks (dispatch_chunks.cpp): cut after the split, from the NIC that carries most.
  int chunks = 1;
  if (phase == Phase::Dispatch && opt_.dispatch_chunks > 1) {
    int64_t busiest = 0;
    for (int j = 0; j < G_; ++j) {
      int64_t carried = 0;
      for (int i = 0; i < G_; ++i) carried += x[size_t(i) * G_ + j];
      busiest = std::max(busiest, carried);
    }
    chunks = assign_dispatch_chunks(src_node, dst_node, flow, busiest);
  }
  // A row's wave: its completion wave (combine) or its chunk (dispatch; 0 without chunks).
  auto wave_of_row = [&](size_t r) { return chunks > 1 ? chunk_of_row_[r] : flow.rows[r].wave; };

  // Rows of GPU i fill its own NIC first, then the NICs it relays to, in ascending order:
  // the c-th NIC of GPU i is i for c = 0, else the (c-1)-th of the others.
  std::vector<int> cursor(G_, 0);
  auto take_nic = [&](int i) {
    auto nic = [&](int c) { return c == 0 ? i : (c - 1 < i ? c - 1 : c); };
    while (x[size_t(i) * G_ + nic(cursor[i])] == 0) ++cursor[i];  // x's row i sums to V_i
    --x[size_t(i) * G_ + nic(cursor[i])];
    return nic(cursor[i]);
  };

  // Pass 1: every row's NIC, and the rows and pairs each relay, put and forward of the flow
  // will carry (they are the flow's own: builder.hpp, flow_), so pass 2 allocates each once.
  const bool via_peer = opt_.merge && (phase == Phase::Dispatch || opt_.pre_reduce);
  std::vector<int32_t>& nic_of_row = nic_of_row_;
  nic_of_row.resize(flow.rows.size());
  auto count = [&](Hop hop, int src, int dst, int wave, uint32_t n_pairs) {
    const size_t i = flow_cell(hop, src, dst, wave);
    ++flow_rows_[i];
    flow_pairs_[i] += n_pairs;
  };
  for (size_t r = 0; r < flow.rows.size(); ++r) {
    const FlowRow& row = flow.rows[r];
    const uint32_t n_pairs = flow.pair_end(r) - row.pair_begin;
    const int nic = nic_of_row[r] = src_node * G_ + take_nic(local_of(row.src_gpu));
    const int wave = wave_of_row(r);
    if (nic != row.src_gpu) count(Hop::Relay, row.src_gpu, nic, wave, n_pairs);
    // Merged rows go to the peer GPU and are forwarded (lines 7-11, 25); per-pair combine rows
    // (no merge, or no pre-reduction) go straight to the token's GPU.
    if (!via_peer && flow.tgt_end(r) - row.tgt_begin != 1) throw std::logic_error("route_flow: unmerged row with several targets");
    const int recv = via_peer ? dst_node * G_ + local_of(nic) : flow.targets[row.tgt_begin];
    count(Hop::Put, nic, recv, wave, n_pairs);
    for (uint32_t q = row.tgt_begin; q < flow.tgt_end(r); ++q)
      if (flow.targets[q] != recv) count(Hop::Forward, recv, flow.targets[q], wave, n_pairs);
  }

  // Pass 2: the transfers, coalesced per (hop, sender, receiver, wave), and their rows.
  const bool with_pairs = phase == Phase::Combine;
  auto transfer_of = [&](Hop hop, int src, int dst, int64_t priority, int wave) {
    const size_t i = flow_cell(hop, src, dst, wave);
    int32_t& id = flow_[i];
    if (id < 0) {
      id = new_transfer(src, dst, phase, round, hop, priority);
      flow_used_.push_back(i);
      Staged& s = staged(id);  // its rows and pairs, counted in pass 1
      s.tokens.reserve(size_t(flow_rows_[i]));
      if (with_pairs) s.pair_begin.reserve(size_t(flow_rows_[i]) + 1), s.pairs.reserve(size_t(flow_pairs_[i]));
    }
    return id;
  };
  std::vector<int32_t>& delivered = delivered_;
  delivered.assign(flow.targets.size(), -1);
  for (size_t r = 0; r < flow.rows.size(); ++r) {
    const FlowRow& row = flow.rows[r];
    const int32_t* pairs = with_pairs ? flow.pairs.data() + row.pair_begin : nullptr;
    const size_t n_pairs = flow.pair_end(r) - row.pair_begin;
    const int nic = nic_of_row[r];
    const int wave = wave_of_row(r);
    int32_t ready = row.dep;
    if (nic != row.src_gpu) {
      const int32_t relay = transfer_of(Hop::Relay, row.src_gpu, nic, prio, wave);
      add_row(relay, row.token, pairs, n_pairs);
      add_dep(relay, row.dep);
      ready = relay;
    }
    const int recv = via_peer ? dst_node * G_ + local_of(nic) : flow.targets[row.tgt_begin];
    const int32_t put = transfer_of(Hop::Put, nic, recv, prio, wave);
    add_row(put, row.token, pairs, n_pairs);
    add_dep(put, ready);
    for (uint32_t q = row.tgt_begin; q < flow.tgt_end(r); ++q) {
      const int h = flow.targets[q];
      if (h == recv) {
        delivered[q] = put;
        continue;
      }
      const int lane = wrap_lane(local_of(h) - local_of(recv) + lane_shift);  // line 10
      const int32_t fwd = transfer_of(Hop::Forward, recv, h, transfer_priority(phase, round, lane), wave);
      add_row(fwd, row.token, pairs, n_pairs);
      add_dep(fwd, put);
      delivered[q] = fwd;
    }
    if (phase == Phase::Dispatch) {
      // The row's pairs, ordered by GPU, and its targets (their distinct GPUs, in that order):
      // each pair's token arrives with its target's transfer, received by recv. With one target
      // (every row without merge, most with it) no pair's GPU needs to be looked up.
      const bool one_target = flow.tgt_end(r) - row.tgt_begin == 1;
      uint32_t q = row.tgt_begin;
      for (uint32_t i = row.pair_begin; i < flow.pair_end(r); ++i) {
        const int32_t p = flow.pairs[i];
        if (!one_target)
          while (flow.targets[q] != gpu_of_pair_[p]) ++q;
        deliver_[p] = delivered[q];
        if (!receiver_.empty()) receiver_[p] = recv;
      }
    }
  }
  if (chunks > 1) chain_dispatch_chunks();
  return delivered;
}

}  // namespace zepp::plan_detail
