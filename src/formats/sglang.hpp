// SGLang's expert-parallel files (python/sglang/srt/eplb/expert_location.py, --init-expert-location).
#pragma once
#include <string>
#include <vector>

#include "formats/expert_map.hpp"

namespace zepp {

// Expert-distribution statistics: a JSON object whose "logical_count" is [steps, L, E] or [L, E]
// token counts (other members, such as "rank", are ignored). SGLang's recorder dumps this object
// as a .pt file; `json.dump({"logical_count": torch.load(f)["logical_count"].tolist()}, out)`
// turns it into this JSON, which SGLang also accepts as --init-expert-location (it then runs its
// EPLB itself). Returns per-layer load [L][E] in tokens, summed over steps. Throws InputError
// naming the file and field ("FILE: logical_count[2][7]: expected a number, got ..."), also for
// a load that sums above kMaxLoad over the steps.
std::vector<std::vector<double>> read_sglang_stats(const std::string& path);
// Writes {"logical_count": [L, E]}. load: [L][E] tokens in [0, kMaxLoad] (ArgumentError naming
// `load` otherwise). Integral loads are written as JSON integers; others in shortest round-trip
// form, so read_sglang_stats returns exactly `load`.
void write_sglang_stats(const std::string& path, const std::vector<std::vector<double>>& load);

// --init-expert-location file: {"physical_to_logical_map": [L, P]}, row l for model layer l.
// layer_ids of the result are 0..L-1. Throws InputError naming the file and the row/slot.
ExpertMap read_sglang_placement(const std::string& path, int num_experts = 0);
// Writes {"physical_to_logical_map": [L, P]} and nothing else: SGLang passes the object's members
// as keyword arguments to ExpertLocationMetadata.init_by_mapping, which takes only this map and
// derives logical_to_all_physical_map itself. Rows run over model layers 0..max layer id; layers
// absent from `map` (dense layers) get SGLang's own trivial row, slot p -> expert p mod E.
// Throws ArgumentError naming `map` unless map.validate() passes and layer ids are >= 0.
void write_sglang_placement(const std::string& path, const ExpertMap& map);

}  // namespace zepp
