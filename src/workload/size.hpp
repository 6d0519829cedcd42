// The batch size of paper §6.1, shared by build_workload and the cost estimate made before it.
#pragma once
#include "core/types.hpp"

namespace zepp {

// floor(size_mb * 2^20 / model.token_bytes()): BF16 input activations per GPU before top-k, as a
// real number so that a huge size does not overflow; 0 when size_mb is not a positive finite number.
double tokens_per_gpu(const ModelShape& model, double size_mb);

// The batch bounds build_workload holds: at least one token per GPU, at most 2^31 - 1 (token,
// expert) pairs in all (the routing indexes them with int32). Throws ArgumentError "size_mb: ...".
void check_batch_size(const ModelShape& model, const Topology& topo, double size_mb);

}  // namespace zepp
