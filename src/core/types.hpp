// The data that flows between Zepp's stages (DESIGN.md §1). Plain structs with flat arrays;
// every array's shape is given beside it. GPU g lives on node g / gpus_per_node.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zepp {

// How a simulated link carries transfers that overlap in time (the `sim` executor, exec/sim.hpp).
enum class LinkSharing : uint8_t {
  Fair,    // concurrent flows share each link max-min fairly (SimGrid CM02; DESIGN.md §4)
  Serial,  // each NIC egress and each NVLink pair runs one transfer at a time, in priority
           // order (the executor's behaviour before issue 10; kept for comparison)
  Pair,    // as Fair, but each (sender, receiver) GPU pair has one transfer in flight, the
           // rest queued in priority order, as the messages of one RDMA queue pair (or one
           // NVLink peer connection) are processed in order; different pairs share links
           // max-min. Fewer flows in flight, so large clusters simulate faster (docs/scaling.md)
};
const char* to_string(LinkSharing s);
// "fair", "serial" or "pair"; ArgumentError naming `what` otherwise.
LinkSharing parse_link_sharing(const std::string& name, const std::string& what);

// How one GPU computes an expert's FFN (core/roofline.hpp): the roofline of its dense BF16
// tensor-core peak and its HBM bandwidth, plus a fixed cost per GEMM launch. One struct so
// other compute models (e.g. one measured on the machine) can sit beside it.
struct ComputeModel {
  double peak_flops = 0;       // FLOP/s, dense BF16 tensor-core peak
  double hbm_bw = 0;           // bytes/second, HBM bandwidth
  double kernel_launch = 0;    // seconds, fixed cost of one expert GEMM launch
  double memory = 0;           // bytes of GPU memory (HBM capacity); 0: not known (a topology file without compute.memory)
};

// How the GPUs of one node reach each other over NVLink.
enum class NvlinkModel {
  PerPair,  // a dedicated link per ordered GPU pair, nvlink_bw each (paper §6.1's 4-GPU nodes)
  Switch,   // NVSwitch: one port per GPU per direction, nvlink_bw, shared by all its flows
};

// A cluster: N nodes of G GPUs, each GPU with its own NIC (paper §6.1). Bandwidths in
// bytes/second per direction, latencies in seconds. Presets in core/presets.hpp, files in
// core/topology_file.hpp (format: docs/topology.md).
struct Topology {
  std::string name;
  int nodes = 1;
  int gpus_per_node = 1;
  NvlinkModel nvlink_model = NvlinkModel::PerPair;
  double nvlink_bw = 0;        // per GPU pair (PerPair) or per GPU switch port (Switch), per direction
  double nvlink_latency = 0;   // per message
  double nic_bw = 0;           // per GPU NIC, per direction
  double nic_latency = 0;      // per message (RDMA put)
  // In-switch multicast (NVLink SHARP, NvlinkModel::Switch only): the most bytes/second one
  // injecting port's stores are replicated to, over all receivers together (iser-moe.txt §3.3:
  // each of g receivers gets at most this / g). 0: the switch cannot multicast.
  double multicast_port_output = 0;
  ComputeModel compute;
  LinkSharing link_sharing = LinkSharing::Fair;  // sim executor's link model

  int num_gpus() const { return nodes * gpus_per_node; }
  int node_of(int gpu) const { return gpu / gpus_per_node; }
};

// An MoE layer's shape (public model configurations, traces README).
struct ModelShape {
  std::string name;
  int num_experts = 0;     // routed (logical) experts E
  int top_k = 0;
  int hidden = 0;          // token dimension
  int ffn = 0;             // expert FFN (intermediate) dimension
  int layers = 0;          // all layers
  int moe_layers = 0;
  int shared_experts = 0;
  int bytes_per_elem = 2;  // BF16 (paper §6.1)

  double token_bytes() const { return double(hidden) * bytes_per_elem; }
  // Weights of one expert: gate, up and down projections (DESIGN.md §3).
  double expert_weight_bytes() const { return 3.0 * hidden * ffn * bytes_per_elem; }
};

// One layer invocation's routing: for every source GPU its tokens, each with top-k expert ids
// and gate weights. Tokens of GPU i are [token_offset[i], token_offset[i+1]).
struct RoutingBatch {
  int num_gpus = 0;
  int num_experts = 0;
  int top_k = 0;
  std::vector<int64_t> token_offset;  // [num_gpus + 1]
  std::vector<int32_t> expert_ids;    // [T * top_k], T = token_offset.back()
  std::vector<float> gate_weights;    // [T * top_k]

  int64_t num_tokens() const { return token_offset.empty() ? 0 : token_offset.back(); }
  // d[i][e]: tokens of GPU i that selected expert e (Table 1). Shape [num_gpus * num_experts].
  std::vector<int64_t> demand() const;
};

// Where expert replicas live: EPLB's convention. Physical expert (slot) p sits on GPU
// p / slots_per_gpu and holds logical expert phy2log[p].
struct Placement {
  int num_gpus = 0;
  int num_experts = 0;
  int slots_per_gpu = 0;
  std::vector<int32_t> phy2log;  // [num_gpus * slots_per_gpu]

  int num_slots() const { return num_gpus * slots_per_gpu; }
  int gpu_of_slot(int p) const { return p / slots_per_gpu; }
  // logcnt[e]: replicas of expert e. Shape [num_experts].
  std::vector<int32_t> logcnt() const;
  // Slots holding expert e, ascending. Shape [num_experts][replicas of e].
  std::vector<std::vector<int32_t>> replicas() const;
  // Throws ArgumentError naming `what` unless every slot holds an expert in [0, E) and
  // every expert has at least one replica.
  void validate(const std::string& what) const;
};

// One entry of the count-level plan M^e_ij (Table 1): `tokens` tokens of GPU `src_gpu` that
// selected expert `expert` are served by slot `slot` (on GPU slot / slots_per_gpu).
struct RouteCount {
  int32_t expert;
  int32_t src_gpu;
  int32_t slot;
  int64_t tokens;
};

// A routing decision (paper §4.1): the count matrices and, per (token, k) pair, the slot that
// serves it.
struct Routing {
  std::vector<RouteCount> counts;   // M^e_ij, sorted by (expert, src_gpu, slot), no zeros
  std::vector<int32_t> slot_of_pair;  // [T * top_k]; empty for count-only plans
};

}  // namespace zepp
