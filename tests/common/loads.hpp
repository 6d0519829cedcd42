// Synthetic per-expert loads shared by the placement tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace zepp::test {

// Zipf loads load_e = 1e6 / (rank_e + 1)^exponent over a seeded random ranking of the E experts.
inline std::vector<double> power_law(int E, double exponent, unsigned seed) {
  std::vector<int> rank(E);
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), std::mt19937(seed));
  std::vector<double> load(E);
  for (int e = 0; e < E; ++e) load[e] = 1e6 / std::pow(rank[e] + 1.0, exponent);
  return load;
}

// Every load moved by a seeded uniform factor in [1 - by, 1 + by] (the "+-2% drift": by = 0.02).
inline std::vector<double> drift(std::vector<double> load, double by, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-by, by);
  for (double& v : load) v *= 1 + u(rng);
  return load;
}

}  // namespace zepp::test
