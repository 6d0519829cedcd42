// Combine in completion waves (plan/combine.cpp, PlanOptions::combine_waves): a hand-counted
// two-node case and the invariants (W1)-(W2) on random layers.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.hpp"

#include "../common/plan_check.hpp"
#include "fixture.hpp"
#include "plan_util.hpp"
#include "plan/comm_plan.hpp"
#include "random_case.hpp"

namespace zepp {
namespace {

// test::TwoNodesTwoSlots: both GEMMs have delivery rank 1 and are memory-bound:
// 3 * 8 * 1 * 2 B / 100 B/s = 0.48 s each, so est(slot 0) = 0.48, est(slot 1) = 0.96 =
// span(node 0). With W = 2, t0's row has W * 0.48 / 0.96 = 1 -> wave 0, t1's row 2 -> wave 1.
struct TwoGemms : ::testing::Test, test::TwoNodesTwoSlots {
  CommPlan plan(int waves) const {
    return TwoNodesTwoSlots::plan([&](PlanOptions& o) { o.combine_waves = waves; });
  }
  static std::vector<int32_t> of(const CommPlan& p, TaskKind kind, Phase phase = Phase::Combine) {
    std::vector<int32_t> out;
    for (size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].kind == kind && (kind != TaskKind::Transfer || p.tasks[i].phase == phase)) out.push_back(int32_t(i));
    return out;
  }
};

TEST_F(TwoGemms, OneWaveWaitsForBothGemms) {
  const CommPlan p = plan(1);
  ASSERT_EQ(test::check_plan(p, batch, placement, routing), "");
  const auto pre = of(p, TaskKind::PreReduce), puts = of(p, TaskKind::Transfer);
  ASSERT_EQ(pre.size(), 1u);
  EXPECT_EQ(test::deps_of(p, p.tasks[pre[0]]), (std::vector<int32_t>{compute_of(p, 0), compute_of(p, 1)}));
  ASSERT_EQ(puts.size(), 1u);
  EXPECT_EQ(test::tokens_of(p, p.tasks[puts[0]]), (std::vector<int64_t>{0, 1}));
}

TEST_F(TwoGemms, EachWaveLeavesAfterItsOwnGemm) {
  const CommPlan p = plan(2);
  ASSERT_EQ(test::check_plan(p, batch, placement, routing), "");
  const auto pre = of(p, TaskKind::PreReduce), puts = of(p, TaskKind::Transfer);
  ASSERT_EQ(pre.size(), 2u);
  ASSERT_EQ(puts.size(), 2u);
  for (int w = 0; w < 2; ++w) {
    // Wave w: token w, pre-reduced after slot w's GEMM only, sent by its own put.
    EXPECT_EQ(test::tokens_of(p, p.tasks[pre[w]]), (std::vector<int64_t>{w}));
    EXPECT_EQ(test::deps_of(p, p.tasks[pre[w]]), (std::vector<int32_t>{compute_of(p, w)}));
    EXPECT_EQ(test::tokens_of(p, p.tasks[puts[w]]), (std::vector<int64_t>{w}));
    EXPECT_EQ(test::deps_of(p, p.tasks[puts[w]]), (std::vector<int32_t>{pre[w]}));
    EXPECT_EQ(p.tasks[puts[w]].gpu, 0);
    EXPECT_EQ(p.tasks[puts[w]].dst_gpu, 1);
  }
}

TEST_F(TwoGemms, RejectsAWaveCountOutOfRange) {
  EXPECT_THROW(plan(0), ArgumentError);
  EXPECT_THROW(plan(65), ArgumentError);
}

// 2 nodes x 2 GPUs, no split (GPU 2's rows reach node 0 through GPU 0, its peer there, which
// pre-reduces them). GPU 0 holds experts 0 and 1, GPU 1 experts 2 and 3. GPU 2's tokens:
// t0 -> 0, t1 -> 1, t2..t16 -> 2 (15 rows). Roofline by hand (16-byte rows, 1000 FLOP/s, 100 B/s):
// a GEMM of r rows takes max(0.048 r, 0.48) s, so est(expert 0) = 0.48, est(expert 1) = 0.96 on
// GPU 0 and est(expert 2) = 0.72 on GPU 1; span(node 0) = 0.96. GPU 0 runs the most GEMMs of
// node 0, two, so W_0 = 2 whatever combine_waves >= 2 allows: t0 leaves in wave
// ceil(2 * 0.48 / 0.96) - 1 = 0, t1 (ceil(2) - 1) and t2..t16 (ceil(1.5) - 1) in wave 1. With 64
// waves per node t2..t16 would have a wave of their own (ceil(64 * 0.75) - 1 = 47).
TEST(CombineWaves, NoMoreWavesThanTheBusiestGpuRunsGemms) {
  const Topology topo = test::small_topology(2, 2);
  const ModelShape model = test::small_model(8, 1);
  std::vector<std::vector<int>> gpu2{{0}, {1}};
  for (int i = 0; i < 15; ++i) gpu2.push_back({2});
  const RoutingBatch batch = test::make_batch(8, 1, {{}, {}, gpu2, {}});
  const Placement placement{4, 8, 2, {0, 1, 2, 3, 4, 5, 6, 7}};
  const Routing routing = test::first_replica(batch, placement);
  for (int waves : {2, 64}) {
    PlanOptions o{false, true, true, 0.0};
    o.combine_waves = waves;
    const CommPlan p = build_comm_plan(batch, placement, routing, topo, model, o);
    ASSERT_EQ(test::check_plan(p, batch, placement, routing), "") << waves;
    std::vector<std::vector<int64_t>> pre;  // tokens of each pre-reduction, in task order
    for (const Task& t : p.tasks)
      if (t.kind == TaskKind::PreReduce) {
        EXPECT_EQ(t.gpu, 0) << waves;
        pre.push_back(test::tokens_of(p, t));
        std::sort(pre.back().begin(), pre.back().end());
      }
    std::sort(pre.begin(), pre.end());
    std::vector<int64_t> later{1};
    for (int64_t t = 2; t <= 16; ++t) later.push_back(t);
    EXPECT_EQ(pre, (std::vector<std::vector<int64_t>>{{0}, later})) << waves;
  }
}

// combine_after_dispatch (plan/nic_order.cpp): 2 nodes x 1 GPU as TwoGemms, plus a token of
// GPU 0 for expert 2 on GPU 1, so GPU 0 sends both a dispatch put and combine puts to node 1.
TEST(CombineAfterDispatch, ANicsCombineWaitsForItsDispatch) {
  const Topology topo = test::small_topology(2, 1);
  const ModelShape model = test::small_model(4, 1);
  const RoutingBatch batch = test::make_batch(4, 1, {{{2}}, {{0}, {1}}});
  const Placement placement{2, 4, 2, {0, 1, 2, 3}};
  const Routing routing = test::first_replica(batch, placement);
  for (bool after : {false, true}) {
    PlanOptions o{true, true, true, 0.0};
    o.combine_waves = 2;
    o.combine_after_dispatch = after;
    const CommPlan p = build_comm_plan(batch, placement, routing, topo, model, o);
    ASSERT_EQ(test::check_plan(p, batch, placement, routing), "");
    std::vector<int32_t> dispatch_of(2, -1);
    for (size_t i = 0; i < p.tasks.size(); ++i) {
      const Task& t = p.tasks[i];
      if (t.kind == TaskKind::Transfer && t.link == Link::NIC && t.phase == Phase::Dispatch) {
        ASSERT_EQ(dispatch_of[t.gpu], -1);  // one put per GPU here
        dispatch_of[t.gpu] = int32_t(i);
      }
    }
    ASSERT_GE(dispatch_of[0], 0);
    ASSERT_GE(dispatch_of[1], 0);
    int combines = 0;
    for (const Task& t : p.tasks) {
      if (t.kind != TaskKind::Transfer || t.link != Link::NIC || t.phase != Phase::Combine) continue;
      ++combines;
      const auto deps = test::deps_of(p, t);
      const bool waits = std::find(deps.begin(), deps.end(), dispatch_of[t.gpu]) != deps.end();
      EXPECT_EQ(waits, after) << "combine put from GPU " << t.gpu;
      // GPU 1 - g's put goes to g itself: it is neither this put's sender's nor its receiver's.
      EXPECT_EQ(std::find(deps.begin(), deps.end(), dispatch_of[1 - t.gpu]), deps.end());
    }
    EXPECT_EQ(combines, 3);  // GPU 0: t1 and t2 in two waves (as in TwoGemms); GPU 1: t0
  }
}

// The receiving end: 3 nodes x 1 GPU, experts 2g and 2g + 1 on GPU g. GPU 1's token needs expert
// 0 (dispatch 1 -> 0, combine 0 -> 1), GPU 2's expert 2 (dispatch 2 -> 1, combine 1 -> 2). The
// combine 0 -> 1 waits for the dispatch GPU 1 receives (2 -> 1), though GPU 0 sends none; the
// combine 1 -> 2 waits for the dispatch GPU 1 sends (1 -> 0), GPU 2 receiving none.
TEST(CombineAfterDispatch, ACombineAlsoWaitsForTheDispatchIntoItsReceiver) {
  const Topology topo = test::small_topology(3, 1);
  const ModelShape model = test::small_model(6, 1);
  const RoutingBatch batch = test::make_batch(6, 1, {{}, {{0}}, {{2}}});
  const Placement placement{3, 6, 2, {0, 1, 2, 3, 4, 5}};
  const Routing routing = test::first_replica(batch, placement);
  PlanOptions o{true, true, true, 0.0};
  o.combine_after_dispatch = true;
  const CommPlan p = build_comm_plan(batch, placement, routing, topo, model, o);
  ASSERT_EQ(test::check_plan(p, batch, placement, routing), "");
  std::map<std::pair<int, int>, int32_t> dispatch;  // (from, to) -> its put
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const Task& t = p.tasks[i];
    if (t.kind == TaskKind::Transfer && t.link == Link::NIC && t.phase == Phase::Dispatch)
      dispatch[{t.gpu, t.dst_gpu}] = int32_t(i);
  }
  ASSERT_EQ(dispatch.size(), 2u);
  std::map<std::pair<int, int>, std::vector<int32_t>> waits;  // (from, to) -> the dispatch puts it waits for
  for (const Task& t : p.tasks) {
    if (t.kind != TaskKind::Transfer || t.link != Link::NIC || t.phase != Phase::Combine) continue;
    for (int32_t d : test::deps_of(p, t))
      if (p.tasks[size_t(d)].phase == Phase::Dispatch && p.tasks[size_t(d)].link == Link::NIC)
        waits[{t.gpu, t.dst_gpu}].push_back(d);
  }
  using Waits = std::map<std::pair<int, int>, std::vector<int32_t>>;
  EXPECT_EQ(waits, (Waits{{{0, 1}, {dispatch.at({2, 1})}}, {{1, 2}, {dispatch.at({1, 0})}}}));
}

