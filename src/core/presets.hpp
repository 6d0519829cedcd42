// Named model shapes and cluster topologies. Every constant's source is beside it in
// presets.cpp.
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// A model preset and where its numbers come from.
struct ModelPreset {
  ModelShape shape;
  std::string source;
};

// Model shape by name (model_preset_names(); `zepp presets` prints them with their sources).
// Throws ArgumentError("<arg>: unknown preset 'NAME', expected one of ...") listing the names;
// `arg` names where the name came from ("--model" on the command line).
ModelShape model_preset(const std::string& name, const std::string& arg = "model");
std::vector<std::string> model_preset_names();
std::vector<ModelPreset> model_presets();

// A cluster preset (node count 1) and where its numbers come from.
struct TopologyPreset {
  Topology topo;
  std::string source;
};

// Topology by name with the given node count: the paper's a100 and h100 (4 GPUs per node,
// NVLink per GPU pair; DESIGN.md §3) and the vendor systems dgx-a100, dgx-h100, dgx-h200,
// dgx-b200 (8 GPUs per node behind NVSwitch) and gb200-nvl72 (72). Throws ArgumentError.
// Topology files (docs/topology.md): core/topology_file.hpp.
Topology topology_preset(const std::string& name, int nodes);
std::vector<std::string> topology_preset_names();
std::vector<TopologyPreset> topology_presets();

}  // namespace zepp
