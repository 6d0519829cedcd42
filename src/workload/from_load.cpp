// Load-only traces: selections of top-k distinct experts drawn with the real per-expert load
// of one layer as popularity (the source has no per-token data).
#include <numeric>

#include "core/error.hpp"
#include "workload/builders.hpp"
#include "workload/sampling.hpp"

namespace zepp::workload_detail {

// "arc" picks "arc/English" and "arc/Hebrew"; "arc/Hebrew" only that table; "" every table.
std::vector<const LoadTable*> pick_tables(const Trace& trace, const std::string& dataset) {
  std::vector<const LoadTable*> picked;
  std::string names;
  for (const LoadTable& t : trace.loads) {
    if (dataset.empty() || t.name == dataset || t.name.starts_with(dataset + "/")) picked.push_back(&t);
    names += (names.empty() ? "" : ", ") + t.name;
  }
  require(!picked.empty(), "dataset", "no load table of " + trace.path + " matches '" + dataset + "'; tables: " + names);
  return picked;
}

Workload from_load(const Trace& trace, const Target& target, const WorkloadOptions& opt) {
  const std::vector<const LoadTable*> tables = pick_tables(trace, opt.dataset);
  int layer = opt.layer;
  if (layer < 0) {  // the first layer every picked table has
    for (const auto& [l, row] : tables.front()->per_layer) {
      bool everywhere = true;
      for (const LoadTable* t : tables) everywhere = everywhere && t->per_layer.count(l);
      if (everywhere) {
        layer = l;
        break;
      }
    }
  }
  std::vector<double> load(target.num_experts, 0.0);
  for (const LoadTable* t : tables) {
    auto row = t->per_layer.find(layer);
    if (row == t->per_layer.end()) {
      std::vector<int> present;
      for (const auto& [l, r] : t->per_layer) present.push_back(l);
      throw ArgumentError("layer: layer " + std::to_string(layer) + " is not in load table " + t->name + " of " +
                          trace.path + "; layers present: " + joined(present));
    }
    for (int e = 0; e < target.num_experts; ++e) load[e] += row->second[e] / double(tables.size());
  }
  const DistinctSampler sampler(load);
  // Blamed on --dataset only when one was given ("--dataset: layer 0 of '' in ..." named a flag
  // the user had not used).
  require(sampler.positive() >= target.top_k, opt.dataset.empty() ? "trace" : "dataset",
          "layer " + std::to_string(layer) + (opt.dataset.empty() ? "" : " of '" + opt.dataset + "'") + " in " +
              trace.path + " has " +
              std::to_string(sampler.positive()) + " experts with positive load, fewer than top-k " +
              std::to_string(target.top_k));

  Workload w;
  w.synthetic = true;
  w.layer = layer;
  w.tokens_per_gpu = target.tokens_per_gpu;
  // History: the load as token counts of one batch's size (the rows are per-token fractions).
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  const double pairs = double(target.tokens_per_gpu) * target.num_gpus * target.top_k;
  for (double x : load) w.history_load.push_back(x / total * pairs);

  w.batch = empty_batch(target);
  const std::vector<float> rank_weights = rank_gate_weights(target.top_k);
  std::mt19937_64 rng(opt.seed);
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) {
    sampler.sample(rng, target.top_k, &w.batch.expert_ids[i * target.top_k]);
    std::copy(rank_weights.begin(), rank_weights.end(), w.batch.gate_weights.begin() + i * target.top_k);
  }
  std::string names;
  for (const LoadTable* t : tables) names += (names.empty() ? "" : ", ") + t->name;
  w.description = "sampled from real per-expert load of " + trace.path + " (" + names + ", mean), layer " +
                  std::to_string(layer) + ": top-" + std::to_string(target.top_k) +
                  " distinct experts per token, gate weights by rank (seed " + std::to_string(opt.seed) + ")";
  return w;
}

}  // namespace zepp::workload_detail
