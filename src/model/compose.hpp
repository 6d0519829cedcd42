// A whole forward step from its MoE layers' results (model/moe_layers.hpp) and the non-MoE work
// (model/non_moe.hpp), pipelined over layers as §6.4 describes (model/pipeline.hpp). Stages in
// order: the embedding, then the model's layers 0..L-1 (with all layers: a layer the trace has
// is an MoE layer, any other a dense one; with a layer list: only the listed MoE layers), then
// the final norm and LM head. A stage's device time is its non-MoE ops plus, for an MoE layer,
// the MoE layer latency; its host time is kernel_launch per kernel it enqueues (one per op,
// three for the MoE layer: dispatch, expert GEMMs, combine; assumed, as kernel_launch is).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "model/moe_layers.hpp"
#include "model/non_moe.hpp"
#include "model/shape.hpp"

namespace zepp::model {

struct StageRow {
  std::string kind;       // "embedding", "dense", "moe", "lm_head"
  int layer = -1;         // model layer index (-1 for embedding and lm_head)
  double non_moe_s = 0;   // sum of the stage's non-MoE op times
  double moe_s = 0;       // MoE layer latency (0 unless kind == "moe")
  double host_s = 0;
  double start_s = 0, end_s = 0;  // device interval within the step (pipeline)
  double planning_s = 0, imbalance = 0, inter_node_bytes = 0, nvlink_bytes = 0;  // MoE layers
};

struct StepReport {
  int iteration = 0;
  std::vector<StageRow> stages;
  double step_s = 0;
  double non_moe_s = 0, moe_s = 0;  // sums over stages
};

struct SystemSteps {
  std::string system;
  std::vector<StepReport> steps;  // one per iteration
  double mean_step_s = 0;
  // Cluster throughput, tokens per second: tokens per GPU · GPUs / mean step time (prefill:
  // prompt tokens processed; decode: output tokens, one per sequence per step, so the time per
  // output token is mean_step_s).
  double tokens_per_s = 0;
  // zepp+swaps: its swap rule summed over every (iteration, MoE layer) invocation, with the
  // refusal that saved the most per iteration; empty for every other system.
  struct Swaps {
    int accepted = 0, refused = 0, triggered = 0, invocations = 0, horizon = 0;
    std::optional<SwapPlan::Refusal> best;
  };
  std::optional<Swaps> swaps;
};

// "" when a whole step can be composed around the trace's MoE layers `moe_layers` (ascending):
// they are layers of `model` (below model.layers) and every model layer the trace lacks can be a
// dense one (the model has dense layers); otherwise what is wrong, naming the layers.
std::string all_layers_problem(const std::vector<int>& moe_layers, const ModelShape& model, const DenseShape& dense);

// Composes every system's steps. all_layers: the model's dense layers are added (the trace's
// layers must be model layer indices below model.layers, and at most model.layers of them).
// step.tokens must equal moe.tokens_per_gpu. Throws ArgumentError ("step", "layers", "model").
std::vector<SystemSteps> compose_steps(const MoeRun& moe, const ModelShape& model, const DenseShape& dense,
                                       const Topology& topo, const StepShape& step, bool all_layers);

}  // namespace zepp::model
