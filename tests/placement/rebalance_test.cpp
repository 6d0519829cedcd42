// Stable rebalancing from a previous placement and placement after lost GPUs (issue 11).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "../common/loads.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"
#include "trace/trace.hpp"

namespace {

using zepp::test::drift;
using zepp::test::power_law;

// h100 links: a NIC move costs the NVLink / NIC bandwidth ratio (6) times an NVLink one.
zepp::Topology topo(int nodes, int gpus_per_node) {
  zepp::Topology t = zepp::topology_preset("h100", nodes);
  t.gpus_per_node = gpus_per_node;
  return t;
}

// Bytes a move from `prev` (full cluster) to `next` (over `survivors`) fetches, counted slot by
// slot: nothing when the slot keeps its expert or its GPU held the expert before.
struct Fetched {
  double nvlink = 0, nic = 0;
  int changed = 0;
};
Fetched fetched(const std::vector<int32_t>& prev, const zepp::Placement& next, const std::vector<int>& survivors,
                const zepp::Topology& t, double bytes) {
  const int S = next.slots_per_gpu;
  Fetched f;
  for (int i = 0; i < next.num_gpus; ++i)
    for (int s = 0; s < S; ++s) {
      const int g = survivors[i], e = next.phy2log[i * S + s];
      if (prev[g * S + s] == e) continue;
      ++f.changed;
      bool on_gpu = false, on_node = false;
      for (int j : survivors)
        for (int k = 0; k < S; ++k)
          if (prev[j * S + k] == e) {
            on_gpu |= j == g;
            on_node |= t.node_of(j) == t.node_of(g);
          }
      if (on_gpu) continue;
      (on_node ? f.nvlink : f.nic) += bytes;
    }
  return f;
}

void expect_valid(const zepp::Rebalanced& r, int G, int S, int E) {
  ASSERT_EQ(r.placement.num_gpus, G);
  ASSERT_EQ(r.placement.slots_per_gpu, S);
  ASSERT_EQ(int(r.survivors.size()), G);
  r.placement.validate("placement");  // every expert served
  EXPECT_EQ(r.placement.num_experts, E);
  for (int g = 0; g < G; ++g)
    EXPECT_EQ(std::set<int>(r.placement.phy2log.begin() + g * S, r.placement.phy2log.begin() + (g + 1) * S).size(),
              size_t(S));
}

const double kExpertBytes = 3.0 * 2048 * 1408 * 2;  // one DeepSeek-V2-Lite expert in BF16

}  // namespace

// The churn case: 256 experts, 288 slots on 32 GPUs of 4 nodes, every load moved by at most
// +-2%. From scratch 249 of 288 slots changed and 156 copies crossed nodes; with the previous
// placement nothing crosses a node and at most 5% of the slots change.
TEST(Rebalance, SmallDriftMovesAlmostNothing) {
  const zepp::Topology t = topo(4, 8);
  for (double exponent : {0.5, 1.0, 1.5}) {
    const std::vector<double> before = power_law(256, exponent, 3), after = drift(before, 0.02, 4);
    const zepp::Placement prev = zepp::place_zepp(before, t, 1);
    zepp::RebalanceOptions opt;
    opt.previous = prev.phy2log;
    opt.expert_bytes = kExpertBytes;
    const zepp::Rebalanced r = zepp::rebalance_zepp(after, t, 9, opt);
    expect_valid(r, 32, 9, 256);
    EXPECT_EQ(r.moves.nic, 0) << "exponent " << exponent;
    EXPECT_LE(r.moves.slots_changed, 288 * 5 / 100) << "exponent " << exponent;
    EXPECT_LE(r.imbalance, r.fresh_imbalance * 1.01 + 1e-12);
    const Fetched f = fetched(prev.phy2log, r.placement, r.survivors, t, kExpertBytes);
    EXPECT_EQ(f.changed, r.moves.slots_changed);
    EXPECT_DOUBLE_EQ(f.nic, r.moves.nic_bytes);
    EXPECT_DOUBLE_EQ(f.nvlink, r.moves.nvlink_bytes);
    // Expert size unknown: the same moves, weighed in copies (not free), and no bytes reported.
    opt.expert_bytes = 0;
    const zepp::Rebalanced u = zepp::rebalance_zepp(after, t, 9, opt);
    EXPECT_EQ(u.placement.phy2log, r.placement.phy2log) << "exponent " << exponent;
    EXPECT_EQ(u.moves.nvlink, r.moves.nvlink);
    EXPECT_EQ(u.moves.nvlink_bytes + u.moves.nic_bytes, 0.0);
  }
}

