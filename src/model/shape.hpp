// The non-MoE shape of a whole model (paper §6.4: attention with data parallelism, dense
// projections, shared experts, embedding and LM head), per model preset. The MoE part of each
// layer is the preset's ModelShape (core/presets.hpp); every constant's source is beside it in
// shape.cpp.
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp::model {

// Attention of one layer. GQA (mla_kv_rank = 0): query heads `heads`, key/value heads
// `kv_heads`, both of `head_dim`. MLA (DeepSeek-V2/V3, Kimi-K2; mla_kv_rank > 0): queries of
// head_dim = nope + rope per head (from a q_lora_rank latent when > 0), keys and values
// decompressed from a cached latent of mla_kv_rank + rope_dim per token; values v_head_dim.
struct AttentionShape {
  int heads = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0;
  int mla_kv_rank = 0, mla_q_rank = 0, rope_dim = 0;

  // Projection weights (elements) of one layer: Q, K, V, O (GQA) or q(_a, _b), kv_a, kv_b, o (MLA).
  double projection_params(int hidden) const;
  // KV-cache elements per token per layer: 2 · kv_heads · head_dim (GQA), rank + rope (MLA).
  double kv_elems_per_token() const;
  // FLOPs of one (query, key) pair, all heads: QK^T and PV, 2 FLOPs per multiply-add. GQA:
  // 2 · heads · 2 · head_dim. MLA: prefill decompresses (2 · heads · (head_dim + v_head_dim));
  // decode attends in the latent, as the absorbed form does (2 · heads · (2 · rank + rope)).
  double core_flops_per_pair(bool decode) const;
};

struct DenseShape {
  std::string model;        // preset name (core/presets.hpp)
  AttentionShape attention;
  int dense_ffn = 0;        // SwiGLU intermediate of the dense (non-MoE) layers; 0 when none
  int shared_ffn = 0;       // SwiGLU intermediate of the shared experts of an MoE layer, all together
  int vocab = 0;            // embedding / LM head rows
};

// The non-MoE shape of model preset `name`. Throws ArgumentError("model: ...") listing the
// presets that have one.
DenseShape dense_shape(const std::string& name);
std::vector<std::string> dense_shape_names();

}  // namespace zepp::model
