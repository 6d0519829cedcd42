#include "workload/sampling.hpp"

#include <algorithm>
#include <limits>

namespace zepp::workload_detail {

uint64_t uniform_index(std::mt19937_64& rng, uint64_t n) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = max - max % n;  // a multiple of n: [0, limit) maps evenly
  uint64_t x;
  do x = rng();
  while (x >= limit);
  return x % n;
}

double uniform01(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

DistinctSampler::DistinctSampler(const std::vector<double>& weights) : weights_(weights) {
  double sum = 0;
  for (double w : weights_) {
    sum += w;
    cumulative_.push_back(sum);
    positive_ += w > 0;
  }
}

void DistinctSampler::sample(std::mt19937_64& rng, int k, int32_t* out) const {
  const auto taken = [&](int j, int32_t e) { return std::find(out, out + j, e) != out + j; };
  for (int j = 0; j < k; ++j) {
    // Redrawing from all weights until an expert not yet taken comes up is the same
    // distribution as drawing from the remaining weights; it is just cheaper while the taken
    // experts hold little of the mass. After a few misses, draw from the remaining weights.
    int32_t pick = -1;
    for (int attempt = 0; attempt < 16 && pick < 0; ++attempt) {
      const double x = uniform01(rng) * cumulative_.back();
      const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), x);
      if (it == cumulative_.end()) continue;  // x rounded up to the total
      const int32_t e = int32_t(it - cumulative_.begin());
      if (!taken(j, e)) pick = e;
    }
    if (pick < 0) {
      double rest = 0;
      for (size_t e = 0; e < weights_.size(); ++e)
        if (!taken(j, int32_t(e))) rest += weights_[e];
      double x = uniform01(rng) * rest;
      for (size_t e = 0; e < weights_.size() && pick < 0; ++e) {
        if (taken(j, int32_t(e)) || weights_[e] <= 0) continue;
        if (x < weights_[e]) pick = int32_t(e);
        x -= weights_[e];
      }
      if (pick < 0)  // x rounded past the last remaining expert: take that one
        for (size_t e = weights_.size(); e-- > 0 && pick < 0;)
          if (!taken(j, int32_t(e)) && weights_[e] > 0) pick = int32_t(e);
    }
    out[j] = pick;
  }
}

std::vector<float> rank_gate_weights(int k) {
  std::vector<float> w(k);
  const double total = k * (k + 1) / 2.0;
  for (int r = 0; r < k; ++r) w[r] = float((k - r) / total);
  return w;
}

}  // namespace zepp::workload_detail
