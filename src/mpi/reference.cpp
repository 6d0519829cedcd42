#include "mpi/reference.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "mpi/ffn.hpp"
#include "mpi/seeded.hpp"

namespace zepp::mpi {

std::vector<float> reference_outputs(const RoutingBatch& batch, int gpu, const ModelShape& model, uint64_t data_seed) {
  require(gpu >= 0 && gpu < batch.num_gpus, "gpu", "outside the batch");
  const int hidden = model.hidden;
  const int64_t first = batch.token_offset[gpu], tokens = batch.token_offset[gpu + 1] - first;
  std::vector<float> x(size_t(tokens) * hidden);
  for (int64_t t = 0; t < tokens; ++t) token_activation(data_seed, first + t, hidden, x.data() + t * hidden);
  return reference_outputs_from(batch, gpu, model, data_seed, x);
}

std::vector<float> reference_outputs_from(const RoutingBatch& batch, int gpu, const ModelShape& model,
                                          uint64_t data_seed, const std::vector<float>& x) {
  require(gpu >= 0 && gpu < batch.num_gpus, "gpu", "outside the batch");
  const int k = batch.top_k, hidden = model.hidden;
  const int64_t first = batch.token_offset[gpu], tokens = batch.token_offset[gpu + 1] - first;
  require(x.size() == size_t(tokens) * hidden, "x", "must hold the GPU's tokens x hidden values");
  std::map<int, std::vector<int64_t>> by_expert;  // expert -> local pair indices
  for (int64_t p = 0; p < tokens * k; ++p) by_expert[batch.expert_ids[first * k + p]].push_back(p);
  std::vector<float> contrib(size_t(tokens) * k * hidden);
  for (const auto& [e, pairs] : by_expert) {
    const ExpertWeights w = expert_weights(data_seed, e, hidden, model.ffn);
    std::vector<float> in(pairs.size() * hidden), out(in.size());
    for (size_t r = 0; r < pairs.size(); ++r) std::copy_n(x.data() + pairs[r] / k * hidden, hidden, in.data() + r * hidden);
    swiglu(w, in.data(), int64_t(pairs.size()), out.data());
    for (size_t r = 0; r < pairs.size(); ++r) {
      const float g = batch.gate_weights[first * k + pairs[r]];
      for (int h = 0; h < hidden; ++h) contrib[pairs[r] * hidden + h] = g * out[r * hidden + h];
    }
  }
  std::vector<float> y(size_t(tokens) * hidden, 0.0f);
  for (int64_t p = 0; p < tokens * k; ++p)
    for (int h = 0; h < hidden; ++h) y[p / k * hidden + h] += contrib[p * hidden + h];
  return y;
}

double max_relative_error(const std::vector<float>& y, const std::vector<float>& ref, int hidden) {
  require(y.size() == ref.size() && hidden > 0 && y.size() % size_t(hidden) == 0, "y", "size differs from the reference's");
  double worst = 0;
  for (size_t t = 0; t < y.size(); t += hidden) {
    double diff = 0, norm = 0;
    for (int h = 0; h < hidden; ++h) {
      const double d = double(y[t + h]) - double(ref[t + h]);
      diff += d * d, norm += double(ref[t + h]) * ref[t + h];
    }
    const double err = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    if (std::isnan(err)) return err;
    worst = std::max(worst, err);
  }
  return worst;
}

}  // namespace zepp::mpi
