// Count level of Zepp's locality-preferred routing (paper §4.1 equation (1), §5 "Routing").
//
// Per expert e with slots j (bounds lower <= load_j <= upper from replica_bounds) and source
// demands d_i, water-filling allocates x tokens of source i to slot j in three levels:
//   level 0: every source GPU to the slots on its own GPU (cost 0);
//   level 1: to slots on the other GPUs of its node (NVLink);
//   level 2: to slots on other nodes (NIC), spread evenly: each remote slot, least loaded first,
//            at most a share ceil(rem_i / remote slots left), then once more without the cap.
// Every allocation is x = min(cap, rem_i, upper - load_j, unmet_j + slack), where unmet_j =
// max(0, lower - load_j), remaining = unassigned demand of e, slack = remaining - sum_j unmet_j.
// The third term is the reserve rule: after the allocation the unassigned demand still covers
// every slot's unmet lower bound.
//
// Why level 2 places everything. Invariants (all start true since r*lower <= T <= r*upper):
// (a) slack >= 0 and never increases (an allocation lowers it by max(0, x - unmet_j); a cap only
//     lowers x, and x <= unmet_j + slack keeps it >= 0);
// (b) sum_j (upper - load_j) >= remaining (both drop by x);
// (c) unmet_j never increases and upper >= lower gives upper - load_j >= unmet_j.
// Levels 0 and 1 visit every (source, slot on its node) pair once. If source i still has demand
// after such a visit, x < rem_i, so x was the capacity (slot j full) or unmet_j + slack (slack
// now 0); either way unmet_j = 0 afterwards, since x >= unmet_j by (c). So when level 2 reaches
// i with rem_i > 0, its node's slots have unmet 0 and either (1) slack = 0 or (2) they are full.
// (1) slack = 0 means remaining = sum of unmet, all of it on other nodes' slots, and
//     rem_i <= remaining; with slack 0 each visit gives min(rem_i, unmet_j), so visiting all
//     remote slots places rem_i.
// (2) by (b) the remote slots have >= rem_i capacity. Each remote visit fills the slot, ends
//     rem_i, or sets slack to 0 leaving unmet_j = 0 on every slot visited so far; from then on
//     case (1)'s argument applies to the slots still ahead.
// Capped visits keep (a)-(c) and the state (1) or (2) of i's node, so the argument holds for
// level 2's second, uncapped visit of all remote slots, whatever the capped first one placed.
// Hence rem_i reaches 0 for every source; the final check only guards this proof.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

#include "routing/detail.hpp"
#include "routing/router.hpp"

