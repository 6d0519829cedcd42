// Replica counts and packing for Zepp's placement (paper §4.1) and its rebalancing.
//
// Water-filling counts. Each slot beyond the first replica goes to the expert with the highest
// demand per replica. Invariant: after every step, for all experts e with count c_e > 1 and all
// f below the cap, load_e / (c_e - 1) >= load_f / c_f (the slot e took last was worth at least
// f's next one). Hence max_e load_e / c_e is the smallest any count vector with the same total
// and cap reaches: lowering it below the greedy's value M would need every expert with
// load_e / c_e = M to gain a replica, and each can only take one from an expert whose load per
// replica would then be >= M (the invariant). So max(mean, max_e load_e / c_e) is a lower bound
// on every placement's max GPU load with this slot budget and one copy per GPU.
//
// LPT packing. Experts in descending weight w_e = load_e / c_e (ties: lower id), each expert's
// c_e replicas onto distinct GPUs with a free slot, one at a time onto the least-loaded one
// (spread: first the nodes holding fewest of its replicas, so an expert with c_e <= N lands on
// c_e distinct nodes and a hotter one as evenly as the nodes' free GPUs allow).
// The slot constraint (exactly S per GPU, one copy per GPU) can make a greedy choice a dead end;
// the packer keeps this invariant:
//   (R) the experts not yet placed, with their counts, can be laid onto the GPUs' free slots,
//       one copy per GPU (a bipartite degree sequence with a simple realization).
// (R) holds at the start: sum c = G * S and c_e <= G satisfy Gale–Ryser's condition
// sum_{i<=k} c_(i) <= sum_g min(S, k) = G * min(S, k) for counts sorted descending.
// Before committing an expert's GPUs the packer checks Gale–Ryser on what remains; when the LPT
// choice fails it instead lays the expert onto the c_e GPUs with the most free slots, which keeps
// (R) by Kleitman–Wang's exchange: in any realization where e uses GPU h but not GPU g with
// free_g >= free_h, g has a neighbour f that h lacks (it has more free slots and not e), and
// swapping e–h, f–g for e–g, f–h keeps every degree. Since (R) holds for the expert about to be
// placed, c_e distinct GPUs with a free slot exist, so the packer never gets stuck, every GPU ends
// with exactly S replicas and no GPU holds an expert twice.
//
// Local search. Repeatedly, for the most loaded GPU g, the swap of one of its replicas a with a
// lighter replica b on another GPU h (neither GPU holding the other's expert) that minimizes
// max(new load of g, new load of h) < load of g is applied. Each swap lowers g's load and leaves h
// below g's old load, so the loads sorted descending decrease lexicographically: the search
// terminates (a step cap only guards it) and never raises the maximum. Slot counts, one copy per
// GPU and every expert's replica count are unchanged. With spread a swap across nodes moves a
// replica only from a node holding more copies of its expert to one holding fewer, so no
// expert's per-node counts become less even (max - min never grows).
//
// Search speed (issue 21: the same swaps as a scan of every (i, h, j), found in a fraction of the
// time). The scan keeps the first candidate of least key (extra cost, peak, across nodes) in
// (i, h, j) order, i.e. the least (key, i, h, j); the search may visit candidates in any order and
// skip any that cannot have that least tuple, so it applies the same swap. What it skips:
//  - b outside the weight window. A swap needs w_b < w_a and L_h + w_a - w_b < L_g - eps. With
//    w_b <= floor = L_h + w_a - L_g - m, m = 1e-9 (L_g + max w on g), the exact L_h + w_a - w_b is
//    >= L_g + m; every value involved is <= 2 L_g + 2 w_a, so rounding (a few ulp, ~1e-15 of
//    that) cannot bring the computed sum below L_g - eps. h's replicas sorted by weight give the
//    window by two cursors, both non-decreasing in w_a.
//  - whole GPUs h by lower bounds. Any swap with h has peak = max(L_g - d, L_h + d) >=
//    (L_g + L_h) / 2, and extra = (c(h,a) - c(g,a)) + (c(g,b) - c(h,b)) >= min_a + min_b of the
//    two brackets (a over g's replicas h lacks). Computed values differ from exact ones by a few
//    ulp, far below the tolerances 1e-12 x (largest cost) and 1e-12 x L_g. With h in ascending
//    (extra bound, peak bound), once a bound exceeds the best's extra, or equals it (within the
//    tolerance) while the peak bound exceeds the best's peak, every later h's does too.
//  - a replica a whose bracket plus h's least b bracket exceeds the best's extra, and candidates
//    whose extra or (at equal extra) peak already exceeds the best's: the best only improves, so
//    they can neither beat nor tie it.
#include "placement/pack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>

