// Zepp placement (§4.1), contiguous and one-layer EPLB placements, EPLB map conversion.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "../common/errors.hpp"
#include "core/error.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"

namespace {

zepp::Topology topo(int nodes, int gpus_per_node) {
  zepp::Topology t;
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  return t;
}

std::set<int> nodes_of(const zepp::Placement& p, int e, int gpus_per_node) {
  std::set<int> s;
  const auto replicas = p.replicas();
  for (int slot : replicas[e]) s.insert(p.gpu_of_slot(slot) / gpus_per_node);
  return s;
}

using zepp::testing::argument_error;

}  // namespace

// 2 nodes x 2 GPUs, loads 100 10 10 10, R = 1: S = 2, 4 extra slots. Counts (§4.1, zepp.cpp):
// all 4 extras by water-filling give e0 three (50, 33.3, 25; the cap is G = 4) and e1 one (10,
// lower id than e2, e3): 4 2 1 1, weights 25 5 10 10. Spread LPT: e0 onto GPUs 0, 2 (other node), 1, 3; e2 -> GPU 0, e3 -> GPU 1 (35 each);
// e1 twice onto the GPUs left, 2 and 3 (both node 1). No swap lowers GPU 0's 35 (the max, and
// optimal: four 25s need four GPUs). The spreading swap of e1 on GPU 2 with e2 on GPU 0 evens e1
// (one copy per node) and keeps both GPUs at <= 35.
TEST(ZeppPlacement, HotExpertOnEveryNode) {
  const zepp::Placement p = zepp::place_zepp({100, 10, 10, 10}, topo(2, 2), 1);
  EXPECT_EQ(p.num_gpus, 4);
  EXPECT_EQ(p.slots_per_gpu, 2);
  EXPECT_EQ(p.phy2log, (std::vector<int32_t>{0, 1, 0, 3, 0, 2, 0, 1}));
  EXPECT_NEAR(zepp::expected_imbalance(p, {100, 10, 10, 10}), 35 / 32.5, 1e-12);
  EXPECT_EQ(zepp::expected_gpu_load(p, {100, 10, 10, 10}), (std::vector<double>{30, 35, 35, 30}));
}

// Figure 6: the hottest expert is replicated on every node; the next ones spread over distinct nodes.
TEST(ZeppPlacement, Figure6Coverage) {
  const std::vector<double> load = {400, 120, 10, 10, 10, 10, 10, 10};
  const zepp::Placement p = zepp::place_zepp(load, topo(4, 2), 1);
  const auto cnt = p.logcnt();
  EXPECT_EQ(nodes_of(p, 0, 2), (std::set<int>{0, 1, 2, 3}));
  for (int e = 1; e < 8; ++e)
    if (cnt[e] <= 4) EXPECT_EQ(nodes_of(p, e, 2).size(), size_t(cnt[e])) << "expert " << e;
  // §4.1's counts: e0 seven replicas (57.14 each), e1 three (40), the rest one (10); mean 580 / 8
  // = 72.5. One copy per GPU leaves a single GPU without e0, so two of e1's copies share a GPU
  // with e0: max 57.14 + 40 = 97.14, 1.3399 x the mean, the best any packing of these counts
  // does. Fewer hot extras (e0 six, e1 two, cold second copies) would pack to 1.057 on this
  // load, but such departures lost on data they were not chosen on (zepp.cpp), so none is kept.
  EXPECT_EQ(cnt, (std::vector<int32_t>{7, 3, 1, 1, 1, 1, 1, 1}));
  EXPECT_NEAR(zepp::expected_imbalance(p, load), (400.0 / 7 + 40) / 72.5, 1e-12);
}

TEST(ZeppPlacement, RejectsBadArguments) {
  EXPECT_EQ(argument_error([] { zepp::place_zepp({}, topo(1, 2), 1); }).rfind("load:", 0), 0u);
  EXPECT_EQ(argument_error([] { zepp::place_zepp({1, -2}, topo(1, 2), 1); }).rfind("load:", 0), 0u);
  EXPECT_EQ(argument_error([] { zepp::place_zepp({1, 2}, topo(0, 2), 1); }).rfind("topo:", 0), 0u);
  EXPECT_EQ(argument_error([] { zepp::place_zepp({1, 2}, topo(1, 2), -1); }).rfind("extra_slots:", 0), 0u);
  // S = 1 + 2 = 3 > E = 2: some expert would need two replicas on one GPU.
  EXPECT_EQ(argument_error([] { zepp::place_zepp({1, 2}, topo(1, 2), 2); }).rfind("extra_slots:", 0), 0u);
}

