// Argument checks and small shared helpers of the routing stage (not public API).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"

namespace zepp::routing_detail {

// Each throws ArgumentError naming the argument.
// Placement::validate's rules ("placement"), with a fast pass first.
void check_placement(const Placement& placement);
void check_slack(double balance_slack);
void check_topology(const Topology& topo, const Placement& placement);
// Positive finite nvlink_bw, nic_bw (topo) and token_bytes.
void check_costs(const Topology& topo, double token_bytes);
void check_demand(const std::vector<int64_t>& demand, const Placement& placement);
// Offsets, sizes, expert ids in [0, E), and GPU/expert counts equal to the placement's.
void check_batch(const RoutingBatch& batch, const Placement& placement);

// Router's dense layouts: demand [E * G] ("demand": size, negative entries), counts [S * G]
// ("counts": size).
void check_dense_demand(std::span<const int64_t> demand, int num_experts, int num_gpus);
void check_dense_counts(std::span<const int64_t> m, int num_slots, int num_gpus);
// Router::plan's all-gathered counts [G * E] rank-major ("counts": size, negative entries).
void check_rank_counts(std::span<const int64_t> counts, int num_gpus, int num_experts);

// True when every one of ids[0, n) is in [0, num_experts) or -1 (padding). One branch-free
// pass in the ids' own width, which vectorises with the baseline x86-64 SSE2 (no 64-bit
// compares there): y = id + 1 (unsigned) must be <= E, i.e. y's top bit clear and y - (E + 1)'s
// top bit set; ORing y | ~(y - (E + 1)) over all ids tests both at once.
template <class Id>
bool ids_in_range(const Id* ids, int64_t n, int num_experts) {
  using U = std::make_unsigned_t<Id>;
  const U E1 = U(num_experts) + 1;
  U acc = 0;
  for (int64_t p = 0; p < n; ++p) {
    const U y = U(ids[p]) + 1;
    acc |= y | ~(y - E1);
  }
  return !(acc >> (8 * sizeof(U) - 1));
}

// Throws ArgumentError("topk_ids: token T selects expert E twice (entries [T, A] and [T, Q]) ...")
// for ids[t * k + q] = e, an expert an earlier entry A of token t selects too: the trace readers
// refuse such a token, and routing served the one expert twice.
template <class Id>
[[noreturn]] void repeated_id(const Id* ids, int64_t t, int k, int q, int64_t e) {
  int a = 0;
  while (int64_t(ids[t * k + a]) != e) ++a;
  throw ArgumentError("topk_ids: token " + std::to_string(t) + " selects expert " + std::to_string(e) + " twice (entries [" +
                      std::to_string(t) + ", " + std::to_string(a) + "] and [" + std::to_string(t) + ", " +
                      std::to_string(q) + "]); expected distinct experts within a token's top-k (-1 pads)");
}

// repeated_id for the first token whose k ids name an expert twice, -1 padding aside, for callers
// without a pass over the pairs of their own to fold it into (count_rank and route_tokens do so).
// Ids must be in range already (ids_in_range); `last` [num_experts] is scratch: the last token
// seen selecting each expert.
template <class Id>
void check_distinct_ids(const Id* ids, int64_t T, int k, int num_experts, int64_t* last) {
  if (k == 1) return;
  std::fill_n(last, num_experts, int64_t(-1));
  for (int64_t t = 0; t < T; ++t)
    for (int q = 0; q < k; ++q) {
      const int64_t e = int64_t(ids[t * k + q]);
      if (e < 0) continue;  // padding
      if (last[e] == t) repeated_id(ids, t, k, q, e);
      last[e] = t;
    }
}

// Runs fn(w, n) for w = 0 .. n - 1, worker 0 on the calling thread, the others on their own
// threads; returns when all are done. fn must not throw.
template <class Fn>
void run_workers(int n, Fn&& fn) {
  std::vector<std::jthread> others;
  others.reserve(n > 1 ? n - 1 : 0);
  for (int w = 1; w < n; ++w) others.emplace_back([&fn, w, n] { fn(w, n); });
  fn(0, n);
}

// Slots of every expert in ascending order, as flat CSR arrays: slots of e are
// slot[begin[e] .. begin[e + 1]).
struct ReplicaIndex {
  std::vector<int32_t> begin;  // [E + 1]
  std::vector<int32_t> slot;   // [S]
  explicit ReplicaIndex(const Placement& placement);
  int count(int e) const { return begin[e + 1] - begin[e]; }
};

// Bounds of replica_bounds for one expert with `total` tokens over `replicas` slots. The
// floating-point products may land a hair off an integer; the min/max with floor(q) and ceil(q)
// keeps the rounding outward, so r * lower <= total <= r * upper holds exactly.
inline void slot_bounds(int64_t total, int replicas, double slack, int64_t& lower, int64_t& upper) {
  const double q = double(total) / replicas;
  const int64_t fl = total / replicas, cl = (total + replicas - 1) / replicas;
  lower = std::min<int64_t>(int64_t(std::floor((1 - slack) * q)), fl);
  upper = std::max<int64_t>(int64_t(std::ceil((1 + slack) * q)), cl);
}

}  // namespace zepp::routing_detail
