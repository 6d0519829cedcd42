// No trace: a power law over experts. The expert of popularity rank r (1-based) has weight
// r^-zipf; which expert holds which rank is a seeded shuffle. History comes from the same
// distribution through an independent random stream.
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "workload/builders.hpp"
#include "workload/sampling.hpp"

namespace zepp::workload_detail {

Workload synthetic(const Target& target, int layer, const WorkloadOptions& opt) {
  const int E = target.num_experts, k = target.top_k;
  std::mt19937_64 rng(opt.seed);
  std::vector<int32_t> expert_of_rank(E);
  for (int r = 0; r < E; ++r) expert_of_rank[r] = r;
  for (int r = E - 1; r > 0; --r) std::swap(expert_of_rank[r], expert_of_rank[uniform_index(rng, r + 1)]);
  std::vector<double> weight(E);
  for (int r = 0; r < E; ++r) weight[expert_of_rank[r]] = std::pow(double(r + 1), -opt.zipf);
  const DistinctSampler sampler(weight);
  // r^-zipf underflows to 0 for large ranks once zipf is large (E = 384: from zipf ~ 125 on):
  // with fewer than top-k experts of positive weight no token can get k distinct experts.
  require(sampler.positive() >= k, "zipf",
          std::to_string(opt.zipf) + " leaves " + std::to_string(sampler.positive()) + " of " + std::to_string(E) +
              " experts with a popularity r^-zipf above zero in double precision, fewer than top-k " + std::to_string(k) +
              " (use a smaller exponent)");

  Workload w;
  w.synthetic = true;
  w.layer = layer;
  w.tokens_per_gpu = target.tokens_per_gpu;
  w.batch = empty_batch(target);
  const std::vector<float> rank_weights = rank_gate_weights(k);
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) {
    sampler.sample(rng, k, &w.batch.expert_ids[i * k]);
    std::copy(rank_weights.begin(), rank_weights.end(), w.batch.gate_weights.begin() + i * k);
  }
  // std::seed_seq is fully specified by the standard, so this stream is portable too.
  std::seed_seq history_seed{uint32_t(opt.seed), uint32_t(opt.seed >> 32), 0x68697374u /* "hist" */};
  std::mt19937_64 history_rng(history_seed);
  w.history_load.assign(E, 0.0);
  std::vector<int32_t> ids(k);
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) {
    sampler.sample(history_rng, k, ids.data());
    for (int32_t e : ids) w.history_load[e] += 1;
  }
  w.description = "synthetic power law: expert of popularity rank r ~ r^-" + fmt::format("{:g}", opt.zipf) + ", " +
                  std::to_string(E) + " experts, top-" + std::to_string(k) +
                  " distinct per token, ranks shuffled by seed " + std::to_string(opt.seed) + "; history " +
                  std::to_string(w.batch.num_tokens()) + " tokens from an independent stream";
  return w;
}

}  // namespace zepp::workload_detail
