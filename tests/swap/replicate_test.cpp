// Per-invocation replication baselines: MoonEP-style and HALO-Q (iser-moe.txt §4.1) on
// hand-checked cases, and the invariants every plan keeps on random demand.
#include <algorithm>
#include <map>
#include <numeric>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/error.hpp"
#include "swap/replicate.hpp"

using namespace zepp;

namespace {

Topology topo_of(int nodes, int gpus_per_node) {
  Topology t;
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  return t;
}

std::vector<int64_t> gpu_loads(const ReplicationPlan& r) {
  std::vector<int64_t> load(r.placement.num_gpus, 0);
  for (const RouteCount& c : r.counts) load[r.placement.gpu_of_slot(c.slot)] += c.tokens;
  return load;
}

bool same(const RouteCount& a, const RouteCount& b) {
  return a.expert == b.expert && a.src_gpu == b.src_gpu && a.slot == b.slot && a.tokens == b.tokens;
}

void expect_counts(const std::vector<RouteCount>& got, const std::vector<RouteCount>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(same(got[i], want[i])) << "count " << i << ": got (" << got[i].expert << ", " << got[i].src_gpu
                                       << ", " << got[i].slot << ", " << got[i].tokens << ")";
}

}  // namespace

TEST(MoonEP, HotExpertReplicatedOntoLightGpuAndBalancedExactly) {
  // 2 GPUs, 4 experts (homes: GPU 0 holds 0, 1; GPU 1 holds 2, 3), one extra slot each.
  // Totals: e0 = 12, e1 = e2 = e3 = 2. Replicas: e0 gets the first extra one; the second goes
  // to e1 (2 per replica), but the only GPU without e1 (GPU 1) is full, so it is dropped.
  // e0's replica lands on GPU 1 (estimated 4 < 7). Exact balance: 18 / 2 = 9 per GPU, so
  // e0 splits 7 (home) / 5 (replica); source 0 fills the home quota first (prefix sums).
  const std::vector<int64_t> d = {8, 2, 1, 1,   // source GPU 0
                                  4, 0, 1, 1};  // source GPU 1
  const ReplicationPlan r = plan_moonep(d, 4, topo_of(1, 2), 1);
  EXPECT_EQ(r.placement.slots_per_gpu, 3);
  EXPECT_EQ(r.placement.phy2log, (std::vector<int32_t>{0, 1, 0, 2, 3, 0}));  // GPU 0's free slot aliases e0
  ASSERT_EQ(r.weight_moves.size(), 1u);
  EXPECT_EQ(r.weight_moves[0].slot, 5);
  EXPECT_EQ(r.weight_moves[0].src_gpu, 0);
  expect_counts(r.counts, {{0, 0, 0, 7}, {0, 0, 5, 1}, {0, 1, 5, 4}, {1, 0, 1, 2},
                           {2, 0, 3, 1}, {2, 1, 3, 1}, {3, 0, 4, 1}, {3, 1, 4, 1}});
  EXPECT_EQ(gpu_loads(r), (std::vector<int64_t>{9, 9}));
}

TEST(HaloQ, HotExpertToWholeClusterWhenOnlyLevelZeroAbsorbs) {
  // 8 ranks (2 nodes of 4), one home and one helper slot each. Expert 0 carries 40 routes, the
  // others 8 each: T = ceil(96 / 8) = 12, rank 0 must shed 28. Level 1 groups have room 12 and
  // 16, level 0 (all ranks) 28: expert 0 goes to every rank, 4 routes per member, 12 stay home.
  // Route rewrite: hosts keep their own routes up to quota (0: 5, 1: 4, 2..6: 4, 7: 0); the
  // surplus of ranks 1..6 (6, 1, 1, 1, 1, 1) fills rank 0's remaining 7 then rank 7's 4.
  const int E = 8, P = 8;
  std::vector<int64_t> d(P * E, 0);
  const int64_t e0_sources[P] = {5, 10, 5, 5, 5, 5, 5, 0};
  for (int s = 0; s < P; ++s) d[s * E + 0] = e0_sources[s];
  for (int e = 1; e < E; ++e) d[e * E + e] = 8;
  const ReplicationPlan r = plan_haloq(d, E, topo_of(2, 4), 1);
  std::vector<int32_t> p2l;
  for (int g = 0; g < P; ++g) p2l.insert(p2l.end(), {g, 0});
  EXPECT_EQ(r.placement.phy2log, p2l);
  ASSERT_EQ(r.weight_moves.size(), 7u);
  for (int m = 0; m < 7; ++m) {
    EXPECT_EQ(r.weight_moves[m].slot, 2 * (m + 1) + 1);
    EXPECT_EQ(r.weight_moves[m].src_gpu, 0);
  }
  std::vector<RouteCount> want = {{0, 0, 0, 5}, {0, 1, 0, 6}, {0, 1, 3, 4}, {0, 2, 0, 1}, {0, 2, 5, 4},
                                  {0, 3, 7, 4}, {0, 3, 15, 1}, {0, 4, 9, 4}, {0, 4, 15, 1}, {0, 5, 11, 4},
                                  {0, 5, 15, 1}, {0, 6, 13, 4}, {0, 6, 15, 1}};
  for (int e = 1; e < E; ++e) want.push_back({e, e, 2 * e, 8});
  expect_counts(r.counts, want);
  EXPECT_EQ(gpu_loads(r), std::vector<int64_t>(P, 12));
}

