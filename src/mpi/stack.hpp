// Consecutive MoE layers executed for real under MPI (issue 14 item 5): layer l's output rows,
// after a residual add and a norm, are layer l + 1's input; each layer has its own routing (from
// the trace: one Workload per layer), its own placement and comm plan, and its own expert
// weights. Checked against a dense single-process reference of the whole stack.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "mpi/session.hpp"

namespace zepp::mpi {

// Between layers: x' = r / sqrt(mean(r^2) + 1e-6) per token row, r = x + y (RMSNorm without a
// learned scale: the weights are synthetic). Throws ArgumentError("y") when sizes differ or
// hidden does not divide them.
std::vector<float> residual_norm(const std::vector<float>& x, const std::vector<float>& y, int hidden);

// Expert weights of stack layer `layer` are expert_weights(layer_seed(data_seed, layer), ...);
// inputs of the first layer are token_activation(data_seed, t).
uint64_t layer_seed(uint64_t data_seed, int layer);

struct StackLayer {
  int layer = 0;                // trace layer
  // Slowest rank's counts all-gather and own planning before the layer (mpi/rank_plan.hpp; 0
  // for strategies that decide nothing per batch on the rank).
  double metadata_s = 0, planning_s = 0;
  double wall_s = 0;            // slowest rank's executor time for the layer
  double norm_s = 0;            // slowest rank's residual add + norm after it
  double nvlink_bytes = 0, nic_bytes = 0;  // sent, all ranks (checked equal to the plan's)
  double max_rel_error = 0;     // this layer's outputs against the reference layer on the reference inputs
  std::optional<SwapOutcome> swap;  // zepp+swaps: its swap rule on this layer (StrategyDecision::swap)
};

struct StackRun {
  std::string strategy;
  std::vector<StackLayer> layers;
  double total_s = 0;           // sum over layers of metadata_s + planning_s + wall_s + norm_s
  double max_rel_error = 0;     // the stack's final rows (after the last norm) against the reference stack
  uint64_t output_checksum = 0; // FNV-1a over the final rows, ranks in order
};

// Runs `strategy` through layers[0], layers[1], ... (trace ids `layer_ids`, same length). Every
// rank returns the same StackRun. Throws ArgumentError ("layers" when empty or lengths differ;
// "strategy"), std::logic_error when ranks built different plans or bytes sent differ from the
// plan's.
StackRun run_stack_mpi(const std::string& strategy, const std::vector<Workload>& layers, const std::vector<int>& layer_ids,
                       const ModelShape& model, const Topology& topo, const SessionOptions& opt, MPI_Comm comm);

// {"strategy", "total_s", "max_rel_error", "output_checksum", "layers": [{"layer", "metadata_s",
//  "planning_s", "wall_s", "norm_s", "nvlink_bytes", "nic_bytes", "max_rel_error", and for zepp+swaps
//  "swaps" (pipeline/swap_line.hpp swap_json)}]}
nlohmann::json to_json(const StackRun& run);

}  // namespace zepp::mpi
