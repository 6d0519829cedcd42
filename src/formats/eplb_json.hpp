// EPLB's three return values (deepseek-ai/EPLB rebalance_experts) as one JSON object, for tools
// that consume EPLB output directly (vLLM's EPLB state, scripts written against EPLB).
#pragma once
#include <string>
#include <vector>

#include "formats/expert_map.hpp"

namespace zepp {

// Writes {"phy2log": [L, P], "log2phy": [L, E, X], "logcnt": [L, E]}: log2phy lists each
// expert's slots ascending, padded with -1 to X = the most replicas of any expert (EPLB's
// maxlogcnt). Layer ids other than 0..L-1 are written as "layers" [L], and `ranks` (the GPU of
// each rank of phy2log, after lost GPUs) as "ranks" when not empty, as `zepp place` prints them.
// Throws ArgumentError naming `map` unless map.validate() passes.
void write_eplb_json(const std::string& path, const ExpertMap& map, const std::vector<int>& ranks = {});

// Reads phy2log; layer_ids are its "layers" when the file has them, else 0..L-1. log2phy and
// logcnt are optional; when present they must describe the same placement (log2phy rows may list
// an expert's slots in any order, as EPLB's replica ranks do, with -1 padding after them). Throws
// InputError naming the file and field.
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
