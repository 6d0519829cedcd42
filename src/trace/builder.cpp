#include "trace/builder.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "core/flag_ranges.hpp"
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
      if (!std::isfinite(w) || w < 0 || w > 1) fail(at, "expected a gate weight in [0, 1], got " + g_format(w));
      sum += w;
    }
    if (sum > 1 + kGateSumTolerance)
      fail(at, "expected the token's gate weights to sum to at most 1, got " + g_format(sum));
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

TraceBuilder::Checkpoint TraceBuilder::checkpoint() const {
  Checkpoint c;
  c.requests = out_.requests.size();
  c.repeated_runs = out_.repeated_runs.size();
  c.loads = out_.loads.size();
  for (const auto& [layer, lt] : out_.layers) c.layer_tokens[layer] = lt.num_tokens();
  for (const auto& [layer, where] : first_seen_) c.seen_layers.push_back(layer);
  for (const LoadTable& t : out_.loads) {
    c.table_layers.emplace_back();
    for (const auto& [layer, row] : t.per_layer) c.table_layers.back().push_back(layer);
  }
  c.columns_seen = columns_seen_;
  c.num_experts = out_.num_experts;
  return c;
}

void TraceBuilder::rollback(const Checkpoint& c) {
  out_.requests.resize(c.requests);
  out_.repeated_runs.resize(c.repeated_runs);
  for (auto it = out_.layers.begin(); it != out_.layers.end();) {
    const auto kept = c.layer_tokens.find(it->first);
    if (kept == c.layer_tokens.end()) {
      it = out_.layers.erase(it);
      continue;
    }
    LayerTrace& lt = it->second;
    const size_t n = size_t(kept->second), pairs = n * size_t(lt.top_k);
    lt.expert_ids.resize(pairs);
    if (!lt.gate_weights.empty()) lt.gate_weights.resize(pairs);
    lt.request.resize(n);
    lt.step.resize(n);
    ++it;
  }
  // Layers named by the dropped file only (touch_layer) are forgotten too.
  for (auto it = first_seen_.begin(); it != first_seen_.end();) {
    const bool kept = std::find(c.seen_layers.begin(), c.seen_layers.end(), it->first) != c.seen_layers.end();
    it = kept ? std::next(it) : first_seen_.erase(it);
  }
  out_.loads.resize(c.loads);
  for (auto it = table_index_.begin(); it != table_index_.end();)
    it = it->second >= c.loads ? table_index_.erase(it) : std::next(it);
  for (size_t t = 0; t < c.loads; ++t) {
    auto& rows = out_.loads[t].per_layer;
    for (auto it = rows.begin(); it != rows.end();) {
      const auto& kept = c.table_layers[t];
      it = std::find(kept.begin(), kept.end(), it->first) == kept.end() ? rows.erase(it) : std::next(it);
    }
  }
  columns_seen_ = c.columns_seen;
  out_.num_experts = c.num_experts;
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
