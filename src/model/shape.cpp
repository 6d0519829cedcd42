#include "model/shape.hpp"

#include "core/error.hpp"

namespace zepp::model {

double AttentionShape::projection_params(int hidden) const {
  const double h = hidden;
  if (mla_kv_rank == 0) return h * head_dim * (heads + 2.0 * kv_heads) + double(heads) * head_dim * h;
  const double q = mla_q_rank > 0 ? h * mla_q_rank + double(mla_q_rank) * heads * head_dim : h * heads * head_dim;
  const double kv_a = h * (mla_kv_rank + rope_dim);
  const double kv_b = double(mla_kv_rank) * heads * ((head_dim - rope_dim) + v_head_dim);
  const double o = double(heads) * v_head_dim * h;
  return q + kv_a + kv_b + o;
}

double AttentionShape::kv_elems_per_token() const {
  return mla_kv_rank == 0 ? 2.0 * kv_heads * head_dim : double(mla_kv_rank + rope_dim);
}

double AttentionShape::core_flops_per_pair(bool decode) const {
  if (mla_kv_rank == 0) return 2.0 * heads * 2.0 * head_dim;
  if (decode) return 2.0 * heads * (2.0 * mla_kv_rank + rope_dim);
  return 2.0 * heads * (double(head_dim) + v_head_dim);
}

namespace {

AttentionShape gqa(int heads, int kv_heads, int head_dim) { return {heads, kv_heads, head_dim, head_dim, 0, 0, 0}; }
// MLA: head_dim = qk_nope_head_dim + qk_rope_head_dim.
AttentionShape mla(int heads, int nope, int rope, int v, int kv_rank, int q_rank) {
  return {heads, heads, nope + rope, v, kv_rank, q_rank, rope};
}

// From each model's public Hugging Face config.json (num_attention_heads, num_key_value_heads,
// head_dim; MLA: qk_nope_head_dim, qk_rope_head_dim, v_head_dim, kv_lora_rank, q_lora_rank;
// dense layers' intermediate_size (Llama-4: intermediate_size_mlp); shared experts:
// n_shared_experts x moe_intermediate_size (Llama-4: one shared expert of intermediate_size);
// vocab_size). Layer counts and MoE shapes are the presets' (core/presets.cpp). Every number
// below was checked on 2026-11-30 against the public text named beside it (a re-upload of a
// config.json keeps the original's shape; where head_dim is absent it is hidden / heads). Not
// modelled: gpt-oss's 128-token sliding window on every other layer and Llama-4's 8192-token
// chunked attention on three layers in four; both are costed here as full causal attention.
std::vector<DenseShape> shapes() {
  return {
      // Qwen/Qwen3-30B-A3B: 32 heads, 4 KV heads, head_dim 128, all 48 layers MoE, no shared
      // expert, vocab 151936. Checked: Ascend MindSpeed-RL configs/model/qwen3_30b_a3b.yaml
      // (num_attention_heads 32, num_query_groups 4, kv_channels 128, padded_vocab_size 151936).
      {"qwen3-30b-a3b", gqa(32, 4, 128), 0, 0, 151936},
      // Qwen/Qwen3-235B-A22B: 64 heads, 4 KV heads, head_dim 128. Checked: MindSpeed-RL
      // qwen3_235b_a22b.yaml and AI-Hypercomputer/maxtext configs/models/qwen3-235b-a22b.yml.
      {"qwen3-235b-a22b", gqa(64, 4, 128), 0, 0, 151936},
      // deepseek-ai/DeepSeek-V2-Lite: 16 heads, MLA (nope 128, rope 64, v 128, kv_lora_rank 512,
      // no q_lora), first layer dense (intermediate_size 10944), 2 shared experts x 1408.
      // Checked: config.json as re-uploaded (ModelCloud/DeepSeek-V2-Lite-gptq-4bit) and the
      // DeepSeek-V3 repository's inference/configs/config_16B.json.
      {"deepseek-v2-lite", mla(16, 128, 64, 128, 512, 0), 10944, 2 * 1408, 102400},
      // meta-llama/Llama-4-Maverick-17B-128E: 40 heads, 8 KV heads, head_dim 128; dense layers
      // intermediate_size_mlp 16384; one shared expert of intermediate_size 8192. Checked: the
      // GGUF metadata of a Maverick conversion on ollama.com (head_count 40, head_count_kv 8,
      // key_length 128, feed_forward_length 16384, expert_feed_forward_length 8192,
      // interleave_moe_layer_step 2, vocab_size 202048).
      {"llama4-maverick", gqa(40, 8, 128), 16384, 8192, 202048},
      // mistralai/Mixtral-8x7B-v0.1: 32 heads, 8 KV heads, head_dim 4096 / 32 = 128; no dense
      // layer or shared expert. Checked: mistralai/Mixtral-8x7B-Instruct-v0.1 config.json.
      {"mixtral-8x7b", gqa(32, 8, 128), 0, 0, 32000},
      // moonshotai/Kimi-K2-Instruct: 64 heads, MLA (128, 64, 128, kv 512, q 1536), first layer
      // dense (18432), 1 shared expert x 2048. Checked: NVIDIA Megatron-Bridge KimiK2Provider
      // docs and slime's scripts/models/kimi-k2.sh (FIRST_K_DENSE_REPLACE=1, vocab 163840).
      {"kimi-k2", mla(64, 128, 64, 128, 512, 1536), 18432, 2048, 163840},
      // deepseek-ai/DeepSeek-V3: 128 heads, MLA as Kimi-K2, 3 dense layers (18432), 1 shared x
      // 2048. Checked: vLLM's DeepseekV3Config defaults and the fp8 config.json as re-uploaded.
      {"deepseek-v3", mla(128, 128, 64, 128, 512, 1536), 18432, 2048, 129280},
      // deepseek-ai/DeepSeek-R1: DeepSeek-V3's architecture. Checked: config.json of
      // amd/DeepSeek-R1-0528-MXFP4 (same numbers as DeepSeek-V3).
      {"deepseek-r1", mla(128, 128, 64, 128, 512, 1536), 18432, 2048, 129280},
      // meta-llama/Llama-4-Scout-17B-16E: 40 heads, 8 KV heads, head_dim 128; every layer MoE
      // (interleave_moe_layer_step 1); one shared expert of intermediate_size 8192. Checked:
      // transformers' Llama4TextConfig, whose defaults are Scout's (16 local experts).
      {"llama4-scout", gqa(40, 8, 128), 0, 8192, 202048},
      // mistralai/Mixtral-8x22B-v0.1: 48 heads, 8 KV heads, head_dim 6144 / 48 = 128; no dense
      // layer or shared expert. Checked: mistral-community/Mixtral-8x22B-v0.1 config.json
      // (vocab 32000; the Instruct model's is 32768).
      {"mixtral-8x22b", gqa(48, 8, 128), 0, 0, 32000},
      // Qwen/Qwen1.5-MoE-A2.7B: 16 heads, 16 KV heads, head_dim 2048 / 16 = 128;
      // shared_expert_intermediate_size 5632. Checked: config.json as re-uploaded
      // (RichardErkhov/Qwen_-_Qwen1.5-MoE-A2.7B-8bits).
      {"qwen1.5-moe-a2.7b", gqa(16, 16, 128), 0, 5632, 151936},
      // openai/gpt-oss-20b and -120b: 64 heads, 8 KV heads, head_dim 64; no shared expert.
      // Checked: gpt-oss-120b original/config.json as duplicated on the Hub, and NVIDIA
      // Megatron-Bridge's GPT-OSS page (both sizes: 64 query heads, 8 KV groups, KV channels 64).
      {"gpt-oss-20b", gqa(64, 8, 64), 0, 0, 201088},
      {"gpt-oss-120b", gqa(64, 8, 64), 0, 0, 201088},
      // databricks/dbrx-base: 48 heads, attn_config kv_n_heads 8, head_dim 6144 / 48 = 128.
      // Checked: config.json of the converted base (LnL-AI/dbrx-base-converted-v2).
      {"dbrx", gqa(48, 8, 128), 0, 0, 100352},
      // allenai/OLMoE-1B-7B-0924: 16 heads, 16 KV heads, head_dim 2048 / 16 = 128. Checked:
      // allenai/OLMoE-1B-7B-0924 config.json.
      {"olmoe-1b-7b", gqa(16, 16, 128), 0, 0, 50304},
      // zai-org/GLM-4.5: 96 heads, 8 KV heads, head_dim 128; first 3 layers dense
      // (intermediate_size 12288); 1 shared expert x 1536. Checked: NVIDIA Megatron-Bridge's
      // GLM 4.5 page (92 layers, 3 dense, 96 heads, 8 query groups, vocab 151552); head_dim
      // 128 from zai-org/GLM-4.7's config.json, the same architecture.
      {"glm-4.5", gqa(96, 8, 128), 12288, 1536, 151552},
  };
}

}  // namespace

DenseShape dense_shape(const std::string& name) {
  for (const auto& s : shapes())
    if (s.model == name) return s;
  std::string names;
  for (const auto& n : dense_shape_names()) names += (names.empty() ? "" : ", ") + n;
  throw ArgumentError("model: no attention/dense shape for preset '" + name + "', expected one of " + names);
}

std::vector<std::string> dense_shape_names() {
  std::vector<std::string> names;
  for (const auto& s : shapes()) names.push_back(s.model);
  return names;
}

}  // namespace zepp::model
