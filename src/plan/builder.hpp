// Internal: the state shared by the steps that build a CommPlan (dispatch.cpp, combine.cpp,
// flow.cpp, builder.cpp). Not part of the public API; see comm_plan.hpp for the semantics.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp::plan_detail {

// Rows of one inter-node flow (source node -> destination node), before split and merge
// choose their physical path. Pairs and targets are ranges into the flow's flat arrays.
struct FlowRow {
  int64_t token;
  int32_t src_gpu;   // GPU holding the row
  int32_t dep;       // task that must finish before the row can leave (-1: none)
  uint32_t pair_begin, pair_end;  // combine rows: the pairs the row sums
  uint32_t tgt_begin, tgt_end;    // GPUs of the destination node that need the row
  int32_t wave = 0;  // combine: completion wave (combine.cpp); dispatch rows: 0
};
struct Flow {
  std::vector<FlowRow> rows;
  std::vector<int64_t> pairs;
  std::vector<int32_t> targets;
};

class Builder {
 public:
  Builder(const RoutingBatch& batch, const Placement& placement, const Routing& routing, const Topology& topo,
          const ModelShape& model, const PlanOptions& options);
  CommPlan build(const std::vector<WeightMove>& weight_moves, const std::vector<MulticastMove>& multicasts = {});

 private:
  // builder.cpp
  int32_t add_task(Task t);
  // The transfer of this (src, dst, phase, round, hop), created on first use (coalescing).
  // Combine transfers of different completion waves are never coalesced (combine.cpp).
  int32_t transfer(int src, int dst, Phase phase, int round, Hop hop, int64_t priority, int wave = 0);
  int32_t new_transfer(int src, int dst, Phase phase, int round, Hop hop, int64_t priority);
  void add_dep(int32_t task, int32_t dep);
  void add_row(int32_t task, int64_t token, const int64_t* pairs = nullptr, size_t n = 0);
  int node_of(int gpu) const { return gpu / G_; }
  int local_of(int gpu) const { return gpu % G_; }
  void add_weight_moves(const std::vector<WeightMove>& moves);
  void add_multicasts(const std::vector<MulticastMove>& moves);  // multicast.cpp's tasks
  // shared_expert_window: each GPU's SharedExpert task, which its dispatch and GEMMs wait for.
  void add_shared_experts();
  void add_compute_groups();
  // Slots whose own-node rows form a group of their own, computed first (builder.cpp states the
  // rule). count: [slot][source node] pairs.
  std::vector<char> local_first_slots(const std::vector<int64_t>& count) const;
  void add_barriers();
  void finalize();

  // dispatch.cpp: fills deliver_[p] and receiver_[p].
  void add_dispatch();
  // combine.cpp
  void add_combine();
  int32_t final_reduce(int gpu, int32_t arrival);  // arrival -1: the GPU's own computed pairs
  int32_t pre_reduce(int gpu, int dst_node, int wave);
  // The completion wave of a combine row computed on `node` whose pairs are [first, last).
  int wave_of(int node, const int64_t* first, const int64_t* last) const;
  // est_done_ and node_span_: the finish time of each compute task on its GPU's stream, in
  // priority order, ignoring arrivals (an estimate of the order GEMMs complete in).
  void estimate_compute_finish();
  // flow.cpp: split + merge path of one inter-node flow. Returns, aligned with flow.targets,
  // the task that delivers each row to each target; receivers (if not null) gets, aligned
  // with flow.rows, the GPU that received the RDMA put.
  std::vector<int32_t> route_flow(Phase phase, int src_node, int dst_node, const Flow& flow,
                                  std::vector<int32_t>* receivers);
  // flow.cpp: whether split x of a flow with per-GPU rows `volumes` saves more NIC time than
  // its NVLink hops cost.
  bool split_pays(const std::vector<int64_t>& volumes, const std::vector<int64_t>& x) const;
  int64_t transfer_priority(Phase phase, int round, int lane) const;

  const RoutingBatch& batch_;
  const Placement& placement_;
  const Routing& routing_;
  const Topology& topo_;
  const PlanOptions& opt_;
  int N_, G_, K_;
  CommPlan plan_;
  struct KeyHash {
    size_t operator()(const std::pair<uint64_t, int32_t>& k) const {
      return std::hash<uint64_t>()(k.first ^ (uint64_t(uint32_t(k.second)) * 0x9E3779B97F4A7C15ull));
    }
  };
  // (transfer_key(...), wave) -> coalesced transfer
  std::unordered_map<std::pair<uint64_t, int32_t>, int32_t, KeyHash> transfers_;
  std::vector<int32_t> src_gpu_of_token_;  // [T]
  std::vector<int32_t> gpu_of_pair_;       // [T * K]
  std::vector<int32_t> deliver_;           // [T * K] dispatch task delivering the pair's token (-1: local)
  std::vector<int32_t> receiver_;          // [T * K] merge: GPU that received the token on the pair's node
  std::vector<int32_t> compute_of_pair_;   // [T * K]
  std::vector<int32_t> weights_of_slot_;   // [slots] weight transfer task or -1
  std::unordered_map<int64_t, int32_t> final_of_arrival_;  // arrival task (or -1 - gpu) -> FinalReduce
  std::vector<int32_t> pre_reduce_;        // [num_gpus * N * waves] PreReduce task or -1
  std::vector<double> est_done_;           // [tasks] compute tasks: estimated finish (s)
  std::vector<double> node_span_;          // [N] latest est_done_ of the node's compute
};

}  // namespace zepp::plan_detail
