// The whole-model stage (src/model): non-MoE time of a hand-computed shape, the layer pipeline
// of §6.4, prefill and decode of a two-layer toy model adding up as the pipeline says.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "model/compose.hpp"
#include "model/non_moe.hpp"
#include "model/pipeline.hpp"
#include "model/shape.hpp"

namespace zepp::model {
namespace {

// hidden 4, 2 experts, BF16; GQA with 2 query heads, 1 KV head, head dim 2; vocab 8.
ModelShape toy_moe() {
  ModelShape m;
  m.name = "toy";
  m.num_experts = 2;
  m.top_k = 1;
  m.hidden = 4;
  m.ffn = 2;
  m.layers = 2;
  m.moe_layers = 2;
  return m;
}
DenseShape toy_dense() { return {"toy", {2, 1, 2, 2, 0, 0, 0}, 0, 0, 8}; }
// 100 FLOP/s, 10 B/s of HBM, 1 s per kernel: every op's time is easy to write down.
Topology toy_topology() {
  Topology t;
  t.name = "toy";
  t.nodes = 1;
  t.gpus_per_node = 2;
  t.compute.peak_flops = 100;
  t.compute.hbm_bw = 10;
  t.compute.kernel_launch = 1;
  t.nvlink_bw = t.nic_bw = 1;
  return t;
}

TEST(NonMoe, DecodeLayerByHand) {
  // 3 sequences, 5 cached tokens each. Projections: Q 4x4, K 4x2, V 4x2 (32 params), O 4x4 (16).
  const StepShape s{StepPhase::Decode, 3, 5};
  const auto ops = layer_ops(toy_moe(), toy_dense(), s, toy_topology(), true);
  ASSERT_EQ(ops.size(), 7u);
  const std::vector<std::pair<std::string, double>> expected = {
      {"input_norm", 1 + 48 / 10.0},          // 2 * 3 rows * 8 bytes read+written; 48 FLOPs (0.48 s) below
      {"qkv_proj", 1 + 64 / 10.0},            // 32 params * 2 B = 64 B (6.4 s) > 2*3*32 = 192 FLOPs (1.92 s)
      {"attention", 1 + 192 / 10.0},          // q 24 B + KV read 3*5*8 = 120 B + new KV 24 B + out 24 B; 15 pairs * 16 FLOPs = 2.4 s
      {"o_proj", 1 + 32 / 10.0},              // 16 params * 2 B; 96 FLOPs
      {"post_attention_norm", 1 + 72 / 10.0}, // 3 * 3 rows * 8 B
      {"router", 1 + 16 / 10.0},              // 4 x 2 params * 2 B; 48 FLOPs
      {"moe_residual", 1 + 72 / 10.0},
  };
  double total = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].name, expected[i].first);
    EXPECT_DOUBLE_EQ(ops[i].time_s, expected[i].second) << ops[i].name;
    total += expected[i].second;
  }
  EXPECT_DOUBLE_EQ(total_time(ops), total);
  EXPECT_DOUBLE_EQ(total, 56.6);
  EXPECT_DOUBLE_EQ(ops[2].flops, 240);  // 3 * 5 pairs * (2 heads * 2 (QK, PV) * 2 FLOPs * head dim 2)
}

TEST(NonMoe, PrefillAttentionIsCausalPerSequence) {
  // 5 tokens in prompts of 2: sequences of 2, 2 and 1 tokens -> 3 + 3 + 1 (query, key) pairs.
  const StepShape s{StepPhase::Prefill, 5, 2};
  EXPECT_EQ(s.sequences(), 3);
  EXPECT_DOUBLE_EQ(s.attention_pairs(), 7);
  const auto ops = step_ops(toy_moe(), toy_dense(), s, toy_topology());
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[2].name, "lm_head");
  EXPECT_DOUBLE_EQ(ops[2].flops, 2.0 * 3 * 4 * 8);  // logits of the last token of each of 3 sequences
}

TEST(NonMoe, FlagsShapesThatCannotWork) {
  EXPECT_THROW(layer_ops(toy_moe(), toy_dense(), {StepPhase::Decode, 0, 5}, toy_topology(), true), ArgumentError);
  EXPECT_THROW(layer_ops(toy_moe(), toy_dense(), {StepPhase::Decode, 3, 5}, toy_topology(), false), ArgumentError);  // no dense FFN
  EXPECT_THROW(dense_shape("no-such-model"), ArgumentError);
}

