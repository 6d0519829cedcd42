// Intra-node expert swaps (paper §4.3, §5): hand-checked accept / refuse cases and the
// invariants (slot counts, node sets, weights over NVLink from a GPU that held the expert).
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "../common/errors.hpp"
#include "core/error.hpp"
#include "pipeline/strategy.hpp"
#include "swap/swap.hpp"

using namespace zepp;

namespace {

Topology topo_of(int nodes, int gpus_per_node) {
  Topology t;
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  return t;
}

Placement placement_of(int gpus, int experts, std::vector<int32_t> phy2log) {
  Placement p;
  p.num_gpus = gpus;
  p.num_experts = experts;
  p.slots_per_gpu = int(phy2log.size()) / gpus;
  p.phy2log = std::move(phy2log);
  return p;
}

}  // namespace

TEST(Swap, OverloadedGpuSwapsWithLightestOfItsNode) {
  // GPU 0 holds experts 0, 1 (10 tokens each), GPU 1 holds 2, 3 (1 each): loads 20 and 2, mean
  // 11 > bound 12.1 is exceeded. Best swap: expert 0 <-> expert 2, loads 11 and 11.
  const Placement p = placement_of(2, 4, {0, 1, 2, 3});
  const SwapPlan s = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1);
  EXPECT_TRUE(s.triggered);
  ASSERT_EQ(s.swaps.size(), 1u);
  EXPECT_EQ(s.swaps[0].slot_a, 0);
  EXPECT_EQ(s.swaps[0].slot_b, 2);
  EXPECT_EQ(s.placement.phy2log, (std::vector<int32_t>{2, 1, 0, 3}));
  EXPECT_EQ(s.load_before, (std::vector<double>{20, 2}));
  EXPECT_EQ(s.load_after, (std::vector<double>{11, 11}));
  ASSERT_EQ(s.weight_moves.size(), 2u);
  EXPECT_EQ(s.weight_moves[0].slot, 0);     // expert 2 arrives on GPU 0 ...
  EXPECT_EQ(s.weight_moves[0].src_gpu, 1);  // ... from GPU 1
  EXPECT_EQ(s.weight_moves[1].slot, 2);
  EXPECT_EQ(s.weight_moves[1].src_gpu, 0);
}

