// rank_layout (plan/rank_layout.hpp): each rank's send and receive lists, built from its own
// tokens, against a direct tally of every rank's slots and against the global comm plan.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>

#include "core/error.hpp"
#include "plan/comm_plan.hpp"
#include "plan/rank_layout.hpp"
#include "../common/rank_cases.hpp"
#include "fixture.hpp"

namespace zepp {
namespace {

RC_GTEST_PROP(RankLayout, ListsAreTheTallyOfEveryRanksSlots, ()) {
  const test::RankCase c = test::random_rank_case(true);
  const int G = c.placement.num_gpus, N = c.topo.nodes, k = c.top_k, spg = c.placement.slots_per_gpu;
  std::vector<int64_t> m;
  const auto slots = test::route_every_rank(c, m);
  std::vector<int64_t> served(size_t(G) * G, 0);  // [dst GPU][src GPU] pairs
  std::vector<int64_t> slot_load(c.placement.num_slots(), 0);
  for (int i = 0; i < G; ++i)
    for (int32_t s : slots[i])
      if (s >= 0) ++served[size_t(c.placement.gpu_of_slot(s)) * G + i], ++slot_load[s];
  RankLayout out;  // reused over ranks, as a serving engine would
  for (int i = 0; i < G; ++i) {
    rank_layout(c.placement, c.topo, m, i, slots[i].data(), int64_t(slots[i].size()) / k, k, out);
    RC_ASSERT(out.rank == i);
    for (int g = 0; g < G; ++g) {
      std::vector<int64_t> pairs;
      std::set<int64_t> tokens;
      for (size_t p = 0; p < slots[i].size(); ++p)
        if (slots[i][p] >= 0 && c.placement.gpu_of_slot(slots[i][p]) == g) pairs.push_back(int64_t(p)), tokens.insert(int64_t(p) / k);
      RC_ASSERT(std::vector<int64_t>(out.gpu_pairs.begin() + out.gpu_begin[g], out.gpu_pairs.begin() + out.gpu_begin[g + 1]) == pairs);
      RC_ASSERT(out.rows_to_gpu[g] == int64_t(tokens.size()));
      RC_ASSERT(out.recv_pairs[g] == served[size_t(i) * G + g]);
    }
    for (int n = 0; n < N; ++n) {
      std::vector<int64_t> tokens;
      if (n != c.topo.node_of(i))
        for (size_t p = 0; p < slots[i].size(); ++p)
          if (slots[i][p] >= 0 && c.topo.node_of(c.placement.gpu_of_slot(slots[i][p])) == n &&
              (tokens.empty() || tokens.back() != int64_t(p) / k))
            tokens.push_back(int64_t(p) / k);
      RC_ASSERT(std::vector<int64_t>(out.node_tokens.begin() + out.node_begin[n], out.node_tokens.begin() + out.node_begin[n + 1]) == tokens);
      RC_ASSERT(out.rows_to_node(n) == int64_t(tokens.size()));
    }
    for (int j = 0; j < spg; ++j) RC_ASSERT(out.slot_pairs[j] == slot_load[i * spg + j]);
  }
}

// Without padding the ranks' tokens form a RoutingBatch; build_comm_plan (merge, split,
// overlap) on the concatenated slots moves exactly the rows the per-rank lists name.
RC_GTEST_PROP(RankLayout, ListsAreTheGlobalPlansDispatchRows, ()) {
  const test::RankCase c = test::random_rank_case(false);
  const int G = c.placement.num_gpus, N = c.topo.nodes, k = c.top_k;
  std::vector<int64_t> m;
  const auto slots = test::route_every_rank(c, m);
  RoutingBatch b;
  b.num_gpus = G;
  b.num_experts = c.placement.num_experts;
  b.top_k = k;
  b.token_offset = {0};
  Routing r;
  for (int i = 0; i < G; ++i) {
    b.expert_ids.insert(b.expert_ids.end(), c.ids[i].begin(), c.ids[i].end());
    r.slot_of_pair.insert(r.slot_of_pair.end(), slots[i].begin(), slots[i].end());
    b.token_offset.push_back(b.token_offset.back() + int64_t(c.ids[i].size()) / k);
  }
  b.gate_weights.assign(b.expert_ids.size(), 1.0f / float(k));
  Topology topo = test::small_topology(c.topo.nodes, c.topo.gpus_per_node);
  const CommPlan plan = build_comm_plan(b, c.placement, r, topo, test::small_model(b.num_experts, k), PlanOptions{});
  // Global token -> (its GPU); rows the plan sends: intra-node [src][dst], inter-node [src][node].
  std::vector<int> gpu_of_token;
  for (int i = 0; i < G; ++i) gpu_of_token.insert(gpu_of_token.end(), b.token_offset[i + 1] - b.token_offset[i], i);
  std::map<std::pair<int, int>, std::set<int64_t>> intra, inter;
  for (const Task& t : plan.tasks) {
    if (t.kind != TaskKind::Transfer || t.phase != Phase::Dispatch) continue;
    if (t.link == Link::NVLink && t.hop == Hop::Direct)
      for (int64_t tok : plan.tokens(t)) RC_ASSERT(intra[std::pair(t.gpu, t.dst_gpu)].insert(tok).second);
    if (t.hop == Hop::Put)
      for (int64_t tok : plan.tokens(t))
        RC_ASSERT(inter[std::pair(gpu_of_token[tok], topo.node_of(t.dst_gpu))].insert(tok).second);
  }
  RankLayout out;
  for (int i = 0; i < G; ++i) {
    rank_layout(c.placement, c.topo, m, i, slots[i].data(), int64_t(slots[i].size()) / k, k, out);
    const int64_t off = b.token_offset[i];
    for (int h = 0; h < G; ++h) {
      if (h == i || topo.node_of(h) != topo.node_of(i)) continue;
      std::set<int64_t> want;
      for (int64_t x = out.gpu_begin[h]; x < out.gpu_begin[h + 1]; ++x) want.insert(off + out.gpu_pairs[x] / k);
      RC_ASSERT(intra[std::pair(i, h)] == want);
    }
    for (int n = 0; n < N; ++n) {
      std::set<int64_t> want;
      for (int64_t x = out.node_begin[n]; x < out.node_begin[n + 1]; ++x) want.insert(off + out.node_tokens[x]);
      RC_ASSERT(inter[std::pair(i, n)] == want);
    }
  }
}

// Up to 96 GPUs on up to 96 nodes, so that both ways of tracking a token's GPUs and nodes run
// (registers up to 64 GPUs and 64 nodes, arrays above), one RankLayout reused across shapes:
// the lists equal a direct tally of arbitrary slots (any slot, or -1), the receive side the
// sums of m's rows.
RC_GTEST_PROP(RankLayout, ListsAreTheTallyOnWideClusters, ()) {
  const int nodes = *rc::gen::inRange(1, 97), gpn = *rc::gen::inRange(1, 3), G = nodes * gpn;
  const int spg = *rc::gen::inRange(1, 3), S = G * spg, k = *rc::gen::inRange(1, 9);
  Topology topo = test::small_topology(nodes, gpn);
  Placement pl;
  pl.num_gpus = G;
  pl.num_experts = S;
  pl.slots_per_gpu = spg;
  for (int p = 0; p < S; ++p) pl.phy2log.push_back(p);
  const int64_t T = *rc::gen::inRange(0, 40);
  const auto slots = *rc::gen::container<std::vector<int32_t>>(size_t(T * k), rc::gen::inRange(-1, S));
  const auto m = *rc::gen::container<std::vector<int64_t>>(size_t(S) * G, rc::gen::inRange<int64_t>(0, 5));
  static RankLayout out;  // reused from case to case
  for (int rank : {0, G - 1, *rc::gen::inRange(0, G)}) {
    rank_layout(pl, topo, m, rank, slots.data(), T, k, out);
    const int own = topo.node_of(rank);
    for (int g = 0; g < G; ++g) {
      std::vector<int64_t> pairs;
      std::set<int64_t> tokens;
      for (size_t p = 0; p < slots.size(); ++p)
        if (slots[p] >= 0 && pl.gpu_of_slot(slots[p]) == g) pairs.push_back(int64_t(p)), tokens.insert(int64_t(p) / k);
      RC_ASSERT(std::vector<int64_t>(out.gpu_pairs.begin() + out.gpu_begin[g], out.gpu_pairs.begin() + out.gpu_begin[g + 1]) == pairs);
      RC_ASSERT(out.rows_to_gpu[g] == int64_t(tokens.size()));
      int64_t recv = 0;
      for (int j = 0; j < spg; ++j) recv += m[size_t(rank * spg + j) * G + g];
      RC_ASSERT(out.recv_pairs[g] == recv);
    }
    for (int n = 0; n < nodes; ++n) {
      std::vector<int64_t> tokens;
      if (n != own)
        for (size_t p = 0; p < slots.size(); ++p)
          if (slots[p] >= 0 && topo.node_of(pl.gpu_of_slot(slots[p])) == n && (tokens.empty() || tokens.back() != int64_t(p) / k))
            tokens.push_back(int64_t(p) / k);
      RC_ASSERT(std::vector<int64_t>(out.node_tokens.begin() + out.node_begin[n], out.node_tokens.begin() + out.node_begin[n + 1]) == tokens);
    }
  }
}

TEST(RankLayout, BadInputIsNamed) {
  const Topology topo = test::small_topology(1, 2);
  Placement p;
  p.num_gpus = 2;
  p.num_experts = 2;
  p.slots_per_gpu = 1;
  p.phy2log = {0, 1};
  const std::vector<int64_t> m(4, 0);
  const std::vector<int32_t> slots = {0, 2};
  RankLayout out;
  auto message = [&](auto&& fn) {
    try {
      fn();
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { rank_layout(p, topo, m, 0, slots.data(), 1, 2, out); }),
            "slot_of_pair: entry 1 is 2, expected [0, 2) or -1 (padding)");
  EXPECT_EQ(message([&] { rank_layout(p, topo, m, 2, slots.data(), 1, 2, out); }), "rank: expected [0, 2), got 2");
  EXPECT_EQ(message([&] { rank_layout(p, topo, std::vector<int64_t>(3), 0, slots.data(), 1, 2, out); }).substr(0, 19),
            "plan: has 3 entries");
}

}  // namespace
}  // namespace zepp