// With the previous placement a rebalance never fetches more bytes than a from-scratch placement,
// and stays within 1% of its balance; every GPU keeps S slots and one copy per expert.
RC_GTEST_PROP(Rebalance, NeverMovesMoreThanFromScratch, ()) {
  const int N = *rc::gen::inRange(1, 5), gpn = *rc::gen::element(1, 2, 4), G = N * gpn;
  const int E = *rc::gen::element(8, 16, 32, 64), R = *rc::gen::inRange(0, 3), S = (E + G - 1) / G + R;
  RC_PRE(S <= E);
  const unsigned seed = *rc::gen::arbitrary<unsigned>();
  const std::vector<double> before = power_law(E, *rc::gen::inRange(0, 201) / 100.0, seed);
  const std::vector<double> after =
      *rc::gen::arbitrary<bool>() ? drift(before, 0.02, seed + 1) : power_law(E, *rc::gen::inRange(0, 201) / 100.0, seed + 2);
  const zepp::Topology t = topo(N, gpn);
  const zepp::Placement prev = zepp::place_zepp(before, t, R);
  zepp::RebalanceOptions opt;
  opt.previous = prev.phy2log;
  opt.expert_bytes = kExpertBytes;
  const zepp::Rebalanced r = zepp::rebalance_zepp(after, t, S, opt);
  RC_ASSERT(r.placement.num_slots() == G * S);
  r.placement.validate("placement");
  for (int g = 0; g < G; ++g)
    RC_ASSERT(std::set<int>(r.placement.phy2log.begin() + g * S, r.placement.phy2log.begin() + (g + 1) * S).size() ==
              size_t(S));
  const zepp::Placement scratch = zepp::place_zepp(after, t, R);
  const Fetched with = fetched(prev.phy2log, r.placement, r.survivors, t, kExpertBytes);
  const Fetched without = fetched(prev.phy2log, scratch, r.survivors, t, kExpertBytes);
  RC_ASSERT(with.nvlink + with.nic <= without.nvlink + without.nic);
  RC_ASSERT(r.imbalance <= zepp::expected_imbalance(scratch, after) * 1.01 + 1e-9);
  RC_ASSERT(std::abs(r.imbalance - zepp::expected_imbalance(r.placement, after)) < 1e-9);
}

// A zero budget keeps the previous placement as it is (no expert was lost).
TEST(Rebalance, ZeroBudgetMovesNothing) {
  const zepp::Topology t = topo(2, 4);
  const std::vector<double> before = power_law(32, 1.0, 5), after = power_law(32, 1.2, 6);
  const zepp::Placement prev = zepp::place_zepp(before, t, 2);
  zepp::RebalanceOptions opt;
  opt.previous = prev.phy2log;
  opt.expert_bytes = kExpertBytes;
  opt.max_moved_bytes = 0;
  const zepp::Rebalanced r = zepp::rebalance_zepp(after, t, 6, opt);
  EXPECT_EQ(r.moves.slots_changed, 0);
  EXPECT_EQ(r.placement.phy2log, prev.phy2log);
  // A budget of a few experts buys part of the balance back, never more than the budget.
  opt.max_moved_bytes = 4 * kExpertBytes;
  const zepp::Rebalanced some = zepp::rebalance_zepp(after, t, 6, opt);
  EXPECT_LE(some.moves.nvlink_bytes + some.moves.nic_bytes, 4 * kExpertBytes);
  EXPECT_LE(some.imbalance, r.imbalance);
}

