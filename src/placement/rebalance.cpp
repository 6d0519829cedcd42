// Stable, cost-aware rebalancing from a current placement, and placement on a cluster that lost
// GPUs or nodes (elastic EP).
//
// Moving an expert's weights into a slot costs its size in bytes: over NVLink when a GPU of the
// same node held the expert before, else over a NIC (nothing when the GPU itself held it). The
// rule, per layer, with T = (1 + balance_tolerance) x the max GPU load of a from-scratch placement
// F on the survivors (zepp.cpp):
//  1. Start from the previous placement restricted to the surviving GPUs (slots of lost GPUs and
//     their replicas are gone).
//  2. Counts: keep each expert's surviving replica count, except that (a) an expert left without a
//     replica takes one slot from the expert losing least (smallest load / (count - 1)), and (b)
//     while an expert's load per replica exceeds T (no packing can then reach T) and the budget
//     allows, it takes one the same way if that lowers the larger of the two loads per replica.
//  3. Experts with fewer replicas than before drop the copies on the nodes holding most of them,
//     heaviest GPU first; experts with more fill the freed slots, each copy onto a GPU not holding
//     it, preferring a node that held it (NVLink copy) and then the least-loaded GPU.
//  4. Pairwise-exchange local search (pack.cpp) until max load <= T: among swaps that lower the
//     most loaded GPU, the one adding the least fetch cost (NIC bytes weighted by the NVLink / NIC
//     bandwidth ratio) and fitting the remaining byte budget; first keeping every expert's
//     per-node counts as even, then, if T is still missed, without that rule.
//  5. Slots within a GPU are reordered so an expert the GPU already held keeps its old slot.
// When steps 2-4 miss T, they are tried again with the from-scratch counts (which pack within T).
// Among these candidates and F itself (slots aligned as in step 5), the result is, without a
// budget, the one moving the fewest bytes among those reaching T (F always does: so the balance is
// within balance_tolerance of F's, and rebalancing with the previous placement never moves more
// bytes than F); with a budget, the best balanced among those within it (else the fewest bytes:
// restoring lost experts may overdraw it). With expert_bytes = 0 (size unknown) every choice above
// counts expert copies instead of bytes, so NVLink is still preferred and the fewest copies move.
// Invariants kept by every step: each surviving GPU holds exactly S slots, no GPU holds an expert
// twice (a previous placement's second copy on a GPU is dropped first), every expert keeps >= 1
// replica (steps 2-3 give each expert exactly its count, step 4 preserves counts, see pack.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "placement/check.hpp"
#include "placement/pack.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"