TEST(Swap, RefusedWhenPairMaximumWouldNotDrop) {
  // One slot per GPU: swapping experts 0 (10) and 1 (1) gives loads 1 and 10, the pair's
  // maximum stays 10, so the swap is refused although the bound (5.5 * 1.1) is exceeded.
  const SwapPlan s = plan_swaps({10, 1}, placement_of(2, 2, {0, 1}), topo_of(1, 2), 0.1);
  EXPECT_TRUE(s.triggered);
  EXPECT_TRUE(s.swaps.empty());
  EXPECT_TRUE(s.weight_moves.empty());
  EXPECT_EQ(s.placement.phy2log, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(s.load_after, s.load_before);
}

TEST(Swap, NeverAcrossNodes) {
  // Same loads as the accepted case, but the light GPU sits on another node.
  const SwapPlan s = plan_swaps({10, 10, 1, 1}, placement_of(2, 4, {0, 1, 2, 3}), topo_of(2, 1), 0.1);
  EXPECT_TRUE(s.triggered);
  EXPECT_TRUE(s.swaps.empty());
}

TEST(Swap, NotTriggeredWithinBound) {
  // Loads 20 and 18, mean 19, bound 20.9: no swap although one would lower the maximum.
  const SwapPlan s = plan_swaps({10, 10, 9, 9}, placement_of(2, 4, {0, 1, 2, 3}), topo_of(1, 2), 0.1);
  EXPECT_FALSE(s.triggered);
  EXPECT_TRUE(s.swaps.empty());
}

TEST(Swap, NoSecondReplicaOnAGpu) {
  // Expert 0 has replicas on GPUs 0 and 1 (5 tokens each); GPU 0 also holds expert 1 (10),
  // GPU 1 expert 2 (1): loads 15 and 6. Trading expert 1 for GPU 1's replica of expert 0 would
  // give 10 and 11, but GPU 0 would hold expert 0 twice; the other swaps do not lower 15.
  const SwapPlan s = plan_swaps({10, 10, 1}, placement_of(2, 3, {0, 1, 0, 2}), topo_of(1, 2), 0.1);
  EXPECT_TRUE(s.triggered);
  EXPECT_TRUE(s.swaps.empty());
  EXPECT_EQ(s.load_before, (std::vector<double>{15, 6}));
}

TEST(Swap, ArgumentErrorsNameTheArgument) {
  const Placement p = placement_of(2, 2, {0, 1});
  auto message = [](auto f) {
    try {
      f();
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { plan_swaps({1}, p, topo_of(1, 2), 0.1); }).rfind("demand:", 0), 0u);
  EXPECT_EQ(message([&] { plan_swaps({1, -1}, p, topo_of(1, 2), 0.1); }).rfind("demand:", 0), 0u);
  EXPECT_EQ(message([&] { plan_swaps({1, 1}, p, topo_of(1, 3), 0.1); }).rfind("topo:", 0), 0u);
  EXPECT_EQ(message([&] { plan_swaps({1, 1}, p, topo_of(1, 2), -0.5); }).rfind("balance_slack:", 0), 0u);
  EXPECT_EQ(message([&] { plan_swaps({1, 1}, placement_of(2, 2, {0, 0}), topo_of(1, 2), 0.1); }).rfind("placement:", 0),
            0u);
}

TEST(Swap, RefusedWhenTheUnhiddenTransferCostsMoreThanItSaves) {
  // The case above, now with costs (1 s per pair, horizon 1): the swap lowers GPU 0 from 20 to 11
  // tokens, 9 s of compute. Afterwards GPU 0 holds {2, 1}: 10 s of compute need no moved weights,
  // so expert 2's weights hide behind it up to 10 s; GPU 1 holds {0, 3}: only expert 3's 1 s is
  // independent. Weights of 10 s leave 10 - 1 = 9 s unhidden on GPU 1, not below the 9 s saved:
  // refused. At 9.9 s, 8.9 s are unhidden: accepted. (The previous rule weighed the whole
  // transfer and refused from 9 s on.)
  const Placement p = placement_of(2, 4, {0, 1, 2, 3});
  const SwapPlan refused = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, SwapCosts{1.0, 10.0});
  EXPECT_TRUE(refused.triggered);
  EXPECT_DOUBLE_EQ(refused.estimated_imbalance, 20.0 / 11.0);  // loads 20 and 2, mean 11
  EXPECT_TRUE(refused.swaps.empty());
  EXPECT_TRUE(refused.weight_moves.empty());
  EXPECT_EQ(refused.refused_for_cost, 1);
  EXPECT_EQ(refused.placement.phy2log, p.phy2log);
  EXPECT_DOUBLE_EQ(refused.best_refused.saved_per_iteration_s, 9.0);
  EXPECT_DOUBLE_EQ(refused.best_refused.unhidden_s, 9.0);
  EXPECT_DOUBLE_EQ(refused.best_refused.weight_s, 10.0);
  EXPECT_EQ(refused.best_refused.horizon, 1);
  const SwapPlan paid = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, SwapCosts{1.0, 9.9});
  EXPECT_EQ(paid.swaps.size(), 1u);
  EXPECT_EQ(paid.refused_for_cost, 0);
}

TEST(Swap, BelowTheRidgeMovingRowsSavesNothing) {
  // The case above, paid at 9.9 s of weights when every GEMM is compute-bound. Now each GEMM
  // costs at least its 20 s weight read (weight_read_seconds): GPU 0's experts {10, 10} take
  // max(20, 10) + max(20, 10) = 40 s before the swap, and {2: 1, 1: 10} = 20 + 20 = 40 s after;
  // GPU 1 goes from 40 to 40 s. The pair's maximum stays 40 s: nothing saved, refused at any
  // horizon. (A decode batch on a big expert is here: DeepSeek-V2-Lite at 1 MB per GPU.)
  const Placement p = placement_of(2, 4, {0, 1, 2, 3});
  SwapCosts costs{1.0, 9.9};
  costs.weight_read_seconds = 20.0;
  costs.horizon = 1000;
  const SwapPlan s = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs);
  EXPECT_TRUE(s.triggered);
  EXPECT_TRUE(s.swaps.empty());
  EXPECT_EQ(s.refused_for_cost, 1);
  EXPECT_DOUBLE_EQ(s.best_refused.saved_per_iteration_s, 0.0);
  // Half below the ridge: a 5 s read leaves GPU 0 at 10 + 10 = 20 s before, 10 + 5 = 15 s after,
  // GPU 1 at 5 + 5 = 10 s before and 10 + 5 = 15 s after: 5 s saved (tokens alone: 9 s), 8.9 s
  // unhidden: refused in one iteration, paid over two.
  costs.weight_read_seconds = 5.0;
  costs.horizon = 1;
  const SwapPlan one = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs);
  EXPECT_TRUE(one.swaps.empty());
  EXPECT_DOUBLE_EQ(one.best_refused.saved_per_iteration_s, 5.0);
  costs.horizon = 2;
  EXPECT_EQ(plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs).swaps.size(), 1u);
}

