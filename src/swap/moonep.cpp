// MoonEP-style per-invocation replication with exactly balanced routing (replicate.hpp).
#include <lemon/preflow.h>
#include <lemon/smart_graph.h>

#include <algorithm>
#include <numeric>

#include "swap/replicate_detail.hpp"

namespace zepp {
namespace {

using namespace replicate_detail;

// Per-expert totals over all source GPUs.
std::vector<int64_t> totals(const std::vector<int64_t>& demand, int E) {
  std::vector<int64_t> t(E, 0);
  for (size_t i = 0; i < demand.size(); ++i) t[i % E] += demand[i];
  return t;
}

// share[e][k]: tokens of expert e served by the k-th GPU of hosts[e], with the largest GPU
// load as small as possible: bisection on the bound B, feasible when a max flow
// expert -> hosting GPU -> sink (capacity B) carries every token.
std::vector<std::vector<int64_t>> balance_exactly(const std::vector<int64_t>& total,
                                                  const std::vector<std::vector<int>>& hosts, int G) {
  lemon::SmartDigraph g;
  const auto src = g.addNode(), sink = g.addNode();
  std::vector<lemon::SmartDigraph::Node> gpu(G);
  for (auto& n : gpu) n = g.addNode();
  lemon::SmartDigraph::ArcMap<int64_t> cap(g);
  std::vector<std::vector<lemon::SmartDigraph::Arc>> host_arc(total.size());
  const int64_t sum = std::accumulate(total.begin(), total.end(), int64_t(0));
  for (size_t e = 0; e < total.size(); ++e) {
    const auto n = g.addNode();
    cap[g.addArc(src, n)] = total[e];
    for (int h : hosts[e]) {
      host_arc[e].push_back(g.addArc(n, gpu[h]));
      cap[host_arc[e].back()] = sum;
    }
  }
  std::vector<lemon::SmartDigraph::Arc> gpu_arc(G);
  for (int h = 0; h < G; ++h) gpu_arc[h] = g.addArc(gpu[h], sink);

  auto run = [&](int64_t bound, lemon::Preflow<lemon::SmartDigraph, lemon::SmartDigraph::ArcMap<int64_t>>& flow) {
    for (int h = 0; h < G; ++h) cap[gpu_arc[h]] = bound;
    flow.run();
    return flow.flowValue() == sum;
  };
  lemon::Preflow<lemon::SmartDigraph, lemon::SmartDigraph::ArcMap<int64_t>> flow(g, cap, src, sink);
  int64_t lo = (sum + G - 1) / G, hi = sum;  // lo may be infeasible, hi always is feasible
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (run(mid, flow)) hi = mid;
    else lo = mid + 1;
  }
  run(lo, flow);
  std::vector<std::vector<int64_t>> share(total.size());
  for (size_t e = 0; e < total.size(); ++e)
    for (const auto& a : host_arc[e]) share[e].push_back(flow.flow(a));
  return share;
}

}  // namespace

ReplicationPlan plan_moonep(const std::vector<int64_t>& demand, int E, const Topology& topo, int extra) {
  const int H = check_args(demand, E, topo, extra);
  const int G = topo.num_gpus(), S = H + extra;
  const auto total = totals(demand, E);

  // 1. Replica counts: the next replica to the highest demand per replica.
  std::vector<int> cnt(E, 1);
  for (int k = 0; k < G * extra; ++k) {
    int best = -1;
    for (int e = 0; e < E; ++e)
      if (cnt[e] < G && (best < 0 || total[e] * cnt[best] > total[best] * cnt[e])) best = e;
    if (best < 0) break;
    ++cnt[best];
  }

  // 2. Redundant replicas, heaviest per replica first, onto the least loaded eligible GPU.
  ReplicationPlan out;
  out.placement = home_layout(E, topo, extra);
  Placement& p = out.placement;
  std::vector<double> load(G, 0.0);
  std::vector<std::vector<int>> hosts(E);
  for (int e = 0; e < E; ++e) {
    load[e / H] += double(total[e]) / cnt[e];
    hosts[e].push_back(e / H);
  }
  std::vector<int> order;  // one entry per redundant replica
  for (int e = 0; e < E; ++e)
    for (int r = 1; r < cnt[e]; ++r) order.push_back(e);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return total[a] * cnt[b] > total[b] * cnt[a]; });
  std::vector<int> used(G, 0);
  for (int e : order) {
    int best = -1;
    for (int g = 0; g < G; ++g) {
      if (used[g] == extra || std::find(hosts[e].begin(), hosts[e].end(), g) != hosts[e].end()) continue;
      if (best < 0 || load[g] < load[best]) best = g;
    }
    if (best < 0) continue;  // no GPU left without this expert: one replica fewer
    const int32_t slot = best * S + H + used[best]++;
    p.phy2log[slot] = e;
    out.weight_moves.push_back({slot, int32_t(e / H)});
    hosts[e].push_back(best);
    load[best] += double(total[e]) / cnt[e];
  }
  fill_aliases(p);

  // 3. Exactly balanced shares per (expert, GPU), then prefix sums from the sources.
  const auto share = balance_exactly(total, hosts, G);
  for (int e = 0; e < E; ++e) {
    std::vector<int32_t> slots;
    for (int h : hosts[e]) {
      int32_t s = h * S + (h == e / H ? e % H : H);  // home slot, or the helper slot holding e
      while (p.phy2log[s] != e) ++s;
      slots.push_back(s);
    }
    std::vector<int64_t> supply(G);
    for (int i = 0; i < G; ++i) supply[i] = demand[size_t(i) * E + e];
    prefix_fill(e, supply, slots, share[e], out.counts);
  }
  normalize_counts(out.counts);
  return out;
}

}  // namespace zepp
