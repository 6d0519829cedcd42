// Dispatch in chunks (plan/dispatch_chunks.cpp, PlanOptions::dispatch_chunks): a hand-counted
// two-node case, the chunk-count rule at its latency boundary, and a simulated layer whose first
// GEMM starts when its own chunk is in.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "exec/sim.hpp"

#include "../common/plan_check.hpp"
#include "fixture.hpp"
#include "plan_util.hpp"
#include "plan/comm_plan.hpp"
#include "random_case.hpp"

namespace zepp {
namespace {

// test::TwoNodesTwoSlots: flow node 1 -> node 0 has two rows, one per slot of GPU 0. Both
// slots' groups have delivery rank 1, so slot order decides: with C = 2 chunks,
// k(slot 0) = floor(2 * 0 / 2) = 0 and k(slot 1) = floor(2 * 1 / 2) = 1, so t0 leaves in chunk 0
// and t1 in chunk 1. GPU 0 computes on two slots of the flow, so C = min(C_max, 2) = 2.
struct TwoSlots : ::testing::Test, test::TwoNodesTwoSlots {
  CommPlan plan(int chunks) const {
    return TwoNodesTwoSlots::plan([&](PlanOptions& o) { o.dispatch_chunks = chunks; });
  }
  static std::vector<int32_t> dispatch_puts(const CommPlan& p) {
    std::vector<int32_t> out;
    for (size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].kind == TaskKind::Transfer && p.tasks[i].phase == Phase::Dispatch && p.tasks[i].hop == Hop::Put)
        out.push_back(int32_t(i));
    return out;
  }
};

TEST_F(TwoSlots, OnePutWithoutChunks) {
  const CommPlan p = plan(1);
  ASSERT_EQ(test::check_plan(p, batch, placement, routing), "");
  const auto puts = dispatch_puts(p);
  ASSERT_EQ(puts.size(), 1u);
  EXPECT_EQ(test::tokens_of(p, p.tasks[puts[0]]), (std::vector<int64_t>{0, 1}));
  // Both GEMMs wait for the one put.
  EXPECT_EQ(test::deps_of(p, p.tasks[compute_of(p, 0)]), (std::vector<int32_t>{puts[0]}));
  EXPECT_EQ(test::deps_of(p, p.tasks[compute_of(p, 1)]), (std::vector<int32_t>{puts[0]}));
}

TEST_F(TwoSlots, EachSlotWaitsOnlyForItsChunkAndChunksLeaveInOrder) {
  for (int c_max : {2, 16}) {  // C = min(C_max, 2 slots) = 2 either way
    const CommPlan p = plan(c_max);
    ASSERT_EQ(test::check_plan(p, batch, placement, routing), "");
    const auto puts = dispatch_puts(p);
    ASSERT_EQ(puts.size(), 2u);
    EXPECT_EQ(test::tokens_of(p, p.tasks[puts[0]]), (std::vector<int64_t>{0}));
    EXPECT_EQ(test::tokens_of(p, p.tasks[puts[1]]), (std::vector<int64_t>{1}));
    EXPECT_EQ(p.tasks[puts[0]].gpu, 1);
    EXPECT_EQ(p.tasks[puts[0]].dst_gpu, 0);
    EXPECT_EQ(test::deps_of(p, p.tasks[puts[0]]), (std::vector<int32_t>{}));
    EXPECT_EQ(test::deps_of(p, p.tasks[puts[1]]), (std::vector<int32_t>{puts[0]}));  // (D4)
    EXPECT_EQ(test::deps_of(p, p.tasks[compute_of(p, 0)]), (std::vector<int32_t>{puts[0]}));  // (D3)
    EXPECT_EQ(test::deps_of(p, p.tasks[compute_of(p, 1)]), (std::vector<int32_t>{puts[1]}));
  }
}

TEST_F(TwoSlots, NoChunkShorterThanTheNicLatency) {
  // The flow's NIC carries 2 rows of 16 B at 10 B/s: 3.2 s. floor(3.2 / latency) chunks at most:
  // 1.6 s allows 2, 2 s allows 1 (one put, as without chunks).
  topo.nic_latency = 1.6;
  EXPECT_EQ(dispatch_puts(plan(16)).size(), 2u);
  topo.nic_latency = 2.0;
  EXPECT_EQ(dispatch_puts(plan(16)).size(), 1u);
}

TEST_F(TwoSlots, FirstGemmStartsWhenItsChunkIsIn) {
  // Each row is 16 B over a 10 B/s NIC: 1.6 s. Without chunks both GEMMs wait for the 32 B put
  // (3.2 s); with chunks slot 0's GEMM starts at 1.6 s, slot 1's at 3.2 s.
  auto gemm_starts = [&](int chunks) {
    const LayerResult r = simulate_plan(plan(chunks), topo, true);
    std::vector<double> starts;
    for (const TimelineEvent& e : r.timeline)
      if (e.name == "expert GEMM") starts.push_back(e.start_s);
    std::sort(starts.begin(), starts.end());
    return starts;
  };
  const auto one = gemm_starts(1), two = gemm_starts(2);
  ASSERT_EQ(one.size(), 2u);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NEAR(one[0], 3.2, 1e-6);
  EXPECT_NEAR(two[0], 1.6, 1e-6);
  EXPECT_NEAR(two[1], 3.2, 1e-6);
}

TEST_F(TwoSlots, RejectsAChunkCountOutOfRange) {
  EXPECT_THROW(plan(0), ArgumentError);
  EXPECT_THROW(plan(65), ArgumentError);
}

// (D1), (D2): with chunks every NIC carries the same rows of each flow as without, and every
// GEMM computes the same pairs; check_plan finds every pair delivered and no cycle (D5).
RC_GTEST_PROP(DispatchChunks, KeepNicLoadsAndGemms, ()) {
  test::RandomCase c = test::random_case(3, 3, 6);
  const auto shape = [&](int chunks) {
    c.options.dispatch_chunks = chunks;
    const CommPlan p = build_comm_plan(c.batch, c.placement, c.routing, c.topo, c.model, c.options, c.moves);
    const std::string problem = test::check_plan(p, c.batch, c.placement, c.routing);
    if (!problem.empty()) RC_FAIL(problem);
    std::map<std::tuple<int, int, int>, std::vector<int64_t>> nic;  // (phase, sender, receiver node) -> tokens
    std::vector<std::vector<int32_t>> gemms;                         // each GEMM's pairs
    for (const Task& t : p.tasks) {
      if (t.kind == TaskKind::Transfer && t.link == Link::NIC) {
        auto& v = nic[{int(t.phase), t.gpu, t.dst_gpu / p.gpus_per_node}];
        v.insert(v.end(), p.tokens(t).begin(), p.tokens(t).end());
      }
      if (t.kind == TaskKind::Compute) gemms.emplace_back(p.pairs(t).begin(), p.pairs(t).end());
    }
    for (auto& [k, v] : nic) std::sort(v.begin(), v.end());
    std::sort(gemms.begin(), gemms.end());
    return std::make_pair(nic, gemms);
  };
  const auto one = shape(1);
  const auto many = shape(*rc::gen::inRange(2, 17));
  RC_ASSERT(one.first == many.first);
  RC_ASSERT(one.second == many.second);
}

}  // namespace
}  // namespace zepp