TEST(Swap, PaysOverEightIterationsButNotOne) {
  // Same layer, weights of 30 s: 30 - 1 = 29 s stay unhidden on GPU 1 (GPU 0: 30 - 10 = 20 s).
  // The 9 s saved per iteration do not pay in one iteration (9 <= 29) but do over 8 (72 > 29).
  const Placement p = placement_of(2, 4, {0, 1, 2, 3});
  SwapCosts costs{1.0, 30.0};
  const SwapPlan one = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs);
  EXPECT_TRUE(one.swaps.empty());
  EXPECT_DOUBLE_EQ(one.best_refused.unhidden_s, 29.0);
  costs.horizon = 8;
  const SwapPlan eight = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs);
  ASSERT_EQ(eight.swaps.size(), 1u);
  EXPECT_EQ(eight.refused_for_cost, 0);
  EXPECT_EQ(eight.load_after, (std::vector<double>{11, 11}));
  EXPECT_EQ(eight.weight_moves.size(), 2u);
  costs.horizon = 0;
  EXPECT_THROW(plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs), ArgumentError);
}

TEST(Swap, LlamaFourExpertNeverPays) {
  // Llama-4-Maverick on A100 (312 TFLOP/s, NVLink 100 GB/s here): a pair computes in
  // 6 * 5120 * 8192 / 312e12 = 0.807 us, an expert's 251.7 MB of weights take 2517 us. Decode
  // demand of 100 tokens on each of GPU 0's experts, 10 on GPU 1's: loads 200 and 20, the swap
  // saves 90 pairs = 72.6 us per iteration; GPU 1 then has 10 pairs (8 us) to hide 2517 us
  // behind. Over the default horizon of 8 iterations: 581 us against 2509 us unhidden: refused,
  // and even 34 iterations (2468 us) do not pay.
  Topology t = topo_of(1, 2);
  t.compute.peak_flops = 312e12;
  t.nvlink_bw = 100e9;
  t.compute.hbm_bw = 1e30;  // weight reads free here: the token rule's figures (next test: the floor)
  ModelShape m;
  m.hidden = 5120;
  m.ffn = 8192;
  SwapCosts costs = swap_costs(m, t);
  costs.horizon = kDefaultSwapHorizon;
  const double pair = 6.0 * 5120 * 8192 / 312e12, weights = 3.0 * 5120 * 8192 * 2 / 100e9;
  const SwapPlan s = plan_swaps({100, 100, 10, 10}, placement_of(2, 4, {0, 1, 2, 3}), t, 0.1, costs);
  EXPECT_TRUE(s.triggered);
  EXPECT_TRUE(s.swaps.empty());
  EXPECT_EQ(s.refused_for_cost, 1);
  EXPECT_NEAR(s.best_refused.saved_per_iteration_s, 90 * pair, 1e-12);
  EXPECT_NEAR(s.best_refused.unhidden_s, weights - 10 * pair, 1e-12);
  costs.horizon = 34;
  EXPECT_TRUE(plan_swaps({100, 100, 10, 10}, placement_of(2, 4, {0, 1, 2, 3}), t, 0.1, costs).swaps.empty());
}

TEST(Swap, ComputeDuringDispatchHidesNoWeights) {
  // Weights move after dispatch (weights_after_dispatch). The paid case again (8.9 s unhidden
  // when all independent compute hides the transfer), with a dispatch of 4 s: GPU 0's 10 s of
  // independent compute leave at least 6 s after dispatch (9.9 - 6 = 3.9 s wait), GPU 1's 1 s
  // leaves none (9.9 s wait): 9.9 s unhidden > 9 s saved, refused.
  const Placement p = placement_of(2, 4, {0, 1, 2, 3});
  SwapCosts costs{1.0, 9.9};
  costs.dispatch_seconds = 4.0;
  const SwapPlan s = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs);
  EXPECT_TRUE(s.swaps.empty());
  EXPECT_DOUBLE_EQ(s.best_refused.saved_per_iteration_s, 9.0);
  EXPECT_DOUBLE_EQ(s.best_refused.unhidden_s, 9.9);
  EXPECT_DOUBLE_EQ(s.best_refused.dispatch_s, 4.0);
  costs.horizon = 2;  // 18 s saved over two iterations pay for it
  EXPECT_EQ(plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs).swaps.size(), 1u);
  costs.dispatch_seconds = -1.0;
  EXPECT_THROW(plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs), ArgumentError);
}

