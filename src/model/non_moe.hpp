// The non-MoE work of one forward step on one GPU, timed by the roofline model (DESIGN.md §3):
// attention with data parallelism (paper §6.4: every GPU runs attention for its own sequences,
// so no communication), its KV-cache traffic, dense projections, shared experts, router,
// norms, embedding and LM head. Each op is one kernel: time = max(flops / peak_flops,
// bytes / hbm_bw) + kernel_launch. GEMMs count their weight bytes (as expert_compute_time
// does); elementwise ops and attention count their activation / KV-cache bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "model/shape.hpp"

namespace zepp::model {

enum class StepPhase { Prefill, Decode };

// One forward step on one GPU. Prefill: `tokens` prompt tokens in sequences of `context`
// tokens (the last one shorter when context does not divide tokens), causal attention within
// each. Decode: `tokens` sequences, one new token each, attending to `context` cached tokens
// (the new one included).
struct StepShape {
  StepPhase phase = StepPhase::Prefill;
  int64_t tokens = 0;
  int64_t context = 0;

  int64_t sequences() const;
  // (query, key) pairs attended: prefill sum over sequences of s (s + 1) / 2; decode tokens · context.
  double attention_pairs() const;
};

struct Op {
  std::string name;     // "qkv_proj", "attention", "router", ...
  double flops = 0;
  double bytes = 0;     // HBM bytes read and written
  double time_s = 0;    // roofline time + kernel_launch
};

// Ops of one decoder layer: input norm, qkv_proj, attention, o_proj, post-attention norm and
// residual; then for an MoE layer router, shared_experts (when the model has them) and the
// residual after the MoE output, for a dense layer dense_ffn and its residual. The routed
// experts themselves are the MoE layer's (strategies on an executor). Throws ArgumentError
// ("step"/"model") on non-positive sizes or a dense layer of a model without dense_ffn.
std::vector<Op> layer_ops(const ModelShape& moe, const DenseShape& dense, const StepShape& step, const Topology& topo,
                          bool moe_layer);
// Ops once per step: embedding gather, final norm, LM head over the last token of each sequence.
std::vector<Op> step_ops(const ModelShape& moe, const DenseShape& dense, const StepShape& step, const Topology& topo);

double total_time(const std::vector<Op>& ops);

// Weight bytes resident on one GPU under DP attention and EP: every non-expert weight (all
// layers' attention, dense FFNs, shared experts, routers, embedding and LM head) plus
// `expert_slots` routed experts per MoE layer.
double resident_weight_bytes(const ModelShape& moe, const DenseShape& dense, int expert_slots);
// KV-cache bytes of one token over all layers.
double kv_bytes_per_token(const ModelShape& moe, const DenseShape& dense);

}  // namespace zepp::model
