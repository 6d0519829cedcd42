// Shared fixtures of the drifting-workload tests (tests/serving): a model whose token is 1 MiB,
// so size_mb = tokens per GPU, and one node of two GPUs.
#pragma once
#include "core/types.hpp"

namespace zepp::test {

inline ModelShape mib_token_model(int experts, int top_k) {
  ModelShape m;
  m.name = "tiny";
  m.num_experts = experts;
  m.top_k = top_k;
  m.hidden = 1 << 19;  // 1 MiB per BF16 token
  m.ffn = 8;
  return m;
}

inline Topology two_gpus() {
  Topology t;
  t.nodes = 1;
  t.gpus_per_node = 2;
  return t;
}

}  // namespace zepp::test
