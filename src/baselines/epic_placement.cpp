// EPIC's communication-aware placement and replication (docs/baselines/epic.md). The zepp paper
// says of EPIC only that it "uses communication-aware expert placement and replication" (§7);
// issue 10 reads that as: experts often selected together grouped onto the same node, so a token
// that needs both crosses to that node once (EPIC's dedup), and hot experts replicated. EPIC's
// own algorithm is not in our sources; this is that reading, with every choice stated.
//
// 1. Replicas: water-filling by demand per replica (placement/pack.hpp), the same slot budget as
//    every replication baseline (R extra slots per GPU), at most one replica per GPU.
// 2. Nodes: replicas in descending demand per replica (ties: lower expert id), each expert's
//    replicas one after another. A replica goes to the node with the highest affinity among the
//    nodes that have a free slot, do not hold the expert yet (while some such node exists) and
//    are not above the mean node load (while some such node exists); ties: the less loaded node,
//    then the lower id. Affinity of expert e with node n = sum over replicas of f on n of
//    (C_ef - L_e L_f / H) / c_f: the history tokens selecting both beyond what independent choices
//    would give (H history tokens, L load, C co-activation counts), shared among f's c_f replicas.
//    Beyond-chance counts, not raw ones: raw counts are highest between the most popular experts
//    whatever their relation, and grouping those would pile the load onto one node.
//    The mean-load rule is a preference, not a bound: while load remains unplaced some node is
//    at or below the mean, but it may have no free slot left. Without co-activation data
//    (load-only and synthetic workloads) every affinity is 0 and this is least-loaded-node
//    packing.
// 3. GPUs: inside each node, its replicas in descending demand onto the least loaded GPU with a
//    free slot that does not hold the expert (ties: lower GPU); if every GPU with a free slot
//    holds it (a light expert's last copies), the least loaded GPU with a free slot.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "baselines/baselines.hpp"
#include "core/error.hpp"
#include "placement/pack.hpp"

namespace zepp::baselines {

Placement place_coactivation(const std::vector<double>& load, const std::vector<double>& coactivation, int top_k,
                             const Topology& topo, int slots_per_gpu) {
  const int E = int(load.size()), N = topo.nodes, G = topo.gpus_per_node, P = topo.num_gpus();
  require(E > 0, "load", "needs at least one expert");
  require(N > 0 && G > 0, "topo", "needs nodes and GPUs");
  require(top_k > 0, "top_k", "must be positive");
  require(slots_per_gpu > 0 && int64_t(P) * slots_per_gpu >= E && int64_t(slots_per_gpu) <= E, "slots_per_gpu",
          std::to_string(slots_per_gpu) + " slots on " + std::to_string(P) + " GPUs cannot hold " +
              std::to_string(E) + " experts once each with at most one replica per GPU");
  require(coactivation.empty() || coactivation.size() == size_t(E) * E, "coactivation",
          "has " + std::to_string(coactivation.size()) + " entries, expected E * E = " + std::to_string(int64_t(E) * E));
  for (size_t e = 0; e < load.size(); ++e)
    require(std::isfinite(load[e]) && load[e] >= 0, "load", "entry " + std::to_string(e) + " must be finite and >= 0");
  for (double c : coactivation) require(std::isfinite(c) && c >= 0, "coactivation", "entries must be finite and >= 0");

  const std::vector<int> count = placement_detail::water_fill_counts(load, P * slots_per_gpu, P);
  std::vector<double> w(E);  // demand per replica
  for (int e = 0; e < E; ++e) w[e] = load[e] / count[e];
  const double tokens = std::accumulate(load.begin(), load.end(), 0.0) / top_k;  // H

  std::vector<int> order(E);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });

  // Step 2: nodes.
  const int node_slots = G * slots_per_gpu;
  const double mean_node_load = std::accumulate(load.begin(), load.end(), 0.0) / N;
  std::vector<double> affinity(size_t(N) * E, 0.0), node_load(N, 0.0);
  std::vector<int> free_slots(N, node_slots);
  std::vector<char> holds(size_t(N) * E, 0);
  std::vector<std::vector<int>> on_node(N);  // experts, one entry per replica
  for (int e : order)
    for (int c = 0; c < count[e]; ++c) {
      int best = -1;
      auto better = [&](int n) {
        if (best < 0) return true;
        // Preferences in order: a node without the expert, at or below the mean load, higher
        // affinity, lower load, lower id.
        const bool hn = holds[size_t(n) * E + e], hb = holds[size_t(best) * E + e];
        if (hn != hb) return !hn;
        const bool on = node_load[n] <= mean_node_load, ob = node_load[best] <= mean_node_load;
        if (on != ob) return on;
        const double an = affinity[size_t(n) * E + e], ab = affinity[size_t(best) * E + e];
        if (an != ab) return an > ab;
        return node_load[n] < node_load[best];
      };
      for (int n = 0; n < N; ++n)
        if (free_slots[n] > 0 && better(n)) best = n;
      // Some node has a free slot: the replicas number exactly the slots.
      --free_slots[best];
      node_load[best] += w[e];
      holds[size_t(best) * E + e] = 1;
      on_node[best].push_back(e);
      if (!coactivation.empty() && tokens > 0)
        for (int f = 0; f < E; ++f)
          if (f != e)
            affinity[size_t(best) * E + f] +=
                (coactivation[size_t(f) * E + e] - load[f] * load[e] / tokens) / count[e];
    }

  // Step 3: GPUs inside each node.
  Placement p;
  p.num_gpus = P;
  p.num_experts = E;
  p.slots_per_gpu = slots_per_gpu;
  p.phy2log.assign(size_t(P) * slots_per_gpu, -1);
  std::vector<double> gpu_load(P, 0.0);
  std::vector<int> used(P, 0);
  for (int n = 0; n < N; ++n) {
    // on_node[n] is already in descending demand (the order it was filled in).
    for (int e : on_node[n]) {
      int best = -1;
      bool best_holds = true;
      for (int g = n * G; g < (n + 1) * G; ++g) {
        if (used[g] == slots_per_gpu) continue;
        const bool h = std::find(p.phy2log.begin() + size_t(g) * slots_per_gpu,
                                 p.phy2log.begin() + size_t(g) * slots_per_gpu + used[g], e) !=
                       p.phy2log.begin() + size_t(g) * slots_per_gpu + used[g];
        if (best < 0 || (h != best_holds ? !h : gpu_load[g] < gpu_load[best])) best = g, best_holds = h;
      }
      p.phy2log[size_t(best) * slots_per_gpu + used[best]++] = e;
      gpu_load[best] += w[e];
    }
  }
  p.validate("place_coactivation");
  return p;
}

}  // namespace zepp::baselines