TEST(Swap, LoadsFromTheRoutingsRowsPerReplica) {
  // One node of 3 GPUs: GPU 0 {0, 1}, GPU 1 {0, 2}, GPU 2 {3, 4}; demand {16, 4, 4, 8, 0}, C = 0.2.
  // Spread evenly over replicas the loads are {8 + 4, 8 + 4, 8 + 0} = {12, 12, 8}, within
  // 1.2 x 32/3 = 12.8: nothing to do. The routing gave GPU 0's replica of expert 0 14 of its
  // 16 rows (locality), so the GPUs compute {18, 6, 8}: triggered. GPU 1 has no useful swap
  // (expert 0 on both); with GPU 2 the best exchanges expert 0's replica (14 rows) for expert
  // 3 (8): {12, 6, 14}, and nothing lowers GPU 2 further.
  const Placement p = placement_of(3, 5, {0, 1, 0, 2, 3, 4});
  const std::vector<double> demand = {16, 4, 4, 8, 0};
  const SwapPlan even = plan_swaps(demand, p, topo_of(1, 3), 0.2);
  EXPECT_FALSE(even.triggered);
  const std::vector<double> rows = {14, 4, 2, 4, 8, 0};
  const SwapPlan s = plan_swaps(demand, p, topo_of(1, 3), 0.2, {}, rows);
  EXPECT_TRUE(s.triggered);
  EXPECT_EQ(s.load_before, (std::vector<double>{18, 6, 8}));
  ASSERT_EQ(s.swaps.size(), 1u);
  EXPECT_EQ(s.swaps[0].slot_a, 0);
  EXPECT_EQ(s.swaps[0].slot_b, 4);
  EXPECT_EQ(s.load_after, (std::vector<double>{12, 6, 14}));
  EXPECT_EQ(s.placement.phy2log, (std::vector<int32_t>{3, 1, 0, 2, 0, 4}));  // expert 1 keeps slot 1
  // Rows that do not add up to the demand, or one per slot missing, are refused.
  const auto message = [&](std::vector<double> r) {
    try {
      plan_swaps(demand, p, topo_of(1, 3), 0.2, {}, r);
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message({14, 4, 2, 4, 8}).rfind("slot_rows: has 5 entries, expected one per slot (6)", 0), 0u);
  EXPECT_EQ(message({14, 4, 1, 4, 8, 0}).rfind("slot_rows: expert 0's replicas have 15", 0), 0u);
  EXPECT_EQ(message({14, 4, 2, 4, 8, -1}).rfind("slot_rows: slot 5 has", 0), 0u);
}

// 2 nodes x 2 GPUs, two slots each: GPU g holds experts 2g and 2g + 1, top-2. GPU 0 sends 10
// tokens to experts {4, 5} and GPU 1 one to {6, 7} (all on node 1); GPU 2 sends 5 tokens to
// {0, 1} and one to {0, 3}, GPU 3 five to {2, 3} (node 0). Loads: experts {6, 5, 5, 6, 10, 10,
// 1, 1}, GPUs {11, 11, 20, 2}. A row of 1000 x 2 bytes takes 2 s on a NIC of 1000 B/s.
struct TopTwoLayer {
  Placement p = placement_of(4, 8, {0, 1, 2, 3, 4, 5, 6, 7});
  Topology t = topo_of(2, 2);
  ModelShape m;
  RoutingBatch b;
  std::vector<int32_t> slot_of_pair;  // one replica each: slot = expert
  TopTwoLayer() {
    t.nic_bw = 1000;
    m.hidden = 1000;
    b.num_gpus = 4, b.num_experts = 8, b.top_k = 2;
    b.token_offset = {0, 10, 11, 17, 22};
    for (int i = 0; i < 10; ++i) b.expert_ids.insert(b.expert_ids.end(), {4, 5});
    b.expert_ids.insert(b.expert_ids.end(), {6, 7});
    for (int i = 0; i < 5; ++i) b.expert_ids.insert(b.expert_ids.end(), {0, 1});
    b.expert_ids.insert(b.expert_ids.end(), {0, 3});
    for (int i = 0; i < 5; ++i) b.expert_ids.insert(b.expert_ids.end(), {2, 3});
    b.gate_weights.assign(b.expert_ids.size(), 0.5f);
    slot_of_pair = b.expert_ids;
  }
};

TEST(Swap, NicRowsArePreReducedRowsSplitOverTheNics) {
  // Merge + pre-reduce (Zepp's plan): flow 0 -> 1 has one row per token, {10, 1} on GPUs 0 and
  // 1; eq. (2) caps a NIC at ceil(11 / 2) = 6, so GPU 0 relays 4 rows to NIC 1: NICs {6, 5}. The
  // rows land on rails {2, 3} and return pre-reduced from there: node 1 sends {6, 5} combine
  // rows, 12 s on its busiest NIC, where its 22 pairs over 2 NICs would take 22 s. Flow 1 -> 0:
  // {6, 5} rows, under the cap. Dispatch: 6 rows, 12 s.
  const TopTwoLayer c;
  const PlanOptions zepp;  // split, merge, pre_reduce, C_NIC 0, split whatever it pays
  const NicRows r = nic_rows(c.b, c.p, c.slot_of_pair, c.t, zepp, c.m.token_bytes());
  EXPECT_EQ(r.dispatch_sent, (std::vector<int64_t>{6, 5, 6, 5}));
  EXPECT_EQ(r.dispatch_received, (std::vector<int64_t>{6, 5, 6, 5}));
  EXPECT_EQ(r.combine_sent, (std::vector<int64_t>{6, 5, 6, 5}));
  EXPECT_DOUBLE_EQ(dispatch_time(r, c.t, c.m.token_bytes()), 12.0);
  EXPECT_EQ(combine_time(r, c.t, c.m.token_bytes()), (std::vector<double>{12.0, 12.0}));
  // Without pre-reduction each pair returns from its GPU: node 1's GPUs {20, 2}, split to
  // {11, 11}; node 0's {11, 11}; dispatch stays merged.
  PlanOptions no_pre = zepp;
  no_pre.pre_reduce = false;
  const NicRows q = nic_rows(c.b, c.p, c.slot_of_pair, c.t, no_pre, c.m.token_bytes());
  EXPECT_EQ(q.dispatch_sent, r.dispatch_sent);
  EXPECT_EQ(q.combine_sent, (std::vector<int64_t>{11, 11, 11, 11}));
  // Without merge every pair is a row: flow 0 -> 1 {20, 2}, cap 11: NICs {11, 11}; flow 1 -> 0
  // {12, 10}: {11, 11}. Each pair is received by its serving GPU ({11, 11, 20, 2}); without
  // split GPU 0's NIC sends all 20.
  PlanOptions no_merge = zepp;
  no_merge.merge = false;
  const NicRows u = nic_rows(c.b, c.p, c.slot_of_pair, c.t, no_merge, c.m.token_bytes());
  EXPECT_EQ(u.dispatch_sent, (std::vector<int64_t>{11, 11, 11, 11}));
  EXPECT_EQ(u.dispatch_received, (std::vector<int64_t>{11, 11, 20, 2}));
  no_merge.split = false;
  EXPECT_EQ(nic_rows(c.b, c.p, c.slot_of_pair, c.t, no_merge, c.m.token_bytes()).dispatch_sent,
            (std::vector<int64_t>{20, 2, 12, 10}));
  // One node: nothing crosses.
  const NicRows one = nic_rows(c.b, c.p, c.slot_of_pair, topo_of(1, 4), zepp, c.m.token_bytes());
  EXPECT_EQ(one.combine_sent, (std::vector<int64_t>(4, 0)));
  EXPECT_EQ(combine_time(one, topo_of(1, 4), c.m.token_bytes()), (std::vector<double>{0.0}));
  EXPECT_EQ(dispatch_time(one, topo_of(1, 4), c.m.token_bytes()), 0.0);
  std::vector<int32_t> wrong = c.slot_of_pair;
  wrong[0] = 5;  // expert 4's pair on expert 5's slot
  EXPECT_EQ(zepp::testing::argument_error([&] { nic_rows(c.b, c.p, wrong, c.t, zepp, c.m.token_bytes()); }).rfind("slot_of_pair:", 0), 0u);
  wrong.pop_back();
  EXPECT_EQ(zepp::testing::argument_error([&] { nic_rows(c.b, c.p, wrong, c.t, zepp, c.m.token_bytes()); }).rfind("slot_of_pair:", 0), 0u);
  EXPECT_EQ(zepp::testing::argument_error([&] { nic_rows(c.b, c.p, c.slot_of_pair, topo_of(1, 2), zepp, 1); }).rfind("topo:", 0), 0u);
  Topology no_nic = c.t;
  no_nic.nic_bw = 0;
  EXPECT_EQ(zepp::testing::argument_error([&] { nic_rows(c.b, c.p, c.slot_of_pair, no_nic, zepp, 1); }).rfind("topo:", 0), 0u);
}

TEST(Swap, PreReducedRowsNotPairsSetTheCombineFloor) {
  // The layer above, 1 s per pair, 9.9 s of weights, horizon 2, dispatch left out (0). GPU 2
  // (20) swaps expert 4 for GPU 3's expert 6: loads 11 and 11; every row is remote, so its GEMMs
  // after dispatch go from 20 to 11 s. Weights: GPU 3 hides 1 s of its 11, 8.9 s unhidden. Node
  // 1's combine floor from its pre-reduced rows is 12 s: the swap saves 20 - max(12, 11) = 8 s,
  // 16 over two iterations > 8.9: accepted. Counted as pairs (22 rows over 2 NICs, 22 s) the
  // floor hides every GEMM: it saves nothing, refused as NIC-bound.
  const TopTwoLayer c;
  const std::vector<double> load{6, 5, 5, 6, 10, 10, 1, 1};
  SwapCosts costs{1.0, 9.9, 2};
  costs.combine_seconds = combine_time(nic_rows(c.b, c.p, c.slot_of_pair, c.t, PlanOptions{}, c.m.token_bytes()), c.t,
                                       c.m.token_bytes());
  const SwapPlan rows = plan_swaps(load, c.p, c.t, 0.1, costs, load);
  ASSERT_EQ(rows.swaps.size(), 1u);
  EXPECT_EQ(rows.swaps[0].slot_a, 4);
  EXPECT_EQ(rows.swaps[0].slot_b, 6);
  EXPECT_EQ(rows.load_after, (std::vector<double>{11, 11, 11, 11}));
  costs.combine_seconds = {22.0, 22.0};
  const SwapPlan pairs = plan_swaps(load, c.p, c.t, 0.1, costs, load);
  EXPECT_TRUE(pairs.swaps.empty());
  EXPECT_DOUBLE_EQ(pairs.best_refused.saved_per_iteration_s, 0.0);
  EXPECT_DOUBLE_EQ(pairs.best_refused.after_dispatch_s, 20.0);
  EXPECT_DOUBLE_EQ(pairs.best_refused.combine_s, 22.0);
}

TEST(Swap, GemmsInsideTheNodesCombineSaveNothing) {
  // The swap paid at 9.9 s of weights (RefusedWhenTheUnhiddenTransferCostsMoreThanItSaves):
  // loads 20 and 2 -> 11 and 11, 9 s saved, 8.9 s unhidden. The node's NICs now need 15 s for
  // its combine (combine_seconds): the layer cannot end before them, so the swap shortens it
  // from max(15, 20) = 20 to max(15, 11) = 15 s: 5 s saved, refused in one iteration, paid over
  // two (10 > 8.9). With 20 s of combine it saves nothing at any horizon, and the refusal says
  // so: the pair's GEMMs (20 s) end within its node's combine (20 s).
  const Placement p = placement_of(2, 4, {0, 1, 2, 3});
  SwapCosts costs{1.0, 9.9};
  costs.combine_seconds = {15.0};
  const SwapPlan one = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs);
  EXPECT_TRUE(one.swaps.empty());
  EXPECT_DOUBLE_EQ(one.best_refused.saved_per_iteration_s, 5.0);
  EXPECT_DOUBLE_EQ(one.best_refused.unhidden_s, 8.9);
  costs.horizon = 2;
  EXPECT_EQ(plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs).swaps.size(), 1u);
  costs.combine_seconds = {20.0};
  costs.horizon = 1000;
  const SwapPlan never = plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs);
  EXPECT_TRUE(never.swaps.empty());
  EXPECT_EQ(never.refused_for_cost, 1);
  EXPECT_DOUBLE_EQ(never.best_refused.saved_per_iteration_s, 0.0);
  EXPECT_DOUBLE_EQ(never.best_refused.after_dispatch_s, 20.0);
  EXPECT_DOUBLE_EQ(never.best_refused.combine_s, 20.0);
  costs.combine_seconds = {1.0, 2.0};  // one per node, and there is one node
  EXPECT_THROW(plan_swaps({10, 10, 1, 1}, p, topo_of(1, 2), 0.1, costs), ArgumentError);
}

