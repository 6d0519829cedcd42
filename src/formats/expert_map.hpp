// A whole model's expert placement as serving engines store it: one physical→logical row per
// MoE layer (EPLB's convention: slot p of a row sits on rank p / (P / num_ranks)).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp {

struct ExpertMap {
  std::vector<int> layer_ids;    // [L] model layer of each row (SGLang: the row index itself)
  int num_slots = 0;             // P physical experts (slots) per layer, all ranks together
  std::vector<int32_t> phy2log;  // [L * P] logical expert held by each slot
  // [L * P] or empty: each slot's replica rank among its expert's slots (EPLB's phyrank), the order
  // of log2phy; empty: ascending slot order. Kept so that a placement's replica order survives
  // being written (eplb-json) as EPLB, zepp.rebalance_experts and `zepp place` print it.
  std::vector<int32_t> phyrank;

  int num_layers() const { return int(layer_ids.size()); }
  // E = largest expert id + 1 (a valid map holds every expert of [0, E) in every row).
  int num_experts() const;
  // Row `row` as a Placement over `num_gpus` ranks. Throws ArgumentError naming `num_gpus` unless
  // it divides P, and naming `row` when it is out of range.
  Placement layer(int row, int num_gpus) const;
  // log2phy [L * E * X] padded with -1 (each expert's slots in phyrank order, else ascending; X =
  // most replicas of any expert) and logcnt [L * E]: EPLB's second and third return values for this map.
  void logical_maps(std::vector<int64_t>& log2phy, int& max_replicas, std::vector<int64_t>& logcnt) const;
  // Empty when the map is well formed: P > 0, phy2log is L * P long, layer ids are distinct and in
  // [0, kMaxLayerId), expert ids are in [0, P) and every row holds every expert of [0, E).
  // Otherwise says what is wrong, naming the row and slot. expected_experts > 0: E is that count
  // (the experts of the loads the map is for), and an id at or beyond it is named as such.
  std::string problem(int expected_experts = 0) const;
  // Throws ArgumentError("<what>: <problem>") unless problem() is empty.
  void validate(const std::string& what) const;
};

// Stacks one Placement per layer (all with the same slot count) into a map. layer_ids defaults to
// 0..L-1. Throws ArgumentError naming `placements` or `layer_ids`.
ExpertMap expert_map_of(const std::vector<Placement>& placements, std::vector<int> layer_ids = {});

}  // namespace zepp
