// The physical path of one inter-node flow: split over the source node's NICs (eq. (2)/(3)),
// relay, RDMA put and, with merge, forwarding inside the destination node (Algorithm 1).
#include <algorithm>

#include "core/error.hpp"
#include "plan/builder.hpp"
#include "plan/split.hpp"

namespace zepp::plan_detail {

std::vector<int32_t> Builder::route_flow(Phase phase, int src_node, int dst_node, const Flow& flow,
                                         std::vector<int32_t>* receivers) {
  // Dispatch round r sends to n - r; combine round r sends to n + r (Algorithm 1 lines 3, 17).
  const int round = phase == Phase::Dispatch ? (src_node - dst_node + N_) % N_ : (dst_node - src_node + N_) % N_;
  const int64_t prio = transfer_priority(phase, round, 0);

  std::vector<int64_t> volumes(G_, 0);
  for (const FlowRow& r : flow.rows) ++volumes[local_of(r.src_gpu)];
  SplitMatrix x(size_t(G_) * G_, 0);
  if (opt_.split) {
    int64_t total = 0;
    for (int64_t v : volumes) total += v;
    const int64_t cap = nic_capacity(total, G_, opt_.nic_slack);
    if (opt_.nic_slack == 0) {
      x = split_closed_form(volumes, cap);
    } else {
      std::vector<int64_t> cost(size_t(G_) * G_, 1);  // NVLink is uniform inside a node
      x = split_min_cost(volumes, cap, cost);
    }
  } else {
    for (int i = 0; i < G_; ++i) x[size_t(i) * G_ + i] = volumes[i];
  }

  // Rows of GPU i fill its own NIC first, then the NICs it relays to, in ascending order:
  // the c-th NIC of GPU i is i for c = 0, else the (c-1)-th of the others.
  std::vector<int> cursor(G_, 0);
  auto take_nic = [&](int i) {
    auto nic = [&](int c) { return c == 0 ? i : (c - 1 < i ? c - 1 : c); };
    while (x[size_t(i) * G_ + nic(cursor[i])] == 0) ++cursor[i];  // x's row i sums to V_i
    --x[size_t(i) * G_ + nic(cursor[i])];
    return nic(cursor[i]);
  };

  std::vector<int32_t> delivered(flow.targets.size(), -1);
  if (receivers) receivers->assign(flow.rows.size(), -1);
  for (size_t r = 0; r < flow.rows.size(); ++r) {
    const FlowRow& row = flow.rows[r];
    const int64_t* pairs = phase == Phase::Combine ? flow.pairs.data() + row.pair_begin : nullptr;
    const size_t n_pairs = row.pair_end - row.pair_begin;
    const int nic = src_node * G_ + take_nic(local_of(row.src_gpu));
    int32_t ready = row.dep;
    if (nic != row.src_gpu) {
      const int32_t relay = transfer(row.src_gpu, nic, phase, round, Hop::Relay, prio);
      add_row(relay, row.token, pairs, n_pairs);
      add_dep(relay, row.dep);
      ready = relay;
    }
    // Merged rows go to the peer GPU and are forwarded (lines 7-11, 25); per-pair combine rows
    // (no merge, or no pre-reduction) go straight to the token's GPU.
    const bool via_peer = opt_.merge && (phase == Phase::Dispatch || opt_.pre_reduce);
    if (!via_peer && row.tgt_end - row.tgt_begin != 1) throw std::logic_error("route_flow: unmerged row with several targets");
    const int recv = via_peer ? dst_node * G_ + local_of(nic) : flow.targets[row.tgt_begin];
    const int32_t put = transfer(nic, recv, phase, round, Hop::Put, prio);
    add_row(put, row.token, pairs, n_pairs);
    add_dep(put, ready);
    if (receivers) (*receivers)[r] = recv;
    for (uint32_t q = row.tgt_begin; q < row.tgt_end; ++q) {
      const int h = flow.targets[q];
      if (h == recv) {
        delivered[q] = put;
        continue;
      }
      const int lane = ((local_of(h) - local_of(recv) - 1 - round) % G_ + 2 * G_) % G_;  // line 10
      const int32_t fwd = transfer(recv, h, phase, round, Hop::Forward, transfer_priority(phase, round, lane));
      add_row(fwd, row.token, pairs, n_pairs);
      add_dep(fwd, put);
      delivered[q] = fwd;
    }
  }
  return delivered;
}

}  // namespace zepp::plan_detail