TEST(HaloQ, DomainSizeKeepsGroupsInsideTheOwnersNvlinkDomain) {
  // The case above with NVLink domains of 4 ranks (ISER-MoE's scope): the all-rank group is
  // out, so expert 0 goes to {0..3} (room 12 below T), rank 0 keeps 28 - 12 = 16 over T.
  const int E = 8, P = 8;
  std::vector<int64_t> d(P * E, 0);
  const int64_t e0_sources[P] = {5, 10, 5, 5, 5, 5, 5, 0};
  for (int s = 0; s < P; ++s) d[s * E + 0] = e0_sources[s];
  for (int e = 1; e < E; ++e) d[e * E + e] = 8;
  const ReplicationPlan r = plan_haloq(d, E, topo_of(2, 4), 1, 4);
  ASSERT_EQ(r.broadcasts.size(), 1u);
  EXPECT_EQ(r.broadcasts[0].first, 0);
  EXPECT_EQ(r.broadcasts[0].size, 4);
  EXPECT_EQ(gpu_loads(r), (std::vector<int64_t>{28, 12, 12, 12, 8, 8, 8, 8}));
  EXPECT_THROW(plan_haloq(d, E, topo_of(2, 4), 1, 3), ArgumentError);
}

TEST(HaloQ, DomainGroupsNeverStraddleTwoDomainsOnThreeNodes) {
  // 3 nodes of 8 (G = 24, not 8 x 2^l): halving G gave groups of 6, and [6, 12) spans nodes 0
  // and 1, which iser-moe's multicast refused ("member 8 is not a GPU of the owner's node").
  // Levels now halve from the domain (8, 4). Hot experts on ranks 0 (node 0) and 9 (node 1).
  const int E = 24, P = 24;
  std::vector<int64_t> d(P * E, 0);
  for (int e = 0; e < E; ++e) d[e * E + e] = 8;
  d[0 * E + 0] = 100;
  d[9 * E + 9] = 100;
  const ReplicationPlan r = plan_haloq(d, E, topo_of(3, 8), 2, 8);
  ASSERT_FALSE(r.broadcasts.empty());
  bool node0 = false, node1 = false;
  for (const ReplicaBroadcast& b : r.broadcasts) {
    EXPECT_EQ(b.first / 8, b.owner / 8) << "owner " << b.owner << " group [" << b.first << ", " << b.first + b.size << ")";
    EXPECT_EQ((b.first + b.size - 1) / 8, b.owner / 8) << "owner " << b.owner << " group [" << b.first << ", "
                                                       << b.first + b.size << ")";
    node0 |= b.owner == 0;
    node1 |= b.owner == 9;
  }
  EXPECT_TRUE(node0);
  EXPECT_TRUE(node1);
}

TEST(HaloQ, FinestAbsorbingGroupNeedNotContainTheOwner) {
  // Totals: e0 = 20 (all from rank 0), e1..e3 = 8, e4..e7 = 2: T = ceil(52 / 8) = 7, rank 0
  // sheds 13. Level 1 group {4..7} has room 20 >= 13 ({0..3} has none): it wins over level 0.
  // Coldest first, each up to T: ranks 4, 5, 6 take 5, 5, 3; rank 7 gets the replica with no
  // quota. Ranks 1..3 (8 > 7) then find no group with room below T and are frozen.
  const int E = 8, P = 8;
  std::vector<int64_t> d(P * E, 0);
  d[0] = 20;
  for (int e = 1; e < E; ++e) d[e * E + e] = e < 4 ? 8 : 2;
  const ReplicationPlan r = plan_haloq(d, E, topo_of(2, 4), 1);
  EXPECT_EQ(r.placement.phy2log, (std::vector<int32_t>{0, 0, 1, 1, 2, 2, 3, 3, 4, 0, 5, 0, 6, 0, 7, 0}));
  ASSERT_EQ(r.weight_moves.size(), 4u);
  for (int m = 0; m < 4; ++m) {
    EXPECT_EQ(r.weight_moves[m].slot, 9 + 2 * m);
    EXPECT_EQ(r.weight_moves[m].src_gpu, 0);
  }
  EXPECT_EQ(gpu_loads(r), (std::vector<int64_t>{7, 8, 8, 8, 7, 7, 5, 2}));
  // One broadcast: expert 0 of rank 0 into helper index 0 of group {4..7}, owner outside.
  ASSERT_EQ(r.broadcasts.size(), 1u);
  const ReplicaBroadcast& b = r.broadcasts[0];
  EXPECT_EQ(b.expert, 0);
  EXPECT_EQ(b.owner, 0);
  EXPECT_EQ(b.first, 4);
  EXPECT_EQ(b.size, 4);
  EXPECT_EQ(b.helper, 0);
  EXPECT_FALSE(b.owner_in_group());
}