TEST(Swap, OnlyGemmsAfterDispatchCount) {
  // 1 s per pair, dispatch 8 s. GPU 0: expert 0 with 10 rows from other nodes, expert 1 with 10
  // of its own node's; GPU 1: experts 2 (1 own row) and 3 (1 remote). GEMMs left after dispatch
  // (A = max(T - 8, remote)): GPU 0 max(20 - 8, 10) = 12, GPU 1 max(2 - 8, 1) = 1. The swap
  // 0 <-> 2 (loads 11 and 11) leaves GPU 0 {2, 1}: max(11 - 8, 0) = 3 and GPU 1 {0, 3}:
  // max(11 - 8, 11) = 11: the layer after dispatch goes from 12 to 11 s, 1 s saved (on tokens
  // alone: 9 s). Weights of 0.5 s hide on GPU 0 behind (11 - 1) - 8 = 2 s of independent compute
  // left after dispatch, not on GPU 1 ((11 - 10) - 8 < 0): 0.5 s unhidden, paid in one
  // iteration. At 1.5 s, 1.5 s unhidden > 1 s saved: refused (the token rule accepted it).
  const Placement p = placement_of(2, 4, {0, 1, 2, 3});
  const std::vector<double> rows{10, 10, 1, 1}, remote{10, 0, 0, 1};
  SwapCosts costs{1.0, 0.5};
  costs.dispatch_seconds = 8.0;
  const SwapPlan paid = plan_swaps(rows, p, topo_of(1, 2), 0.1, costs, rows, remote);
  ASSERT_EQ(paid.swaps.size(), 1u);
  EXPECT_EQ(paid.swaps[0].slot_a, 0);
  EXPECT_EQ(paid.swaps[0].slot_b, 2);
  costs.weight_seconds = 1.5;
  const SwapPlan refused = plan_swaps(rows, p, topo_of(1, 2), 0.1, costs, rows, remote);
  EXPECT_TRUE(refused.swaps.empty());
  EXPECT_DOUBLE_EQ(refused.best_refused.saved_per_iteration_s, 1.0);
  EXPECT_DOUBLE_EQ(refused.best_refused.unhidden_s, 1.5);
  EXPECT_DOUBLE_EQ(refused.best_refused.after_dispatch_s, 12.0);
  EXPECT_EQ(plan_swaps(rows, p, topo_of(1, 2), 0.1, costs, rows).swaps.size(), 1u);  // all rows remote: 9 s saved
  EXPECT_THROW(plan_swaps(rows, p, topo_of(1, 2), 0.1, costs, rows, {10, 0, 0, 2}), ArgumentError);  // 2 > 1 row
  EXPECT_THROW(plan_swaps(rows, p, topo_of(1, 2), 0.1, costs, {}, remote), ArgumentError);  // needs slot_rows
}

