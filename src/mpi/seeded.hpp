// Seeded synthetic tensors for the `mpi` executor: token activations and expert weights are
// pure functions of (seed, token) and (seed, expert), so every rank can generate the rows of
// its own tokens and the weights of the experts it hosts, and the dense reference can
// regenerate everything, without moving any of it.
#pragma once
#include <cstdint>
#include <vector>

namespace zepp::mpi {

// Input activation x_t of global token `token`: `hidden` fp32 values, uniform in [-1, 1).
// Writes out[0 .. hidden). Throws ArgumentError("hidden") when hidden <= 0.
void token_activation(uint64_t seed, int64_t token, int hidden, float* out);

// SwiGLU expert weights, fp32 row-major: gate and up are [hidden x ffn], down is [ffn x hidden].
// Entries are uniform in [-1, 1) scaled by 1/sqrt(fan_in) (hidden for gate/up, ffn for down) so
// outputs stay O(1) for any shape.
struct ExpertWeights {
  int expert = -1, hidden = 0, ffn = 0;
  std::vector<float> gate, up, down;

  // All three matrices back to back (gate, up, down): 3 * hidden * ffn floats, the payload of a
  // weight transfer.
  std::vector<float> packed() const;
  static ExpertWeights unpack(int expert, int hidden, int ffn, const float* data);
};

// Weights of logical expert `expert`. Throws ArgumentError("hidden"/"ffn"/"expert") on
// non-positive sizes or a negative expert.
ExpertWeights expert_weights(uint64_t seed, int expert, int hidden, int ffn);

}  // namespace zepp::mpi
