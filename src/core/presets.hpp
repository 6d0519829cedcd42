// Named model shapes and cluster topologies. Every constant's source is beside it in
// presets.cpp.
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// Model shape by name: deepseek-v2-lite, llama4-maverick, mixtral-8x7b, qwen3-30b-a3b,
// qwen3-235b-a22b, kimi-k2, deepseek-v3. Throws ArgumentError("model: ...") listing the names.
ModelShape model_preset(const std::string& name);
std::vector<std::string> model_preset_names();

// Topology by name (a100, h100; DESIGN.md §3) with the given node count. Throws ArgumentError.
Topology topology_preset(const std::string& name, int nodes);
std::vector<std::string> topology_preset_names();

}  // namespace zepp
