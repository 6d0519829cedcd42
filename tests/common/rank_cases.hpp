// Per-rank planning fixtures (routing and plan tests): random clusters whose ranks each hold
// their own tokens, and the per-rank protocol of router.hpp run over every rank.
#pragma once
#include <rapidcheck.h>

#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

#include "core/types.hpp"
#include "routing/router.hpp"

namespace zepp::test {

struct RankCase {
  Topology topo;
  Placement placement;
  double slack = 0.1;
  int top_k = 1;
  std::vector<std::vector<int32_t>> ids;  // [G][T_i * top_k], -1 = padding
};

// Up to 3 x 3 GPUs, up to 9 experts, every expert with a slot, extra slots on random (hot-biased
// by repetition) experts, skewed ids distinct within a token, about one pair in eight padding
// when `padding`.
inline RankCase random_rank_case(bool padding) {
  RankCase c;
  const int nodes = *rc::gen::inRange(1, 4), gpn = *rc::gen::inRange(1, 4), G = nodes * gpn;
  const int E = *rc::gen::inRange(1, 10);
  const int spg = (E + G - 1) / G + *rc::gen::inRange(0, 3);
  std::vector<int32_t> phy2log(size_t(G) * spg);
  for (size_t p = 0; p < phy2log.size(); ++p)
    phy2log[p] = p < size_t(E) ? int32_t(p) : *rc::gen::inRange(0, std::min(E, 3));
  const auto keys = *rc::gen::container<std::vector<int>>(phy2log.size(), rc::gen::arbitrary<int>());
  std::vector<size_t> idx(phy2log.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return std::pair(keys[a], a) < std::pair(keys[b], b); });
  c.placement.num_gpus = G;
  c.placement.num_experts = E;
  c.placement.slots_per_gpu = spg;
  for (size_t p : idx) c.placement.phy2log.push_back(phy2log[p]);
  c.topo.name = "tiny";
  c.topo.nodes = nodes;
  c.topo.gpus_per_node = gpn;
  c.slack = *rc::gen::elementOf(std::vector<double>{0.0, 0.05, 0.1, 0.25, 0.5, 0.9});
  c.top_k = *rc::gen::inRange(1, std::min(5, E + 1));  // distinct experts per token: k <= E
  const auto weight = *rc::gen::container<std::vector<int>>(E, rc::gen::inRange(1, 20));
  const int total = std::accumulate(weight.begin(), weight.end(), 0);
  c.ids.resize(G);
  for (int i = 0; i < G; ++i) {
    const int T = *rc::gen::inRange(0, 16);
    for (int p = 0; p < T * c.top_k; ++p) {
      if (padding && *rc::gen::inRange(0, 8) == 0) {
        c.ids[i].push_back(-1);
        continue;
      }
      int x = *rc::gen::inRange(0, total), e = 0;
      while ((x -= weight[e]) >= 0) ++e;
      // A token names each expert once (the router refuses repeats): the next one it lacks.
      const auto token = c.ids[i].end() - p % c.top_k;
      while (std::find(token, c.ids[i].end(), e) != c.ids[i].end()) e = (e + 1) % E;
      c.ids[i].push_back(e);
    }
  }
  return c;
}

// The protocol of router.hpp: every rank counts (count_rank), the rows are "all-gathered"
// into counts [G * E], the count plan m is computed once per rank (plan) and each rank routes
// its own tokens (route_rank). Returns each rank's slots; `m` gets the last rank's plan, and
// every rank's plan must be equal to it (checked with RC_ASSERT).
inline std::vector<std::vector<int32_t>> route_every_rank(const RankCase& c, std::vector<int64_t>& m) {
  const int G = c.placement.num_gpus, E = c.placement.num_experts, k = c.top_k;
  std::vector<int64_t> counts(size_t(G) * E);
  for (int i = 0; i < G; ++i) {
    Router rank_router(c.placement, c.topo, c.slack);
    rank_router.count_rank(c.ids[i].data(), int64_t(c.ids[i].size()) / k, k,
                           std::span<int64_t>(counts).subspan(size_t(i) * E, E));
  }
  std::vector<std::vector<int32_t>> slots(G);
  for (int i = 0; i < G; ++i) {
    Router router(c.placement, c.topo, c.slack);  // each rank its own
    std::vector<int64_t> mine(size_t(c.placement.num_slots()) * G);
    router.plan(counts, mine);
    if (i > 0) RC_ASSERT(mine == m);
    m = mine;
    slots[i].resize(c.ids[i].size());
    router.route_rank(c.ids[i].data(), int64_t(c.ids[i].size()) / k, k, i, m, slots[i].data());
  }
  return slots;
}

}  // namespace zepp::test
