// Expert replication and placement policies (paper §4.1; DeepSeek EPLB). Slot p of a placement
// sits on GPU p / slots_per_gpu (EPLB's physical-expert convention). Loads are historical
// demand per expert in any non-negative unit (tokens, activation fractions).
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// The maps of EPLB's rebalance_experts, flattened row-major.
struct EplbResult {
  int layers = 0, experts = 0, replicas = 0, max_replicas = 0;  // L, E, P, X = largest logcnt
  std::vector<int64_t> phy2log;  // [L * P] logical expert of each physical expert (slot)
  // [L * E * X] physical experts of each logical one by replica rank, -1 padded. X is the largest
  // replica count of any expert in any layer (SGLang's EPLB and zepp.rebalance_experts; DeepSeek's
  // eplb.py pads to P - E + 1, which vLLM's policy keeps: only the all -1 columns differ).
  std::vector<int64_t> log2phy;
  std::vector<int64_t> logcnt;   // [L * E] replicas per logical expert
};

// DeepSeek's public EPLB rule (deepseek-ai/EPLB eplb.py, rebalance_experts) over L layers, exact
// to its float32 arithmetic, with the tie rule of shared/data/eplb/reference-cases.json: equal
// loads keep ascending index when sorted, the next replica goes to the lowest-index expert among
// equal load per replica, and the lowest-index pack wins among equally loaded packs (eplb.py's
// torch sort is not stable, so the reference itself may order ties differently across versions).
// Hierarchical when num_groups % num_nodes == 0 (groups packed onto nodes, replication within
// nodes, packing onto GPUs), else global: the same routine with one group and one node, which
// accepts any num_nodes and num_gpus. weight: [L * E] loads. Throws ArgumentError naming the
// argument unless layers, experts, num_groups, num_nodes, num_gpus >= 1, weight has L * E values,
// each finite and >= 0, num_replicas >= E, num_replicas % num_gpus == 0 and, when hierarchical,
// num_gpus % num_nodes == 0 and E % num_groups == 0 (the global policy ignores num_groups and
// num_nodes, as the reference).
EplbResult eplb_rebalance(const std::vector<float>& weight, int layers, int experts, int num_replicas,
                          int num_groups, int num_nodes, int num_gpus);

// One layer's EPLB placement: num_replicas = slots_per_gpu * topo.num_gpus(), num_nodes =
// topo.nodes. load: [E], converted to float32 as EPLB reads it. Throws ArgumentError ("load",
// "topo", "slots_per_gpu", or eplb_rebalance's argument names).
Placement place_eplb(const std::vector<double>& load, const Topology& topo, int slots_per_gpu, int num_groups);

// Zepp's placement (paper §4.1). load: [E] historical demand. Slots per GPU S = ceil(E / G) +
// extra_slots (R). Replica counts by water-filling: one each, then each remaining slot to the
// expert with the highest demand per replica (ties: lower id), at most one replica per GPU.
// Packing: longest-processing-time over all GPUs (replicas by demand per replica, descending, each
// onto the least-loaded GPU with a free slot that does not hold its expert), spreading each
// expert's replicas over the nodes holding fewest of them, then a pairwise-exchange local search
// on the most loaded GPU. The same packing without the node rule is computed too; the spread one
// is kept unless its max GPU load exceeds the unspread one's by more than kSpreadTolerance.
// Guarantees (pack.cpp proves them): every GPU exactly S replicas, no expert twice on a GPU, max
// expected GPU load <= (1 + kSpreadTolerance) x plain LPT packing of the same counts.
// Deterministic. Throws ArgumentError for bad load ("load"), topology ("topo"), extra_slots < 0
// or S > E ("extra_slots").
Placement place_zepp(const std::vector<double>& load, const Topology& topo, int extra_slots);

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
  std::vector<int32_t> previous;    // [G * S] current phy2log on the full cluster; empty: none
  std::vector<int> failed_gpus;     // GPU ids in [0, G) lost (their slots and replicas are gone)
  double expert_bytes = 0;          // weights of one expert (ModelShape::expert_weight_bytes), bytes
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
// "previous" (wrong length, ids outside [0, E)), "failed_gpus" (ids outside [0, G), repeated, or
// too few survivors to hold every expert) or "max_moved_bytes"/"expert_bytes".
Rebalanced rebalance_zepp(const std::vector<double>& load, const Topology& topo, int slots_per_gpu,
                          const RebalanceOptions& opt);

// No replicas: expert e in slot e, on GPU e / (E / G). Requires E % num_gpus == 0 (ArgumentError
// "num_experts" otherwise).
Placement place_contiguous(int num_experts, const Topology& topo);

// Per-layer placements in EPLB's map form: replica ranks follow ascending slot order, log2phy is
// as wide as the largest replica count. All layers
// must have the same expert and slot counts (ArgumentError "layers" otherwise, or if a placement
// fails Placement::validate).
EplbResult eplb_maps(const std::vector<Placement>& layers);

}  // namespace zepp
