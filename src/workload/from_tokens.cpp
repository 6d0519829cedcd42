// Token-level traces (paper §6.1): history = the first requests, evaluation = complete
// selections of the later requests, sampled with replacement.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "workload/builders.hpp"
#include "workload/sampling.hpp"

namespace zepp::workload_detail {

Workload from_tokens(const Trace& trace, int layer, const Target& target, const WorkloadOptions& opt) {
  const LayerTrace& lt = trace.layers.at(layer);
  const int64_t num_requests = int64_t(trace.requests.size());
  const int64_t history_requests = int64_t(std::floor(opt.history_fraction * double(num_requests)));
  require(history_requests >= 1 && history_requests < num_requests, "history_fraction",
          std::to_string(opt.history_fraction) + " of " + std::to_string(num_requests) + " requests in " + trace.path +
              " leaves the history or the evaluation part empty");

  Workload w;
  w.layer = layer;
  w.tokens_per_gpu = target.tokens_per_gpu;
  w.history_load.assign(target.num_experts, 0.0);
  std::vector<int64_t> evaluation;  // token indices of the evaluation requests
  const int k = lt.top_k;
  for (int64_t t = 0; t < lt.num_tokens(); ++t) {
    if (lt.request[t] < history_requests) {
      for (int j = 0; j < k; ++j) w.history_load[lt.expert_ids[t * k + j]] += 1;
    } else {
      evaluation.push_back(t);
    }
  }
  const int64_t history_tokens = lt.num_tokens() - int64_t(evaluation.size());
  require(history_tokens > 0 && !evaluation.empty(), "history_fraction",
          "layer " + std::to_string(layer) + " of " + trace.path + " has " + std::to_string(history_tokens) +
              " history and " + std::to_string(evaluation.size()) + " evaluation tokens; both must be non-empty");

  w.batch = empty_batch(target);
  const std::vector<float> rank_weights = rank_gate_weights(k);
  std::mt19937_64 rng(opt.seed);
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) {
    const int64_t t = evaluation[uniform_index(rng, evaluation.size())];
    std::copy_n(lt.expert_ids.begin() + t * k, k, w.batch.expert_ids.begin() + i * k);
    if (lt.gate_weights.empty())
      std::copy_n(rank_weights.begin(), k, w.batch.gate_weights.begin() + i * k);
    else
      std::copy_n(lt.gate_weights.begin() + t * k, k, w.batch.gate_weights.begin() + i * k);
  }
  w.description = trace.path + " layer " + std::to_string(layer) + ": history = first " +
                  std::to_string(history_requests) + " of " + std::to_string(num_requests) + " requests (" +
                  std::to_string(history_tokens) + " tokens), evaluation = " + std::to_string(evaluation.size()) +
                  " tokens of the rest, sampled with replacement (seed " + std::to_string(opt.seed) + ")" +
                  (lt.gate_weights.empty() ? "; gate weights by rank (source has none)" : "");
  return w;
}

}  // namespace zepp::workload_detail
