// TensorRT-LLM's MoE load-balancer YAML: the file that `moe_config: load_balancer:` points to
// (TensorRT-LLM examples/wide_ep, MoeLoadBalancerConfig).
#pragma once
#include <string>

#include "formats/expert_map.hpp"

namespace zepp {

// Reads
//   num_slots: P
//   initial_global_assignments: {layer: [expert of slot 0, ..., expert of slot P-1], ...}
//   layer_updates_per_iter: n        (optional; any other member is ignored)
// Slot p sits on EP rank p / (P / ep_size), as in EPLB. layer_ids follow the file's order.
// Throws InputError "FILE:LINE: field: expected ..." for malformed files (bad YAML, a missing
// member, a row not P long, an id that is not an integer in [0, P), an expert missing from a row).
ExpertMap read_trtllm_config(const std::string& path, int num_experts = 0);

// Writes the three members above with layer_updates_per_iter: 0 (a static placement, the offline
// EP load balancer's setting), layers in ascending order, one flow list per layer. Throws
// ArgumentError naming `map` unless map.validate() passes.
void write_trtllm_config(const std::string& path, const ExpertMap& map);

}  // namespace zepp