// (W1) and (W2): with waves every NIC carries the same rows of each flow, and every token's
// output is summed from the same (token, pairs) rows, as with one wave.
RC_GTEST_PROP(CombineWaves, KeepNicLoadsAndRows, ()) {
  test::RandomCase c = test::random_case(3, 3, 6);
  const auto shape = [&](int waves) {
    c.options.combine_waves = waves;
    const CommPlan p = build_comm_plan(c.batch, c.placement, c.routing, c.topo, c.model, c.options, c.moves);
    const std::string problem = test::check_plan(p, c.batch, c.placement, c.routing);
    if (!problem.empty()) RC_FAIL(problem);
    std::map<std::tuple<int, int, int>, std::vector<int64_t>> nic;  // (phase, sender, receiver node) -> tokens
    std::vector<std::pair<int64_t, std::vector<int64_t>>> rows;     // final reductions' rows
    for (const Task& t : p.tasks) {
      if (t.kind == TaskKind::Transfer && t.link == Link::NIC) {
        auto& v = nic[{int(t.phase), t.gpu, t.dst_gpu / p.gpus_per_node}];
        v.insert(v.end(), p.tokens(t).begin(), p.tokens(t).end());
      }
      if (t.kind == TaskKind::FinalReduce)
        for (const auto& row : test::rows_of(p, t)) rows.push_back(row);
    }
    for (auto& [k, v] : nic) std::sort(v.begin(), v.end());
    std::sort(rows.begin(), rows.end());
    return std::make_pair(nic, rows);
  };
  const auto one = shape(1);
  const auto many = shape(*rc::gen::inRange(2, 9));
  RC_ASSERT(one.first == many.first);
  RC_ASSERT(one.second == many.second);
}

}  // namespace
}  // namespace zepp
