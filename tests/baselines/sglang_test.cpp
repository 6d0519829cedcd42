// The SGLang baseline (paper §6.4; docs/baselines/sglang.md): dense all-gather, expert
// computation, dense reduce-scatter, one after another. Its bytes equal the collectives' formula.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "baselines/baselines.hpp"
#include "exec/sim.hpp"
#include "pipeline/strategy.hpp"
#include "../common/plan_check.hpp"

namespace zepp {
namespace {

struct Bytes {
  double nic = 0, nvlink = 0;
  std::vector<double> received;  // per GPU, all phases
};

Bytes bytes_of(const CommPlan& plan) {
  Bytes b;
  b.received.assign(size_t(plan.num_gpus), 0.0);
  for (const Task& t : plan.tasks) {
    if (t.kind != TaskKind::Transfer) continue;
    (t.link == Link::NIC ? b.nic : b.nvlink) += t.bytes;
    b.received[size_t(t.dst_gpu)] += t.bytes;
  }
  return b;
}

CommPlan sglang_plan(const Workload& w, const ModelShape& m, const Topology& t, StrategyDecision* out = nullptr) {
  for (const auto& s : strategy_registry())
    if (s.name == "sglang") {
      StrategyDecision d = s.decide(StrategyInput{w, m, t, StrategyOptions{}});
      CommPlan plan = d.make_plan(d.placement, d.routing);
      EXPECT_EQ(test::check_plan(plan, w.batch, d.placement, d.routing), "");
      if (out) *out = std::move(d);
      return plan;
    }
  ADD_FAILURE() << "sglang is not registered";
  return {};
}

// 2 nodes x 2 GPUs, 2-byte rows; GPUs hold 3, 1, 2 and 0 tokens (R = 6 rows).
TEST(Sglang, BytesEqualAllGatherPlusReduceScatter) {
  const Topology topo = test::tiny_topology(2);
  const ModelShape model = test::tiny_model(4, 2);
  const Workload w = test::make_workload({{{0, 1}, {1, 2}, {3, 0}}, {{2, 3}}, {{0, 3}, {1, 3}}, {}}, 4);
  const CommPlan plan = sglang_plan(w, model, topo);
  const Bytes b = bytes_of(plan);
  // Inter-node: each GPU's tokens cross to the other node once in each collective:
  // 2 (N - 1) R token_bytes = 2 * 1 * 6 * 2. NVLink: to the other GPU of the own node, and
  // forwarded on the other node, both ways: 2 N (G - 1) R token_bytes = 2 * 2 * 1 * 6 * 2.
  EXPECT_DOUBLE_EQ(b.nic, 24);
  EXPECT_DOUBLE_EQ(b.nvlink, 48);
  // Every GPU receives the other GPUs' tokens in the all-gather (6 - T_g rows) and, in the
  // reduce-scatter, one partial row per own token from each GPU of its node and per other node.
  const std::vector<double> tokens = {3, 1, 2, 0};
  for (int g = 0; g < 4; ++g) {
    const double gathered = (6 - tokens[g]) * 2;
    // Reduce-scatter into g: (G - 1) + (N - 1) rows per own token, plus the pre-reduction
    // gathers g receives as a peer: for each source s on the other node with local(s) = local(g),
    // G - 1 rows per token of s.
    const int peer_source = (g + 2) % 4;
    const double scattered = (1 + 1) * tokens[g] * 2 + tokens[peer_source] * 2;
    EXPECT_DOUBLE_EQ(b.received[g], gathered + scattered) << "GPU " << g;
  }
  // Sequential: computation waits for the whole all-gather, the reduce-scatter for all computation.
  int barriers = 0;
  for (const Task& t : plan.tasks) barriers += t.kind == TaskKind::Barrier;
  EXPECT_EQ(barriers, 2);
}

RC_GTEST_PROP(Sglang, BytesFormulaOnRandomBatches, ()) {
  const int nodes = *rc::gen::inRange(1, 4), experts = 2 * nodes * *rc::gen::inRange(1, 3);
  const Topology topo = test::tiny_topology(nodes);
  const int k = *rc::gen::inRange(1, 3);
  std::vector<std::vector<std::vector<int>>> tokens(size_t(2 * nodes));
  int64_t rows = 0;
  for (auto& gpu : tokens) {
    gpu.resize(size_t(*rc::gen::inRange(&gpu == &tokens[0] ? 1 : 0, 5)));  // make_workload reads top-k from GPU 0's first token
    rows += int64_t(gpu.size());
    for (auto& tok : gpu) tok = *rc::gen::unique<std::vector<int>>(size_t(k), rc::gen::inRange(0, experts));
  }
  const Workload w = test::make_workload(tokens, experts);
  StrategyDecision d;
  const CommPlan plan = sglang_plan(w, test::tiny_model(experts, k), topo, &d);
  const Bytes b = bytes_of(plan);
  RC_ASSERT(b.nic == 2.0 * (nodes - 1) * double(rows) * 2);
  RC_ASSERT(b.nvlink == 2.0 * nodes * (2 - 1) * double(rows) * 2);
}

TEST(Sglang, RunsOnTheSimulatedClusterNoFasterThanItsCollectives) {
  // One node of 2 GPUs, 100 B/s NVLink: 4 rows of 2 bytes each way over NVLink at least.
  const Topology topo = test::tiny_topology(1);
  const ModelShape model = test::tiny_model(2, 1);
  const Workload w = test::make_workload({{{0}, {1}}, {{0}, {1}}}, 2);
  const LayerResult r = simulate_plan(sglang_plan(w, model, topo), topo);
  EXPECT_DOUBLE_EQ(r.nvlink_bytes, 2 * 2 * 2 * 2.0);
  EXPECT_GE(r.latency_s, 2 * 4.0 / 100);
}

}  // namespace
}  // namespace zepp
