// Dispatch: every token reaches each GPU serving one of its pairs (Algorithm 1 lines 2-11).
// With merge a token travels once per destination GPU (intra-node) or node (inter-node);
// without merge once per (token, expert pair), as all-to-allv does.
#include <algorithm>

#include "plan/builder.hpp"

namespace zepp::plan_detail {

void Builder::add_dispatch() {
  std::vector<Flow>& flows = flows_;
  flows.resize(size_t(N_) * N_);
  for (size_t i = 0; i < flows.size(); ++i) {  // at most a row per remote pair
    flows[i].clear();  // combine's rows of the last build
    flows[i].rows.reserve(remote_pairs_[i]);
    flows[i].pairs.reserve(remote_pairs_[i]);
    flows[i].targets.reserve(remote_pairs_[i]);
  }
  const int64_t T = batch_.num_tokens();
  std::vector<int32_t> by_gpu;  // the token's pairs, ordered by serving GPU
  for (int64_t t = 0; t < T; ++t) {
    const int src = src_gpu_of_token_[t];
    const int n = node_of(src);
    by_gpu.clear();
    for (int64_t p = t * K_; p < (t + 1) * K_; ++p)
      if (gpu_of_pair_[p] != src) by_gpu.push_back(int32_t(p));
    sort_by_gpu(by_gpu.data(), by_gpu.data() + by_gpu.size(), gpu_of_pair_.data());

    for (size_t a = 0; a < by_gpu.size();) {
      const int h = gpu_of_pair_[by_gpu[a]];
      const int d = node_of(h);
      // Pairs sharing the row: same GPU (intra-node, merge), same node (inter-node, merge),
      // just this pair (no merge).
      size_t b = a + 1;
      if (opt_.merge)
        while (b < by_gpu.size() && (d == n ? gpu_of_pair_[by_gpu[b]] == h : node_of(gpu_of_pair_[by_gpu[b]]) == d)) ++b;
      if (d == n) {
        const int lane = wrap_lane(local_of(h) - local_of(src) - 1);
        const int32_t task = transfer(src, h, Phase::Dispatch, 0, Hop::Direct, transfer_priority(Phase::Dispatch, 0, lane));
        add_row(task, int32_t(t));
        for (size_t q = a; q < b; ++q) deliver_[by_gpu[q]] = task;
      } else {
        Flow& f = flows[size_t(n) * N_ + d];
        const FlowRow row{int32_t(t), src, -1, 0, uint32_t(f.pairs.size()), uint32_t(f.targets.size())};
        for (size_t q = a; q < b; ++q) {
          f.pairs.push_back(by_gpu[q]);
          const int g = gpu_of_pair_[by_gpu[q]];
          if (f.targets.size() == row.tgt_begin || f.targets.back() != g) f.targets.push_back(g);
        }
        f.rows.push_back(row);
      }
      a = b;
    }
  }

  std::vector<int32_t> receivers;
  for (int n = 0; n < N_; ++n)
    for (int d = 0; d < N_; ++d) {
      const Flow& f = flows[size_t(n) * N_ + d];
      if (f.rows.empty()) continue;
      const std::vector<int32_t> delivered = route_flow(Phase::Dispatch, n, d, f, &receivers);
      for (size_t r = 0; r < f.rows.size(); ++r) {
        const FlowRow& row = f.rows[r];
        for (uint32_t q = row.pair_begin; q < f.pair_end(r); ++q) {
          const int32_t p = f.pairs[q];
          const auto* tgt = std::find(&f.targets[row.tgt_begin], &f.targets[0] + f.tgt_end(r), gpu_of_pair_[p]);
          deliver_[p] = delivered[tgt - &f.targets[0]];
          if (!receiver_.empty()) receiver_[p] = receivers[r];
        }
      }
    }
  for (Flow& f : flows) f.clear();  // combine reuses them
}

}  // namespace zepp::plan_detail
