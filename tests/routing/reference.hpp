// A plain implementation of Zepp's routing rules (src/routing/locality.cpp, assign_pairs.cpp),
// kept to check the fast paths against: the same decisions, written for reading, not for speed
// (source-major demand, a vector per key, full re-sorts, exact node sets apart from the rule
// that assign_pairs compares nodes modulo 64).
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp::test {

// Equation (1)'s integer slot bounds, rounded outward (routing.hpp, replica_bounds).
inline void reference_bounds(int64_t total, int r, double slack, int64_t& lower, int64_t& upper) {
  const double q = double(total) / r;
  lower = std::min<int64_t>(int64_t(std::floor((1 - slack) * q)), total / r);
  upper = std::max<int64_t>(int64_t(std::ceil((1 + slack) * q)), (total + r - 1) / r);
}

// Count level: per expert, water-filling by levels (own GPU, own node, remote: each remote slot
// by (load, slot) gets at most an even share of what is left, then the rest in the same order).
inline std::vector<RouteCount> reference_counts(const std::vector<int64_t>& demand /*[G*E]*/, const Placement& p,
                                                const Topology& topo, double slack) {
  const int G = p.num_gpus, E = p.num_experts;
  const auto replicas = p.replicas();
  std::vector<RouteCount> out;
  for (int e = 0; e < E; ++e) {
    const std::vector<int32_t>& slots = replicas[e];
    const int r = int(slots.size());
    std::vector<int64_t> rem(G);
    int64_t total = 0;
    for (int i = 0; i < G; ++i) total += rem[i] = demand[size_t(i) * E + e];
    if (total == 0) continue;
    int64_t lower, upper;
    reference_bounds(total, r, slack, lower, upper);
    std::vector<int64_t> load(r, 0);
    std::vector<std::vector<int64_t>> alloc(G, std::vector<int64_t>(r, 0));
    auto remaining = [&] {
      int64_t s = 0;
      for (int64_t x : rem) s += x;
      return s;
    };
    auto unmet = [&](int j) { return std::max<int64_t>(0, lower - load[j]); };
    auto give = [&](int i, int j, int64_t cap) {
      int64_t unmet_total = 0;
      for (int a = 0; a < r; ++a) unmet_total += unmet(a);
      const int64_t x = std::min({cap, rem[i], upper - load[j], unmet(j) + remaining() - unmet_total});
      if (x <= 0) return;
      load[j] += x;
      rem[i] -= x;
      alloc[i][j] += x;
    };
    auto gpu = [&](int j) { return p.gpu_of_slot(slots[j]); };
    for (int j = 0; j < r; ++j) give(gpu(j), j, rem[gpu(j)]);
    for (int j = 0; j < r; ++j)
      for (int i = 0; i < G; ++i)
        if (i != gpu(j) && topo.node_of(i) == topo.node_of(gpu(j))) give(i, j, rem[i]);
    for (int i = 0; i < G; ++i) {
      std::vector<int> remote;  // by (load, slot)
      for (int j = 0; j < r; ++j)
        if (topo.node_of(gpu(j)) != topo.node_of(i)) remote.push_back(j);
      std::sort(remote.begin(), remote.end(), [&](int a, int b) { return std::pair(load[a], a) < std::pair(load[b], b); });
      for (size_t x = 0; x < remote.size(); ++x) {
        const int64_t left = int64_t(remote.size() - x);
        give(i, remote[x], (rem[i] + left - 1) / left);
      }
      for (int j : remote) give(i, j, rem[i]);
      if (rem[i] != 0) throw std::logic_error("reference_counts: demand left");
    }
    for (int i = 0; i < G; ++i)
      for (int j = 0; j < r; ++j)
        if (alloc[i][j]) out.push_back({e, i, slots[j], alloc[i][j]});
  }
  return out;
}

// Pair level. Per (source GPU, expert): local replicas with quota (own GPU first, then by slot),
// and a list of remote ones in slot order from which an exhausted entry is removed (this order
// decides ties). Per token, in order: its pairs with local quota take the first
// local entry; then, repeatedly, the first pending pair opens the remote node where most other
// pending pairs have quota (ties: larger quota, then earlier entry) and every pending pair with
// quota on an opened node takes its first such entry.
inline std::vector<int32_t> reference_assign(const RoutingBatch& b, const Placement& p, const Topology& topo,
                                             const std::vector<RouteCount>& counts) {
  struct Item {
    int slot, node;
    int64_t quota;
  };
  struct Key {
    std::vector<Item> local, remote;
    size_t next_local = 0;
  };
  std::map<std::pair<int, int>, Key> keys;  // (src_gpu, expert)
  for (int pass = 0; pass < 3; ++pass)
    for (const RouteCount& c : counts) {
      const int g = p.gpu_of_slot(c.slot), n = topo.node_of(g), own = topo.node_of(c.src_gpu);
      const int cls = g == c.src_gpu ? 0 : n == own ? 1 : 2;
      if (cls != pass) continue;
      Key& k = keys[{c.src_gpu, c.expert}];
      (cls == 2 ? k.remote : k.local).push_back({c.slot, n, c.tokens});
    }
  auto has_node = [](const Key& k, int node) {
    for (const Item& x : k.remote)
      if (x.node % 64 == node % 64) return true;
    return false;
  };
  auto take_remote = [](Key& k, size_t x) {
    const int slot = k.remote[x].slot;
    if (--k.remote[x].quota == 0) k.remote.erase(k.remote.begin() + std::ptrdiff_t(x));
    return slot;
  };
  std::vector<int32_t> slot_of_pair(b.expert_ids.size(), -1);
  for (int i = 0; i < b.num_gpus; ++i)
    for (int64_t t = b.token_offset[i]; t < b.token_offset[i + 1]; ++t) {
      std::vector<int> pending;
      for (int q = 0; q < b.top_k; ++q) {
        Key& k = keys[{i, b.expert_ids[t * b.top_k + q]}];
        if (k.next_local < k.local.size()) {
          slot_of_pair[t * b.top_k + q] = k.local[k.next_local].slot;
          if (--k.local[k.next_local].quota == 0) ++k.next_local;
        } else {
          pending.push_back(q);
        }
      }
      std::vector<int> opened;  // node ids modulo 64
      auto is_open = [&](int node) { return std::find(opened.begin(), opened.end(), node % 64) != opened.end(); };
      while (!pending.empty()) {
        const int q0 = pending.front();
        pending.erase(pending.begin());
        Key& k0 = keys[{i, b.expert_ids[t * b.top_k + q0]}];
        if (k0.remote.empty())
          throw std::invalid_argument("reference_assign: fewer tokens for (src_gpu " + std::to_string(i) +
                                      ", expert " + std::to_string(b.expert_ids[t * b.top_k + q0]) + ")");
        size_t best = 0;
        int best_joins = -1;
        for (size_t x = 0; x < k0.remote.size(); ++x) {
          int joins = 0;
          for (int q : pending) joins += has_node(keys[{i, b.expert_ids[t * b.top_k + q]}], k0.remote[x].node);
          if (joins > best_joins || (joins == best_joins && k0.remote[x].quota > k0.remote[best].quota)) {
            best = x;
            best_joins = joins;
          }
        }
        opened.push_back(k0.remote[best].node % 64);
        slot_of_pair[t * b.top_k + q0] = take_remote(k0, best);
        std::vector<int> still;
        for (int q : pending) {
          Key& k = keys[{i, b.expert_ids[t * b.top_k + q]}];
          size_t x = 0;
          while (x < k.remote.size() && !is_open(k.remote[x].node)) ++x;
          if (x < k.remote.size())
            slot_of_pair[t * b.top_k + q] = take_remote(k, x);
          else
            still.push_back(q);
        }
        pending = still;
      }
    }
  for (const auto& [key, k] : keys)
    if (k.next_local != k.local.size() || !k.remote.empty())
      throw std::invalid_argument("reference_assign: more tokens for (src_gpu " + std::to_string(key.first) +
                                  ", expert " + std::to_string(key.second) + ")");
  return slot_of_pair;
}

}  // namespace zepp::test