TEST(HaloQ, QuotaRepairTradesSpareQuotaSoRoutesStayLocal) {
  // 4 ranks, one home and two helper slots each. e0 (owner 0) has 10 routes from ranks 0 and 3,
  // e1 (owner 1) 10 from ranks 1 and 2: T = 10. Placement sends 10 of e0's quota to rank 2 (the
  // coldest) and 10 of e1's to rank 3, the reverse of where their routes come from. Quota repair
  // (pair (2, 3)): rank 2 takes 3's spare e1 quota and gives it its spare e0 quota, so every
  // route is served on its own rank and the loads stay 10 each.
  const int E = 4, P = 4;
  std::vector<int64_t> d(P * E, 0);
  d[0 * E + 0] = 10, d[3 * E + 0] = 10, d[1 * E + 1] = 10, d[2 * E + 1] = 10;
  const ReplicationPlan r = plan_haloq(d, E, topo_of(1, 4), 2);
  EXPECT_EQ(r.placement.phy2log, (std::vector<int32_t>{0, 0, 1, 1, 0, 1, 2, 0, 1, 3, 0, 1}));
  expect_counts(r.counts, {{0, 0, 0, 10}, {0, 3, 10, 10}, {1, 1, 3, 10}, {1, 2, 8, 10}});
  ASSERT_EQ(r.weight_moves.size(), 6u);
  const int32_t slots[6] = {7, 10, 4, 11, 2, 8}, srcs[6] = {0, 0, 0, 1, 1, 1};
  for (int m = 0; m < 6; ++m) {
    EXPECT_EQ(r.weight_moves[m].slot, slots[m]);
    EXPECT_EQ(r.weight_moves[m].src_gpu, srcs[m]);
  }
  EXPECT_EQ(gpu_loads(r), std::vector<int64_t>(P, 10));
}

TEST(Replicate, ArgumentErrorsNameTheArgument) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { plan_moonep(std::vector<int64_t>(6, 1), 3, topo_of(1, 2), 1); }).rfind("topo:", 0), 0u);
  EXPECT_EQ(message([] { plan_haloq(std::vector<int64_t>(3, 1), 4, topo_of(1, 2), 1); }).rfind("demand:", 0), 0u);
  EXPECT_EQ(message([] { plan_haloq(std::vector<int64_t>(8, -1), 4, topo_of(1, 2), 1); }).rfind("demand:", 0), 0u);
  EXPECT_EQ(message([] { plan_moonep(std::vector<int64_t>(8, 1), 4, topo_of(1, 2), -1); }).rfind("extra:", 0), 0u);
}

// Both plans serve every (source, expert) demand exactly, in slots holding the expert, copy
// weights from the owner into slots holding the expert, and never raise the maximum load.
RC_GTEST_PROP(Replicate, PlansServeDemandFromReplicasOfTheExpert, ()) {
  const int nodes = *rc::gen::inRange(1, 4), per_node = *rc::gen::element(1, 2, 4);
  const int G = nodes * per_node, H = *rc::gen::inRange(1, 4), E = G * H, extra = *rc::gen::inRange(0, 4);
  std::vector<int64_t> d(size_t(G) * E);
  for (auto& x : d) x = *rc::gen::inRange(0, 50);
  const Topology topo = topo_of(nodes, per_node);
  const auto home = home_loads(d, E, topo);
  const int64_t home_max = *std::max_element(home.begin(), home.end());
  for (const bool moon : {true, false}) {
    const ReplicationPlan r = moon ? plan_moonep(d, E, topo, extra) : plan_haloq(d, E, topo, extra);
    r.placement.validate("placement");
    RC_ASSERT(r.placement.slots_per_gpu == H + extra);
    std::vector<int64_t> served(d.size(), 0);
    for (const RouteCount& c : r.counts) {
      RC_ASSERT(c.tokens > 0);
      RC_ASSERT(r.placement.phy2log[c.slot] == c.expert);
      served[size_t(c.src_gpu) * E + c.expert] += c.tokens;
    }
    RC_ASSERT(served == d);
    for (const WeightMove& m : r.weight_moves) {
      const int32_t e = r.placement.phy2log[m.slot];
      RC_ASSERT(m.src_gpu == e / H);
      RC_ASSERT(r.placement.gpu_of_slot(m.slot) != m.src_gpu);
    }
    const auto load = gpu_loads(r);
    const int64_t total = std::accumulate(load.begin(), load.end(), int64_t(0));
    RC_ASSERT(*std::max_element(load.begin(), load.end()) <= home_max);
    if (moon && extra == 0) RC_ASSERT(load == home);
    RC_ASSERT(*std::max_element(load.begin(), load.end()) >= (total + G - 1) / G);
  }
}
