// The dense single-process reference the `mpi` executor is checked against (issue 4 item 3).
// Each source rank recomputes the outputs of its own tokens from scratch, without the plan:
// y_t = sum over k (in k order) of w_k * SwiGLU_{e_k}(x_t), with the same seeded activations and
// weights (mpi/seeded.hpp) the executors use.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace zepp::mpi {

// Outputs of GPU `gpu`'s tokens: [tokens of gpu x model.hidden], in token order. Generates one
// expert's weights at a time (memory: one expert plus the rows). Throws ArgumentError("gpu")
// when gpu is outside the batch.
std::vector<float> reference_outputs(const RoutingBatch& batch, int gpu, const ModelShape& model, uint64_t data_seed);

// The same from given inputs x [tokens of gpu x model.hidden] (a layer of a stack, mpi/stack.hpp),
// with expert weights seeded by `weight_seed`. Throws ArgumentError("gpu", "x") on bad shapes.
std::vector<float> reference_outputs_from(const RoutingBatch& batch, int gpu, const ModelShape& model,
                                          uint64_t weight_seed, const std::vector<float>& x);

// Largest relative error over tokens: max_t ||y_t - ref_t||_2 / ||ref_t||_2 (the absolute error
// where ||ref_t|| = 0). NaN anywhere gives NaN. Throws ArgumentError("y") on a size mismatch.
double max_relative_error(const std::vector<float>& y, const std::vector<float>& ref, int hidden);

}  // namespace zepp::mpi
