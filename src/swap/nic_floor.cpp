#include "swap/nic_floor.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "plan/split.hpp"

namespace zepp {

namespace {

// Adds the NIC loads of split x (column sums) to rows[first .. first + G).
void add_columns(const SplitMatrix& x, int G, std::vector<int64_t>& rows, size_t first) {
  for (int i = 0; i < G; ++i)
    for (int j = 0; j < G; ++j) rows[first + j] += x[size_t(i) * G + j];
}

}  // namespace

NicRows nic_rows(const RoutingBatch& batch, const Placement& placement, const std::vector<int32_t>& slot_of_pair,
                 const Topology& topo, const PlanOptions& opt, double token_bytes) {
  placement.validate("placement");
  const int G = topo.gpus_per_node, N = topo.nodes, K = batch.top_k;
  require(G > 0 && topo.num_gpus() == placement.num_gpus, "topo",
          "has " + std::to_string(topo.num_gpus()) + " GPUs, the placement " + std::to_string(placement.num_gpus));
  require(batch.num_gpus == placement.num_gpus && batch.token_offset.size() == size_t(batch.num_gpus) + 1, "batch",
          "has " + std::to_string(batch.num_gpus) + " GPUs, the placement " + std::to_string(placement.num_gpus));
  require(slot_of_pair.size() == size_t(batch.num_tokens()) * K, "slot_of_pair",
          "has " + std::to_string(slot_of_pair.size()) + " entries, expected one per pair (" +
              std::to_string(batch.num_tokens() * K) + ")");
  NicRows r;
  r.dispatch_sent.assign(size_t(placement.num_gpus), 0);
  r.dispatch_received = r.combine_sent = r.dispatch_sent;
  if (N <= 1) return r;
  require(topo.nic_bw > 0 && std::isfinite(topo.nic_bw), "topo", "nic_bw must be positive with more than one node");
  // Per flow (n -> d, at n * N + d): the rows each GPU of n sends (dispatch) and those each GPU
  // of d returns (combine, unless pre-reduced on the dispatch receivers).
  std::vector<std::vector<int64_t>> out(size_t(N) * N, std::vector<int64_t>(G, 0)), back = out;
  std::vector<int64_t> seen(N, -1);  // the last token that sent a merged row to each node
  for (int src = 0; src < batch.num_gpus; ++src) {
    const int n = src / G;
    for (int64_t t = batch.token_offset[src]; t < batch.token_offset[src + 1]; ++t)
      for (int k = 0; k < K; ++k) {
        const int32_t s = slot_of_pair[size_t(t) * K + k];
        require(s >= 0 && s < placement.num_slots() && placement.phy2log[s] == batch.expert_ids[size_t(t) * K + k],
                "slot_of_pair", "pair " + std::to_string(t * K + k) + " is routed to a slot not holding its expert");
        const int h = placement.gpu_of_slot(s), d = h / G;
        if (d == n) continue;
        if (opt.merge) {  // dispatch: one row per (token, node) (plan/dispatch.cpp)
          if (seen[d] != t) ++out[size_t(n) * N + d][src % G], seen[d] = t;
        } else {
          ++out[size_t(n) * N + d][src % G];
        }
        r.dispatch_received[h] += !opt.merge;  // per pair, straight to the serving GPU
        if (!opt.merge || !opt.pre_reduce) ++back[size_t(d) * N + n][h % G];  // one row per pair
      }
  }
  const bool via_peer = opt.merge && opt.pre_reduce;
  for (int n = 0; n < N; ++n)
    for (int d = 0; d < N; ++d) {
      if (n == d) continue;
      const SplitMatrix x = plan_split(out[size_t(n) * N + d], opt, topo, token_bytes);
      add_columns(x, G, r.dispatch_sent, size_t(n) * G);
      if (!opt.merge) continue;
      // Merged rows land on the rail of the NIC that carried them (plan/flow.cpp), and with
      // pre-reduction those receivers return the token's one row toward n (plan/combine.cpp).
      add_columns(x, G, r.dispatch_received, size_t(d) * G);
      if (via_peer) add_columns(x, G, back[size_t(d) * N + n], 0);
    }
  for (int d = 0; d < N; ++d)
    for (int n = 0; n < N; ++n)
      if (n != d) add_columns(plan_split(back[size_t(d) * N + n], opt, topo, token_bytes), G, r.combine_sent, size_t(d) * G);
  return r;
}

double dispatch_time(const NicRows& rows, const Topology& topo, double token_bytes) {
  if (topo.nodes <= 1) return 0;
  int64_t busiest = 0;
  for (size_t g = 0; g < rows.dispatch_sent.size(); ++g)
    busiest = std::max({busiest, rows.dispatch_sent[g], rows.dispatch_received[g]});
  return double(busiest) * token_bytes / topo.nic_bw;
}

std::vector<double> combine_time(const NicRows& rows, const Topology& topo, double token_bytes) {
  std::vector<double> t(size_t(std::max(topo.nodes, 1)), 0.0);
  if (topo.nodes <= 1) return t;
  for (size_t g = 0; g < rows.combine_sent.size(); ++g) {
    double& node = t[g / size_t(topo.gpus_per_node)];
    node = std::max(node, double(rows.combine_sent[g]) * token_bytes / topo.nic_bw);
  }
  return t;
}

double gemms_after_dispatch(double gemm_seconds, double remote_gemm_seconds, double dispatch_seconds) {
  return std::max(gemm_seconds - dispatch_seconds, remote_gemm_seconds);
}

double saved_above_floor(double before, double after, double combine_seconds) {
  return std::max(combine_seconds, before) - std::max(combine_seconds, after);
}

NicFloor nic_floor(const RoutingBatch& batch, const Placement& placement, const std::vector<int32_t>& slot_of_pair,
                   const Topology& topo, const PlanOptions& opt, const ModelShape& model) {
  const NicRows rows = nic_rows(batch, placement, slot_of_pair, topo, opt, model.token_bytes());
  return {dispatch_time(rows, topo, model.token_bytes()), combine_time(rows, topo, model.token_bytes())};
}

}  // namespace zepp