// Random clusters and loads (small integers, so ties are common).
RC_GTEST_PROP(ZeppPlacement, Invariants, ()) {
  const int N = *rc::gen::inRange(1, 5), gpn = *rc::gen::inRange(1, 5), G = N * gpn;
  const int E = *rc::gen::inRange(1, 41), R = *rc::gen::inRange(0, 4);
  const auto load = *rc::gen::container<std::vector<double>>(
      E, rc::gen::map(rc::gen::inRange(0, 20), [](int v) { return double(v * 5); }));
  const int S = (E + G - 1) / G + R;
  if (S > E) {
    RC_ASSERT(argument_error([&] { zepp::place_zepp(load, topo(N, gpn), R); }).rfind("extra_slots:", 0) == 0u);
    return;
  }
  const zepp::Placement p = zepp::place_zepp(load, topo(N, gpn), R);
  RC_ASSERT(p.num_gpus == G && p.slots_per_gpu == S && p.num_experts == E);
  RC_ASSERT(p.phy2log.size() == size_t(G) * S);  // every GPU exactly S slots
  p.validate("placement");                         // ids in range, every expert >= 1 replica
  const auto cnt = p.logcnt();
  for (int e = 0; e < E; ++e) RC_ASSERT(cnt[e] >= 1 && cnt[e] <= G);
  for (int g = 0; g < G; ++g) {  // never two copies of an expert on one GPU
    std::set<int> seen(p.phy2log.begin() + g * S, p.phy2log.begin() + (g + 1) * S);
    RC_ASSERT(seen.size() == size_t(S));
  }
  RC_ASSERT(zepp::place_zepp(load, topo(N, gpn), R).phy2log == p.phy2log);  // deterministic
}

TEST(Contiguous, IdentityMap) {
  const zepp::Placement p = zepp::place_contiguous(8, topo(2, 2));
  EXPECT_EQ(p.slots_per_gpu, 2);
  EXPECT_EQ(p.phy2log, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(argument_error([] { zepp::place_contiguous(6, topo(2, 2)); }).rfind("num_experts:", 0), 0u);
}

RC_GTEST_PROP(Contiguous, IdentityLike, ()) {
  const int N = *rc::gen::inRange(1, 5), gpn = *rc::gen::inRange(1, 9), per = *rc::gen::inRange(1, 9);
  const zepp::Placement p = zepp::place_contiguous(N * gpn * per, topo(N, gpn));
  RC_ASSERT(p.slots_per_gpu == per);
  for (int e = 0; e < p.num_experts; ++e) {
    RC_ASSERT(p.phy2log[e] == e);
    RC_ASSERT(p.gpu_of_slot(e) == e / per);
  }
}

// One-layer EPLB placement is eplb_rebalance's layer: README example layer 0 (2 nodes x 4 GPUs).
TEST(EplbPlacement, ReadmeLayerZero) {
  const zepp::Placement p =
      zepp::place_eplb({90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86}, topo(2, 4), 2, 4);
  EXPECT_EQ(p.slots_per_gpu, 2);
  EXPECT_EQ(p.phy2log, (std::vector<int32_t>{5, 6, 5, 7, 8, 4, 3, 4, 10, 9, 10, 2, 0, 1, 11, 1}));
  EXPECT_EQ(argument_error([] { zepp::place_eplb({1, 2, 3}, topo(1, 2), 1, 1); }).rfind("slots_per_gpu:", 0), 0u);
  EXPECT_EQ(argument_error([] { zepp::place_eplb({1, 1e300}, topo(1, 2), 1, 1); }).rfind("load:", 0), 0u);
}

// eplb_maps: ranks by ascending slot, -1 padded to X = the largest replica count (4).
TEST(EplbMaps, FromPlacement) {
  const zepp::Placement p{4, 4, 2, {0, 2, 0, 1, 0, 3, 0, 1}};
  const zepp::EplbResult r = zepp::eplb_maps({p});
  EXPECT_EQ(r.max_replicas, 4);
  EXPECT_EQ(r.logcnt, (std::vector<int64_t>{4, 2, 1, 1}));
  EXPECT_EQ(r.log2phy, (std::vector<int64_t>{0, 2, 4, 6, 3, 7, -1, -1, 1, -1, -1, -1, 5, -1, -1, -1}));
  EXPECT_EQ(argument_error([] { zepp::eplb_maps({}); }).rfind("layers:", 0), 0u);
}

// The EPLB rule's maps agree with eplb_maps of its own phy2log (same replica sets per expert).
RC_GTEST_PROP(EplbMaps, ConsistentWithRebalance, ()) {
  const int E = *rc::gen::inRange(1, 17), G = *rc::gen::inRange(1, 5);
  const int P = G * ((E + G - 1) / G + *rc::gen::inRange(0, 3));
  const auto w = *rc::gen::container<std::vector<float>>(
      E, rc::gen::map(rc::gen::inRange(0, 100), [](int v) { return float(v); }));
  const zepp::EplbResult r = zepp::eplb_rebalance(w, 1, E, P, 1, 1, G);
  zepp::Placement p{G, E, P / G, std::vector<int32_t>(r.phy2log.begin(), r.phy2log.end())};
  const zepp::EplbResult m = zepp::eplb_maps({p});
  RC_ASSERT(m.logcnt == r.logcnt);
  for (int e = 0; e < E; ++e) {
    std::set<int64_t> a(r.log2phy.begin() + e * m.max_replicas, r.log2phy.begin() + (e + 1) * m.max_replicas);
    std::set<int64_t> b(m.log2phy.begin() + e * m.max_replicas, m.log2phy.begin() + (e + 1) * m.max_replicas);
    RC_ASSERT(a == b);
  }
}
