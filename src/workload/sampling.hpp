// Deterministic random draws for workload construction. The mappings from std::mt19937_64
// output to integers and reals are written out here rather than taken from
// std::uniform_*_distribution, whose results differ between standard libraries: a seed gives
// the same workload everywhere.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace zepp::workload_detail {

// Uniform integer in [0, n), n >= 1 (rejection sampling, unbiased).
uint64_t uniform_index(std::mt19937_64& rng, uint64_t n);

// Uniform real in [0, 1) with 53 random bits.
double uniform01(std::mt19937_64& rng);

// Draws k distinct experts with probability proportional to their weights, one after another
// (each draw from the weights of the experts not yet drawn: successive sampling without
// replacement). Needs at least k experts of positive weight.
class DistinctSampler {
 public:
  explicit DistinctSampler(const std::vector<double>& weights);
  // Writes k expert ids to out[0..k) in draw order.
  void sample(std::mt19937_64& rng, int k, int32_t* out) const;
  int positive() const { return positive_; }

 private:
  std::vector<double> weights_, cumulative_;
  int positive_ = 0;
};

// Gate weights for sources without them: the r-th listed expert gets (k - r) / (k (k + 1) / 2).
std::vector<float> rank_gate_weights(int k);

}  // namespace zepp::workload_detail
