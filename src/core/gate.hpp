// Gate weights as sources write them.
#pragma once

namespace zepp {

// A token's gate weights are softmax probabilities: each in [0, 1], summing to at most 1. Sources
// write them as rounded float32 (k terms of relative error 2^-24 each); 1e-3 allows that with room
// and still rejects a weight written twice or a logit taken for a probability.
inline constexpr double kGateSumTolerance = 1e-3;

}  // namespace zepp
