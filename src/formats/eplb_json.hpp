// EPLB's three return values (deepseek-ai/EPLB rebalance_experts) as one JSON object, for tools
// that consume EPLB output directly (vLLM's EPLB state, scripts written against EPLB).
#pragma once
#include <string>
#include <vector>

#include "formats/expert_map.hpp"

namespace zepp {

// Writes {"phy2log": [L, P], "log2phy": [L, E, X], "logcnt": [L, E]}: log2phy lists each
// expert's slots ascending, padded with -1 to X = the most replicas of any expert (EPLB's
// maxlogcnt). Throws ArgumentError naming `map` unless map.validate() passes.
void write_eplb_json(const std::string& path, const ExpertMap& map);

// Reads phy2log (layer_ids 0..L-1). log2phy and logcnt are optional; when present they must
// describe the same placement (log2phy rows may list an expert's slots in any order, as EPLB's
// replica ranks do). Throws InputError naming the file and field.
ExpertMap read_eplb_json(const std::string& path, int num_experts = 0);

// EPLB's example input as a JSON file (`zepp place --load`): {"weight": [[load per expert] per
// layer], "num_replicas", "num_groups", "num_nodes", "num_gpus"}.
struct EplbLoad {
  std::vector<std::vector<double>> weight;  // [L][E], finite and >= 0
  int num_replicas = 0, num_groups = 1, num_nodes = 1, num_gpus = 1;
};
// Throws InputError naming the file (and line for JSON syntax and duplicated keys) and the field:
// weight empty, ragged or not numbers >= 0; a count missing or not an integer in [1, 10^9].
EplbLoad read_eplb_load(const std::string& path);

}  // namespace zepp
