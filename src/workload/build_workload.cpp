// build_workload: validate, size the batch (paper §6.1), pick the source.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/flag_ranges.hpp"
#include "core/gate.hpp"
#include "workload/builders.hpp"
#include "workload/size.hpp"

namespace zepp {

using namespace workload_detail;

namespace workload_detail {

RoutingBatch empty_batch(const Target& t) {
  RoutingBatch b;
  b.num_gpus = t.num_gpus;
  b.num_experts = t.num_experts;
  b.top_k = t.top_k;
  for (int g = 0; g <= t.num_gpus; ++g) b.token_offset.push_back(g * t.tokens_per_gpu);
  b.expert_ids.resize(size_t(b.num_tokens()) * t.top_k);
  b.gate_weights.resize(b.expert_ids.size());
  return b;
}

std::string joined(const std::vector<int>& items) {
  std::string s;
  for (int x : items) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

// What the planner assumes of every workload, whatever its source: a GPU's tokens each name
// top-k distinct experts in [0, E) with gate weights in [0, 1] summing to at most
// 1 + kGateSumTolerance, and the history load is finite and non-negative. The sources check
// their inputs where they enter (the trace readers, the synthetic generator's parameters); this
// is the boundary to the planner, so a source that lets something through fails here, by name,
// instead of indexing with it.
Workload checked(Workload w) {
  const RoutingBatch& b = w.batch;
  const int k = b.top_k, E = b.num_experts;
  const auto fail = [&](int64_t t, const std::string& what) {
    throw ArgumentError("workload: token " + std::to_string(t) + " of " + w.description + ": " + what);
  };
  for (int64_t t = 0; t < b.num_tokens(); ++t) {
    const int32_t* ids = &b.expert_ids[size_t(t) * k];
    const float* gates = &b.gate_weights[size_t(t) * k];
    double sum = 0;
    for (int j = 0; j < k; ++j) {
      if (ids[j] < 0 || ids[j] >= E)
        fail(t, "expert id " + std::to_string(ids[j]) + " outside [0, " + std::to_string(E) + ")");
      if (std::find(ids, ids + j, ids[j]) != ids + j) fail(t, "expert " + std::to_string(ids[j]) + " selected twice");
      if (!(gates[j] >= 0 && gates[j] <= 1)) fail(t, "gate weight " + std::to_string(gates[j]) + " outside [0, 1]");
      sum += gates[j];
    }
    if (sum > 1 + kGateSumTolerance) fail(t, "gate weights sum to " + std::to_string(sum) + ", more than 1");
  }
  for (size_t e = 0; e < w.history_load.size(); ++e)
    if (!(std::isfinite(w.history_load[e]) && w.history_load[e] >= 0))
      throw ArgumentError("workload: history load of expert " + std::to_string(e) + " of " + w.description + " is " +
                          std::to_string(w.history_load[e]) + ", expected a finite count >= 0");
  return w;
}

}  // namespace workload_detail

double tokens_per_gpu(const ModelShape& model, double size_mb) {
  if (!(std::isfinite(size_mb) && size_mb > 0 && model.token_bytes() > 0)) return 0;
  return std::floor(size_mb * 1048576.0 / model.token_bytes());
}

void check_batch_size(const ModelShape& model, const Topology& topo, double size_mb) {
  const double tokens = tokens_per_gpu(model, size_mb);
  require(tokens >= 1, "size_mb",
          g_format(size_mb) + " MiB per GPU holds less than one token of " +
              std::to_string(int64_t(model.token_bytes())) + " bytes (hidden x 2)");
  require(double(int64_t(std::min(tokens, 1e15))) * topo.num_gpus() * model.top_k <= std::numeric_limits<int32_t>::max(),
          "size_mb", g_format(size_mb) + " MiB per GPU gives more than 2^31 (token, expert) pairs in all");
}

Workload build_workload(const Trace* trace, const ModelShape& model, const Topology& topo,
                        const WorkloadOptions& opt, const Trace* history) {
  require(model.num_experts >= 1 && model.top_k >= 1 && model.top_k <= model.num_experts && model.hidden >= 1 &&
              model.bytes_per_elem >= 1,
          "model", model.name + " needs num_experts >= top_k >= 1, hidden >= 1 and bytes_per_elem >= 1");
  require(topo.nodes >= 1 && topo.gpus_per_node >= 1, "topo", topo.name + " needs nodes and gpus_per_node >= 1");
  require(std::isfinite(opt.size_mb) && opt.size_mb > 0, "size_mb",
          "expected a positive number of MiB per GPU, got " + g_format(opt.size_mb));
  require(std::isfinite(opt.history_fraction) && opt.history_fraction > 0 && opt.history_fraction < 1,
          "history_fraction", "expected a share in (0, 1), got " + std::to_string(opt.history_fraction));
  require(std::isfinite(opt.zipf) && opt.zipf >= 0, "zipf", "expected a finite exponent >= 0, got " + std::to_string(opt.zipf));
  require(opt.layer >= -1, "layer", "expected a layer index or -1 (first MoE layer), got " + std::to_string(opt.layer));
  require(opt.dataset.empty() || (trace && !trace->loads.empty()) || (history && !history->loads.empty()), "dataset",
          "picks load tables, so it needs a load-only trace; got '" + opt.dataset + "'");
  require(!history || trace, "history", "needs an evaluation trace (--trace) beside it");

  // Paper §6.1 / DESIGN.md §3: size in BF16 input activations per GPU, before top-k replication.
  check_batch_size(model, topo, opt.size_mb);
  const Target target{topo.num_gpus(), int64_t(std::min(tokens_per_gpu(model, opt.size_mb), 1e15)), model.num_experts,
                      model.top_k};

  if (!trace) return checked(synthetic(target, opt.layer < 0 ? 0 : opt.layer, opt));
  check_trace_matches_model(*trace, model);
  if (history) check_trace_matches_model(*history, model);
  Workload w;
  if (!trace->has_tokens()) {
    w = from_load(*trace, target, opt);
    if (history) {
      std::string what;
      w.history_load = history_from(*history, w.layer, target, opt, what);
      w.description += "; " + what;
    }
  } else {
    const std::vector<int> layers = trace->layer_ids();
    const int layer = opt.layer < 0 ? layers.front() : opt.layer;
    require(trace->layers.count(layer), "layer",
            "layer " + std::to_string(layer) + " is not in trace " + trace->path + "; layers present: " + joined(layers));
    w = from_tokens(*trace, layer, target, opt, history);
  }
  // What reading left out (empty or invalid files) or split (repeated runs) belongs on the line.
  if (const std::string notes = trace->reading_notes(); !notes.empty()) w.description += "; " + trace->path + ": " + notes;
  if (history)
    if (const std::string notes = history->reading_notes(); !notes.empty())
      w.description += "; " + history->path + ": " + notes;
  return checked(std::move(w));
}

}  // namespace zepp
