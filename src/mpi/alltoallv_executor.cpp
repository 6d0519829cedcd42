// execute_alltoallv: plain EP with two MPI_Alltoallv exchanges (see executor.hpp).
#include <chrono>
#include <climits>
#include <map>
#include <thread>

#include "core/error.hpp"
#include "mpi/executor.hpp"
#include "mpi/ffn.hpp"
#include "mpi/hash.hpp"
#include "mpi/pacer.hpp"
#include "mpi/seeded.hpp"

namespace zepp::mpi {
namespace {

// Send and receive layouts of one all-to-allv in floats, per peer (self entries stay 0).
struct Layout {
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  int send_total = 0, recv_total = 0;
};

Layout make_layout(const std::vector<int64_t>& send_rows, const std::vector<int64_t>& recv_rows, int hidden) {
  Layout l;
  const size_t n = send_rows.size();
  l.send_counts.resize(n), l.send_displs.resize(n), l.recv_counts.resize(n), l.recv_displs.resize(n);
  int64_t s = 0, r = 0;
  for (size_t i = 0; i < n; ++i) {
    l.send_displs[i] = int(s), l.recv_displs[i] = int(r);
    l.send_counts[i] = int(send_rows[i] * hidden), l.recv_counts[i] = int(recv_rows[i] * hidden);
    s += send_rows[i] * hidden, r += recv_rows[i] * hidden;
    require(s <= INT_MAX && r <= INT_MAX, "batch", "rows exceed one MPI_Alltoallv's int counts");
  }
  l.send_total = int(s), l.recv_total = int(r);
  return l;
}

// Where one exchange's timeline events go (ExecConfig::timeline); times relative to t0.
struct Events {
  std::vector<TimelineEvent>* out;  // null: not recorded
  double t0;
  const char* phase;                // "dispatch" or "combine"
  int hidden;                       // floats per row
};

// One exchange. Counts bytes per link class and hashes each block sent (peers in rank order).
void exchange(const Layout& l, const std::vector<float>& send, std::vector<float>& recv, int me, int gpn,
              NicPacer& pacer, RankStats& st, MPI_Comm comm, const Events& ev) {
  const int n = int(l.send_counts.size());
  bool any_nic = false, sends_any = false;
  double sent = 0;  // bytes this rank sends to others
  for (int d = 0; d < n; ++d) {
    if (d == me || l.send_counts[d] == 0) continue;
    const double bytes = double(l.send_counts[d]) * sizeof(float);
    (d / gpn == me / gpn ? st.nvlink_bytes : st.nic_bytes) += bytes;
    any_nic = any_nic || d / gpn != me / gpn;
    sends_any = true;
    sent += bytes;
    ++st.messages;
    st.wire_hash = fnv1a(send.data() + l.send_displs[d], size_t(bytes), st.wire_hash);
  }
  if (!pacer.enabled()) {
    const double begin = MPI_Wtime();
    MPI_Alltoallv(send.data(), l.send_counts.data(), l.send_displs.data(), MPI_FLOAT, recv.data(),
                  l.recv_counts.data(), l.recv_displs.data(), MPI_FLOAT, comm);
    if (ev.out && sends_any) {
      TimelineEvent e{me, any_nic ? "nic-out" : "nvlink-out", std::string(ev.phase) + " all-to-allv", begin - ev.t0,
                      MPI_Wtime() - ev.t0};
      e.bytes = sent;
      ev.out->push_back(e);
    }
    return;
  }
  std::vector<MPI_Request> reqs;
  std::vector<TimelineEvent> sends;  // per request; receives get none
  for (int s = 0; s < n; ++s)
    if (s != me && l.recv_counts[s] > 0) {
      reqs.emplace_back();
      sends.push_back({});
      MPI_Irecv(recv.data() + l.recv_displs[s], l.recv_counts[s], MPI_FLOAT, s, 0, comm, &reqs.back());
    }
  const size_t first_send = reqs.size();
  for (int step = 1; step < n; ++step) {  // ring order: me+1, me+2, ... spreads the incast
    const int d = (me + step) % n;
    if (l.send_counts[d] == 0) continue;
    const double bytes = double(l.send_counts[d]) * sizeof(float);
    const bool nic = d / gpn != me / gpn;
    double begin = MPI_Wtime();
    if (nic) {
      const double depart = pacer.reserve(MPI_Wtime(), bytes);
      begin = depart - bytes / pacer.rate();  // the NIC serialises it from here
      while (MPI_Wtime() < depart) std::this_thread::sleep_for(std::chrono::duration<double>(std::min(depart - MPI_Wtime(), 100e-6)));
    }
    reqs.emplace_back();
    TimelineEvent e{me, nic ? "nic-out" : "nvlink-out", std::string(ev.phase) + " send", begin - ev.t0, 0};
    e.rows = l.send_counts[d] / ev.hidden, e.bytes = bytes, e.peer = d;
    sends.push_back(e);
    MPI_Isend(send.data() + l.send_displs[d], l.send_counts[d], MPI_FLOAT, d, 0, comm, &reqs.back());
  }
  if (!ev.out) {
    MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    return;
  }
  std::vector<int> done(reqs.size());
  for (int left = int(reqs.size()); left > 0;) {  // Waitsome, to see when each send completes
    int count = 0;
    MPI_Waitsome(int(reqs.size()), reqs.data(), &count, done.data(), MPI_STATUSES_IGNORE);
    if (count == MPI_UNDEFINED) break;
    left -= count;
    for (int c = 0; c < count; ++c)
      if (size_t(done[c]) >= first_send) sends[done[c]].end_s = MPI_Wtime() - ev.t0;
  }
  ev.out->insert(ev.out->end(), sends.begin() + long(first_send), sends.end());
}

}  // namespace

RankOutput execute_alltoallv(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                             const ModelShape& model, int gpus_per_node, const ExecConfig& cfg, MPI_Comm comm) {
  int me = 0, n = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  require(n == batch.num_gpus && n == placement.num_gpus, "comm", "size differs from the batch's GPU count");
  require(gpus_per_node > 0 && n % gpus_per_node == 0, "gpus_per_node", "must divide the rank count");
  const int k = batch.top_k, hidden = model.hidden;
  const int64_t pairs_total = batch.num_tokens() * k;
  require(int64_t(routing.slot_of_pair.size()) == pairs_total, "routing", "slot_of_pair must hold one slot per (token, k) pair");
  auto dst_of = [&](int64_t p) { return placement.gpu_of_slot(routing.slot_of_pair[p]); };
  auto src_of = [&](int s) { return std::pair{batch.token_offset[s] * k, batch.token_offset[s + 1] * k}; };
  const auto [my_first, my_last] = src_of(me);

  // Inputs, outside the timed region.
  std::map<int, ExpertWeights> weights;
  for (int64_t p = 0; p < pairs_total; ++p)
    if (dst_of(p) == me && !weights.count(batch.expert_ids[p]))
      weights.emplace(batch.expert_ids[p], expert_weights(cfg.data_seed, batch.expert_ids[p], hidden, model.ffn));
  std::vector<float> x(size_t(my_last - my_first) / k * hidden);
  require(!cfg.input || cfg.input->size() == x.size(), "input", "must hold this rank's tokens x hidden rows");
  if (cfg.input) x = *cfg.input;
  else
    for (int64_t t = my_first / k; t < my_last / k; ++t) token_activation(cfg.data_seed, t, hidden, x.data() + (t - my_first / k) * hidden);

  std::vector<int64_t> send_rows(n, 0), recv_rows(n, 0);
  for (int64_t p = my_first; p < my_last; ++p)
    if (dst_of(p) != me) ++send_rows[dst_of(p)];
  for (int s = 0; s < n; ++s)
    if (s != me)
      for (int64_t p = src_of(s).first; p < src_of(s).second; ++p) recv_rows[s] += dst_of(p) == me;
  const Layout fwd = make_layout(send_rows, recv_rows, hidden);
  const Layout back = make_layout(recv_rows, send_rows, hidden);
  NicPacer pacer(cfg.nic_bytes_per_s);
  RankOutput out;
  RankStats& st = out.stats;
  st.wire_hash = kFnvBasis;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();

  // Dispatch: own pairs in token order, grouped by destination.
  std::vector<float> send(fwd.send_total), recv(fwd.recv_total);
  std::vector<int> cursor(fwd.send_displs);
  for (int64_t p = my_first; p < my_last; ++p)
    if (const int d = dst_of(p); d != me) {
      std::copy_n(x.data() + (p - my_first) / k * hidden, hidden, send.data() + cursor[d]);
      cursor[d] += hidden;
    }
  exchange(fwd, send, recv, me, gpus_per_node, pacer, st, comm, {cfg.timeline ? &out.timeline : nullptr, t0, "dispatch", hidden});
  st.dispatch_s = MPI_Wtime() - t0;

  // Compute: per expert, its pairs from every source; outputs land where combine sends them.
  const double c0 = MPI_Wtime();
  std::vector<float> ret(back.send_total), local(size_t(my_last - my_first) * hidden, 0.0f);
  std::map<int, std::vector<std::pair<const float*, float*>>> work;  // expert -> (input row, output row)
  std::map<int, std::vector<float>> gate;
  for (int s = 0; s < n; ++s) {
    int64_t row = 0;
    for (int64_t p = src_of(s).first; p < src_of(s).second; ++p) {
      if (dst_of(p) != me) continue;
      const float* in = s == me ? x.data() + (p - my_first) / k * hidden : recv.data() + fwd.recv_displs[s] + row * hidden;
      float* o = s == me ? local.data() + (p - my_first) * hidden : ret.data() + back.send_displs[s] + row * hidden;
      if (s != me) ++row;
      work[batch.expert_ids[p]].push_back({in, o});
      gate[batch.expert_ids[p]].push_back(batch.gate_weights[p]);
    }
  }
  for (auto& [e, rows] : work) {
    const double begin = MPI_Wtime();
    std::vector<float> xin(rows.size() * hidden), yout(xin.size());
    for (size_t r = 0; r < rows.size(); ++r) std::copy_n(rows[r].first, hidden, xin.data() + r * hidden);
    swiglu(weights.at(e), xin.data(), int64_t(rows.size()), yout.data());
    for (size_t r = 0; r < rows.size(); ++r)
      for (int h = 0; h < hidden; ++h) rows[r].second[h] = gate[e][r] * yout[r * hidden + h];
    st.pairs_computed += int64_t(rows.size());
    if (cfg.timeline) {
      TimelineEvent ev{me, "compute", "expert GEMM", begin - t0, MPI_Wtime() - t0};
      ev.rows = int64_t(rows.size()), ev.expert = e;
      out.timeline.push_back(ev);
    }
  }
  st.compute_s = MPI_Wtime() - c0;

  // Combine: outputs return in the order they came; each source sums its pairs in k order.
  const double b0 = MPI_Wtime();
  std::vector<float> got(back.recv_total);
  exchange(back, ret, got, me, gpus_per_node, pacer, st, comm, {cfg.timeline ? &out.timeline : nullptr, t0, "combine", hidden});
  const double sum_begin = MPI_Wtime();
  out.y.assign(size_t(my_last - my_first) / k * hidden, 0.0f);
  std::vector<int> at(back.recv_displs);
  for (int64_t p = my_first; p < my_last; ++p) {
    const int d = dst_of(p);
    const float* o = d == me ? local.data() + (p - my_first) * hidden : got.data() + at[d];
    if (d != me) at[d] += hidden;
    float* y = out.y.data() + (p - my_first) / k * hidden;
    for (int h = 0; h < hidden; ++h) y[h] += o[h];
  }
  const double end = MPI_Wtime();
  if (cfg.timeline) {
    TimelineEvent ev{me, "compute", "final reduce", sum_begin - t0, end - t0};
    ev.rows = (my_last - my_first) / k;
    out.timeline.push_back(ev);
  }
  st.combine_s = end - b0;
  st.total_s = end - t0;
  return out;
}

}  // namespace zepp::mpi
