// The expert FFN of every MoE model here: SwiGLU, y = down(silu(gate(x)) ⊙ up(x)), fp32 with
// OpenBLAS cblas_sgemm (DESIGN.md §1 "Executors", `mpi`).
#pragma once
#include <cstdint>
#include <vector>

#include "mpi/seeded.hpp"

namespace zepp::mpi {

// x: [rows x hidden] row-major; y: [rows x hidden], overwritten. Two GEMMs of
// [rows x hidden] x [hidden x ffn], one of [rows x ffn] x [ffn x hidden]. rows = 0 is a no-op.
// Throws ArgumentError("rows") when rows < 0.
void swiglu(const ExpertWeights& w, const float* x, int64_t rows, float* y);

// Limits OpenBLAS to one thread (one rank per simulated GPU; ranks share the machine's cores).
void use_single_blas_thread();

}  // namespace zepp::mpi
