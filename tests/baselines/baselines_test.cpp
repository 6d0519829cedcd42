// Each baseline on a hand-checkable case showing the behaviour that defines it
// (docs/baselines/*.md), plus properties on random small batches.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "baselines/baselines.hpp"
#include "baselines/plan_edit.hpp"
#include "core/error.hpp"
#include "pipeline/strategy.hpp"
#include "../common/plan_check.hpp"

namespace zepp {
namespace {

using test::make_workload;
using test::tiny_model;
using test::tiny_topology;

struct Decided {
  StrategyDecision d;
  CommPlan plan;
};

Decided decide(const std::string& name, const Workload& w, const ModelShape& m, const Topology& t,
               const StrategyOptions& opt) {
  for (const auto& s : strategy_registry()) {
    if (s.name != name) continue;
    Decided out{s.decide(StrategyInput{w, m, t, opt}), {}};
    out.plan = out.d.make_plan(out.d.placement, out.d.routing);
    return out;
  }
  ADD_FAILURE() << "no strategy " << name;
  return {};
}

// (phase, hop, src, dst, tokens) of every transfer, for exact comparisons.
using Move = std::tuple<Phase, Hop, int, int, std::vector<int64_t>>;
std::set<Move> moves(const CommPlan& plan) {
  std::set<Move> out;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer) {
      std::vector<int64_t> tok = test::tokens_of(plan, t);
      std::sort(tok.begin(), tok.end());
      out.insert({t.phase, t.hop, t.gpu, t.dst_gpu, tok});
    }
  return out;
}

// Most distinct sending NICs any NIC receives from within one (phase, round): 1 = no incast.
int max_incast(const CommPlan& plan) {
  std::map<std::tuple<Phase, int, int>, std::set<int>> senders;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.link == Link::NIC) senders[{t.phase, t.round, t.dst_gpu}].insert(t.gpu);
  size_t most = 0;
  for (const auto& [key, s] : senders) most = std::max(most, s.size());
  return int(most);
}

// 2 nodes x 2 GPUs, expert e on GPU e. GPU 0 holds tokens 0-3 and GPU 1 tokens 4-5, all for
// expert 3 (GPU 3): plain all-to-allv has both NICs of node 0 put into GPU 3 at once.
TEST(Fast, SplitsSkewedRowsOverNicsAndPutsOnlyToPeers) {
  const Topology topo = tiny_topology(2);
  const ModelShape model = tiny_model(4, 1);
  const Workload w = make_workload({{{3}, {3}, {3}, {3}}, {{3}, {3}}, {}, {}}, 4);
  const StrategyOptions opt;
  const Decided fast = decide("fast", w, model, topo, opt);
  EXPECT_EQ(test::check_plan(fast.plan, w.batch, fast.d.placement, fast.d.routing), "");

  // Dispatch: node 0 sends 6 rows, 3 per NIC (eq. (3)): GPU 0 keeps tokens 0-2 and relays 3 to
  // GPU 1; GPU 0 puts to its peer GPU 2, which forwards to GPU 3; GPU 1 puts straight to GPU 3.
  // Combine from node 1: GPU 3 keeps rows 0-2 and relays 3-5 to GPU 2; GPU 3's put goes to its
  // peer GPU 1 (forwarded to GPU 0), GPU 2's one put to GPU 0 carries rows for GPUs 0 and 1.
  const std::set<Move> expected = {
      {Phase::Dispatch, Hop::Relay, 0, 1, {3}},
      {Phase::Dispatch, Hop::Put, 0, 2, {0, 1, 2}},
      {Phase::Dispatch, Hop::Forward, 2, 3, {0, 1, 2}},
      {Phase::Dispatch, Hop::Put, 1, 3, {3, 4, 5}},
      {Phase::Combine, Hop::Relay, 3, 2, {3, 4, 5}},
      {Phase::Combine, Hop::Put, 3, 1, {0, 1, 2}},
      {Phase::Combine, Hop::Forward, 1, 0, {0, 1, 2}},
      {Phase::Combine, Hop::Put, 2, 0, {3, 4, 5}},
      {Phase::Combine, Hop::Forward, 0, 1, {4, 5}},
  };
  EXPECT_EQ(moves(fast.plan), expected);
  EXPECT_EQ(max_incast(fast.plan), 1);

  const Decided a2av = decide("a2av", w, model, topo, opt);
  EXPECT_EQ(max_incast(a2av.plan), 2);  // GPUs 0 and 1 both put into GPU 3

  // No overlap: one GEMM per expert, after the phase barrier.
  int computes = 0;
  for (const Task& t : fast.plan.tasks) computes += t.kind == TaskKind::Compute;
  EXPECT_EQ(computes, 1);
}

