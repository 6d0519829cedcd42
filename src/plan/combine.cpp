// Combine: every pair's gate-weighted output returns to its token's source GPU (Algorithm 1
// lines 14-26). With merge, a node's contributions to one token are gathered on the GPU that
// received the token in dispatch, pre-reduced into one row and returned once; without merge
// each pair's output returns on its own.
//
// Completion waves (PlanOptions::combine_waves = W > 1). Algorithm 1 pre-reduces a return group
// once all of its contributions are there (line 22). With one group per (receiving GPU,
// destination node) a node's partial sums leave only after nearly all of its GEMMs: on Kimi-K2
// 16 x 4 at 1 MB the last GPU waited 286 us after its last GEMM (issue 24). Instead every combine
// row (a token's contributions on one GPU, or with pre-reduction on one node) gets a wave from
// the GEMM that completes it: with est(c) the finish of compute task c on its GPU's stream in
// priority order (estimate_compute_finish, roofline times, arrivals ignored) and span(d) the
// latest finish on node d, a row computed on node d whose pairs have compute tasks C gets
// wave = clamp(ceil(W_d * max_{c in C} est(c) / span(d)) - 1, 0, W_d - 1), where W_d =
// min(W, the most compute tasks one GPU of d runs): a wave spans about one GEMM of the node's
// busiest GPU, so a row waits for about one GEMM after its own before it leaves. Gathers,
// pre-reductions, relays, puts and forwards are keyed by wave as well as by their path, so each
// wave is pre-reduced and sent as soon as its own GEMMs are done.
// Why a wave per GEMM, not a fixed few (issue 24; one layer of Figure 9's workloads on A100 x 4
// GPUs per node, us, 4 waves -> a wave per GEMM up to Zepp's 16 with combine_after_dispatch):
// DeepSeek-V2-Lite 4 nodes 16 MB 4067 -> 3865, Qwen3-235B 4 nodes 16 MB 4612 -> 4214, Kimi-K2 8
// nodes 16 MB 6791 -> 6366, none of 17 configurations slower (docs/drift.md); with four
// waves on DeepSeek at 16 MB each of node 3's NICs idled 0.3-0.7 ms after dispatch while its
// GEMMs ran, since each wave held nearly all rows toward one node, and sent them in one burst.
//
// Invariants, for every W >= 1 (W = 1 is the plan without waves; W_d <= W, so the tables sized
// for W hold every wave):
//  (W1) Equations (2)-(3) hold as without waves. The split of a flow (d -> n) is solved once,
//       in route_flow, from the per-GPU row counts of the whole flow, and rows take NICs in flow
//       order by the same cursor whatever their wave. Proof: the wave only enters the key under
//       which a row's relay, put and forward are coalesced, never the split x or the NIC a row
//       takes, so every NIC carries exactly the rows it carries with W = 1 (its bound holds) and
//       exactly the same rows move over NVLink (eq. (3)'s volume).
//  (W2) Every pair reaches its token's output exactly once, in the same rows as with W = 1.
//       Proof: a row's wave is a function of the row; the row is added to exactly one
//       pre-reduction (R, n, wave) and one flow row, as before, so the final reductions of t sum
//       the same rows; waves only split the tasks that carry them.
//  (W3) A wave leaves when its own rows are complete: PreReduce (R, n, w) depends only on the
//       computes of pairs of rows of wave w (directly, or through gathers of wave w), and its
//       put only on PreReduces and relays of wave w; a later GEMM never holds back an earlier
//       wave.
//  (W4) No cycle is added: every new edge goes compute -> gather -> pre-reduce -> relay -> put
//       -> forward -> final reduce within one wave, and none of these is a dependency of a
//       compute or dispatch task.
//  (W5) Deterministic: est and span depend only on the plan's tasks, which are built in a
//       fixed order.
// Each wave adds at most one task per (path, hop) that W = 1 has, so a plan grows by at most W x
// in combine tasks; empty waves add none.
#include <algorithm>
#include <cmath>

#include "plan/builder.hpp"

