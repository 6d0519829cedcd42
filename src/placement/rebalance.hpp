// Zepp's placement quality measure, stable rebalancing from a current placement, and placement
// on a cluster that lost GPUs or nodes (src/placement/rebalance.cpp, zepp.cpp).
//
// place_zepp (placement.hpp) packs as zepp.cpp states: replica counts by water-filling (§4.1), a
// node-spreading longest-processing-time packing guarded by Gale–Ryser,
// a pairwise-exchange search and spreading swaps; every GPU exactly S replicas, no expert twice on
// a GPU, max expected GPU load <= (1 + kSpreadTolerance) x a plain LPT packing of the
// water-filled counts (pack.cpp proves it). EplbResult::max_replicas is the largest replica count
// of any expert in any layer (SGLang's EPLB and zepp.rebalance_experts; DeepSeek's eplb.py pads
// log2phy to P - E + 1, which vLLM's policy keeps: only all -1 columns differ); eplb_rebalance's
// global policy (num_groups % num_nodes != 0) accepts any num_gpus, as eplb.py does.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// Balance given up for node spreading: the spread packing is kept while its max GPU load is within
// this factor of the unspread one's. A design choice (half of the 1% balance target of issue 11),
// not a measured constant.
inline constexpr double kSpreadTolerance = 0.005;

// Expected load per GPU: each expert's load split evenly over its replicas. Shape [num_gpus].
std::vector<double> expected_gpu_load(const Placement& p, const std::vector<double>& load);
// max / mean of expected_gpu_load (1 when all loads are 0).
double expected_imbalance(const Placement& p, const std::vector<double>& load);

// Rebalancing from a current placement, and placement on a cluster that lost GPUs (elastic EP).
struct RebalanceOptions {
  std::vector<int32_t> previous;    // [G * S] current phy2log on the full cluster, every expert of
                                    // [0, E) held, -1 allowed in failed GPUs' slots; empty: none
  std::vector<int> failed_gpus;     // GPU ids in [0, G) lost (their slots and replicas are gone)
  double expert_bytes = 0;          // weights of one expert (ModelShape::expert_weight_bytes), bytes;
                                    // 0: unknown, moves cost one copy each, 0 bytes reported
  double max_moved_bytes = -1;      // per-layer budget for optional weight moves; < 0: none
  double balance_tolerance = 0.01;  // target max load = from-scratch max load x (1 + this)
};

// Weight moves from the previous placement, per slot whose expert changed: local (the GPU held
// the expert in another slot), over NVLink (another GPU of its node held it) or over the NIC.
struct MoveReport {
  int slots_changed = 0, local = 0, nvlink = 0, nic = 0;
  double nvlink_bytes = 0, nic_bytes = 0;
};

struct Rebalanced {
  Placement placement;         // over the surviving GPUs, renumbered: its GPU i is survivors[i]
  std::vector<int> survivors;  // [G'] original GPU id of each, ascending
  MoveReport moves;            // zero when no previous placement was given
  double imbalance = 0;        // expected_imbalance of `placement` over the survivors
  double fresh_imbalance = 0;  // of a from-scratch placement on the survivors
  bool used_fresh = false;     // the from-scratch placement won (rebalance.cpp says when)
};

// Zepp placement with S = slots_per_gpu on the GPUs of topo not in failed_gpus; with `previous`,
// the one with the fewest weight moves reaching max load <= fresh x (1 + balance_tolerance)
// (rebalance.cpp states the rule and its guarantees). Every expert keeps >= 1 replica and every
// surviving GPU its S slots. Throws ArgumentError naming "load", "topo", "slots_per_gpu",
// "previous" (wrong length, ids outside [0, E) but for -1 in a failed GPU's slots, an expert
// without a slot), "failed_gpus" (ids outside [0, G), repeated, or
// too few survivors to hold every expert) or "max_moved_bytes"/"expert_bytes".
Rebalanced rebalance_zepp(const std::vector<double>& load, const Topology& topo, int slots_per_gpu,
                          const RebalanceOptions& opt);

}  // namespace zepp
