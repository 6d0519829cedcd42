// Random clusters, placements and batches for the routing properties (rapidcheck generators).
#pragma once
#include <rapidcheck.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/types.hpp"
#include "helpers.hpp"

namespace zepp::test {

struct Case {
  Topology topo;
  Placement placement;
  RoutingBatch batch;
  double slack;
};

// Top-k distinct experts per token, drawn with skewed per-expert weights so that some experts
// are hot (what makes replicas and bounds matter).
inline RoutingBatch random_batch(int G, int E, int k, int max_tokens) {
  const auto weight = *rc::gen::container<std::vector<int>>(E, rc::gen::inRange(1, 20));
  std::vector<std::vector<std::vector<int32_t>>> tokens(G);
  for (int i = 0; i < G; ++i) {
    const int n = *rc::gen::inRange(0, max_tokens + 1);
    for (int t = 0; t < n; ++t) {
      std::vector<int32_t> tok;
      while (int(tok.size()) < k) {
        // weighted draw without replacement
        int total = 0;
        for (int e = 0; e < E; ++e)
          if (std::find(tok.begin(), tok.end(), e) == tok.end()) total += weight[e];
        int x = *rc::gen::inRange(0, total);
        for (int e = 0; e < E; ++e) {
          if (std::find(tok.begin(), tok.end(), e) != tok.end()) continue;
          if ((x -= weight[e]) < 0) {
            tok.push_back(e);
            break;
          }
        }
      }
      tokens[i].push_back(tok);
    }
  }
  return make_batch(E, k, tokens);
}

// Every expert has >= 1 replica; slots beyond the first E hold random (hot-biased) experts.
inline Case random_case() {
  Case c;
  const int nodes = *rc::gen::inRange(1, 4), gpn = *rc::gen::inRange(1, 4), G = nodes * gpn;
  const int E = *rc::gen::inRange(1, 9);
  const int spg = (E + G - 1) / G + *rc::gen::inRange(0, 3);
  std::vector<int32_t> phy2log(size_t(G) * spg);
  for (size_t p = 0; p < phy2log.size(); ++p) phy2log[p] = p < size_t(E) ? int32_t(p) : *rc::gen::inRange(0, E);
  const auto order = *rc::gen::container<std::vector<int>>(phy2log.size(), rc::gen::arbitrary<int>());
  std::vector<size_t> idx(phy2log.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return std::pair(order[a], a) < std::pair(order[b], b); });
  std::vector<int32_t> shuffled(phy2log.size());
  for (size_t p = 0; p < idx.size(); ++p) shuffled[p] = phy2log[idx[p]];
  c.topo = tiny_topo(nodes, gpn);
  c.placement = make_placement(G, E, shuffled);
  c.batch = random_batch(G, E, *rc::gen::inRange(1, std::min(E, 4) + 1), 12);
  c.slack = *rc::gen::elementOf(std::vector<double>{0.0, 0.05, 0.1, 0.25, 0.5, 0.9});
  return c;
}

}  // namespace zepp::test
