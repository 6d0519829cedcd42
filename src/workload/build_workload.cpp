// build_workload: validate, size the batch (paper §6.1), pick the source.
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "workload/builders.hpp"

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

}  // namespace workload_detail

Workload build_workload(const Trace* trace, const ModelShape& model, const Topology& topo,
                        const WorkloadOptions& opt) {
  require(model.num_experts >= 1 && model.top_k >= 1 && model.top_k <= model.num_experts && model.hidden >= 1 &&
              model.bytes_per_elem >= 1,
          "model", model.name + " needs num_experts >= top_k >= 1, hidden >= 1 and bytes_per_elem >= 1");
  require(topo.nodes >= 1 && topo.gpus_per_node >= 1, "topo", topo.name + " needs nodes and gpus_per_node >= 1");
  require(std::isfinite(opt.size_mb) && opt.size_mb > 0, "size_mb",
          "expected a positive number of MiB per GPU, got " + std::to_string(opt.size_mb));
  require(std::isfinite(opt.history_fraction) && opt.history_fraction > 0 && opt.history_fraction < 1,
          "history_fraction", "expected a share in (0, 1), got " + std::to_string(opt.history_fraction));
  require(std::isfinite(opt.zipf) && opt.zipf >= 0, "zipf", "expected a finite exponent >= 0, got " + std::to_string(opt.zipf));
  require(opt.layer >= -1, "layer", "expected a layer index or -1 (first MoE layer), got " + std::to_string(opt.layer));
  require(opt.dataset.empty() || (trace && !trace->loads.empty()), "dataset",
          "picks load tables, so it needs a load-only trace; got '" + opt.dataset + "'");

  // Paper §6.1 / DESIGN.md §3: size in BF16 input activations per GPU, before top-k replication.
  const double tokens = std::floor(opt.size_mb * 1048576.0 / model.token_bytes());
  require(tokens >= 1, "size_mb",
          std::to_string(opt.size_mb) + " MiB per GPU holds less than one token of " +
              std::to_string(int64_t(model.token_bytes())) + " bytes (hidden x 2)");
  Target target{topo.num_gpus(), int64_t(std::min(tokens, 1e15)), model.num_experts, model.top_k};
  require(double(target.tokens_per_gpu) * target.num_gpus * target.top_k <= std::numeric_limits<int32_t>::max(),
          "size_mb", std::to_string(opt.size_mb) + " MiB per GPU gives more than 2^31 (token, expert) pairs in all");

  if (!trace) return synthetic(target, opt.layer < 0 ? 0 : opt.layer, opt);
  check_trace_matches_model(*trace, model);
  if (!trace->has_tokens()) return from_load(*trace, target, opt);
  const std::vector<int> layers = trace->layer_ids();
  const int layer = opt.layer < 0 ? layers.front() : opt.layer;
  require(trace->layers.count(layer), "layer",
          "layer " + std::to_string(layer) + " is not in trace " + trace->path + "; layers present: " + joined(layers));
  return from_tokens(*trace, layer, target, opt);
}

}  // namespace zepp
