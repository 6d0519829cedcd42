#include "mpi/seeded.hpp"

#include <cmath>

#include "core/error.hpp"

namespace zepp::mpi {
namespace {

// SplitMix64's finaliser: a bijective mix, so distinct counters give independent-looking values.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Counter-based stream: value i of stream (seed, tag, id) in [-1, 1), exactly representable.
struct Stream {
  uint64_t base;
  Stream(uint64_t seed, uint64_t tag, uint64_t id) : base(mix(mix(seed ^ (tag << 56)) ^ id)) {}
  float at(uint64_t i) const { return float(int64_t(mix(base + i * 0x9e3779b97f4a7c15ULL) >> 40) - (1 << 23)) * 0x1p-23f; }
};

enum : uint64_t { kToken = 1, kGate = 2, kUp = 3, kDown = 4 };

std::vector<float> matrix(uint64_t seed, uint64_t tag, int expert, size_t n, int fan_in) {
  const Stream s(seed, tag, uint64_t(expert));
  const float scale = 1.0f / std::sqrt(float(fan_in));
  std::vector<float> m(n);
  for (size_t i = 0; i < n; ++i) m[i] = s.at(i) * scale;
  return m;
}

}  // namespace

void token_activation(uint64_t seed, int64_t token, int hidden, float* out) {
  require(hidden > 0, "hidden", "must be positive");
  const Stream s(seed, kToken, uint64_t(token));
  for (int h = 0; h < hidden; ++h) out[h] = s.at(uint64_t(h));
}

ExpertWeights expert_weights(uint64_t seed, int expert, int hidden, int ffn) {
  require(hidden > 0, "hidden", "must be positive");
  require(ffn > 0, "ffn", "must be positive");
  require(expert >= 0, "expert", "must be >= 0");
  const size_t n = size_t(hidden) * size_t(ffn);
  return {expert, hidden, ffn, matrix(seed, kGate, expert, n, hidden), matrix(seed, kUp, expert, n, hidden),
          matrix(seed, kDown, expert, n, ffn)};
}

std::vector<float> ExpertWeights::packed() const {
  std::vector<float> p;
  p.reserve(gate.size() * 3);
  p.insert(p.end(), gate.begin(), gate.end());
  p.insert(p.end(), up.begin(), up.end());
  p.insert(p.end(), down.begin(), down.end());
  return p;
}

ExpertWeights ExpertWeights::unpack(int expert, int hidden, int ffn, const float* data) {
  const size_t n = size_t(hidden) * size_t(ffn);
  return {expert, hidden, ffn, {data, data + n}, {data + n, data + 2 * n}, {data + 2 * n, data + 3 * n}};
}

}  // namespace zepp::mpi
