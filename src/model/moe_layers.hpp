// Every MoE layer of a trace under each strategy (issue 14 item 1): each layer gets its own
// workload (§6.1 sampling or multi-iteration batches of that layer), its own placement from
// that layer's history and its own routing, and is timed on an executor. The non-MoE work and
// the pipeline over layers are added by compose_steps (model/compose.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/strategy.hpp"
#include "serving/drift.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"

namespace zepp::model {

struct MoeRunOptions {
  std::vector<int> layers;     // trace layers to run, ascending; empty = every layer of the trace
  double size_mb = 1.0;        // BF16 input activations per GPU, MiB (tokens per GPU = size / (hidden · 2))
  int iterations = 0;          // 0: one batch sampled with replacement per layer (§6.1, build_workload);
                               // N >= 1: N consecutive batches per layer (serving/serve.hpp), placement kept
  WorkloadOptions workload;    // seed, history_fraction, dataset (layer and size_mb are set per layer here)
  DriftOptions drift;          // iterations >= 1: mode, dataset, period, groups
  ExecutorKind executor = ExecutorKind::Sim;  // iterations >= 1 runs on Sim only
};

// One MoE layer invocation's result.
struct MoeLayerTime {
  int layer = 0;
  double latency_s = 0;         // executor's layer latency (slowest GPU, §6.1)
  double planning_s = 0;        // wall time of routing (and swap planning) on this machine
  double imbalance = 0;         // max / mean routed pairs per GPU
  double inter_node_bytes = 0, nvlink_bytes = 0;
  std::optional<SwapOutcome> swap;  // zepp+swaps: its swap rule on this invocation
};

struct SystemMoe {
  std::string system;
  std::vector<std::vector<MoeLayerTime>> iterations;  // [iteration][layer in MoeRun::layers order]
};

struct MoeRun {
  // The first layer's workload description; with iterations, then "; layers L: too few
  // requests, history/evaluation split by tokens in D" for every other layer split so.
  std::string description;
  int64_t tokens_per_gpu = 0;
  std::vector<int> layers;    // the trace layers run, ascending
  std::vector<SystemMoe> systems;
};

// The trace layers `asked` names, ascending (every MoE layer of the trace when empty). Throws
// ArgumentError("layers: ...") for a layer absent from the trace (listing those present) or one
// listed twice.
std::vector<int> selected_layers(const Trace& trace, const std::vector<int>& asked);

// "0-2,5,7-9" for ascending layer ids (what --layers reads).
std::string layer_ranges(const std::vector<int>& ids);

// Refuses, before any layer is simulated, the layers of `layers` whose tokens the
// history_fraction split (token_split, workload/workload.hpp) leaves all in the history or all in
// the evaluation part (the later requests lack the layer): InputError naming the trace, each
// such layer with its token counts, and the layers that can run. Load-only traces always split.
void check_layer_splits(const Trace& trace, const std::vector<int>& layers, double history_fraction);

// Progress: (layers done, layers in all, system) after each (layer, system).
using MoeProgress = std::function<void(int done, int total, const std::string& system)>;

// Runs `systems` (registry strategies, or their variants: pipeline/variants.hpp) on every
// selected layer. Throws InputError from
// check_layer_splits (one batch per layer) and ArgumentError naming the option: "layers" (a
// layer absent from the trace: the message lists those present; repeated), "iterations" (< 0,
// or >= 1 with an executor other than Sim), "systems" (empty), and what the stages throw.
MoeRun simulate_moe_layers(const Trace& trace, const ModelShape& model, const Topology& topo,
                           const std::vector<std::string>& systems, const StrategyOptions& opt,
                           const MoeRunOptions& run, const MoeProgress& progress = {});

}  // namespace zepp::model
