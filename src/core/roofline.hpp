// Expert FFN time on one GPU by the roofline model (DESIGN.md §3).
#pragma once
#include <cstdint>

#include "core/types.hpp"

namespace zepp {

// Seconds for one expert's SwiGLU FFN over `tokens` tokens: max(6·tokens·hidden·ffn FLOPs /
// peak_flops, 3·hidden·ffn·bytes_per_elem weight bytes / hbm_bw) + kernel_launch. Zero tokens
// cost nothing (the GEMM is skipped).
inline double expert_compute_time(int64_t tokens, const ModelShape& m, const Topology& t) {
  if (tokens <= 0) return 0.0;
  const double flops = 6.0 * double(tokens) * m.hidden * m.ffn;
  const double flop_time = flops / t.compute.peak_flops;
  const double mem_time = m.expert_weight_bytes() / t.compute.hbm_bw;
  return (flop_time > mem_time ? flop_time : mem_time) + t.compute.kernel_launch;
}

}  // namespace zepp
