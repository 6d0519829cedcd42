// Placement history from a separate trace (--history): every token of the layer, or the mean
// per-expert load of a load-only trace.
#include <numeric>

#include "core/error.hpp"
#include "workload/builders.hpp"

namespace zepp::workload_detail {

std::vector<double> history_from(const Trace& history, int layer, const Target& target, const WorkloadOptions& opt,
                                 std::string& description) {
  std::vector<double> load(target.num_experts, 0.0);
  if (history.has_tokens()) {
    const auto it = history.layers.find(layer);
    require(it != history.layers.end(), "history",
            "layer " + std::to_string(layer) + " is not in " + history.path + "; layers present: " +
                joined(history.layer_ids()));
    const LayerTrace& lt = it->second;
    for (int32_t e : lt.expert_ids) load[e] += 1;
    description = "history = all " + std::to_string(history.requests.size()) + " requests of " + history.path + " (" +
                  std::to_string(lt.num_tokens()) + " tokens)";
    return load;
  }
  // Load-only history: the picked tables' mean, scaled to one batch's (token, expert) pairs.
  const std::vector<const LoadTable*> tables = pick_tables(history, opt.dataset);
  std::string names;
  for (const LoadTable* t : tables) {
    const auto row = t->per_layer.find(layer);
    require(row != t->per_layer.end(), "history",
            "layer " + std::to_string(layer) + " is not in load table " + t->name + " of " + history.path);
    for (int e = 0; e < target.num_experts; ++e) load[e] += row->second[e] / double(tables.size());
    names += (names.empty() ? "" : ", ") + t->name;
  }
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  require(total > 0, "history", "layer " + std::to_string(layer) + " of " + history.path + " has no load");
  const double pairs = double(target.tokens_per_gpu) * target.num_gpus * target.top_k;
  for (double& x : load) x = x / total * pairs;
  description = "history = per-expert load of " + history.path + " (" + names + ", mean)";
  return load;
}

}  // namespace zepp::workload_detail