TEST(Shapes, MlaAndGqaFromTheirConfigs) {
  // Qwen3-30B-A3B: 32 x 128 queries, 4 x 128 keys and values: 2048 * 128 * (32 + 8) + 4096 * 2048.
  const DenseShape q = dense_shape("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(q.attention.projection_params(2048), 2048.0 * 128 * 40 + 4096.0 * 2048);
  EXPECT_DOUBLE_EQ(q.attention.kv_elems_per_token(), 1024);
  // DeepSeek-V2-Lite caches the 512-wide latent plus the 64-wide rope key.
  EXPECT_DOUBLE_EQ(dense_shape("deepseek-v2-lite").attention.kv_elems_per_token(), 576);
}

TEST(Pipeline, HostWorkHidesUnderThePreviousLayer) {
  // host 1, 2; device 3, 5: layer 1's host work ends at 3 = layer 0's device end: 1 + 3 + 5.
  PipelineTimes p = pipeline({{1, 3}, {2, 5}});
  EXPECT_DOUBLE_EQ(p.step_s, 9);
  EXPECT_DOUBLE_EQ(p.device_start_s[1], 4);
  // host 6 for layer 1: it ends at 7 > 4, the device waits: 7 + 5.
  p = pipeline({{1, 3}, {6, 5}});
  EXPECT_DOUBLE_EQ(p.step_s, 12);
  EXPECT_DOUBLE_EQ(pipeline({}).step_s, 0);
  EXPECT_THROW(pipeline({{-1, 3}}), ArgumentError);
}

MoeRun two_layers(double l0, double l1, int64_t tokens) {
  MoeRun r;
  r.tokens_per_gpu = tokens;
  r.layers = {0, 1};
  r.systems = {{"x", {{{0, l0}, {1, l1}}}}};
  return r;
}

TEST(Compose, TwoLayerPrefillAddsUpAsThePipelineSays) {
  const ModelShape m = toy_moe();
  const DenseShape d = toy_dense();
  const Topology t = toy_topology();
  const StepShape s{StepPhase::Prefill, 4, 2};
  const auto out = compose_steps(two_layers(10, 20, 4), m, d, t, s, true);
  ASSERT_EQ(out.size(), 1u);
  const StepReport& st = out[0].steps.at(0);
  ASSERT_EQ(st.stages.size(), 4u);  // embedding, layer 0, layer 1, lm_head
  const double emb = step_ops(m, d, s, t)[0].time_s;
  const double head = step_ops(m, d, s, t)[1].time_s + step_ops(m, d, s, t)[2].time_s;
  const double layer = total_time(layer_ops(m, d, s, t, true));
  // Host work per layer is 10 kernels (7 ops + 3 MoE) = 10 s; it fits under the previous
  // stage's device time only from layer 1 on, so layer 0 starts when its host work is done.
  const double h_emb = 1, h_layer = 10;
  const double l0_start = std::max(h_emb + emb, h_emb + h_layer);
  const double l0_end = l0_start + layer + 10;
  const double l1_start = std::max(l0_end, h_emb + 2 * h_layer);
  const double l1_end = l1_start + layer + 20;
  const double end = std::max(l1_end, h_emb + 2 * h_layer + 2) + head;
  EXPECT_DOUBLE_EQ(st.stages[1].start_s, l0_start);
  EXPECT_DOUBLE_EQ(st.stages[2].end_s, l1_end);
  EXPECT_DOUBLE_EQ(st.step_s, end);
  EXPECT_DOUBLE_EQ(st.moe_s, 30);
  EXPECT_DOUBLE_EQ(st.non_moe_s, emb + 2 * layer + head);
  // Prefill throughput: 4 tokens on each of 2 GPUs per step.
  EXPECT_DOUBLE_EQ(out[0].tokens_per_s, 8 / end);
}

TEST(Compose, DecodeStepIsTheTimePerOutputToken) {
  const ModelShape m = toy_moe();
  const DenseShape d = toy_dense();
  Topology t = toy_topology();
  t.compute.peak_flops = t.compute.hbm_bw = 1e30;  // every op costs its launch: 1 s
  const StepShape s{StepPhase::Decode, 3, 5};
  const auto out = compose_steps(two_layers(0, 0, 3), m, d, t, s, false);
  // Host-bound: host ends 1, 11, 21, 23; device: [1, 2], [11, 18], [21, 28], [28, 30].
  const StepReport& st = out[0].steps.at(0);
  EXPECT_DOUBLE_EQ(st.stages[1].start_s, 11);
  EXPECT_DOUBLE_EQ(st.stages[2].start_s, 21);
  EXPECT_DOUBLE_EQ(st.step_s, 30);
  EXPECT_DOUBLE_EQ(out[0].mean_step_s, 30);
  EXPECT_DOUBLE_EQ(out[0].tokens_per_s, 6.0 / 30);  // 3 sequences on each of 2 GPUs, one token each
  EXPECT_THROW(compose_steps(two_layers(0, 0, 4), m, d, t, s, false), ArgumentError);  // tokens differ
}

}  // namespace
}  // namespace zepp::model
