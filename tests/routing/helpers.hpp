// Small builders and invariant checks shared by the routing tests.
#pragma once
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "core/types.hpp"

namespace zepp::test {

// nodes x gpus_per_node, NVLink 4 B/s and NIC 1 B/s, so with token_bytes = 1 a token costs
// 0 on its GPU, 0.25 s within a node and 1 s across nodes.
inline Topology tiny_topo(int nodes, int gpus_per_node) {
  Topology t;
  t.name = "tiny";
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  t.nvlink_bw = 4;
  t.nic_bw = 1;
  return t;
}

inline Placement make_placement(int num_gpus, int num_experts, std::vector<int32_t> phy2log) {
  Placement p;
  p.num_gpus = num_gpus;
  p.num_experts = num_experts;
  p.slots_per_gpu = int(phy2log.size()) / num_gpus;
  p.phy2log = std::move(phy2log);
  return p;
}

// tokens[i] = the tokens of GPU i, each a list of top_k expert ids. Gate weights 1 / top_k.
inline RoutingBatch make_batch(int num_experts, int top_k, const std::vector<std::vector<std::vector<int32_t>>>& tokens) {
  RoutingBatch b;
  b.num_gpus = int(tokens.size());
  b.num_experts = num_experts;
  b.top_k = top_k;
  b.token_offset.push_back(0);
  for (const auto& gpu : tokens) {
    for (const auto& tok : gpu)
      for (int32_t e : tok) {
        b.expert_ids.push_back(e);
        b.gate_weights.push_back(1.0f / top_k);
      }
    b.token_offset.push_back(b.token_offset.back() + int64_t(gpu.size()));
  }
  return b;
}

// counts as a map (expert, src_gpu, slot) -> tokens, for comparisons.
using CountMap = std::map<std::tuple<int, int, int>, int64_t>;
inline CountMap as_map(const std::vector<RouteCount>& counts) {
  CountMap m;
  for (const auto& c : counts) m[{c.expert, c.src_gpu, c.slot}] += c.tokens;
  return m;
}

// What slot_of_pair says, tallied per (expert, src_gpu, slot).
inline CountMap tally(const RoutingBatch& b, const std::vector<int32_t>& slot_of_pair) {
  CountMap m;
  for (int i = 0; i < b.num_gpus; ++i)
    for (int64_t p = b.token_offset[i] * b.top_k; p < b.token_offset[i + 1] * b.top_k; ++p)
      ++m[{b.expert_ids[p], i, slot_of_pair[p]}];
  return m;
}

// Same entries in the same order.
inline bool same_counts(const std::vector<RouteCount>& a, const std::vector<RouteCount>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const RouteCount& x, const RouteCount& y) {
    return x.expert == y.expert && x.src_gpu == y.src_gpu && x.slot == y.slot && x.tokens == y.tokens;
  });
}

// Tokens per slot. Shape [num_slots].
inline std::vector<int64_t> slot_loads(const std::vector<RouteCount>& counts, const Placement& p) {
  std::vector<int64_t> load(p.num_slots(), 0);
  for (const auto& c : counts) load[c.slot] += c.tokens;
  return load;
}

}  // namespace zepp::test
