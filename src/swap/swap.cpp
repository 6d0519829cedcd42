#include "swap/swap.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace zepp {
namespace {

void check_demand(const std::vector<double>& demand, const Placement& placement) {
  placement.validate("placement");
  require(demand.size() == size_t(placement.num_experts), "demand",
          "has " + std::to_string(demand.size()) + " entries, expected one per expert (" +
              std::to_string(placement.num_experts) + ")");
  for (size_t e = 0; e < demand.size(); ++e)
    require(std::isfinite(demand[e]) && demand[e] >= 0, "demand",
            "expert " + std::to_string(e) + " has demand " + std::to_string(demand[e]) + ", expected finite >= 0");
}

// Load per replica of each expert (demand spread evenly over its replicas).
std::vector<double> per_replica(const std::vector<double>& demand, const Placement& placement) {
  const auto cnt = placement.logcnt();
  std::vector<double> w(demand.size());
  for (size_t e = 0; e < demand.size(); ++e) w[e] = demand[e] / cnt[e];
  return w;
}

bool holds(const Placement& p, int gpu, int32_t expert) {
  const auto first = p.phy2log.begin() + ptrdiff_t(gpu) * p.slots_per_gpu;
  return std::find(first, first + p.slots_per_gpu, expert) != first + p.slots_per_gpu;
}

struct Candidate {
  double new_max;
  int32_t a, b;
};

// The swap between GPUs h and l that minimises their larger load afterwards (ties: lowest slots).
bool best_swap(const Placement& p, const std::vector<double>& ws, const std::vector<double>& load, int h, int l,
               Candidate& best) {
  bool found = false;
  const int S = p.slots_per_gpu;
  for (int32_t a = h * S; a < (h + 1) * S; ++a) {
    for (int32_t b = l * S; b < (l + 1) * S; ++b) {
      const int32_t x = p.phy2log[a], y = p.phy2log[b];
      if (x == y || holds(p, l, x) || holds(p, h, y)) continue;
      const double delta = ws[a] - ws[b];
      const double new_max = std::max(load[h] - delta, load[l] + delta);
      if (!found || new_max < best.new_max) best = {new_max, a, b}, found = true;
    }
  }
  return found;
}

// Experts a GPU holds both before and after keep their slots (a slot relabel within a GPU
// moves no weights): only experts new to a GPU change slots.
void keep_resident(const Placement& before, Placement& after) {
  const int S = before.slots_per_gpu;
  for (int g = 0; g < before.num_gpus; ++g) {
    const auto first = size_t(g) * S;
    std::vector<int32_t> left(after.phy2log.begin() + first, after.phy2log.begin() + first + S), slot(S, -1);
    for (int k = 0; k < S; ++k) {
      const auto it = std::find(left.begin(), left.end(), before.phy2log[first + k]);
      if (it != left.end()) slot[k] = *it, left.erase(it);
    }
    for (int k = 0, j = 0; k < S; ++k)
      if (slot[k] < 0) slot[k] = left[j++];
    std::copy(slot.begin(), slot.end(), after.phy2log.begin() + first);
  }
}

// For every slot whose expert changed, a source GPU on the same node that gave that expert up.
std::vector<WeightMove> weight_moves(const Placement& before, const Placement& after, int gpus_per_node) {
  std::vector<WeightMove> moves;
  const int S = before.slots_per_gpu;
  const int slots_per_node = S * gpus_per_node;
  for (int32_t s = 0; s < after.num_slots(); ++s) {
    const int32_t e = after.phy2log[s];
    if (before.phy2log[s] == e) continue;
    // Gained slots and given-up slots of expert e pair up in slot order within the node (swaps
    // keep each node's multiset of experts): the k-th gain takes the k-th give-up.
    const int32_t node_first = s / slots_per_node * slots_per_node;
    int rank = 0;
    for (int32_t t = node_first; t < s; ++t) rank += after.phy2log[t] == e && before.phy2log[t] != e;
    for (int32_t t = node_first; t < node_first + slots_per_node; ++t) {
      if (before.phy2log[t] == e && after.phy2log[t] != e && rank-- == 0) {
        moves.push_back({s, t / S});
        break;
      }
    }
  }
  return moves;
}

}  // namespace

std::vector<double> estimate_gpu_load(const std::vector<double>& demand, const Placement& placement) {
  check_demand(demand, placement);
  const auto w = per_replica(demand, placement);
  std::vector<double> load(placement.num_gpus, 0.0);
  for (int s = 0; s < placement.num_slots(); ++s) load[placement.gpu_of_slot(s)] += w[placement.phy2log[s]];
  return load;
}

std::vector<double> expert_demand(const RoutingBatch& batch) {
  std::vector<double> d(batch.num_experts, 0.0);
  for (int32_t e : batch.expert_ids) {
    if (e < 0 || e >= batch.num_experts)  // no message built on the hot path
      throw ArgumentError("batch: expert id " + std::to_string(e) + " out of range");
    d[e] += 1;
  }
  return d;
}