namespace zepp::placement_detail {

std::vector<int> water_fill_counts(const std::vector<double>& load, int slots, int cap) {
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

int Bins::num_nodes() const { return node.empty() ? 0 : *std::max_element(node.begin(), node.end()) + 1; }

Packing::Packing(const Bins& bins, int num_experts)
    : experts(bins.num_gpus()),
      load(bins.num_gpus(), 0.0),
      holds(size_t(bins.num_gpus()) * num_experts, 0),
      node_copies(size_t(bins.num_nodes()) * num_experts, 0) {}

void Packing::add(const Bins& bins, int gpu, int expert, double weight) {
  const size_t E = holds.size() / experts.size();
  experts[gpu].push_back(expert);
  load[gpu] += weight;
  holds[gpu * E + expert] = 1;
  ++node_copies[bins.node[gpu] * E + expert];
}

double Packing::max_load() const { return load.empty() ? 0.0 : *std::max_element(load.begin(), load.end()); }

namespace {

// Gale–Ryser: can experts with counts `remaining` (histogram: remaining[c] experts need c copies)
// be laid onto GPUs with free slots, one copy per GPU? above[j]: GPUs with more than j free
// slots (j < S). Sum of counts equals sum of free slots.
bool realizable(const std::vector<int>& remaining, const std::vector<int>& above, int S) {
  int64_t lhs = 0, rhs = 0;
  int k = 0;
  for (int c = int(remaining.size()) - 1; c >= 1 && k < S; --c)
    for (int n = 0; n < remaining[c] && k < S; ++n) {
      lhs += c;
      rhs += above[k++];
      if (lhs > rhs) return false;
    }
  return true;  // for k >= S the right side is every free slot, which equals every count
}

}  // namespace

Packing pack_lpt(const Bins& bins, const std::vector<double>& w, const std::vector<int>& count, bool spread) {
  const int G = bins.num_gpus(), E = int(w.size()), S = bins.slots;
  Packing pk(bins, E);
  std::vector<int> order;
  std::vector<int> remaining(G + 1, 0);
  for (int e = 0; e < E; ++e)
    if (count[e] > 0) {
      order.push_back(e);
      ++remaining[count[e]];
    }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  std::vector<int> free(G, S), chosen, node_cnt(bins.num_nodes());
  std::vector<int> above(S, G);  // above[j]: GPUs with more than j free slots
  const auto take = [&](int g) { --above[--free[g]]; };
  const auto give = [&](int g) { ++above[free[g]++]; };
  std::vector<char> picked(G);
  for (int e : order) {
    const int c = count[e];
    --remaining[c];
    // LPT choice: c distinct GPUs, each the least loaded (after the node rule) among those left.
    chosen.clear();
    std::fill(picked.begin(), picked.end(), 0);
    std::fill(node_cnt.begin(), node_cnt.end(), 0);
    for (int r = 0; r < c; ++r) {
      int best = -1;
      for (int g = 0; g < G; ++g) {
        if (free[g] == 0 || picked[g]) continue;
        if (best < 0) {
          best = g;
          continue;
        }
        const int dn = spread ? node_cnt[bins.node[g]] - node_cnt[bins.node[best]] : 0;
        if (dn < 0 || (dn == 0 && pk.load[g] < pk.load[best])) best = g;
      }
      chosen.push_back(best);  // exists by (R)
      picked[best] = 1;
      ++node_cnt[bins.node[best]];
    }
    for (int g : chosen) take(g);
    if (!realizable(remaining, above, S)) {  // Kleitman–Wang choice keeps (R)
      for (int g : chosen) give(g);
      std::vector<int> by_free(G);
      std::iota(by_free.begin(), by_free.end(), 0);
      std::stable_sort(by_free.begin(), by_free.end(), [&](int a, int b) {
        return free[a] > free[b] || (free[a] == free[b] && pk.load[a] < pk.load[b]);
      });
      chosen.assign(by_free.begin(), by_free.begin() + c);
      for (int g : chosen) take(g);
    }
    for (int g : chosen) pk.add(bins, g, e, w[e]);
  }
  return pk;
}

namespace {

// Each GPU's slot positions by ascending weight of the expert they hold, and those weights, so the
// search finds the replicas in a weight window (the opening comment).
struct ByWeight {
  int stride = 0;
  std::vector<int> pos;    // [G * stride]: slot positions of GPU g, by ascending weight
  std::vector<double> wt;  // [G * stride]: their weights
  ByWeight(const Packing& pk, const std::vector<double>& w) {
    for (const auto& row : pk.experts) stride = std::max(stride, int(row.size()));
    pos.resize(pk.experts.size() * stride), wt.resize(pos.size());
    for (size_t g = 0; g < pk.experts.size(); ++g) update(pk, w, int(g));
  }
  void update(const Packing& pk, const std::vector<double>& w, int g) {
    const std::vector<int>& row = pk.experts[g];
    int* p = &pos[size_t(g) * stride];
    std::iota(p, p + row.size(), 0);
    std::sort(p, p + row.size(), [&](int x, int y) { return w[row[x]] < w[row[y]]; });
    for (size_t k = 0; k < row.size(); ++k) wt[size_t(g) * stride + k] = w[row[p[k]]];
  }
};

}  // namespace

void refine_swaps(const Bins& bins, const std::vector<double>& w, Packing& pk, bool spread, const SwapCost* cost,
                  double target, double* budget) {
  const int G = bins.num_gpus();
  const size_t E = w.size();
  const auto copies = [&](int node, int e) { return pk.node_copies[node * E + e]; };
  ByWeight by(pk, w);
  const double cost_max = cost && !cost->cost.empty() ? *std::max_element(cost->cost.begin(), cost->cost.end()) : 0;
  struct Bound {
    double extra, peak;  // lower bounds of any swap with GPU h
    int h;
  };
  std::vector<Bound> bounds;
  std::vector<double> move_to(size_t(G) * by.stride);  // [h][i]: cost of h taking g's replica i, less g's
  std::vector<double> take_back(G);                     // [h]: least cost of g taking one of h's, less h's
  for (int step = 0, cap = 8 * G * bins.slots + 64; step < cap; ++step) {
    const int g = int(std::max_element(pk.load.begin(), pk.load.end()) - pk.load.begin());
    const double Lg = pk.load[g];
    if (Lg <= target) return;
    const double eps = 1e-12 * std::max(Lg, 1.0);
    struct Best {
      int i = -1, h = -1, j = -1;
      double extra = 0, bytes = 0, peak = 0;
      bool cross = false;
    } best;
    // GPUs h by lower bounds on the swaps they offer (the opening comment proves them): once one
    // cannot beat or tie the best swap found, no later one can.
    const int ng = bins.node[g], ng_size = int(pk.experts[g].size());
    const int* g_pos = &by.pos[size_t(g) * by.stride];
    const double margin = 1e-9 * (Lg + (ng_size ? by.wt[size_t(g) * by.stride + ng_size - 1] : 0.0));
    bounds.clear();
    for (int h = 0; h < G; ++h) {
      if (h == g) continue;
      double extra = 0;
      if (cost) {
        double x = std::numeric_limits<double>::infinity(), y = x;
        for (int i = 0; i < ng_size; ++i) {
          const int a = pk.experts[g][i];
          double& m = move_to[size_t(h) * by.stride + i];
          m = cost->fetch_cost(h, a) - cost->fetch_cost(g, a);
          if (!pk.holds[h * E + a]) x = std::min(x, m);
        }
        for (int b : pk.experts[h]) y = std::min(y, cost->fetch_cost(g, b) - cost->fetch_cost(h, b));
        if (std::isinf(x) || std::isinf(y)) continue;  // no replica of g can move to h
        extra = x + y;
        take_back[h] = y;
      }
      bounds.push_back({extra, (Lg + pk.load[h]) * 0.5, h});
    }
    std::sort(bounds.begin(), bounds.end(), [](const Bound& x, const Bound& y) {
      return x.extra < y.extra || (x.extra == y.extra && x.peak < y.peak);
    });
    const double tol_extra = 1e-12 * cost_max, tol_peak = 1e-12 * Lg;
    for (const Bound& bound : bounds) {
      if (best.i >= 0 && (bound.extra - tol_extra > best.extra ||
                          (bound.extra - tol_extra >= best.extra && bound.peak - tol_peak > best.peak)))
        break;
      const int h = bound.h, nh = bins.node[h], n = int(pk.experts[h].size());
      const double* wt = &by.wt[size_t(h) * by.stride];
      // For g's replicas a by ascending weight, h's replicas b with L[h] + w[a] - L[g] - margin <
      // w[b] < w[a]: the others fail the first two tests below (the opening comment proves it).
      // Both bounds grow with w[a], so two cursors sweep h's replicas once.
      int lo = 0, hi = 0;
      for (int r = 0; r < ng_size; ++r) {
        const int i = g_pos[r], a = pk.experts[g][i];
        if (pk.holds[h * E + a]) continue;
        if (cost && best.i >= 0 && move_to[size_t(h) * by.stride + i] + take_back[h] - tol_extra > best.extra) continue;
        const double wa = w[a], floor = pk.load[h] + wa - Lg - margin;
        while (hi < n && wt[hi] < wa) ++hi;
        while (lo < hi && wt[lo] <= floor) ++lo;
        for (int k = lo; k < hi; ++k) {
          const int j = by.pos[size_t(h) * by.stride + k], b = pk.experts[h][j];
          if (w[b] >= w[a] || pk.holds[g * E + b]) continue;
          // Tests in order of cost; one a candidate fails excludes it, and one that cannot beat or
          // tie the best so far never will (the best only improves).
          const double extra =
              cost ? cost->fetch_cost(h, a) + cost->fetch_cost(g, b) - cost->fetch_cost(g, a) - cost->fetch_cost(h, b)
                   : 0.0;
          if (best.i >= 0 && extra > best.extra) continue;
          const double peak = std::max(Lg - w[a] + w[b], pk.load[h] + w[a] - w[b]);
          if (peak >= Lg - eps || (best.i >= 0 && extra == best.extra && peak > best.peak)) continue;
          if (spread && nh != ng && !(copies(nh, a) < copies(ng, a) && copies(ng, b) < copies(nh, b))) continue;
          double bytes = 0;
          if (cost) {
            bytes = cost->fetch_bytes(h, a) + cost->fetch_bytes(g, b) - cost->fetch_bytes(g, a) -
                    cost->fetch_bytes(h, b);
            if (budget && bytes > *budget) continue;
          }
          const bool cross = nh != ng;
          // Cheapest first (cost), then the lowest resulting peak, then within a node; among equals
          // the first in (i, h, j) order, the order of the plain scan over g's slots, GPUs, h's slots.
          const bool better = best.i < 0 || extra < best.extra ||
                              (extra == best.extra && (peak < best.peak || (peak == best.peak && !cross && best.cross)));
          const bool tie_first = extra == best.extra && peak == best.peak && cross == best.cross &&
                                 std::tie(i, h, j) < std::tie(best.i, best.h, best.j);
          if (better || tie_first) best = {i, h, j, extra, bytes, peak, cross};
        }
      }
    }
    if (best.i < 0) return;
    const int h = best.h, a = pk.experts[g][best.i], b = pk.experts[h][best.j];
    pk.experts[g][best.i] = b;
    pk.experts[h][best.j] = a;
    pk.load[g] += w[b] - w[a];
    pk.load[h] += w[a] - w[b];
    pk.holds[g * E + a] = 0, pk.holds[g * E + b] = 1;
    pk.holds[h * E + b] = 0, pk.holds[h * E + a] = 1;
    --pk.node_copies[ng * E + a], ++pk.node_copies[bins.node[h] * E + a];
    --pk.node_copies[bins.node[h] * E + b], ++pk.node_copies[ng * E + b];
    by.update(pk, w, g), by.update(pk, w, h);
    if (budget) *budget -= best.bytes;
  }
}

void spread_swaps(const Bins& bins, const std::vector<double>& w, Packing& pk) {
  const int G = bins.num_gpus();
  const size_t E = w.size();
  const double cap = pk.max_load();
  const auto copies = [&](int node, int e) { return pk.node_copies[node * E + e]; };
  for (bool changed = true; changed;) {
    changed = false;
    for (int g = 0; g < G; ++g)
      for (size_t i = 0; i < pk.experts[g].size(); ++i)
        for (int h = 0; h < G; ++h) {
          const int a = pk.experts[g][i], ng = bins.node[g], nh = bins.node[h];
          if (ng == nh || pk.holds[h * E + a] || copies(nh, a) + 1 >= copies(ng, a)) continue;
          for (size_t j = 0; j < pk.experts[h].size(); ++j) {
            const int b = pk.experts[h][j];
            if (pk.holds[g * E + b] || copies(ng, b) >= copies(nh, b)) continue;
            if (pk.load[g] - w[a] + w[b] > cap || pk.load[h] + w[a] - w[b] > cap) continue;
            pk.experts[g][i] = b, pk.experts[h][j] = a;
            pk.load[g] += w[b] - w[a], pk.load[h] += w[a] - w[b];
            pk.holds[g * E + a] = 0, pk.holds[g * E + b] = 1, pk.holds[h * E + b] = 0, pk.holds[h * E + a] = 1;
            --pk.node_copies[ng * E + a], ++pk.node_copies[nh * E + a];
            --pk.node_copies[nh * E + b], ++pk.node_copies[ng * E + b];
            changed = true;
            break;
          }
        }
  }
}

}  // namespace zepp::placement_detail
