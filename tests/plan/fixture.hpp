// Small hand-made clusters and batches for plan and executor tests.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace zepp::test {

// N nodes of G GPUs; round numbers so times can be computed by hand: NVLink 100 B/s,
// NIC 10 B/s, no latency, compute 1000 FLOP/s, HBM 100 B/s, no launch cost.
inline Topology small_topology(int nodes, int gpus_per_node) {
  Topology t;
  t.name = "test";
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  t.nvlink_bw = 100;
  t.nic_bw = 10;
  t.compute.peak_flops = 1000;
  t.compute.hbm_bw = 100;
  return t;
}

// E experts, top-k, hidden 8 (16-byte rows), ffn 1.
inline ModelShape small_model(int experts, int top_k) {
  ModelShape m;
  m.name = "test";
  m.num_experts = experts;
  m.top_k = top_k;
  m.hidden = 8;
  m.ffn = 1;
  return m;
}

// Batch from per-GPU lists of tokens, each its top-k expert ids; the k-th choice gets gate
// weight (k + 1) / (K (K + 1) / 2), k = 0..K-1 (they sum to 1).
inline RoutingBatch make_batch(int experts, int top_k, const std::vector<std::vector<std::vector<int>>>& per_gpu) {
  RoutingBatch b;
  b.num_gpus = int(per_gpu.size());
  b.num_experts = experts;
  b.top_k = top_k;
  b.token_offset.push_back(0);
  for (const auto& tokens : per_gpu) {
    for (const auto& ids : tokens)
      for (int k = 0; k < top_k; ++k) {
        b.expert_ids.push_back(ids[k]);
        b.gate_weights.push_back(float(k + 1) / float(top_k * (top_k + 1) / 2));
      }
    b.token_offset.push_back(b.token_offset.back() + int64_t(tokens.size()));
  }
  return b;
}

// One slot per GPU, expert g on GPU g.
inline Placement identity_placement(int gpus) {
  Placement p;
  p.num_gpus = gpus;
  p.num_experts = gpus;
  p.slots_per_gpu = 1;
  for (int g = 0; g < gpus; ++g) p.phy2log.push_back(g);
  return p;
}

// Each pair goes to the first replica of its expert.
inline Routing first_replica(const RoutingBatch& b, const Placement& p) {
  const auto reps = p.replicas();
  Routing r;
  for (int32_t e : b.expert_ids) r.slot_of_pair.push_back(reps[e][0]);
  return r;
}

}  // namespace zepp::test