namespace zepp::plan_detail {

int32_t Builder::final_reduce(int gpu, int32_t arrival) {
  if (arrival >= 0 && size_t(arrival) >= final_of_task_.size()) final_of_task_.resize(plan_.tasks.size(), -1);
  int32_t& known = arrival >= 0 ? final_of_task_[arrival] : final_of_own_[gpu];
  if (known >= 0) return known;
  Task t;
  t.kind = TaskKind::FinalReduce;
  t.phase = Phase::Combine;
  t.gpu = gpu;
  t.priority = N_ + 1;  // after the compute groups that are ready
  known = add_task(std::move(t));
  add_dep(known, arrival);
  return known;
}

int Builder::wave_of(const int32_t* first, const int32_t* last) const {
  if (opt_.combine_waves <= 1) return 0;
  // The wave of the last of the row's GEMMs: a task's wave grows with its finish, so the largest
  // wave is that of the latest finish (its node is the row's).
  uint8_t wave = 0;
  for (const int32_t* p = first; p != last; ++p) wave = std::max(wave, wave_of_task_[compute_of_pair_[*p]]);
  return wave;
}

int32_t Builder::pre_reduce(int gpu, int dst_node, int wave) {
  int32_t& id = pre_reduce_[(size_t(gpu) * N_ + dst_node) * opt_.combine_waves + wave];
  if (id < 0) {
    Task t;
    t.kind = TaskKind::PreReduce;
    t.phase = Phase::Combine;
    t.gpu = gpu;
    t.node = dst_node;
    t.priority = -1;  // its partial sums are waited on by a return transfer: run it first
    id = add_task(std::move(t));
  }
  return id;
}

void Builder::add_combine() {
  pre_reduce_.assign(size_t(plan_.num_gpus) * N_ * opt_.combine_waves, -1);
  // Flow d -> n is flows_[n * N + d] (builder.hpp), reserved by dispatch.
  std::vector<Flow>& flows = flows_;
  const int64_t T = batch_.num_tokens();
  std::vector<int32_t> by_gpu(K_), gpu_at(K_);  // the token's pairs by serving GPU, and their GPUs
  std::vector<uint64_t> keys(K_);
  for (int64_t t = 0; t < T; ++t) {
    const int src = src_gpu_of_token_[t];
    const int n = node_of(src);
    if (n != gather_node_) {  // gathers of the previous source node are never asked for again
      for (size_t i : gather_used_) gather_[i] = -1;
      gather_used_.clear();
      gather_node_ = n;
    }
    pairs_by_gpu(t * K_, K_, -1, gpu_of_pair_.data(), keys.data(), by_gpu.data(), gpu_at.data());

    for (size_t a = 0; a < by_gpu.size();) {
      const int h = gpu_at[a];
      const int d = node_of(h);
      size_t b = a + 1;  // [a, b): the token's pairs on GPU h (merge: on node d if remote)
      while (b < by_gpu.size() && (opt_.merge && d != n ? node_of(gpu_at[b]) == d
                                                        : gpu_at[b] == h)) ++b;
      if (h == src) {  // computed where the token lives: accumulated into y directly
        const int32_t fr = final_reduce(src, -1);
        add_row(fr, t, &by_gpu[a], b - a);
        for (size_t q = a; q < b; ++q) add_dep(fr, compute_of_pair_[by_gpu[q]]);
      } else if (d == n) {
        const int lane = wrap_lane(local_of(src) - local_of(h));  // line 20
        const size_t step = opt_.merge ? b - a : 1;  // merge: one row per (token, GPU)
        for (size_t q = a; q < b; q += step) {
          const int wave = wave_of(&by_gpu[q], &by_gpu[q] + step);
          const int32_t task =
              transfer(h, src, Phase::Combine, 0, Hop::Direct, transfer_priority(Phase::Combine, 0, lane), wave);
          const int32_t fr = final_reduce(src, task);
          add_row(task, t, &by_gpu[q], step);
          add_row(fr, t, &by_gpu[q], step);
          for (size_t u = q; u < q + step; ++u) add_dep(task, compute_of_pair_[by_gpu[u]]);
        }
      } else if (!opt_.merge || !opt_.pre_reduce) {  // one row per pair (with merge [a, b) spans the node)
        Flow& f = flows[size_t(n) * N_ + d];
        for (size_t q = a; q < b; ++q) {
          f.add({int32_t(t), gpu_at[q], compute_of_pair_[by_gpu[q]], wave_of(&by_gpu[q], &by_gpu[q] + 1),
                 uint32_t(f.pairs.size()), uint32_t(f.targets.size())},
                local_of(gpu_at[q]));
          f.pairs.push_back(by_gpu[q]);
          f.targets.push_back(src);
        }
      } else {
        // Gather the node's contributions on the dispatch receiver R, pre-reduce, return once.
        const int R = receiver_[by_gpu[a]];
        const int round = (n - d + N_) % N_;
        const int wave = wave_of(&by_gpu[a], &by_gpu[a] + (b - a));
        const int32_t pr = pre_reduce(R, n, wave);
        int64_t inputs = 0;
        for (size_t c = a; c < b;) {
          const int g = gpu_at[c];
          size_t e = c + 1;
          while (e < b && gpu_at[e] == g) ++e;
          if (g == R) {
            for (size_t q = c; q < e; ++q) add_dep(pr, compute_of_pair_[by_gpu[q]]);
          } else {
            const int lane = wrap_lane(local_of(R) - local_of(g));  // line 20
            const int32_t gather = transfer(g, R, Phase::Combine, round, Hop::Gather,
                                            transfer_priority(Phase::Combine, round, lane), wave);
            add_row(gather, t, &by_gpu[c], e - c);
            for (size_t q = c; q < e; ++q) add_dep(gather, compute_of_pair_[by_gpu[q]]);
            add_dep(pr, gather);
          }
          ++inputs;
          c = e;
        }
        add_row(pr, t, &by_gpu[a], b - a);
        plan_.tasks[pr].bytes += double(inputs) * plan_.token_bytes;
        Flow& f = flows[size_t(n) * N_ + d];
        f.add({int32_t(t), R, pr, wave, uint32_t(f.pairs.size()), uint32_t(f.targets.size())}, local_of(R));
        f.pairs.insert(f.pairs.end(), by_gpu.begin() + a, by_gpu.begin() + b);
        f.targets.push_back(src);
      }
      a = b;
    }
  }

  for (int d = 0; d < N_; ++d)
    for (int n = 0; n < N_; ++n) {
      const Flow& f = flows[size_t(n) * N_ + d];
      if (f.rows.empty()) continue;
      const std::vector<int32_t>& delivered = route_flow(Phase::Combine, d, n, f);
      for (size_t r = 0; r < f.rows.size(); ++r) {
        const FlowRow& row = f.rows[r];
        const int32_t fr = final_reduce(f.targets[row.tgt_begin], delivered[row.tgt_begin]);
        add_row(fr, row.token, &f.pairs[row.pair_begin], f.pair_end(r) - row.pair_begin);
      }
    }
}

}  // namespace zepp::plan_detail