// Speed (Router's layouts, router.hpp): an expert with one replica copies its demand column; one
// with r replicas reads its column once and writes its r rows of m. Level 2 keeps its order
// sorted without re-sorting (below), and once the expert's demand is placed the remaining
// visits are skipped (they would allocate nothing).
namespace zepp {
using namespace routing_detail;

void Router::route_counts(std::span<const int64_t> demand, std::span<int64_t> m) {
  if (demand.size() != size_t(E_) * G_) check_dense_demand(demand, E_, G_);  // throws, naming the size
  check_dense_counts(m, S_, G_);
  // m is written while the demand is still read: an alias would read plan entries as demand.
  check_apart(m.data(), m.size_bytes(), demand.data(), demand.size_bytes(), "counts", "demand");
  // The signs are checked in the same pass that reads the demand; the culprit is named after.
  if (!count_plan(demand.data(), size_t(G_), 1, m.data())) check_dense_demand(demand, E_, G_);
}

void Router::plan(std::span<const int64_t> counts, std::span<int64_t> m) {
  if (counts.size() != size_t(G_) * E_) check_rank_counts(counts, G_, E_);  // throws, naming the size
  if (m.size() != size_t(S_) * G_)
    throw ArgumentError("plan: has " + std::to_string(m.size()) + " entries, expected num_slots * num_gpus = " +
                        std::to_string(size_t(S_) * G_));
  check_apart(m.data(), m.size_bytes(), counts.data(), counts.size_bytes(), "plan", "counts");
  if (!count_plan(counts.data(), 1, size_t(E_), m.data())) check_rank_counts(counts, G_, E_);
}

// Rank-major counts (demand of (e, i) at demand[i * si + e]): single-replica experts copy their
// columns for 8 ranks at a time, so each of the 8 ranks' rows is read in order (8 sequential
// streams) and every expert's row of m gets 8 adjacent entries, a cache line, per visit (a
// column at a time would touch a new cache line per entry). Experts are independent: the order
// of this pass and the callers' loops does not change m. Returns the entries' sign bits ORed.
// With `load` ([S], may be null) each single-replica slot's rows are summed into it as they are
// copied (consolidate reads every slot's load; locality.cpp's water-filling keeps the others').
uint64_t Router::copy_single_rank_major(const int64_t* demand, size_t si, int64_t* m, int64_t* load) const {
  const int G = G_;
  uint64_t signs = 0;
  const int32_t* const one = single_.data();
  const int32_t* const one_slot = single_slot_.data();
  const int n1 = int(single_.size());
  if (load)
    for (int a = 0; a < n1; ++a) load[one_slot[a]] = 0;
  int i0 = 0;
  for (; i0 + 8 <= G; i0 += 8) {
    const int64_t* const src = demand + size_t(i0) * si;
    for (int a = 0; a < n1; ++a) {
      const int64_t* const col = src + one[a];
      int64_t* const dst = m + size_t(one_slot[a]) * G + i0;
      int64_t sum = 0;
      for (int x = 0; x < 8; ++x) signs |= uint64_t(dst[x] = col[x * si]), sum += dst[x];
      if (load) load[one_slot[a]] += sum;
    }
  }
  for (; i0 < G; ++i0) {
    const int64_t* const src = demand + size_t(i0) * si;
    for (int a = 0; a < n1; ++a) {
      const int64_t x = m[size_t(one_slot[a]) * G + i0] = src[one[a]];
      signs |= uint64_t(x);
      if (load) load[one_slot[a]] += x;
    }
  }
  return signs;
}

// The water-filling of the opening comment; demand of (expert e, GPU i) is d[e * se + i * si].
// Returns false, leaving m unfinished, when an entry is negative (the sign bits of every entry
// are ORed while it is read: no separate validation pass over the demand).
bool Router::count_plan(const int64_t* demand, size_t se, size_t si, int64_t* m) {
  uint64_t signs = 0;  // of single-replica experts' columns, checked at the end
  const int G = G_, gpn = gpn_;
  int64_t* const load = load_.data();
  int64_t* const rem = rem_.data();
  int32_t* const order = order_.data();
  int32_t* const touched = touched_.data();
  int64_t* const kept = gemm_.enabled() ? slot_load_.data() : nullptr;  // every slot's rows, for consolidate
  int64_t visits = 0;  // level 2's visits of remote slots (remote_visits())
  if (si != 1) signs = copy_single_rank_major(demand, si, m, kept);
  for (int e = 0; e < E_; ++e) {
    const int64_t* const d = demand + size_t(e) * se;
    const int b = rep_begin_[e], r = rep_begin_[e + 1] - b;
    const int32_t* const slot = &rep_slot_[b];
    if (r == 1) {  // the water-filling would send everything to the only slot
      if (si == 1) {  // (rank-major: copied above)
        int64_t* const row = m + size_t(slot[0]) * G;
        int64_t sum = 0;
        for (int i = 0; i < G; ++i) signs |= uint64_t(row[i] = d[i]), sum += row[i];
        if (kept) kept[slot[0]] = sum;
      }
      continue;
    }
    const int32_t* const gpu = &rep_gpu_[b];
    const int32_t* const node = &rep_node_[b];
    int64_t total = 0;
    uint64_t neg = 0;
    for (int i = 0; i < G; ++i) {
      total += rem[i] = d[i * si];
      neg |= uint64_t(rem[i]);
    }
    if (neg >> 63) return false;
    for (int j = 0; j < r; ++j) {
      std::fill_n(m + size_t(slot[j]) * G, G, 0);
      load[j] = 0;
      order[j] = j;
    }
    // The replicas' rows, for consolidate (kept as the water-filling ends; it reads them).
    auto keep_loads = [&] {
      if (kept)
        for (int j = 0; j < r; ++j) kept[slot[j]] = load[j];
    };
    if (total == 0) {
      keep_loads();
      continue;
    }
    int64_t lower, upper;
    slot_bounds(total, r, slack_, lower, upper);
    int64_t remaining = total, unmet_total = lower * r;
    auto give = [&](int i, int j, int64_t cap) {  // at most cap of source i's demand to slot j
      const int64_t unmet = std::max<int64_t>(0, lower - load[j]);
      const int64_t x = std::min({cap, rem[i], upper - load[j], unmet + (remaining - unmet_total)});
      if (x <= 0) return false;
      load[j] += x;
      rem[i] -= x;
      remaining -= x;
      unmet_total -= std::min(x, unmet);
      m[size_t(slot[j]) * G + i] += x;
      return true;
    };

    for (int j = 0; j < r; ++j) give(gpu[j], j, rem[gpu[j]]);  // level 0
    for (int j = 0; j < r && remaining > 0; ++j)                 // level 1
      for (int i = node[j] * gpn; i < (node[j] + 1) * gpn; ++i)
        if (i != gpu[j] && rem[i] > 0) give(i, j, rem[i]);
    // Level 2. All remote slots cost the same in eq. (1), so how a source's remote demand is
    // divided among them is a free choice; it is spread evenly: visiting the remote slots in
    // `order` (by load, then slot id), each gets a share ceil(rem_i / remote slots not yet
    // visited) under give()'s bounds, and a second, uncapped visit places what the bounds left.
    // Why even: the pairs of one token then find replicas of its experts on common nodes, so
    // assign_pairs sends the token to fewer nodes (merge, §4.2) and node pairs carry more even
    // flows. Measured against giving a source's whole remote demand to the slot with the most
    // room (the rule before, meant to make "few, large pieces"; Figure 9's 36 configurations,
    // sim, a100, 2 Dec 2026, planning charged at the cost model fitted to the old rule): Zepp
    // 0.88x the time in geometric mean (0.73-1.03x); Qwen3 16 nodes 16 MB inter-node bytes
    // 11,532 -> 7,744 MB, the busiest NIC 189 -> 130 MB, latency 7,777.6 -> 5,706.7 us, with the
    // same eq. (1) cost. The price is planning time: a source now costs a visit per remote
    // replica, and most tokens' pairs run assign_pairs' node choice (BM_RankLayer about 2x);
    // plan/planning.cpp charges it as measured. `order` is sorted again after each source by
    // moving the slots given to (only their loads grew), or wholly when the bounds cut shares.
    if (remaining == 0) {
      keep_loads();
      continue;
    }
    auto before = [&](int32_t a, int32_t c) { return load[a] < load[c] || (load[a] == load[c] && a < c); };
    std::sort(order, order + r, before);
    int remote = 0, remote_of = -1;  // e's slots off node remote_of (sources come node by node)
    for (int i = 0; i < G; ++i) {
      if (rem[i] == 0) continue;
      const int own = gpu_node_[i];
      if (own != remote_of) {
        remote_of = own;
        remote = 0;
        for (int j = 0; j < r; ++j) remote += node[j] != own;
      }
      int ahead = remote;  // remote slots not yet visited
      int filled = 0;      // positions in `order` the capped visits gave to, ascending
      for (int a = 0; a < r && rem[i] > 0; ++a)
        if (node[order[a]] != own) {
          const int64_t share = rem[i] <= ahead ? 1 : (rem[i] + ahead - 1) / ahead;  // no division when 1
          ++visits;
          if (give(i, order[a], share)) touched[filled++] = a;
          --ahead;
        }
      if (rem[i] == 0) {
        // Only the slots given to have larger loads: each moves right to its place, the
        // rightmost first, so `order` is sorted again (insertion: r is small, no memmove call).
        for (int f = filled - 1; f >= 0; --f) {
          int a = touched[f];
          const int32_t j = order[a];
          for (; a + 1 < r && before(order[a + 1], j); ++a) order[a] = order[a + 1];
          order[a] = j;
        }
      } else {  // the bounds cut some shares: the uncapped visits, then a whole insertion sort
        for (int a = 0; a < r && rem[i] > 0; ++a)
          if (node[order[a]] != own) ++visits, give(i, order[a], rem[i]);
        if (rem[i] != 0) throw std::logic_error("Router::route_counts: water-filling left demand unplaced");
        for (int a = 1; a < r; ++a) {
          const int32_t j = order[a];
          int b = a;
          for (; b > 0 && before(j, order[b - 1]); --b) order[b] = order[b - 1];
          order[b] = j;
        }
      }
      if (remaining == 0) break;
    }
    if (remaining != 0) throw std::logic_error("Router::route_counts: water-filling left demand unplaced");
    keep_loads();
  }
  if (signs >> 63) return false;
  remote_visits_ = visits;
  if (gemm_.enabled()) consolidate(m);
  return true;
}

}  // namespace zepp