namespace zepp {
using namespace placement_detail;
namespace {

// What the previous placement held, per surviving GPU and per node: the fetch cost of a copy.
struct PrevHoldings {
  size_t E = 0;
  std::vector<char> gpu, node;  // [G' * E], [N * E]
  std::vector<int> node_of;     // [G']
  double bytes = 0, nic_weight = 1;
  double fetch_bytes(int g, int e) const { return gpu[g * E + e] ? 0.0 : bytes; }
  double fetch_cost(int g, int e) const {
    if (gpu[g * E + e]) return 0.0;
    return node[node_of[g] * E + e] ? bytes : bytes * nic_weight;
  }
  SwapCost tables() const {
    SwapCost c{E, std::vector<double>(gpu.size()), std::vector<double>(gpu.size())};
    for (size_t g = 0; g < node_of.size(); ++g)
      for (size_t e = 0; e < E; ++e) c.cost[g * E + e] = fetch_cost(int(g), int(e)), c.bytes[g * E + e] = fetch_bytes(int(g), int(e));
    return c;
  }
};

// GPU rows of the final placement: experts the GPU held before keep their previous slot.
std::vector<int32_t> aligned_rows(const Packing& pk, const std::vector<std::vector<int>>& prev_rows, int S) {
  std::vector<int32_t> out;
  for (size_t g = 0; g < pk.experts.size(); ++g) {
    std::vector<int> row(S, -1), rest;
    for (int e : pk.experts[g]) {
      int at = -1;  // e's previous slot on this GPU (at most one: no GPU holds an expert twice here)
      if (!prev_rows.empty())
        for (int s = 0; s < S && at < 0; ++s)
          if (prev_rows[g][s] == e && row[s] < 0) at = s;
      if (at >= 0)
        row[at] = e;
      else
        rest.push_back(e);
    }
    for (int s = 0, k = 0; s < S; ++s)
      if (row[s] < 0) row[s] = rest[k++];
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

MoveReport moves_between(const std::vector<int32_t>& rows, const std::vector<std::vector<int>>& prev_rows,
                         const PrevHoldings& held, int S) {
  MoveReport m;
  for (size_t g = 0; g < prev_rows.size(); ++g)
    for (int s = 0; s < S; ++s) {
      const int e = rows[g * S + s];
      if (e == prev_rows[g][s]) continue;
      ++m.slots_changed;
      if (held.gpu[g * held.E + e])
        ++m.local;
      else if (held.node[held.node_of[g] * held.E + e])
        ++m.nvlink, m.nvlink_bytes += held.bytes;
      else
        ++m.nic, m.nic_bytes += held.bytes;
    }
  return m;
}

double imbalance_of(const Packing& pk) {
  const double total = std::accumulate(pk.load.begin(), pk.load.end(), 0.0);
  return total > 0 ? pk.max_load() * pk.load.size() / total : 1.0;
}

}  // namespace

Rebalanced rebalance_zepp(const std::vector<double>& load, const Topology& topo, int slots_per_gpu,
                          const RebalanceOptions& opt) {
  check_topology(topo);
  check_load(load, false);
  const int E = int(load.size()), G = topo.num_gpus(), S = slots_per_gpu;
  require(S >= 1 && S <= E, "slots_per_gpu",
          "must be in [1, E = " + std::to_string(E) + "] (an expert holds at most one replica per GPU), got " +
              std::to_string(S));
  require(std::isfinite(opt.expert_bytes) && opt.expert_bytes >= 0, "expert_bytes", "must be finite and >= 0");
  require(std::isfinite(opt.max_moved_bytes), "max_moved_bytes", "must be finite (< 0: no budget)");
  require(opt.balance_tolerance >= 0 && opt.balance_tolerance <= 1, "balance_tolerance", "must be in [0, 1]");
  std::vector<char> failed(G, 0);
  for (int g : opt.failed_gpus) {
    require(g >= 0 && g < G, "failed_gpus", "GPU " + std::to_string(g) + " is outside [0, " + std::to_string(G) + ")");
    require(!failed[g], "failed_gpus", "GPU " + std::to_string(g) + " is listed twice");
    failed[g] = 1;
  }
  Rebalanced out;
  Bins bins;
  bins.slots = S;
  std::vector<int> node_label(topo.nodes, -1);  // surviving nodes renumbered densely
  for (int g = 0; g < G; ++g)
    if (!failed[g]) {
      int& n = node_label[topo.node_of(g)];
      if (n < 0) n = *std::max_element(node_label.begin(), node_label.end()) + 1;
      out.survivors.push_back(g);
      bins.node.push_back(n);
    }
  const int Gs = bins.num_gpus();
  require(int64_t(Gs) * S >= E, "failed_gpus",
          "leaves " + std::to_string(Gs) + " GPUs x " + std::to_string(S) + " slots, too few for the " +
              std::to_string(E) + " experts");
  if (!opt.previous.empty()) {
    require(opt.previous.size() == size_t(G) * S, "previous",
            "has " + std::to_string(opt.previous.size()) + " slots, expected num_gpus x slots_per_gpu = " +
                std::to_string(int64_t(G) * S));
    // A placement made under the same loss holds -1 in the lost GPUs' slots (this function's
    // result, widened back to every GPU); only the survivors' slots are read below.
    std::vector<char> held(E, 0);
    for (size_t p = 0; p < opt.previous.size(); ++p) {
      const int32_t e = opt.previous[p];
      if (e == -1 && failed[p / S]) continue;
      require(e >= 0 && e < E, "previous",
              "slot " + std::to_string(p) + " holds expert " + std::to_string(e) + ", expected [0, " + std::to_string(E) +
                  ")" + (e == -1 ? " (-1 only in a lost GPU's slots; GPU " + std::to_string(p / S) + " is not lost)" : ""));
      held[e] = 1;
    }
    const auto missing = std::find(held.begin(), held.end(), 0);
    require(missing == held.end(), "previous",
            "expert " + std::to_string(missing - held.begin()) + " has no slot; a placement holds every expert of [0, " +
                std::to_string(E) + ")");
  }

  std::vector<double> w_fresh;
  const Packing fresh = fresh_packing(bins, load, w_fresh);
  out.fresh_imbalance = imbalance_of(fresh);
  out.placement = Placement{Gs, E, S, {}};
  if (opt.previous.empty()) {
    out.placement.phy2log = aligned_rows(fresh, {}, S);
    out.imbalance = out.fresh_imbalance;
    out.used_fresh = true;
    return out;
  }

  // The previous placement on the survivors and what each GPU and node held.
  const int N = bins.num_nodes();
  std::vector<std::vector<int>> prev_rows(Gs);
  PrevHoldings held;
  held.E = size_t(E);
  held.gpu.assign(size_t(Gs) * E, 0);
  held.node.assign(size_t(N) * E, 0);
  held.node_of = bins.node;
  held.bytes = opt.expert_bytes > 0 ? opt.expert_bytes : 1.0;  // size unknown: count expert copies
  if (topo.nvlink_bw > 0 && topo.nic_bw > 0) held.nic_weight = std::max(1.0, topo.nvlink_bw / topo.nic_bw);
  std::vector<int> cnt(E, 0);
  std::vector<std::vector<char>> keep(Gs, std::vector<char>(S, 1));  // a second copy on a GPU is dropped
  for (int i = 0; i < Gs; ++i)
    for (int s = 0; s < S; ++s) {
      const int e = opt.previous[size_t(out.survivors[i]) * S + s];
      prev_rows[i].push_back(e);
      if (held.gpu[size_t(i) * E + e]) {
        keep[i][s] = 0;
        continue;
      }
      held.gpu[size_t(i) * E + e] = 1;
      held.node[size_t(bins.node[i]) * E + e] = 1;
      ++cnt[e];
    }
  const SwapCost swap_cost = held.tables();
  const double target = fresh.max_load() * (1 + opt.balance_tolerance);
  const bool budgeted = opt.max_moved_bytes >= 0 && opt.expert_bytes > 0;  // zero-size moves fit any budget
  double budget = budgeted ? opt.max_moved_bytes : std::numeric_limits<double>::infinity();
  const double budget_start = budget;

  // Step 2: counts. Each change moves at least one expert's weights (>= expert_bytes).
  const std::vector<int> prev_cnt = cnt;
  const auto donor_for = [&](int e) {
    int best = -1;
    for (int f = 0; f < E; ++f)
      if (f != e && cnt[f] > 1 && (best < 0 || load[f] / (cnt[f] - 1) < load[best] / (cnt[best] - 1))) best = f;
    return best;
  };
  for (int64_t free = int64_t(Gs) * S - std::accumulate(cnt.begin(), cnt.end(), int64_t(0)); free > 0; --free) {
    int e = -1;  // slots freed by dropped duplicates: experts without a replica, then water-filling
    for (int x = 0; x < E; ++x)
      if (cnt[x] == 0) {
        e = x;
        break;
      } else if (cnt[x] < Gs && (e < 0 || load[x] / cnt[x] > load[e] / cnt[e])) {
        e = x;
      }
    ++cnt[e];
  }
  for (int e = 0; e < E; ++e)
    if (cnt[e] == 0) {
      const int f = donor_for(e);  // exists: sum cnt = G' * S >= E with an expert at 0
      ++cnt[e], --cnt[f];
      budget -= opt.expert_bytes;  // mandatory: may overdraw the budget
    }
  for (int guard = 0; guard < Gs * S; ++guard) {
    int e = -1;
    for (int x = 0; x < E; ++x)
      if (cnt[x] < Gs && load[x] / cnt[x] > target && (e < 0 || load[x] / cnt[x] > load[e] / cnt[e])) e = x;
    if (e < 0 || budget < opt.expert_bytes) break;
    const int f = donor_for(e);
    if (f < 0 || load[f] / (cnt[f] - 1) >= load[e] / cnt[e]) break;
    ++cnt[e], --cnt[f];
    budget -= opt.expert_bytes;
  }
  std::vector<double> w(E);
  for (int e = 0; e < E; ++e) w[e] = load[e] / cnt[e];

  // Steps 3-4 for counts `c`; false when the fill finds no GPU.
  const auto repair = [&](const std::vector<int>& c, double left, Packing& pk, std::vector<double>& wc) {
    wc.resize(E);
    for (int e = 0; e < E; ++e) wc[e] = load[e] / c[e];
    std::vector<std::vector<char>> kept = keep;
    std::vector<double> gpu_load(Gs, 0.0);
    std::vector<int> node_copies(size_t(N) * E, 0);
    for (int i = 0; i < Gs; ++i)
      for (int s = 0; s < S; ++s)
        if (kept[i][s]) gpu_load[i] += wc[prev_rows[i][s]], ++node_copies[size_t(bins.node[i]) * E + prev_rows[i][s]];
    for (int e = 0; e < E; ++e)
      for (int drop = prev_cnt[e] - c[e]; drop > 0; --drop) {
        int bi = -1, bs = -1;
        for (int i = 0; i < Gs; ++i)
          for (int s = 0; s < S; ++s) {
            if (prev_rows[i][s] != e || !kept[i][s]) continue;
            const auto before = [&](int x, int y) {  // x's copy is dropped before y's
              const int cx = node_copies[size_t(bins.node[x]) * E + e], cy = node_copies[size_t(bins.node[y]) * E + e];
              return cx > cy || (cx == cy && gpu_load[x] > gpu_load[y]);
            };
            if (bi < 0 || before(i, bi)) bi = i, bs = s;
          }
        kept[bi][bs] = 0;
        gpu_load[bi] -= wc[e];
        --node_copies[size_t(bins.node[bi]) * E + e];
      }
    pk = Packing(bins, E);
    std::vector<int> have(E, 0);
    for (int i = 0; i < Gs; ++i)
      for (int s = 0; s < S; ++s)
        if (kept[i][s]) pk.add(bins, i, prev_rows[i][s], wc[prev_rows[i][s]]), ++have[prev_rows[i][s]];
    std::vector<int> order(E);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return wc[x] > wc[y]; });
    for (int e : order)
      for (; have[e] < c[e]; ++have[e]) {
        int best = -1;
        double best_cost = 0;
        for (int i = 0; i < Gs; ++i) {
          if (int(pk.experts[i].size()) == S || pk.holds[size_t(i) * E + e]) continue;
          const double f = held.fetch_cost(i, e);
          if (best < 0 || f < best_cost || (f == best_cost && pk.load[i] < pk.load[best])) best = i, best_cost = f;
        }
        if (best < 0) return false;
        pk.add(bins, best, e, wc[e]);
      }
    left = std::max(left, 0.0);
    refine_swaps(bins, wc, pk, true, &swap_cost, target, budgeted ? &left : nullptr);
    if (pk.max_load() > target)  // stuck with the node rule: any improving swap
      refine_swaps(bins, wc, pk, false, &swap_cost, target, budgeted ? &left : nullptr);
    return true;
  };

