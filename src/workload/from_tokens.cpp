// Token-level traces (paper §6.1): history = the first requests, evaluation = complete
// selections of the later requests, sampled with replacement.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "workload/builders.hpp"
#include "workload/sampling.hpp"

namespace zepp::workload_detail {

// Adds the token's pairs of selected experts to co ([E * E], symmetric).
static void add_coactivation(std::vector<double>& co, const int32_t* ids, int k, int E) {
  for (int a = 0; a < k; ++a)
    for (int b = a + 1; b < k; ++b)
      if (ids[a] != ids[b]) {
        co[size_t(ids[a]) * E + ids[b]] += 1;
        co[size_t(ids[b]) * E + ids[a]] += 1;
      }
}

}  // namespace zepp::workload_detail

namespace zepp {

TokenSplit token_split(const Trace& trace, int layer, double history_fraction) {
  const LayerTrace& lt = trace.layers.at(layer);
  TokenSplit s;
  s.by_tokens = trace.requests.size() == 1;
  s.units = s.by_tokens ? lt.num_tokens() : int64_t(trace.requests.size());
  s.history_units = int64_t(std::floor(history_fraction * double(s.units)));
  for (int64_t t = 0; t < lt.num_tokens(); ++t) ++((s.by_tokens ? t : lt.request[t]) < s.history_units ? s.history : s.evaluation);
  return s;
}

}  // namespace zepp

namespace zepp::workload_detail {

Workload from_tokens(const Trace& trace, int layer, const Target& target, const WorkloadOptions& opt,
                     const Trace* history) {
  const LayerTrace& lt = trace.layers.at(layer);
  const int64_t num_requests = int64_t(trace.requests.size());
  Workload w;
  w.layer = layer;
  w.tokens_per_gpu = target.tokens_per_gpu;
  w.history_load.assign(target.num_experts, 0.0);
  std::vector<int64_t> evaluation;  // token indices of the evaluation part
  const int k = lt.top_k;
  std::string split;  // how history and evaluation were separated, for the description
  const int E = target.num_experts;
  if (history) {
    w.history_load = history_from(*history, layer, target, opt, split);
    if (history->has_tokens()) {  // history_from checked that the layer is there
      const LayerTrace& h = history->layers.at(layer);
      w.history_coactivation.assign(size_t(E) * E, 0.0);
      for (int64_t t = 0; t < h.num_tokens(); ++t) add_coactivation(w.history_coactivation, &h.expert_ids[t * h.top_k], h.top_k, E);
    }
    for (int64_t t = 0; t < lt.num_tokens(); ++t) evaluation.push_back(t);
    split += ", evaluation = all " + std::to_string(num_requests) + " requests of " + trace.path + " (" +
             std::to_string(evaluation.size()) + " tokens)";
  } else {
    // Requests split in source order; a single request is split by its tokens instead.
    const TokenSplit s = token_split(trace, layer, opt.history_fraction);
    const bool by_tokens = s.by_tokens;
    const int64_t units = s.units, history_units = s.history_units;
    require(history_units >= 1 && history_units < units, "history_fraction",
            std::to_string(opt.history_fraction) + " of " + std::to_string(units) +
                (by_tokens ? " tokens of the single request" : " requests") + " in " + trace.path +
                " leaves the history or the evaluation part empty");
    w.history_coactivation.assign(size_t(E) * E, 0.0);
    for (int64_t t = 0; t < lt.num_tokens(); ++t) {
      if ((by_tokens ? t : lt.request[t]) < history_units) {
        for (int j = 0; j < k; ++j) w.history_load[lt.expert_ids[t * k + j]] += 1;
        add_coactivation(w.history_coactivation, &lt.expert_ids[t * k], k, E);
      } else {
        evaluation.push_back(t);
      }
    }
    const int64_t history_tokens = lt.num_tokens() - int64_t(evaluation.size());
    require(history_tokens > 0 && !evaluation.empty(), "history_fraction",
            "layer " + std::to_string(layer) + " of " + trace.path + " has " + std::to_string(history_tokens) +
                " history and " + std::to_string(evaluation.size()) + " evaluation tokens; both must be non-empty");
    split = by_tokens ? "one request, so split by tokens: history = first " + std::to_string(history_units) + " of " +
                            std::to_string(units) + " tokens, evaluation = the other " +
                            std::to_string(evaluation.size())
                      : "history = first " + std::to_string(history_units) + " of " + std::to_string(num_requests) +
                            " requests (" + std::to_string(history_tokens) + " tokens), evaluation = " +
                            std::to_string(evaluation.size()) + " tokens of the rest";
  }

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
  w.description = trace.path + " layer " + std::to_string(layer) + ": " + split + ", sampled with replacement (seed " +
                  std::to_string(opt.seed) + ")" + (lt.gate_weights.empty() ? "; gate weights by rank (source has none)" : "");
  return w;
}

}  // namespace zepp::workload_detail
