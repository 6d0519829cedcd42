#include "trace/builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/gate.hpp"

namespace zepp::trace_detail {

int32_t TraceBuilder::add_request(std::string name) {
  out_.requests.push_back(std::move(name));
  return int32_t(out_.requests.size() - 1);
}

void TraceBuilder::touch_layer(int layer, const SourcePos& at) {
  if (!first_seen_.count(layer)) first_seen_.emplace(layer, at.str());
}

LayerTrace& TraceBuilder::layer_at(int layer, const SourcePos& at) {
  touch_layer(layer, at);
  auto [it, fresh] = out_.layers.try_emplace(layer);
  if (fresh) it->second.layer = layer;
  return it->second;
}

void TraceBuilder::add_token(int layer, std::span<const int64_t> ids, std::span<const double> gate_weights,
                             int32_t request, int32_t step, const SourcePos& at) {
  constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max() - 1;  // so num_experts fits an int
  if (ids.empty()) fail(at, "expected at least one expert id for a token of layer " + std::to_string(layer));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= kMaxId)
      fail(at, "expected a non-negative expert id below " + std::to_string(kMaxId) + ", got " + std::to_string(ids[i]));
    for (size_t j = 0; j < i; ++j)
      if (ids[j] == ids[i]) fail(at, "expected distinct expert ids within a token, got " + std::to_string(ids[i]) + " twice");
  }
  if (!gate_weights.empty()) {
    if (gate_weights.size() != ids.size())
      fail(at, "expected " + std::to_string(ids.size()) + " gate weights (one per expert id), got " +
                   std::to_string(gate_weights.size()));
    // Gate weights are softmax probabilities (renormalised over the top-k or not): each in [0, 1],
    // their sum at most 1 up to the rounding of the source's float32 values.
    double sum = 0;
    for (double w : gate_weights) {
      if (!std::isfinite(w) || w < 0 || w > 1) fail(at, "expected a gate weight in [0, 1], got " + std::to_string(w));
      sum += w;
    }
    if (sum > 1 + kGateSumTolerance)
      fail(at, "expected the token's gate weights to sum to at most 1, got " + std::to_string(sum));
  }
  LayerTrace& lt = layer_at(layer, at);
  if (lt.num_tokens() == 0) {
    lt.top_k = int(ids.size());
  } else {
    if (int(ids.size()) != lt.top_k)
      fail(at, "expected top-k " + std::to_string(lt.top_k) + " for layer " + std::to_string(layer) + " (as at " +
                   first_seen_.at(layer) + "), got " + std::to_string(ids.size()) + " expert ids");
    if (gate_weights.empty() != lt.gate_weights.empty())
      fail(at, std::string("expected ") + (lt.gate_weights.empty() ? "no gate weights" : "gate weights") +
                   " for layer " + std::to_string(layer) + " as for its earlier tokens");
  }
  for (int64_t id : ids) lt.expert_ids.push_back(int32_t(id));
  for (double w : gate_weights) lt.gate_weights.push_back(float(w));
  lt.request.push_back(request);
  lt.step.push_back(step);
}

void TraceBuilder::add_load_row(const std::string& table, int layer, std::vector<double> row, const SourcePos& at) {
  auto [it, fresh] = table_index_.try_emplace(table, out_.loads.size());
  if (fresh) out_.loads.push_back(LoadTable{table, {}});
  LoadTable& t = out_.loads[it->second];
  load_seen_.try_emplace(layer, at.str());
  if (!t.per_layer.emplace(layer, std::move(row)).second)
    fail(at, "expected one row per (layer, language), got layer " + std::to_string(layer) + " of " + table + " twice");
}

void TraceBuilder::set_load_columns(int num_experts, const SourcePos& at) {
  if (columns_seen_.empty()) {
    out_.num_experts = num_experts;
    columns_seen_ = at.str();
  } else if (num_experts != out_.num_experts) {
    fail(at, "expected " + std::to_string(out_.num_experts) + " expert columns (as at " + columns_seen_ + "), got " +
                 std::to_string(num_experts));
  }
}

void TraceBuilder::finish() {
  if (first_seen_.empty() && out_.loads.empty())
    throw InputError(out_.path + ": expected tokens of at least one MoE layer, got none (every layer null or absent)");
  int max_id = -1;
  for (const auto& [layer, where] : first_seen_) {
    auto it = out_.layers.find(layer);
    if (it == out_.layers.end() || it->second.num_tokens() == 0)
      throw InputError(where + ": expected tokens for layer " + std::to_string(layer) +
                       " somewhere in the trace, got none in any step");
    for (int32_t id : it->second.expert_ids) max_id = std::max(max_id, int(id));
  }
  if (out_.loads.empty()) out_.num_experts = max_id + 1;
}

std::map<int, std::string> TraceBuilder::layer_sources() const {
  std::map<int, std::string> out = first_seen_;
  for (const auto& [layer, where] : load_seen_) out.try_emplace(layer, where);
  return out;
}

}  // namespace zepp::trace_detail