// Losing one node of four: every expert still served, every surviving GPU keeps its S slots, the
// hottest experts stay on every surviving node, and fewer bytes move than from scratch.
TEST(Rebalance, LoseOneNodeOfFour) {
  const zepp::Topology t = topo(4, 4);
  const std::vector<double> load = power_law(64, 1.0, 7);
  const zepp::Placement prev = zepp::place_zepp(load, t, 2);  // S = 6, 96 slots
  zepp::RebalanceOptions opt;
  opt.previous = prev.phy2log;
  opt.expert_bytes = kExpertBytes;
  opt.failed_gpus = {12, 13, 14, 15};
  const zepp::Rebalanced r = zepp::rebalance_zepp(load, t, 6, opt);
  expect_valid(r, 12, 6, 64);
  EXPECT_EQ(r.survivors, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  const auto reps = r.placement.replicas();
  for (int e = 0; e < 64; ++e) {
    std::set<int> nodes;
    for (int s : reps[e]) nodes.insert(r.placement.gpu_of_slot(s) / 4);
    if (reps[e].size() >= 3) EXPECT_EQ(nodes.size(), 3u) << "expert " << e;
  }
  zepp::RebalanceOptions scratch = opt;
  scratch.previous.clear();
  const zepp::Rebalanced fresh = zepp::rebalance_zepp(load, t, 6, scratch);
  expect_valid(fresh, 12, 6, 64);
  const Fetched with = fetched(prev.phy2log, r.placement, r.survivors, t, kExpertBytes);
  const Fetched without = fetched(prev.phy2log, fresh.placement, fresh.survivors, t, kExpertBytes);
  EXPECT_LT(with.nvlink + with.nic, without.nvlink + without.nic);
  EXPECT_LE(r.imbalance, r.fresh_imbalance * 1.01 + 1e-12);
  // Single GPUs: ranks 3 and 6 lost, the others keep their slots.
  opt.failed_gpus = {3, 6};
  const zepp::Rebalanced two = zepp::rebalance_zepp(load, t, 6, opt);
  expect_valid(two, 14, 6, 64);
}

// A placement made on the survivors, widened back with -1 in the lost GPUs' slots (as
// zepp.rebalance_experts returns it), is its own previous under the same loss: nothing moves.
TEST(Rebalance, ItsOwnResultUnderTheSameLossIsAPrevious) {
  const zepp::Topology t = topo(2, 2);
  const std::vector<double> load = {9, 7, 5, 4, 3, 2, 2, 1};
  zepp::RebalanceOptions opt;
  opt.failed_gpus = {1};
  const zepp::Rebalanced first = zepp::rebalance_zepp(load, t, 4, opt);
  opt.previous.assign(16, -1);
  for (size_t i = 0; i < first.survivors.size(); ++i)
    std::copy_n(first.placement.phy2log.begin() + i * 4, 4, opt.previous.begin() + first.survivors[i] * 4);
  const zepp::Rebalanced again = zepp::rebalance_zepp(load, t, 4, opt);
  EXPECT_EQ(again.placement.phy2log, first.placement.phy2log);
  EXPECT_EQ(again.moves.slots_changed, 0);
}

TEST(Rebalance, RejectsBadArguments) {
  const zepp::Topology t = topo(2, 2);
  const std::vector<double> load = {4, 3, 2, 1};
  auto message = [&](zepp::RebalanceOptions opt, int S = 2) {
    try {
      zepp::rebalance_zepp(load, t, S, opt);
    } catch (const zepp::ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  zepp::RebalanceOptions opt;
  opt.failed_gpus = {4};
  EXPECT_EQ(message(opt).rfind("failed_gpus:", 0), 0u);
  opt.failed_gpus = {1, 1};
  EXPECT_EQ(message(opt).rfind("failed_gpus:", 0), 0u);
  opt.failed_gpus = {0, 1, 2};  // 1 GPU x 2 slots cannot hold 4 experts
  EXPECT_EQ(message(opt).rfind("failed_gpus:", 0), 0u);
  opt.failed_gpus.clear();
  opt.previous = {0, 1, 2};
  EXPECT_EQ(message(opt).rfind("previous:", 0), 0u);
  opt.previous = {0, 1, 2, 3, 0, 1, 2, 9};
  EXPECT_EQ(message(opt).rfind("previous:", 0), 0u);
  // Every expert needs a slot (zepp.rebalance_experts took all zeros; the CLI refused it).
  opt.previous = {0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(message(opt), "previous: expert 1 has no slot; a placement holds every expert of [0, 4)");
  // -1 only in a failed GPU's slots.
  opt.previous = {0, 1, -1, -1, 2, 3, 0, 1};
  EXPECT_EQ(message(opt), "previous: slot 2 holds expert -1, expected [0, 4) (-1 only in a lost GPU's slots; GPU 1 is "
                          "not lost)");
  opt.failed_gpus = {2};
  EXPECT_EQ(message(opt), "previous: slot 2 holds expert -1, expected [0, 4) (-1 only in a lost GPU's slots; GPU 1 is "
                          "not lost)");
  opt.failed_gpus.clear();
  opt.previous.clear();
  EXPECT_EQ(message(opt, 5).rfind("slots_per_gpu:", 0), 0u);
}

// The real shift: placements from the first half of the DeepSeek-V2-Lite Puffin prompts,
// rebalanced for the second half, on 4 nodes x 4 GPUs with R = 2. Every layer reaches within 1% of
// the from-scratch balance and fetches no more bytes than it.
TEST(Rebalance, RealShiftOnDeepSeekTrace) {
  const std::string dir = std::string(ZEPP_SHARED_DIR) + "/data/traces/deepseek-v2-lite-puffin";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "real trace absent: " << dir;
  const zepp::Trace trace = zepp::read_trace(dir);
  const zepp::ModelShape model = zepp::model_preset("deepseek-v2-lite");
  const zepp::Topology t = topo(4, 4);
  const int half = int(trace.requests.size()) / 2;
  double with_total = 0, without_total = 0;
  for (const auto& [layer, lt] : trace.layers) {
    std::vector<double> history(64, 0), later(64, 0);
    for (int64_t tok = 0; tok < lt.num_tokens(); ++tok)
      for (int k = 0; k < lt.top_k; ++k) (lt.request[tok] < half ? history : later)[lt.expert_ids[tok * lt.top_k + k]] += 1;
    const zepp::Placement prev = zepp::place_zepp(history, t, 2);
    zepp::RebalanceOptions opt;
    opt.previous = prev.phy2log;
    opt.expert_bytes = model.expert_weight_bytes();
    const zepp::Rebalanced r = zepp::rebalance_zepp(later, t, 6, opt);
    const zepp::Placement scratch = zepp::place_zepp(later, t, 2);
    EXPECT_LE(r.imbalance, zepp::expected_imbalance(scratch, later) * 1.01 + 1e-12) << "layer " << layer;
    const Fetched with = fetched(prev.phy2log, r.placement, r.survivors, t, opt.expert_bytes);
    const Fetched without = fetched(prev.phy2log, scratch, r.survivors, t, opt.expert_bytes);
    EXPECT_LE(with.nvlink + with.nic, without.nvlink + without.nic) << "layer " << layer;
    with_total += with.nvlink + with.nic;
    without_total += without.nvlink + without.nic;
  }
  std::printf("bytes moved over %zu layers: %.1f MB with the previous placement, %.1f MB from scratch\n",
              trace.layers.size(), with_total / 1e6, without_total / 1e6);
}
