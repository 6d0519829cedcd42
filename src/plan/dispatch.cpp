// Dispatch: every token reaches each GPU serving one of its pairs (Algorithm 1 lines 2-11).
// With merge a token travels once per destination GPU (intra-node) or node (inter-node);
// without merge once per (token, expert pair), as all-to-allv does.
#include "plan/builder.hpp"

namespace zepp::plan_detail {

void Builder::collect_dispatch() {
  std::vector<Flow>& flows = flows_;
  flows.resize(size_t(N_) * N_);
  for (size_t i = 0; i < flows.size(); ++i) {  // at most a row per remote pair
    flows[i].clear(G_);  // combine's rows of the last build
    flows[i].rows.reserve(remote_pairs_[i]);
    flows[i].pairs.reserve(remote_pairs_[i]);
    flows[i].targets.reserve(remote_pairs_[i]);
  }
  const int64_t T = batch_.num_tokens();
  // The token's pairs served elsewhere, ordered by serving GPU, and their GPUs.
  std::vector<int32_t> by_gpu(K_), gpu_at(K_);
  std::vector<uint64_t> keys(K_);
  for (int64_t t = 0; t < T; ++t) {
    const int src = src_gpu_of_token_[t];
    const int n = node_of(src);
    const size_t pairs = pairs_by_gpu(t * K_, K_, src, gpu_of_pair_.data(), keys.data(), by_gpu.data(), gpu_at.data());

    for (size_t a = 0; a < pairs;) {
      const int h = gpu_at[a];
      const int d = node_of(h);
      // Pairs sharing the row: same GPU (intra-node, merge), same node (inter-node, merge),
      // just this pair (no merge).
      size_t b = a + 1;
      if (opt_.merge)
        while (b < pairs && (d == n ? gpu_at[b] == h : node_of(gpu_at[b]) == d)) ++b;
      if (d == n) {
        const int lane = wrap_lane(local_of(h) - local_of(src) - 1);
        const int32_t task = transfer(src, h, Phase::Dispatch, 0, Hop::Direct, transfer_priority(Phase::Dispatch, 0, lane));
        add_row(task, int32_t(t));
        for (size_t q = a; q < b; ++q) deliver_[by_gpu[q]] = task;
      } else {
        Flow& f = flows[size_t(n) * N_ + d];
        const auto tgt_begin = uint32_t(f.targets.size());
        f.add({int32_t(t), src, -1, 0, uint32_t(f.pairs.size()), tgt_begin}, local_of(src));
        for (size_t q = a; q < b; ++q) {
          f.pairs.push_back(by_gpu[q]);
          if (f.targets.size() == tgt_begin || f.targets.back() != gpu_at[q]) f.targets.push_back(gpu_at[q]);
        }
      }
      a = b;
    }
  }

}

void Builder::route_dispatch() {
  for (int n = 0; n < N_; ++n)
    for (int d = 0; d < N_; ++d)
      if (!flows_[size_t(n) * N_ + d].rows.empty()) route_flow(Phase::Dispatch, n, d, flows_[size_t(n) * N_ + d]);
  for (Flow& f : flows_) f.clear(G_);  // combine reuses them
}

}  // namespace zepp::plan_detail
