// Zepp's replication and hierarchical placement (paper §4.1, DESIGN.md §1).
//
// Choices where the paper is silent, each made so the result is deterministic:
// - ties in demand per replica go to the lower expert id, ties in GPU load to the lower GPU;
// - an expert gets at most one replica per GPU in total (replicas beyond G add nothing), so
//   slots_per_gpu may not exceed E;
// - "priority" is the final demand per replica; the node cursor is shared by all experts, so
//   consecutive experts start on different nodes;
// - within a node a replica avoids GPUs already holding its expert when a free GPU without it
//   exists (two copies on one GPU give no locality and no swap freedom).
#include <algorithm>
#include <numeric>
#include <queue>

#include "core/error.hpp"
#include "placement/check.hpp"
#include "placement/placement.hpp"

namespace zepp {
namespace {

// Greedy replica counts: every expert one replica, then each remaining slot to the expert with
// the highest demand per replica, at most `cap` replicas each.
std::vector<int> replica_counts(const std::vector<double>& load, int slots, int cap) {
  const int E = int(load.size());
  std::vector<int> cnt(E, 1);
  using Entry = std::pair<double, int>;  // (demand per replica, expert)
  auto lower_priority = [](const Entry& a, const Entry& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(lower_priority)> heap(lower_priority);
  for (int e = 0; e < E; ++e)
    if (cap > 1) heap.push({load[e], e});
  for (int left = slots - E; left > 0; --left) {
    const int e = heap.top().second;  // never empty: slots <= E * cap
    heap.pop();
    if (++cnt[e] < cap) heap.push({load[e] / cnt[e], e});
  }
  return cnt;
}

// Index of the first candidate (scanning `n` positions from `start`, cyclically) that has room,
// preferring one without `e`; -1 when none has room.
template <typename HasRoom, typename Holds>
int pick_cyclic(int n, int start, HasRoom has_room, Holds holds) {
  int fallback = -1;
  for (int i = 0; i < n; ++i) {
    const int c = (start + i) % n;
    if (!has_room(c)) continue;
    if (!holds(c)) return c;
    if (fallback < 0) fallback = c;
  }
  return fallback;
}

}  // namespace

Placement place_zepp(const std::vector<double>& load, const Topology& topo, int extra_slots) {
  placement_detail::check_topology(topo);
  placement_detail::check_load(load, false);
  require(extra_slots >= 0, "extra_slots", "must be >= 0, got " + std::to_string(extra_slots));
  const int E = int(load.size()), N = topo.nodes, gpn = topo.gpus_per_node, G = topo.num_gpus();
  const int S = (E + G - 1) / G + extra_slots;
  require(S <= E, "extra_slots",
          std::to_string(extra_slots) + " gives " + std::to_string(S) + " slots per GPU, more than the " +
              std::to_string(E) + " experts (an expert holds at most one replica per GPU)");

  const std::vector<int> cnt = replica_counts(load, G * S, G);
  std::vector<double> per_replica(E);
  for (int e = 0; e < E; ++e) per_replica[e] = load[e] / cnt[e];
  std::vector<int> order(E);  // priority: demand per replica, descending; lower id first
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return per_replica[a] > per_replica[b]; });

  // Across nodes: round-robin with one cursor, spreading each expert over distinct nodes.
  std::vector<std::vector<int>> node_replicas(N);  // experts, in priority order
  std::vector<char> node_holds(size_t(N) * E, 0);
  int cursor = 0;
  for (int e : order)
    for (int r = 0; r < cnt[e]; ++r) {
      const int n = pick_cyclic(
          N, cursor, [&](int c) { return int(node_replicas[c].size()) < gpn * S; },
          [&](int c) { return node_holds[size_t(c) * E + e] != 0; });
      node_replicas[n].push_back(e);
      node_holds[size_t(n) * E + e] = 1;
      cursor = (n + 1) % N;
    }

  // Within each node: heaviest replicas first onto the least-loaded GPU with a free slot.
  Placement p{G, E, S, {}};
  p.phy2log.reserve(size_t(G) * S);
  for (int n = 0; n < N; ++n) {
    std::vector<int>& reps = node_replicas[n];
    std::stable_sort(reps.begin(), reps.end(), [&](int a, int b) {
      return per_replica[a] > per_replica[b] || (per_replica[a] == per_replica[b] && a < b);
    });
    std::vector<std::vector<int32_t>> gpu_slots(gpn);
    std::vector<double> gpu_load(gpn, 0.0);
    for (int e : reps) {
      // Scan GPUs in order of (load, index); pick_cyclic's "first" is then the least loaded.
      std::vector<int> by_load(gpn);
      std::iota(by_load.begin(), by_load.end(), 0);
      std::stable_sort(by_load.begin(), by_load.end(), [&](int a, int b) { return gpu_load[a] < gpu_load[b]; });
      const int k = pick_cyclic(
          gpn, 0, [&](int c) { return int(gpu_slots[by_load[c]].size()) < S; },
          [&](int c) {
            const auto& s = gpu_slots[by_load[c]];
            return std::find(s.begin(), s.end(), e) != s.end();
          });
      gpu_slots[by_load[k]].push_back(e);
      gpu_load[by_load[k]] += per_replica[e];
    }
    for (const auto& s : gpu_slots) p.phy2log.insert(p.phy2log.end(), s.begin(), s.end());
  }
  return p;
}

}  // namespace zepp
