// What a strategy does per batch before its dispatch can start, charged on the simulated
// critical path (paper §5: routing, swap planning and the metadata exchange run at every MoE
// layer; §6.6 counts them at about 5% of the iteration). Two parts:
//  - metadata: the counts every rank needs from every other rank, all-gathered over the
//    simulated network as real transfers (Phase::Planning);
//  - planning: the per-rank computation on those counts and the rank's own tokens, as one
//    TaskKind::Planning task on each GPU's compute stream (the GPU-side work before dispatch),
//    timed by a cost model per count-level cell and per own (token, expert) pair.
// What each strategy pays is stated where it decides (PlanningWork's comment lists them).
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

// Cost model of per-rank planning, seconds, on one CPU core (planning.cpp gives the benchmark
// runs the constants come from).
struct PlanningCosts {
  double per_cell_s = 0;  // per (expert, GPU) cell of a count-level plan every rank computes
  double per_pair_s = 0;  // per (token, expert) pair of the rank's own tokens it assigns
  double per_entry_s = 0; // per entry of the rank's own count row (its counts, quota setup and
                          // send-list bookkeeping per expert, whatever its tokens)
  double per_remote_visit_s = 0;  // per visit of a remote replica in the count level's
                                  // water-filling (Router::remote_visits), on top of the cells
  double per_rule_pair_s = 0;     // per own pair of a token that runs the pair level's node
                                  // choice (Router::rule_pairs), on top of its per_pair_s
};
PlanningCosts planning_costs();

// A strategy's per-batch work (StrategyDecision::planning). All zero: nothing per batch (a static
// placement and a per-token table lookup, which every dispatch layout does anyway):
// a2av, eplb, comet, comet+eplb, sglang.
//  - zepp: E counts per GPU all-gathered, the count-level plan (E x G cells), own pairs assigned;
//  - zepp+swaps: as zepp, plus each GPU's N rows toward each node all-gathered and the NIC
//    split of every flow (N x G cells, the swap rule's NIC figures), swap planning on the
//    gathered demand (another E x G cells);
//  - zepp+hot: as zepp, plus the NIC floor (as zepp+swaps') and the hot pass on the plan's slot
//    loads (swap/hot.hpp HotPlan::cells);
//  - moonep, halo-q: E counts per GPU all-gathered, replication planning (E x G cells), own
//    pairs assigned to the new replicas;
//  - fast: each GPU's row of the traffic matrix (G counts) all-gathered, the schedule on the
//    G x G matrix (G x G cells), own pairs assigned to NICs;
//  - zepp-overlap (with split): each GPU's N rows-per-node counts all-gathered, the NIC split of
//    every flow of its node (N x G cells), own pairs assigned to NICs; without split nothing;
//  - epic: nearest-replica routing of the own pairs, no exchange.
struct PlanningWork {
  int64_t metadata_bytes = 0;  // bytes of counts each GPU contributes to the all-gather; 0: none
  double cells = 0;            // count-level cells every GPU computes
  std::vector<int64_t> pairs;  // [G] own pairs each GPU assigns; empty: none
  int64_t row_entries = 0;     // entries of each GPU's own count row (its all-gathered counts)
  double remote_visits = 0;          // water-filling visits of remote replicas every GPU computes
  std::vector<int64_t> rule_pairs;   // [G] own pairs whose tokens run the node choice; empty: none
  bool empty() const {
    return metadata_bytes == 0 && cells == 0 && pairs.empty() && row_entries == 0 && remote_visits == 0 &&
           rule_pairs.empty();
  }
};

// Bytes of one count on the wire: int32. A rank's pairs for one expert are at most its tokens
// (< 2^31 on any GPU), and DeepEP's dispatch layout exchanges int32 token counts too.
constexpr int64_t kCountBytes = 4;

// The work of a strategy that all-gathers `counts_per_gpu` counts per GPU (each GPU's own row:
// row_entries), computes `cells` cells on every GPU and (own_pairs) assigns each GPU's own
// (token, expert) pairs of `batch`.
PlanningWork per_batch_work(const RoutingBatch& batch, int64_t counts_per_gpu, double cells, bool own_pairs);

// Seconds GPU g plans under `work` (costs: planning_costs()):
//   per_cell_s · cells + per_pair_s · pairs[g] + per_entry_s · row_entries
//   + per_remote_visit_s · remote_visits + per_rule_pair_s · rule_pairs[g].
double planning_seconds(const PlanningWork& work, int gpu);

// Adds `work` to `plan`, on the plan's cluster (plan.nodes x plan.gpus_per_node):
//  - metadata (work.metadata_bytes > 0), a two-level all-gather as DeepEP's internode layout
//    exchange runs it (NVLink inside a node, RDMA only between GPUs of the same local index,
//    so no incast): (1) every GPU sends its counts over NVLink to every other GPU of its node;
//    (2) once it holds its node's counts, every GPU puts them (gpus_per_node x metadata_bytes)
//    to the GPU with its local index on every other node. After (2) every GPU holds all G
//    rows: those of its node from (1), those of node m from m's GPU of its local index.
//  - planning (any work): one TaskKind::Planning task per GPU of planning_seconds, after every
//    metadata transfer into that GPU, with the lowest priority on its stream;
//  - every task of the plan that runs on (or sends from) GPU g waits for g's planning.
// With empty work the plan is unchanged. Throws ArgumentError("plan: ...") when work.pairs or
// work.rule_pairs (when not empty) does not have one entry per GPU of the plan.
void charge_planning(CommPlan& plan, const PlanningWork& work);

}  // namespace zepp