// Every GPU's token selects the expert on its own GPU: all-to-allv moves nothing, COMET's
// all-gather still sends every token to every other GPU, crossing to the other node once.
TEST(Comet, AllGatherSendsEveryTokenToEveryNode) {
  const Topology topo = tiny_topology(2);
  const ModelShape model = tiny_model(4, 1);
  const Workload w = make_workload({{{0}}, {{1}}, {{2}}, {{3}}}, 4);
  const StrategyOptions opt;
  const Decided comet = decide("comet", w, model, topo, opt);
  EXPECT_EQ(test::check_plan(comet.plan, w.batch, comet.d.placement, comet.d.routing), "");
  EXPECT_TRUE(moves(decide("a2av", w, model, topo, opt).plan).empty());

  const std::set<Move> expected = {
      {Phase::Dispatch, Hop::Direct, 0, 1, {0}}, {Phase::Dispatch, Hop::Put, 0, 2, {0}},
      {Phase::Dispatch, Hop::Forward, 2, 3, {0}}, {Phase::Dispatch, Hop::Direct, 1, 0, {1}},
      {Phase::Dispatch, Hop::Put, 1, 3, {1}},    {Phase::Dispatch, Hop::Forward, 3, 2, {1}},
      {Phase::Dispatch, Hop::Direct, 2, 3, {2}}, {Phase::Dispatch, Hop::Put, 2, 0, {2}},
      {Phase::Dispatch, Hop::Forward, 0, 1, {2}}, {Phase::Dispatch, Hop::Direct, 3, 2, {3}},
      {Phase::Dispatch, Hop::Put, 3, 1, {3}},    {Phase::Dispatch, Hop::Forward, 1, 0, {3}},
  };
  EXPECT_EQ(moves(comet.plan), expected);
  for (int64_t tok = 0; tok < 4; ++tok) {
    const int other = 1 - test::src_gpu_of(w.batch, tok) / 2;
    EXPECT_EQ(test::puts_of_token(comet.plan, tok), (std::map<int, int>{{other, 1}})) << "token " << tok;
  }
}

// COMET+EPLB keeps the `eplb` strategy's placement and routing; only the dispatch differs.
TEST(CometEplb, UsesEplbPlacementWithAllGather) {
  const Topology topo = tiny_topology(2);
  const ModelShape model = tiny_model(4, 2);
  const Workload w = make_workload({{{0, 1}, {0, 2}}, {{0, 3}}, {{1, 0}}, {}}, 4, {9, 1, 3, 2});
  StrategyOptions opt;
  opt.extra_slots = 1;
  const Decided ce = decide("comet+eplb", w, model, topo, opt);
  const Decided eplb = decide("eplb", w, model, topo, opt);
  EXPECT_EQ(ce.d.placement.phy2log, eplb.d.placement.phy2log);
  EXPECT_EQ(ce.d.placement.slots_per_gpu, 2);
  EXPECT_EQ(ce.d.routing.slot_of_pair, eplb.d.routing.slot_of_pair);
  EXPECT_EQ(ce.d.placement.logcnt()[0], 3);  // hierarchical EPLB: node 0's two spare slots go to hot expert 0
  EXPECT_EQ(test::check_plan(ce.plan, w.batch, ce.d.placement, ce.d.routing), "");
  for (int64_t tok = 0; tok < w.batch.num_tokens(); ++tok) {
    const int other = 1 - test::src_gpu_of(w.batch, tok) / 2;
    EXPECT_EQ(test::puts_of_token(ce.plan, tok), (std::map<int, int>{{other, 1}})) << "token " << tok;
  }
}

