#include "model/non_moe.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace zepp::model {

int64_t StepShape::sequences() const {
  return phase == StepPhase::Decode ? tokens : (tokens + context - 1) / context;
}

double StepShape::attention_pairs() const {
  if (phase == StepPhase::Decode) return double(tokens) * double(context);
  auto tri = [](double s) { return s * (s + 1) / 2; };
  const int64_t full = tokens / context, rest = tokens % context;
  return double(full) * tri(double(context)) + tri(double(rest));
}

namespace {

void check(const ModelShape& m, const DenseShape& d, const StepShape& s) {
  require(s.tokens > 0, "step", "tokens per GPU must be positive, got " + std::to_string(s.tokens));
  require(s.context > 0, "step", "context must be positive, got " + std::to_string(s.context));
  require(m.hidden > 0 && m.bytes_per_elem > 0, "model", "hidden and bytes_per_elem must be positive");
  require(d.attention.heads > 0 && d.attention.head_dim > 0 && d.vocab > 0, "model",
          "attention shape of '" + d.model + "' is incomplete");
}

Op op(std::string name, double flops, double bytes, const Topology& t) {
  const double time = std::max(flops / t.compute.peak_flops, bytes / t.compute.hbm_bw) + t.compute.kernel_launch;
  return {std::move(name), flops, bytes, time};
}

// A GEMM of `tokens` rows through `params` weights: 2 FLOPs per multiply-add, weights read once.
Op gemm(std::string name, double tokens, double params, int bpe, const Topology& t) {
  return op(std::move(name), 2 * tokens * params, params * bpe, t);
}

// SwiGLU FFN of intermediate `ffn`: gate, up and down projections (DESIGN.md §3).
Op swiglu(std::string name, double tokens, int hidden, int ffn, int bpe, const Topology& t) {
  return gemm(std::move(name), tokens, 3.0 * hidden * ffn, bpe, t);
}

}  // namespace

std::vector<Op> layer_ops(const ModelShape& m, const DenseShape& d, const StepShape& s, const Topology& t, bool moe_layer) {
  check(m, d, s);
  require(moe_layer || d.dense_ffn > 0, "model", "'" + d.model + "' has no dense layers");
  const AttentionShape& a = d.attention;
  const int bpe = m.bytes_per_elem;
  const double n = double(s.tokens), h = m.hidden, row = h * bpe;
  const bool decode = s.phase == StepPhase::Decode;
  const double o_params = double(a.heads) * a.v_head_dim * h;
  const double kv_row = a.kv_elems_per_token() * bpe;
  std::vector<Op> ops;
  ops.push_back(op("input_norm", 4 * n * h, 2 * n * row, t));
  ops.push_back(gemm("qkv_proj", n, a.projection_params(m.hidden) - o_params, bpe, t));
  // Attention reads queries and the KV cache (decode: every cached token; prefill: the new
  // keys/values, FlashAttention-style tiling keeps them on chip), writes new KV rows and outputs.
  const double q_bytes = n * double(a.heads) * a.head_dim * bpe, out_bytes = n * double(a.heads) * a.v_head_dim * bpe;
  const double kv_read = decode ? double(s.tokens) * double(s.context) * kv_row : n * kv_row;
  ops.push_back(op("attention", s.attention_pairs() * a.core_flops_per_pair(decode), q_bytes + kv_read + n * kv_row + out_bytes, t));
  ops.push_back(gemm("o_proj", n, o_params, bpe, t));
  ops.push_back(op("post_attention_norm", 5 * n * h, 3 * n * row, t));  // residual add fused into the norm
  if (moe_layer) {
    ops.push_back(gemm("router", n, h * m.num_experts, bpe, t));
    if (d.shared_ffn > 0) ops.push_back(swiglu("shared_experts", n, m.hidden, d.shared_ffn, bpe, t));
    ops.push_back(op("moe_residual", n * h, 3 * n * row, t));
  } else {
    ops.push_back(swiglu("dense_ffn", n, m.hidden, d.dense_ffn, bpe, t));
    ops.push_back(op("ffn_residual", n * h, 3 * n * row, t));
  }
  return ops;
}

std::vector<Op> step_ops(const ModelShape& m, const DenseShape& d, const StepShape& s, const Topology& t) {
  check(m, d, s);
  const int bpe = m.bytes_per_elem;
  const double n = double(s.tokens), h = m.hidden, row = h * bpe;
  return {op("embedding", 0, 2 * n * row, t), op("final_norm", 4 * n * h, 2 * n * row, t),
          gemm("lm_head", double(s.sequences()), h * d.vocab, bpe, t)};
}

double total_time(const std::vector<Op>& ops) {
  double s = 0;
  for (const Op& o : ops) s += o.time_s;
  return s;
}

double resident_weight_bytes(const ModelShape& m, const DenseShape& d, int expert_slots) {
  const double h = m.hidden;
  const int dense_layers = m.layers - m.moe_layers;
  double params = m.layers * d.attention.projection_params(m.hidden);
  params += dense_layers * 3.0 * h * d.dense_ffn;
  params += m.moe_layers * (3.0 * h * d.shared_ffn + h * m.num_experts);
  params += 2.0 * h * d.vocab;  // embedding and LM head (untied)
  return params * m.bytes_per_elem + double(m.moe_layers) * expert_slots * m.expert_weight_bytes();
}

double kv_bytes_per_token(const ModelShape& m, const DenseShape& d) {
  return double(m.layers) * d.attention.kv_elems_per_token() * m.bytes_per_elem;
}

}  // namespace zepp::model
