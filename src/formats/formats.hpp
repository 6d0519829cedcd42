// Placement files by format name, for `zepp place --output-format` and the Python module.
#pragma once
#include <string>
#include <vector>

#include "formats/eplb_json.hpp"
#include "formats/expert_map.hpp"
#include "formats/sglang.hpp"
#include "formats/trtllm.hpp"

namespace zepp {

// "sglang" (write_sglang_placement), "trtllm" (write_trtllm_config), "eplb-json" (write_eplb_json).
std::vector<std::string> placement_format_names();
// Throw ArgumentError naming `format` for an unknown name, else as the format's own function.
// num_experts > 0: the map is for that many experts (the loads'), and an expert id at or beyond it
// is refused as such (InputError naming the row, layer and slot); 0: E is the largest id + 1.
void write_expert_map(const std::string& path, const ExpertMap& map, const std::string& format);
ExpertMap read_expert_map(const std::string& path, const std::string& format, int num_experts = 0);

}  // namespace zepp