SwapCosts swap_costs(const ModelShape& model, const Topology& topo) {
  require(topo.compute.peak_flops > 0 && topo.nvlink_bw > 0 && topo.compute.hbm_bw > 0, "topo",
          "peak_flops, nvlink_bw and hbm_bw must be positive");
  SwapCosts c;
  c.pair_seconds = 6.0 * model.hidden * model.ffn / topo.compute.peak_flops;
  c.weight_seconds = model.expert_weight_bytes() / topo.nvlink_bw;
  c.weight_read_seconds = model.expert_weight_bytes() / topo.compute.hbm_bw;
  return c;
}

SwapPlan plan_swaps(const std::vector<double>& demand, const Placement& placement, const Topology& topo,
                    double balance_slack, const SwapCosts& costs, const std::vector<double>& slot_rows,
                    const std::vector<double>& slot_remote_rows) {
  check_demand(demand, placement);
  const int S = placement.num_slots();
  // Per slot: its rows (the routing's, or the expert's demand spread evenly over its replicas).
  std::vector<double> ws(S);
  if (slot_rows.empty()) {
    const auto w = per_replica(demand, placement);
    for (int s = 0; s < S; ++s) ws[s] = w[placement.phy2log[s]];
  } else {
    require(slot_rows.size() == size_t(S), "slot_rows",
            "has " + std::to_string(slot_rows.size()) + " entries, expected one per slot (" + std::to_string(S) + ")");
    std::vector<double> routed(demand.size(), 0.0);
    for (int s = 0; s < S; ++s) {
      require(std::isfinite(slot_rows[s]) && slot_rows[s] >= 0, "slot_rows",
              "slot " + std::to_string(s) + " has " + std::to_string(slot_rows[s]) + " rows, expected finite >= 0");
      routed[placement.phy2log[s]] += ws[s] = slot_rows[s];
    }
    for (size_t e = 0; e < demand.size(); ++e)
      require(std::abs(routed[e] - demand[e]) <= 1e-9 * std::max(1.0, demand[e]), "slot_rows",
              "expert " + std::to_string(e) + "'s replicas have " + std::to_string(routed[e]) +
                  " rows, its demand is " + std::to_string(demand[e]));
  }
  for (const double v : {costs.pair_seconds, costs.weight_seconds, costs.weight_read_seconds, costs.dispatch_seconds})
    require(v >= 0 && std::isfinite(v), "costs",
            "pair_seconds, weight_seconds, weight_read_seconds and dispatch_seconds must be finite and >= 0");
  require(costs.horizon >= 1, "costs", "horizon must be >= 1 iteration, got " + std::to_string(costs.horizon));
  require(topo.num_gpus() == placement.num_gpus && topo.gpus_per_node > 0, "topo",
          "has " + std::to_string(topo.num_gpus()) + " GPUs, the placement " + std::to_string(placement.num_gpus));
  require(costs.combine_seconds.empty() || costs.combine_seconds.size() == size_t(topo.nodes), "costs",
          "combine_seconds has " + std::to_string(costs.combine_seconds.size()) + " entries, expected none or one per node (" +
              std::to_string(topo.nodes) + ")");
  for (const double v : costs.combine_seconds)
    require(v >= 0 && std::isfinite(v), "costs", "combine_seconds must be finite and >= 0");
  // Per slot: its rows from other nodes' tokens (all of them when not given).
  std::vector<double> remote = ws;
  if (!slot_remote_rows.empty()) {
    require(!slot_rows.empty(), "slot_remote_rows", "needs slot_rows");
    require(slot_remote_rows.size() == size_t(S), "slot_remote_rows",
            "has " + std::to_string(slot_remote_rows.size()) + " entries, expected one per slot (" + std::to_string(S) + ")");
    for (int s = 0; s < S; ++s) {
      require(std::isfinite(slot_remote_rows[s]) && slot_remote_rows[s] >= 0 && slot_remote_rows[s] <= ws[s], "slot_remote_rows",
              "slot " + std::to_string(s) + " has " + std::to_string(slot_remote_rows[s]) + " remote rows of " +
                  std::to_string(ws[s]) + ", expected within [0, its rows]");
      remote[s] = slot_remote_rows[s];
    }
  }
  require(balance_slack >= 0, "balance_slack", "must be >= 0 (got " + std::to_string(balance_slack) + ")");

  SwapPlan out;
  out.placement = placement;
  const int G = placement.num_gpus, per_node = topo.gpus_per_node;
  std::vector<double> load(G, 0.0);
  for (int s = 0; s < S; ++s) load[placement.gpu_of_slot(s)] += ws[s];
  out.load_before = load;
  const double mean = std::accumulate(load.begin(), load.end(), 0.0) / G;
  const double bound = (1 + balance_slack) * mean;
  const double eps = 1e-9 * std::max(mean, 1.0);  // a swap must lower the pair's max by more
  out.triggered = *std::max_element(load.begin(), load.end()) > bound + eps;
  out.estimated_imbalance = mean > 0 ? *std::max_element(load.begin(), load.end()) / mean : 1.0;
  // Per GPU: experts moved in so far and their load there (for the unhidden weight wait).
  std::vector<int> moved_in(G, 0);
  std::vector<double> moved_load(G, 0.0);
  const auto wait = [&](double load_g, int in, double in_load) {
    const double after_dispatch = std::max(0.0, (load_g - in_load) * costs.pair_seconds - costs.dispatch_seconds);
    return std::max(0.0, costs.weight_seconds * in - after_dispatch);
  };
  // GPU g's GEMM time left once dispatch ends (A_g), with the replicas of slots a and b
  // exchanged (-1: none): all its GEMMs' roofline time less the dispatch, and at least that of
  // its remote rows.
  const int spg = placement.slots_per_gpu;
  const auto after_dispatch = [&](int g, int a, int b) {
    const auto gemm = [&](double rows) { return rows > 0 ? std::max(costs.weight_read_seconds, rows * costs.pair_seconds) : 0.0; };
    double all = 0, from_remote = 0;
    for (int s = g * spg; s < (g + 1) * spg; ++s) {
      const int r = s == a ? b : s == b ? a : s;
      all += gemm(ws[r]);
      from_remote += gemm(remote[r]);
    }
    return gemms_after_dispatch(all, from_remote, costs.dispatch_seconds);
  };
  const auto floor_of = [&](int g) { return costs.combine_seconds.empty() ? 0.0 : costs.combine_seconds[g / per_node]; };

  for (bool progress = out.triggered; progress;) {
    progress = false;
    std::vector<int> heavy(G);
    std::iota(heavy.begin(), heavy.end(), 0);
    std::stable_sort(heavy.begin(), heavy.end(), [&](int a, int b) { return load[a] > load[b]; });
    for (int h : heavy) {
      if (load[h] <= bound + eps) break;
      std::vector<int> light;
      for (int l = h / per_node * per_node; l < (h / per_node + 1) * per_node; ++l)
        if (l != h && load[l] < load[h]) light.push_back(l);
      std::stable_sort(light.begin(), light.end(), [&](int a, int b) { return load[a] < load[b]; });
      for (int l : light) {
        Candidate c{};
        if (!best_swap(out.placement, ws, load, h, l, c) || c.new_max >= load[h] - eps) continue;
        auto& p2l = out.placement.phy2log;
        const double delta = ws[c.a] - ws[c.b];
        // h receives p2l[c.b]'s weights, l receives p2l[c.a]'s.
        const double unhidden =
            std::max(wait(load[h] - delta, moved_in[h] + 1, moved_load[h] + ws[c.b]) -
                         wait(load[h], moved_in[h], moved_load[h]),
                     wait(load[l] + delta, moved_in[l] + 1, moved_load[l] + ws[c.a]) -
                         wait(load[l], moved_in[l], moved_load[l]));
        const double gemms = std::max(after_dispatch(h, -1, -1), after_dispatch(l, -1, -1));
        const double saved_per_iteration =
            saved_above_floor(gemms, std::max(after_dispatch(h, c.a, c.b), after_dispatch(l, c.a, c.b)), floor_of(h));
        if (costs.weight_seconds > 0 && saved_per_iteration * costs.horizon <= unhidden) {
          if (++out.refused_for_cost == 1 || saved_per_iteration > out.best_refused.saved_per_iteration_s)
            out.best_refused = {saved_per_iteration, unhidden, costs.weight_seconds, costs.dispatch_seconds,
                                costs.horizon, gemms, floor_of(h)};
          continue;
        }
        ++moved_in[h], moved_load[h] += ws[c.b];
        ++moved_in[l], moved_load[l] += ws[c.a];
        load[h] -= delta;
        load[l] += delta;
        std::swap(p2l[c.a], p2l[c.b]);
        std::swap(ws[c.a], ws[c.b]);  // a replica's rows go with it
        std::swap(remote[c.a], remote[c.b]);
        out.swaps.push_back({c.a, c.b});
        progress = true;
        break;
      }
      if (progress) break;  // re-rank the GPUs after every accepted swap
    }
  }
  out.load_after = load;
  keep_resident(placement, out.placement);
  out.weight_moves = weight_moves(placement, out.placement, per_node);
  return out;
}

void weights_after_dispatch(CommPlan& plan) {
  int64_t last_dispatch = 0;
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> dispatch_on;  // NVLink pair -> transfers
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Transfer || t.phase != Phase::Dispatch) continue;
    last_dispatch = std::max(last_dispatch, t.priority);
    if (t.link == Link::NVLink) dispatch_on[{t.gpu, t.dst_gpu}].push_back(int32_t(i));
  }
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Transfer || t.phase != Phase::Weights) continue;
    t.priority = last_dispatch + 1;
    if (const auto it = dispatch_on.find({t.gpu, t.dst_gpu}); it != dispatch_on.end()) {
      const auto own = plan.deps(t);
      std::vector<int32_t> deps(own.begin(), own.end());
      deps.insert(deps.end(), it->second.begin(), it->second.end());
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      plan.set_deps(int32_t(i), deps);
    }
  }
}

}  // namespace zepp