TEST(Swap, CostsFromTheRoofline) {
  // Llama-4-Maverick on A100 nodes: 6 * 5120 * 8192 / 312e12 s per pair, 3 * 5120 * 8192 * 2
  // bytes (251.7 MB) of weights at 100 GB/s: 2.5 ms, the compute of ~3100 pairs.
  Topology t = topo_of(1, 4);
  t.compute.peak_flops = 312e12;
  t.nvlink_bw = 100e9;
  ModelShape m;
  m.hidden = 5120;
  m.ffn = 8192;
  t.compute.hbm_bw = 2.039e12;
  const SwapCosts c = swap_costs(m, t);
  EXPECT_NEAR(c.pair_seconds, 6.0 * 5120 * 8192 / 312e12, 1e-18);
  EXPECT_NEAR(c.weight_seconds, 3.0 * 5120 * 8192 * 2 / 100e9, 1e-12);
  EXPECT_NEAR(c.weight_read_seconds, 3.0 * 5120 * 8192 * 2 / 2.039e12, 1e-15);  // 123.4 us
  // A decode-sized Llama-4 batch (100 rows per expert, 80.7 us of FLOPs) is below the ridge:
  // its swap saves nothing and is refused whatever the horizon.
  SwapCosts long_horizon = c;
  long_horizon.horizon = 1000;
  const SwapPlan s = plan_swaps({100, 100, 10, 10}, placement_of(2, 4, {0, 1, 2, 3}), topo_of(1, 2), 0.1, long_horizon);
  EXPECT_TRUE(s.swaps.empty());
  EXPECT_DOUBLE_EQ(s.best_refused.saved_per_iteration_s, 0.0);
  t.compute.hbm_bw = 0;
  EXPECT_THROW(swap_costs(m, t), ArgumentError);
  EXPECT_THROW(swap_costs(m, topo_of(1, 4)), ArgumentError);
  EXPECT_THROW(plan_swaps({1, 1}, placement_of(2, 2, {0, 1}), topo_of(1, 2), 0.1, SwapCosts{-1, 0}), ArgumentError);
}

