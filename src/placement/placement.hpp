// Expert replication and placement policies (paper §4.1; DeepSeek EPLB). Slot p of a placement
// sits on GPU p / slots_per_gpu (EPLB's physical-expert convention).
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// DeepSeek's public EPLB rule over L layers, exact to its float32 arithmetic, with the tie rule
// of shared/data/eplb/reference-cases.json (ties go to the lowest index). Hierarchical when
// num_groups % num_nodes == 0, else global (num_groups = num_nodes = 1).
struct EplbResult {
  int layers = 0, experts = 0, replicas = 0, max_replicas = 0;  // L, E, P, X = P - E + 1
  std::vector<int64_t> phy2log;  // [L * P]
  std::vector<int64_t> log2phy;  // [L * E * X], -1 padded
  std::vector<int64_t> logcnt;   // [L * E]
};
// weight: [L * E] loads. Throws ArgumentError naming the argument when shapes do not divide.
EplbResult eplb_rebalance(const std::vector<float>& weight, int layers, int experts, int num_replicas,
                          int num_groups, int num_nodes, int num_gpus);

// One layer's EPLB placement with slots_per_gpu slots per GPU of `topo`.
Placement place_eplb(const std::vector<double>& load, const Topology& topo, int slots_per_gpu, int num_groups);

// Zepp's placement (§4.1): E / G base slots plus `extra_slots` (R) per GPU; replica counts by
// greedy highest demand per replica; replicas round-robin across nodes in priority order, then
// packed within each node onto GPUs to balance expected load. load: [E] historical demand.
Placement place_zepp(const std::vector<double>& load, const Topology& topo, int extra_slots);

// No replicas: expert e on GPU e / (E / G). Requires E % num_gpus == 0 (ArgumentError otherwise).
Placement place_contiguous(int num_experts, const Topology& topo);

}  // namespace zepp