  struct Candidate {
    std::vector<int32_t> rows;
    MoveReport moves;
    double max = 0, imbalance = 0, bytes = 0;
    bool fresh = false;
  };
  std::vector<Candidate> cands;
  const auto consider = [&](const Packing& pk, bool is_fresh) {
    Candidate c{aligned_rows(pk, prev_rows, S), {}, pk.max_load(), imbalance_of(pk), 0, is_fresh};
    c.moves = moves_between(c.rows, prev_rows, held, S);
    c.bytes = c.moves.nvlink_bytes + c.moves.nic_bytes;
    cands.push_back(std::move(c));
  };
  Packing pk(bins, E);
  std::vector<double> wc;
  if (repair(cnt, budget, pk, wc)) consider(pk, false);
  std::vector<int> fresh_cnt(E, 0);  // the from-scratch counts, known to pack within T
  for (const auto& row : fresh.experts)
    for (int e : row) ++fresh_cnt[e];
  if (fresh_cnt != cnt && (cands.empty() || cands[0].max > target)) {
    int changes = 0;
    for (int e = 0; e < E; ++e) changes += std::max(0, fresh_cnt[e] - prev_cnt[e]);
    if (repair(fresh_cnt, budget_start - changes * opt.expert_bytes, pk, wc)) consider(pk, false);
  }
  consider(fresh, true);
  // Unbudgeted: the fewest bytes among those reaching T (the fresh one always does). Budgeted: the
  // best balance among those within the budget (or, when none is, the fewest bytes).
  const auto better = [&](const Candidate& x, const Candidate& y) {
    if (!budgeted) {
      const bool ox = x.max <= target, oy = y.max <= target;
      if (ox != oy) return ox;
      return x.bytes < y.bytes || (x.bytes == y.bytes && x.moves.slots_changed < y.moves.slots_changed);
    }
    const bool ix = x.bytes <= opt.max_moved_bytes, iy = y.bytes <= opt.max_moved_bytes;
    if (ix != iy) return ix;
    if (!ix) return x.bytes < y.bytes;
    return x.max < y.max || (x.max == y.max && x.bytes < y.bytes);
  };
  const Candidate* best = &cands[0];
  for (const Candidate& c : cands)
    if (better(c, *best)) best = &c;
  out.placement.phy2log = best->rows;
  out.moves = best->moves;
  if (opt.expert_bytes == 0) out.moves.nvlink_bytes = out.moves.nic_bytes = 0;  // counted in copies above
  out.imbalance = best->imbalance;
  out.used_fresh = best->fresh;
  return out;
}

}  // namespace zepp
