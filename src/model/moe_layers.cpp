#include "model/moe_layers.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "exec/sim.hpp"
#include "pipeline/variants.hpp"
#include "serving/serve.hpp"

namespace zepp::model {

std::vector<int> selected_layers(const Trace& trace, const std::vector<int>& asked) {
  const std::vector<int> present = trace.layer_ids();
  if (asked.empty()) return present;
  std::string list;
  for (int l : present) list += (list.empty() ? "" : ", ") + std::to_string(l);
  std::vector<int> out = asked;
  std::sort(out.begin(), out.end());
  for (size_t i = 0; i < out.size(); ++i) {
    require(std::binary_search(present.begin(), present.end(), out[i]), "layers",
            "layer " + std::to_string(out[i]) + " is not in the trace; its MoE layers are " + list);
    require(i == 0 || out[i] != out[i - 1], "layers", "layer " + std::to_string(out[i]) + " is listed twice");
  }
  return out;
}

std::string layer_ranges(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ids[i]) + (j > i ? "-" + std::to_string(ids[j]) : "");
    i = j + 1;
  }
  return out;
}

void check_layer_splits(const Trace& trace, const std::vector<int>& layers, double history_fraction) {
  if (!trace.has_tokens() || !(history_fraction > 0 && history_fraction < 1)) return;  // build_workload names those
  std::vector<std::string> bad;
  std::vector<int> good;
  for (int layer : layers) {
    if (!trace.layers.count(layer)) continue;  // selected_layers names it
    const TokenSplit s = token_split(trace, layer, history_fraction);
    if (s.history_units < 1 || s.history_units >= s.units) return;  // the fraction itself: build_workload names it
    if (s.history > 0 && s.evaluation > 0) {
      good.push_back(layer);
      continue;
    }
    bad.push_back(fmt::format("layer {} has {} tokens, {} (the first {} of {} {}), {}", layer, s.history + s.evaluation,
                              s.evaluation == 0 ? "all in the history" : "none in the history", s.history_units, s.units,
                              s.by_tokens ? "tokens" : "requests", s.evaluation == 0 ? "none to serve" : "none to place from"));
  }
  if (bad.empty()) return;
  std::string list;
  for (const auto& b : bad) list += (list.empty() ? "" : "; ") + b;
  throw InputError(fmt::format("{}: {}; every layer run needs tokens in both the history and the evaluation part (history "
                               "fraction {:g}): {}",
                               trace.path, list, history_fraction,
                               good.empty() ? std::string("change the history fraction")
                                            : fmt::format("leave {} out (--layers {}) or change the history fraction",
                                                          bad.size() == 1 ? "it" : "them", layer_ranges(good))));
}

namespace {

MoeLayerTime from_outcome(int layer, const StrategyOutcome& o) {
  return {layer, o.result.latency_s, o.routing_wall_s, o.imbalance, o.result.inter_node_bytes, o.result.nvlink_bytes, o.swap};
}

MoeLayerTime from_iteration(int layer, const IterationReport& it) {
  std::optional<SwapOutcome> swap;  // a horizon marks zepp+swaps (serving/serve.hpp)
  if (it.swap_horizon > 0) swap = SwapOutcome{it.swaps, it.swaps_refused, it.swap_triggered, it.swap_horizon, it.best_refused};
  return {layer, it.latency_s, it.planning_s, it.imbalance, it.token_nic_bytes + it.weight_nic_bytes,
          it.token_nvlink_bytes + it.weight_nvlink_bytes, swap};
}

}  // namespace

MoeRun simulate_moe_layers(const Trace& trace, const ModelShape& model, const Topology& topo,
                           const std::vector<std::string>& systems, const StrategyOptions& opt,
                           const MoeRunOptions& run, const MoeProgress& progress) {
  require(!systems.empty(), "systems", "names no strategy");
  require(run.iterations >= 0, "iterations", "must be >= 0, got " + std::to_string(run.iterations));
  require(run.iterations == 0 || run.executor == ExecutorKind::Sim, "iterations", "multi-iteration serving runs on the sim executor");
  MoeRun out;
  out.layers = selected_layers(trace, run.layers);
  if (run.iterations == 0) check_layer_splits(trace, out.layers, run.workload.history_fraction);  // before any work
  for (const auto& s : systems) out.systems.push_back({s, std::vector<std::vector<MoeLayerTime>>(std::max(1, run.iterations))});
  const int total = int(out.layers.size() * systems.size());
  int done = 0;
  const PlanExecutor sim = [](const CommPlan& plan, const Topology& t, bool timeline) { return simulate_plan(plan, t, timeline); };
  // Each system's registered strategy and options: a variant ("zepp/no-split") sets its switches.
  std::vector<std::string> bases;
  std::vector<StrategyOptions> options(systems.size(), opt);
  for (size_t i = 0; i < systems.size(); ++i) bases.push_back(strategy_variant(systems[i], options[i]));
  std::map<std::string, std::vector<int>> split_notes;  // iterations: split_note -> the later layers it applies to
  for (int layer : out.layers) {
    if (run.iterations == 0) {
      WorkloadOptions w = run.workload;
      w.layer = layer;
      w.size_mb = run.size_mb;
      const Workload workload = build_workload(&trace, model, topo, w);
      if (out.description.empty()) out.description = workload.description, out.tokens_per_gpu = workload.tokens_per_gpu;
      for (size_t i = 0; i < out.systems.size(); ++i) {
        SystemMoe& sys = out.systems[i];
        const StrategyOutcome o = run_strategy(bases[i], workload, model, topo, options[i], run.executor);
        sys.iterations[0].push_back(from_outcome(layer, o));
        if (progress) progress(++done, total, sys.system);
      }
      continue;
    }
    DriftOptions d = run.drift;
    d.layer = layer;
    d.size_mb = run.size_mb;
    d.seed = run.workload.seed;
    d.history_fraction = run.workload.history_fraction;
    for (size_t i = 0; i < out.systems.size(); ++i) {
      SystemMoe& sys = out.systems[i];
      DriftWorkload workload(trace, model, topo, d);  // every system sees the same batches
      if (out.description.empty()) out.description = workload.description(), out.tokens_per_gpu = workload.tokens_per_gpu();
      else if (i == 0 && !workload.split_note().empty()) split_notes[workload.split_note()].push_back(layer);
      const ServeReport r = serve(workload, model, topo, bases[i], run.iterations, options[i], sim);
      for (size_t i = 0; i < r.iterations.size(); ++i) sys.iterations[i].push_back(from_iteration(layer, r.iterations[i]));
      if (progress) progress(++done, total, sys.system);
    }
  }
  for (const auto& [note, layers] : split_notes)
    out.description += fmt::format("; {} {}: {}", layers.size() == 1 ? "layer" : "layers", layer_ranges(layers), note);
  return out;
}

}  // namespace zepp::model