// Nearest replica: own GPU, else own node, else remote, rotating over equally near replicas.
TEST(Epic, NearestReplicaRoutingByHand) {
  const Topology topo = tiny_topology(2);
  // Slots 0-1 on GPU 0, 2-3 on GPU 1, 4-5 on GPU 2, 6-7 on GPU 3.
  const Placement p{4, 4, 2, {1, 2, 3, 1, 0, 2, 0, 3}};
  const Workload w = make_workload({{{0}, {0}, {0}, {2}, {3}}, {}, {}, {{1}, {1}}}, 4);
  const Routing r = baselines::route_nearest(w.batch, p, topo);
  EXPECT_EQ(r.slot_of_pair, (std::vector<int32_t>{4, 6, 4, 1, 2, 0, 3}));
  const std::vector<std::tuple<int, int, int, int64_t>> want = {
      {0, 0, 4, 2}, {0, 0, 6, 1}, {1, 3, 0, 1}, {1, 3, 3, 1}, {2, 0, 1, 1}, {3, 0, 2, 1}};
  ASSERT_EQ(r.counts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(std::make_tuple(r.counts[i].expert, r.counts[i].src_gpu, r.counts[i].slot, r.counts[i].tokens), want[i]);
}

TEST(Epic, RouteNearestRejectsMismatchedShapes) {
  const Placement p{4, 4, 1, {0, 1, 2, 3}};
  const Workload w = make_workload({{{0}}, {}}, 4);  // 2 GPUs, topology has 4
  EXPECT_THROW(baselines::route_nearest(w.batch, p, tiny_topology(2)), ArgumentError);
}

// EPIC crosses to a node once per token however many of its experts live there; all-to-allv
// sends one row per remote (token, expert) pair. Token 0 of GPU 0 selects experts 2 and 3,
// both on node 1 without replicas elsewhere.
TEST(Epic, SendsATokenToANodeOnce) {
  const Topology topo = tiny_topology(2);
  const ModelShape model = tiny_model(4, 2);
  const Workload w = make_workload({{{2, 3}}, {}, {}, {}}, 4);
  const Placement p{4, 4, 1, {0, 1, 2, 3}};
  const Routing r = baselines::route_nearest(w.batch, p, topo);
  CommPlan plan = build_comm_plan(w.batch, p, r, topo, model, PlanOptions{false, true, true, 0.0});
  baselines::one_gemm_per_slot(plan);
  EXPECT_EQ(test::check_plan(plan, w.batch, p, r), "");
  EXPECT_EQ(test::puts_of_token(plan, 0), (std::map<int, int>{{1, 1}}));
  const Decided a2av = decide("a2av", w, model, topo, StrategyOptions{});
  EXPECT_EQ(test::puts_of_token(a2av.plan, 0), (std::map<int, int>{{1, 2}}));
}

// Sum over tokens of the remote nodes serving at least one of its pairs.
int64_t remote_nodes_needed(const RoutingBatch& b, const Routing& r, const Placement& p, int G) {
  int64_t n = 0;
  for (int64_t tok = 0; tok < b.num_tokens(); ++tok) {
    std::set<int> nodes;
    const int src_node = test::src_gpu_of(b, tok) / G;
    for (int k = 0; k < b.top_k; ++k) {
      const int node = p.gpu_of_slot(r.slot_of_pair[size_t(tok * b.top_k + k)]) / G;
      if (node != src_node) nodes.insert(node);
    }
    n += int64_t(nodes.size());
  }
  return n;
}

TEST(PlanEdit, DropTasksInheritsDependenciesAndRenumbers) {
  CommPlan plan;
  plan.tasks.resize(4);
  plan.set_deps(1, {0});
  plan.set_deps(2, {1});
  plan.set_deps(3, {2, 0});
  baselines::drop_tasks(plan, {0, 1, 1, 0});
  ASSERT_EQ(plan.tasks.size(), 2u);
  EXPECT_EQ(test::deps_of(plan, plan.tasks[1]), (std::vector<int32_t>{0}));
  EXPECT_THROW(baselines::drop_tasks(plan, {0}), ArgumentError);
}

TEST(PlanEdit, AppendRowsShiftsPairOffsets) {
  CommPlan plan;
  plan.tasks.resize(3);
  plan.tasks[0].bytes = plan.tasks[1].bytes = 2;
  plan.set_rows(0, {5}, {0, 2}, {10, 11});
  plan.set_rows(1, {7}, {0, 1}, {14});
  plan.set_deps(1, {2});
  baselines::append_rows(plan, 0, 1);
  const Task& a = plan.tasks[0];
  EXPECT_EQ(test::tokens_of(plan, a), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(test::pair_begin_of(plan, a), (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(test::pairs_of(plan, a), (std::vector<int64_t>{10, 11, 14}));
  EXPECT_EQ(test::deps_of(plan, a), (std::vector<int32_t>{2}));
  EXPECT_DOUBLE_EQ(a.bytes, 4);
  plan.set_rows(2, {1});
  EXPECT_THROW(baselines::append_rows(plan, 0, 2), ArgumentError);
}

// Random small clusters and batches: every baseline's plan is valid and shows its behaviour.
RC_GTEST_PROP(Baselines, PlansAreValidAndKeepTheirDefiningBehaviour, ()) {
  const int nodes = *rc::gen::inRange(2, 4);
  const Topology topo = tiny_topology(nodes);
  const int gpus = topo.num_gpus();
  const int E = gpus * *rc::gen::inRange(1, 3);
  const int K = *rc::gen::inRange(1, std::min(E, 4) + 1);
  std::vector<std::vector<std::vector<int>>> tokens(static_cast<size_t>(gpus));
  for (auto& gpu : tokens) {
    const int T = *rc::gen::inRange(0, 5);
    for (int t = 0; t < T; ++t) {
      std::vector<int> ids(static_cast<size_t>(E));
      std::iota(ids.begin(), ids.end(), 0);
      for (int k = 0; k < K; ++k) std::swap(ids[size_t(k)], ids[size_t(k + *rc::gen::inRange(0, E - k))]);
      ids.resize(size_t(K));
      gpu.push_back(ids);
    }
  }
  if (tokens[0].empty()) tokens[0].push_back(std::vector<int>(size_t(K), 0)), std::iota(tokens[0][0].begin(), tokens[0][0].end(), 0);
  std::vector<double> history(static_cast<size_t>(E));
  for (double& h : history) h = *rc::gen::inRange(1, 20);
  const Workload w = make_workload(tokens, E, history);
  const ModelShape model = tiny_model(E, K);
  StrategyOptions opt;
  opt.extra_slots = 1;

  for (const std::string name : {"fast", "comet", "comet+eplb", "epic"}) {
    const Decided x = decide(name, w, model, topo, opt);
    EXPECT_EQ(test::check_plan(x.plan, w.batch, x.d.placement, x.d.routing), "");
    if (name == "fast") {
      RC_ASSERT(max_incast(x.plan) <= 1);
      for (const Task& t : x.plan.tasks)
        if (t.kind == TaskKind::Transfer && t.link == Link::NIC) RC_ASSERT(t.gpu % 2 == t.dst_gpu % 2);
    } else if (name == "epic") {
      int64_t puts = 0;
      for (int64_t tok = 0; tok < w.batch.num_tokens(); ++tok)
        for (const auto& [node, n] : test::puts_of_token(x.plan, tok)) RC_ASSERT(n <= 1), puts += n;
      RC_ASSERT(puts == remote_nodes_needed(w.batch, x.d.routing, x.d.placement, 2));
      std::set<int32_t> slots;
      for (const Task& t : x.plan.tasks)
        if (t.kind == TaskKind::Compute) RC_ASSERT(slots.insert(t.slot).second);
    } else {
      for (int64_t tok = 0; tok < w.batch.num_tokens(); ++tok) {
        const auto puts = test::puts_of_token(x.plan, tok);
        RC_ASSERT(int(puts.size()) == nodes - 1);
        for (const auto& [node, n] : puts) RC_ASSERT(n == 1);
      }
    }
  }
  RC_ASSERT(!::testing::Test::HasFailure());
}

// EPIC's placement (epic_placement.cpp) by hand: 2 nodes x 1 GPU, 2 slots each, 4 experts of
// equal load 10, so one replica each. History: 10 tokens {0, 3} and 10 tokens {1, 2} (H = 20);
// by chance a pair would meet 10 * 10 / 20 = 5 times, so 0-3 and 1-2 are +5, the others -5.
// Expert 0 opens node 0; expert 1 prefers node 1 (affinity 0 over -5); 2 joins 1 (+5); 3 takes
// node 0's last slot. Without co-activation data it is least-loaded packing: {0, 2}, {1, 3}.
TEST(Epic, PlacementGroupsExpertsSelectedTogether) {
  Topology topo;
  topo.nodes = 2;
  topo.gpus_per_node = 1;
  const std::vector<double> load = {10, 10, 10, 10};
  std::vector<double> co(16, 0.0);
  co[0 * 4 + 3] = co[3 * 4 + 0] = co[1 * 4 + 2] = co[2 * 4 + 1] = 10;
  const Placement p = baselines::place_coactivation(load, co, 2, topo, 2);
  EXPECT_EQ(p.phy2log, (std::vector<int32_t>{0, 3, 1, 2}));
  EXPECT_EQ(baselines::place_coactivation(load, {}, 2, topo, 2).phy2log, (std::vector<int32_t>{0, 2, 1, 3}));
  EXPECT_THROW(baselines::place_coactivation(load, std::vector<double>(15, 0.0), 2, topo, 2), ArgumentError);
  EXPECT_THROW(baselines::place_coactivation(load, co, 0, topo, 2), ArgumentError);
  EXPECT_THROW(baselines::place_coactivation(load, co, 2, topo, 1), ArgumentError);  // 2 slots < 4 experts
  EXPECT_THROW(baselines::place_coactivation({10, -1, 10, 10}, co, 2, topo, 2), ArgumentError);
}

// A hot expert gets the extra slots, on distinct nodes first: 2 nodes x 2 GPUs, 2 slots each.
TEST(Epic, PlacementReplicatesHotExpertsOnDistinctNodes) {
  Topology topo;
  topo.nodes = 2;
  topo.gpus_per_node = 2;
  const Placement p = baselines::place_coactivation({100, 1, 1, 1, 1, 1}, {}, 1, topo, 2);
  const auto replicas = p.replicas();
  ASSERT_EQ(replicas[0].size(), 3u);  // 8 slots, 6 experts: water-filling gives both extras to expert 0
  std::set<int> nodes, gpus;
  for (int32_t s : replicas[0]) nodes.insert(p.gpu_of_slot(s) / 2), gpus.insert(p.gpu_of_slot(s));
  EXPECT_EQ(nodes.size(), 2u);
  EXPECT_EQ(gpus.size(), 3u);
}

}  // namespace
}  // namespace zepp
