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
  int layers = 0, experts = 0, replicas = 0, max_replicas = 0;  // L, E, P, X = P - E + 1
  std::vector<int64_t> phy2log;  // [L * P] logical expert of each physical expert (slot)
  std::vector<int64_t> log2phy;  // [L * E * X] physical experts of each logical one by replica rank, -1 padded
  std::vector<int64_t> logcnt;   // [L * E] replicas per logical expert
};

// DeepSeek's public EPLB rule (deepseek-ai/EPLB eplb.py, rebalance_experts) over L layers, exact
// to its float32 arithmetic, with the tie rule of shared/data/eplb/reference-cases.json (ties go
// to the lowest index). Hierarchical when num_groups % num_nodes == 0 (groups packed onto
// nodes, replication within nodes, packing onto GPUs), else global: the same routine with one
// group and one node. weight: [L * E] loads. Throws ArgumentError naming the argument unless
// layers, experts, num_groups, num_nodes, num_gpus >= 1, weight has L * E values, each finite and
// >= 0, num_replicas >= E, num_replicas % num_gpus == 0, num_gpus % num_nodes == 0 and, when
// hierarchical, E % num_groups == 0 (the global fallback ignores num_groups, as the reference).
EplbResult eplb_rebalance(const std::vector<float>& weight, int layers, int experts, int num_replicas,
                          int num_groups, int num_nodes, int num_gpus);

// One layer's EPLB placement: num_replicas = slots_per_gpu * topo.num_gpus(), num_nodes =
// topo.nodes. load: [E], converted to float32 as EPLB reads it. Throws ArgumentError ("load",
// "topo", "slots_per_gpu", or eplb_rebalance's argument names).
Placement place_eplb(const std::vector<double>& load, const Topology& topo, int slots_per_gpu, int num_groups);

// Zepp's placement (paper §4.1). load: [E] historical demand. Slots per GPU S = ceil(E / G) +
// extra_slots (R). Replica counts: one each, then each remaining slot to the expert with the
// highest demand per replica (ties: lower id), at most G replicas per expert. Replicas of
// experts in priority order (demand per replica, descending) go round-robin across nodes with
// one global cursor, skipping full nodes and, while another node can take it, nodes already
// holding the expert; within a node, replicas by expected load (demand / replicas) descending
// go to the least-loaded GPU with a free slot (ties: lower GPU), avoiding GPUs already holding
// the expert while another can take it. Slots of a GPU are in assignment order. Deterministic.
// Throws ArgumentError for bad load ("load"), topology ("topo"), extra_slots < 0 or S > E
// ("extra_slots").
//
// roofline (an experiment beyond §4.1, issue 24 item 6; placement/roofline.cpp states the rule,
// its guarantees and why it is off by default): when given, replica counts and the packing weigh
// each replica by its expected roofline time at the deployment's batch instead of its tokens,
// so an extra replica below the ridge, which costs a whole weight read whatever its rows, goes
// where it adds the least time. nullptr: tokens, as §4.1 states (every caller's default). Also throws ArgumentError
// ("roofline") unless its fields are finite, rows >= 0, read_s >= 0, row_s > 0, launch_s >= 0.
struct RooflineBatch;
Placement place_zepp(const std::vector<double>& load, const Topology& topo, int extra_slots,
                     const RooflineBatch* roofline = nullptr);

// One layer's expected batch in roofline terms (core/roofline.hpp's model): what Zepp's
// placement needs to weigh a replica by time rather than tokens.
struct RooflineBatch {
  double rows = 0;      // expected (token, expert) rows of one batch over all GPUs
  double read_s = 0;    // one expert's weight read, seconds (expert_weight_bytes / hbm_bw)
  double row_s = 0;     // one row's SwiGLU FLOPs at peak, seconds (6 hidden ffn / peak_flops)
  double launch_s = 0;  // one GEMM launch, seconds
};

// rows = tokens_per_gpu x G x top_k, the rest from the model and topo.compute. Throws
// ArgumentError ("tokens_per_gpu" unless >= 0; "topo" unless peak_flops and hbm_bw > 0 and
// kernel_launch >= 0; "model" unless hidden, ffn, top_k >= 1).
RooflineBatch roofline_batch(const ModelShape& model, const Topology& topo, int64_t tokens_per_gpu);

// No replicas: expert e in slot e, on GPU e / (E / G). Requires E % num_gpus == 0 (ArgumentError
// "num_experts" otherwise).
Placement place_contiguous(int num_experts, const Topology& topo);

// Per-layer placements in EPLB's map form: replica ranks follow ascending slot order. All layers
// must have the same expert and slot counts (ArgumentError "layers" otherwise, or if a placement
// fails Placement::validate).
EplbResult eplb_maps(const std::vector<Placement>& layers);

}  // namespace zepp