RC_GTEST_PROP(Swap, KeepsSlotsReplicasAndNodeSets, ()) {
  const int nodes = *rc::gen::inRange(1, 4), per_node = *rc::gen::inRange(1, 5), S = *rc::gen::inRange(1, 4);
  const int G = nodes * per_node;
  const int E = *rc::gen::inRange(1, G * S + 1);
  // Every expert once, the remaining slots random experts, all shuffled.
  std::vector<int32_t> p2l(G * S);
  for (int s = 0; s < G * S; ++s) p2l[s] = s < E ? s : *rc::gen::inRange(0, E);
  for (int i = G * S - 1; i > 0; --i) std::swap(p2l[i], p2l[*rc::gen::inRange(0, i + 1)]);
  const Placement p = placement_of(G, E, p2l);
  std::vector<double> demand(E);
  for (double& d : demand) d = *rc::gen::inRange(0, 1000);
  const double C = *rc::gen::element(0.0, 0.05, 0.1, 0.5);
  const Topology topo = topo_of(nodes, per_node);

  const SwapPlan s = plan_swaps(demand, p, topo, C);
  RC_ASSERT(s.placement.num_gpus == G && s.placement.slots_per_gpu == S && s.placement.phy2log.size() == p2l.size());
  RC_ASSERT(s.placement.logcnt() == p.logcnt());
  auto node_sets = [&](const Placement& q) {
    std::vector<std::multiset<int>> sets(E);
    for (int slot = 0; slot < q.num_slots(); ++slot) sets[q.phy2log[slot]].insert(q.gpu_of_slot(slot) / per_node);
    return sets;
  };
  RC_ASSERT(node_sets(s.placement) == node_sets(p));
  RC_TAG(s.swaps.empty() ? "no swap" : "swapped");
  if (!s.triggered) RC_ASSERT(s.swaps.empty());
  const double max_before = *std::max_element(s.load_before.begin(), s.load_before.end());
  const double max_after = *std::max_element(s.load_after.begin(), s.load_after.end());
  RC_ASSERT(max_after <= max_before + 1e-9);
  const auto recomputed = estimate_gpu_load(demand, s.placement);
  for (int g = 0; g < G; ++g) RC_ASSERT(std::abs(recomputed[g] - s.load_after[g]) < 1e-6);
  for (const Swap& w : s.swaps)
    RC_ASSERT(p.gpu_of_slot(w.slot_a) / per_node == p.gpu_of_slot(w.slot_b) / per_node);
  // A weight move for exactly the slots whose expert changed, from a GPU of the same node that
  // held the expert before.
  std::set<int> moved;
  for (const WeightMove& m : s.weight_moves) {
    RC_ASSERT(moved.insert(m.slot).second);
    const int32_t e = s.placement.phy2log[m.slot];
    RC_ASSERT(p.phy2log[m.slot] != e);
    RC_ASSERT(m.src_gpu / per_node == p.gpu_of_slot(m.slot) / per_node);
    RC_ASSERT(m.src_gpu != p.gpu_of_slot(m.slot));
    bool held = false;
    for (int k = 0; k < S; ++k) held |= p.phy2log[m.src_gpu * S + k] == e;
    RC_ASSERT(held);
  }
  for (int slot = 0; slot < p.num_slots(); ++slot)
    RC_ASSERT((p.phy2log[slot] != s.placement.phy2log[slot]) == (moved.count(slot) == 1));
}
