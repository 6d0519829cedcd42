#include "trace/oddities.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace zepp {

std::vector<std::string> trace_oddities(const Trace& trace, double dominant_share, const std::vector<int>& layers) {
  std::vector<std::string> out;
  // The most frequent top-k selection (as a set of experts) per layer.
  int worst_layer = -1, over = 0;
  double worst = 0;
  int64_t worst_tokens = 0;
  std::vector<int32_t> worst_tuple;
  for (const auto& [id, L] : trace.layers) {
    if (!layers.empty() && std::find(layers.begin(), layers.end(), id) == layers.end()) continue;  // not used
    const int64_t T = L.num_tokens();
    if (T < 100 || L.top_k < 1) continue;
    // Selections keyed by a hash of the sorted ids (a collision can only merge two rare ones).
    std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> count;  // hash -> (tokens, first token)
    std::vector<int32_t> tuple(size_t(L.top_k));
    int64_t best = 0, best_token = 0;
    for (int64_t t = 0; t < T; ++t) {
      std::copy_n(L.expert_ids.begin() + t * L.top_k, L.top_k, tuple.begin());
      std::sort(tuple.begin(), tuple.end());
      uint64_t h = 1469598103934665603ull;
      for (int32_t e : tuple) h = (h ^ uint64_t(uint32_t(e))) * 1099511628211ull;
      auto& [n, first] = count.try_emplace(h, 0, t).first->second;
      if (++n > best) best = n, best_token = first;
    }
    const double share = double(best) / double(T);
    if (share <= dominant_share) continue;
    ++over;
    if (share > worst) {
      worst = share, worst_layer = id, worst_tokens = T;
      worst_tuple.assign(L.expert_ids.begin() + best_token * L.top_k, L.expert_ids.begin() + (best_token + 1) * L.top_k);
      std::sort(worst_tuple.begin(), worst_tuple.end());
    }
  }
  if (worst_layer >= 0)
    out.push_back(fmt::format(
        "{}: one top-k selection, experts ({}), makes up {:.0f}% of the {} tokens of layer {}{}; read as logged, each "
        "record one token's routing. If the log repeats one token (padding, a placeholder) for many positions, every "
        "load and latency figure from this trace is skewed toward those experts",
        trace.path, fmt::join(worst_tuple, ", "), 100 * worst, worst_tokens, worst_layer,
        over > 1 ? fmt::format(" ({} layers over {:.0f}%)", over, 100 * dominant_share) : std::string()));

  // Token positions that restart within a request: the vLLM route log's decode steps.
  if (!trace.layers.empty()) {
    const LayerTrace& L = trace.layers.begin()->second;
    std::vector<int32_t> max_step(trace.requests.size(), 0);
    int64_t decode_tokens = 0;
    for (int64_t t = 0; t < L.num_tokens(); ++t) {
      max_step[size_t(L.request[t])] = std::max(max_step[size_t(L.request[t])], L.step[t]);
      decode_tokens += L.step[t] > 0;
    }
    const auto restarted = std::count_if(max_step.begin(), max_step.end(), [](int32_t s) { return s > 0; });
    if (restarted > 0 && trace.format == "vllm-route-jsonl")
      out.push_back(fmt::format(
          "{}: token positions restart within {} of {} requests ({} of {} tokens of layer {} after a restart); read as "
          "decode steps logged after the prefill: each restart is the next forward pass (step 1, 2, ...), and every "
          "step's tokens are sampled like prompt tokens",
          trace.path, restarted, trace.requests.size(), decode_tokens, L.num_tokens(), L.layer));
  }
  return out;
}

}  // namespace zepp
