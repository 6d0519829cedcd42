// Zepp placement (§4.1), contiguous and one-layer EPLB placements, EPLB map conversion.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "core/error.hpp"
#include "placement/placement.hpp"

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

std::string argument_error(auto call) {
  try {
    call();
  } catch (const zepp::ArgumentError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

// 2 nodes x 2 GPUs, loads 100 10 10 10, R = 1: S = 2, 4 extra slots. Expert 0 takes three
// (50, 33.3, 25) and hits the cap of 4 = G; the last goes to expert 1 (10, lower id than 2, 3).
// Priority: e0 (25), e2, e3 (10), e1 (5). Nodes: e0 -> 0 1 0 1, e2 -> 0, e3 -> 1, e1 -> 0 1.
// Node 0 holds e0 e0 e2 e1: e0 -> GPU 0, e0 -> GPU 1 (avoids the copy), e2 -> GPU 0 (tie), e1 -> GPU 1.
TEST(ZeppPlacement, HotExpertOnEveryNode) {
  const zepp::Placement p = zepp::place_zepp({100, 10, 10, 10}, topo(2, 2), 1);
  EXPECT_EQ(p.num_gpus, 4);
  EXPECT_EQ(p.slots_per_gpu, 2);
  EXPECT_EQ(p.phy2log, (std::vector<int32_t>{0, 2, 0, 1, 0, 3, 0, 1}));
}

// 2 nodes x 2 GPUs, E = 6, loads 60 50 40 30 20 10, R = 1: S = 3, 6 extra slots go to e0, e1, e2,
// e0 (30 ties e3, lower id), e3, e1 -> counts 3 3 2 2 1 1. Priority (per replica): e0 20, e2 20,
// e4 20, e1 16.7, e3 15, e5 10. Nodes (cursor): e0 -> 0 1 0, e2 -> 1 0, e4 -> 1, e1 -> 0 1 0,
// e3 -> 1 0, e5 -> 1. Node 0: e0 e0 e2 e1 e1 e3 -> GPU0 e0 e2 e1 (the second e1 avoids GPU 1),
// GPU1 e0 e1 e3. Node 1: e0 e2 e4 e1 e3 e5 -> GPU2 e0 e4 e5, GPU3 e2 e1 e3.
TEST(ZeppPlacement, HandComputedSixExperts) {
  const zepp::Placement p = zepp::place_zepp({60, 50, 40, 30, 20, 10}, topo(2, 2), 1);
  EXPECT_EQ(p.logcnt(), (std::vector<int32_t>{3, 3, 2, 2, 1, 1}));
  EXPECT_EQ(p.phy2log, (std::vector<int32_t>{0, 2, 1, 0, 1, 3, 0, 4, 5, 2, 1, 3}));
}

// Figure 6: the hottest expert is replicated on every node; the next one spreads over distinct nodes.
TEST(ZeppPlacement, Figure6Coverage) {
  const zepp::Placement p = zepp::place_zepp({400, 120, 10, 10, 10, 10, 10, 10}, topo(4, 2), 1);
  // 8 extra slots (S = 2 on 8 GPUs): e0 400 -> 200 -> 133 -> 100, e1 120 -> 60, e0 -> 80 -> 67
  // -> 57, e1 -> 40.
  EXPECT_EQ(p.logcnt(), (std::vector<int32_t>{7, 3, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(nodes_of(p, 0, 2), (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(nodes_of(p, 1, 2).size(), 3u);
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
  for (int e = 0; e < E; ++e) {
    RC_ASSERT(cnt[e] >= 1 && cnt[e] <= G);
    if (cnt[e] <= N) RC_ASSERT(nodes_of(p, e, gpn).size() == size_t(cnt[e]));
    // Greedy counts: e's last replica was worth at least one more for any uncapped expert f.
    if (cnt[e] > 1)
      for (int f = 0; f < E; ++f)
        if (cnt[f] < G) RC_ASSERT(load[e] / (cnt[e] - 1) >= load[f] / cnt[f]);
  }
  // Two copies of an expert on one GPU only happen once the expert has more replicas than nodes.
  for (int g = 0; g < G; ++g) {
    std::set<int> seen;
    for (int s = 0; s < S; ++s) {
      const int e = p.phy2log[size_t(g) * S + s];
      if (!seen.insert(e).second) RC_ASSERT(cnt[e] > N);
    }
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

// eplb_maps on the hand case: ranks by ascending slot, -1 padded to X = P - E + 1 = 5.
TEST(EplbMaps, FromPlacement) {
  const zepp::Placement p = zepp::place_zepp({100, 10, 10, 10}, topo(2, 2), 1);  // 0 2 0 1 0 3 0 1
  const zepp::EplbResult r = zepp::eplb_maps({p});
  EXPECT_EQ(r.max_replicas, 5);
  EXPECT_EQ(r.logcnt, (std::vector<int64_t>{4, 2, 1, 1}));
  EXPECT_EQ(r.log2phy, (std::vector<int64_t>{0, 2, 4, 6, -1, 3, 7, -1, -1, -1, 1, -1, -1, -1, -1, 5, -1, -1, -1, -1}));
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
