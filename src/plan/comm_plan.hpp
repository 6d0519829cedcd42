// The communication plan of one MoE layer invocation (paper §4.2, DESIGN.md §1 "Comm plan" and
// "Schedule"): every transfer, expert computation and reduction as a task, with the rows each
// one carries, its dependencies and its order on its resource (Algorithm 1). Executors (`sim`,
// `mpi`) run the same plan: the `sim` executor times it, the `mpi` executor moves real rows.
//
// Data model. A row is one hidden-sized BF16 vector (ModelShape::token_bytes() bytes). A pair
// index p = token * top_k + k names the k-th expert choice of global token `token` (an index
// into the RoutingBatch). Every GPU starts holding the input activations of its own tokens.
//  - Dispatch rows are token input activations (identified by token index).
//  - Expert computation produces, per pair p, the gate-weighted output w_p * FFN_{e_p}(x_t).
//    A GPU accumulates the outputs it computes for the same token in its GEMM epilogue.
//  - Combine rows are partial sums: row (t, P) holds sum over p in P of w_p * FFN_{e_p}(x_t);
//    its sender must hold (computed or received) every pair of P.
//  - The final output y_t on t's source GPU is the sum of the rows of all final reductions
//    there; over them every pair of t appears exactly once.
//
// Paths (all choices deterministic, so the same inputs give the same plan bit for bit):
//  - Same GPU: no transfer. Same node: one NVLink transfer, sender -> GPU that needs the row.
//  - Other node, per (source node, destination node) flow, in Algorithm 1's round
//    r = (source - destination) mod N for dispatch, (destination - source) mod N for combine:
//    * split: each source GPU's rows toward that node are redistributed over the node's NICs
//      (eq. (2)/(3), plan/split.hpp); rows moved to another GPU's NIC travel there first over
//      NVLink (a "relay" transfer, Algorithm 1 lines 4-5). Without split every GPU uses its
//      own NIC.
//    * merge: one RDMA put per NIC goes to the peer GPU with the same local index on the
//      destination node (Algorithm 1 line 7; puts of one round are one-to-one between nodes,
//      so no incast), which forwards over NVLink to every GPU there that needs the row
//      (lines 8-11, "union forwarding": each GPU gets exactly the rows it needs). In dispatch
//      a token crosses to a node once, whatever the number of its experts there. In combine
//      the token's contributions on that node are sent over NVLink to the GPU that received
//      the token in dispatch (lines 19-21), pre-reduced there into one row (lines 22-23) and
//      returned once along the reverse path (line 25); with merge but without pre_reduce
//      each remote output returns on its own, as without merge. Without merge: one row per
//      (token, expert pair), RDMA put straight to the GPU that needs it (all-to-allv).
//  - Transfers on the same (source, destination, link, phase, round, hop) are coalesced into one.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/huge_pages.hpp"
#include "core/types.hpp"

namespace zepp {

enum class TaskKind : uint8_t {
  Transfer,     // rows (or expert weights) from gpu to dst_gpu over `link`
  Compute,      // one expert GEMM over `pairs` on gpu, slot `slot`
  PreReduce,    // sums contributions into partial-sum rows on gpu, bound for node `node`
  FinalReduce,  // adds rows into the source GPU's output y
  Barrier,      // no work: completes when its deps complete (phase barriers, overlap = false)
  Planning,     // per-rank planning on gpu's compute stream for `seconds` (plan/planning.hpp)
  SharedExpert, // the shared experts' FFN over the GPU's own tokens (PlanOptions::shared_expert_window)
};
enum class Link : uint8_t { None, NVLink, NIC };
// Planning: the per-batch metadata exchange (transfers) and planning (TaskKind::Planning) before
// dispatch, added by charge_planning (plan/planning.hpp) for the sim executor only.
enum class Phase : uint8_t { Dispatch, Compute, Combine, Weights, Planning };
// Which leg of a path a transfer is (transfers of different legs are never coalesced).
enum class Hop : uint8_t {
  Direct,   // intra-node flow or weights: sender -> the GPU that needs it
  Relay,    // split: NVLink to the GPU whose NIC carries the rows (Algorithm 1 lines 4-5)
  Put,      // RDMA put between nodes (lines 7, 25)
  Forward,  // NVLink from the receiving GPU to the GPU that needs the rows (lines 8-11)
  Gather,   // merge, combine: expert outputs to the pre-reducing GPU (lines 19-21)
};

const char* to_string(TaskKind k);
const char* to_string(Link l);
const char* to_string(Phase p);
const char* to_string(Hop h);

// A range [begin, end) of one of CommPlan's flat arrays.
struct Range {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end == begin; }
};

struct Task {
  TaskKind kind = TaskKind::Barrier;
  Phase phase = Phase::Compute;
  int32_t gpu = -1;       // Transfer: sending GPU; otherwise the GPU that runs the task
  int32_t dst_gpu = -1;   // Transfer: receiving GPU; otherwise -1
  Link link = Link::None; // Transfer only
  Hop hop = Hop::Direct;  // Transfer only
  int32_t round = -1;     // Transfer: Algorithm 1 round 1..N-1 of an inter-node flow (relay,
                          // put and forward share it), 0 for intra-node flows and weights
  int32_t slot = -1;      // Compute: physical expert (slot); Transfer of weights: target slot
  int32_t expert = -1;    // Compute / weights: logical expert
  int32_t node = -1;      // PreReduce: destination (source) node of its partial sums
  double bytes = 0;       // Transfer: payload bytes; Pre/FinalReduce: bytes of rows read
                          // (inputs summed), for the time bytes / hbm_bw; Compute: 0;
                          // SharedExpert: the GPU's input activations (tokens x token_bytes)
  double seconds = 0;     // Planning: its modelled duration; others: 0
  // Transfer of weights by in-switch multicast (NVLink SHARP, iser-moe.txt §2.1): one store from
  // `gpu` that the switch replicates into every GPU of CommPlan::multicast(task) (ascending, one
  // node; `gpu` itself when it is a member; dst_gpu is one member other than gpu). `bytes` leave
  // gpu's port once and enter every member's port. Empty: point to point.
  //
  // Rows (CommPlan::tokens, pair_begin, pairs of the task). Transfer (dispatch): tokens only,
  // one activation per entry; without merge a token may repeat (one copy per expert pair).
  // Transfer (combine), PreReduce (its output rows), FinalReduce: tokens with CSR pair_begin
  // [tokens + 1] into pairs: row r sums pairs[pair_begin[r] .. pair_begin[r+1]). Compute: pairs
  // only (ascending), tokens and pair_begin empty. Weights: no rows (bytes =
  // ModelShape::expert_weight_bytes()).
  //
  // Dependencies (CommPlan::deps of the task): indices into CommPlan::tasks that must finish
  // first.
  //
  // Order among ready tasks on the same resource, lower first (Algorithm 1). Resources:
  // Compute/PreReduce/FinalReduce -> the GPU's single compute stream. A resource runs one task
  // at a time and, when idle, starts its ready task with the lowest priority (ties: lowest
  // task index). Transfers take no resource when links are shared fairly (the default,
  // exec/sim.hpp); under LinkSharing::Serial the sender's NIC egress (NIC transfers) and the
  // (gpu, dst_gpu) pair (NVLink transfers) are resources too. Barriers take no resource. An
  // order that must hold whatever the link model (Algorithm 1's rounds) is a dependency
  // (keep_round_order).
  int64_t priority = 0;

  // Where the task's lists lie in CommPlan's flat arrays (read them with CommPlan::tokens(t),
  // pair_begin(t), pairs(t), deps(t), multicast(t); set them with CommPlan::set_rows, set_deps,
  // add_dep, set_multicast). A task holds no memory of its own.
  Range tokens_at, pair_begin_at, pairs_at, deps_at, multicast_at;

  int64_t rows() const { return kind == TaskKind::Compute ? pairs_at.size() : tokens_at.size(); }
};

// An expert replica whose weights must arrive before its slot computes (an intra-node swap,
// paper §4.3): the weights of `slot`'s expert come from `src_gpu` (phase Weights).
struct WeightMove {
  int32_t slot = -1;
  int32_t src_gpu = -1;
};

// A replica broadcast by in-switch multicast into a fixed aligned group (iser-moe.txt §4.2-4.3):
// expert `expert` of `owner` lands in `slots[i]` (a helper slot holding it) on every member
// members[i] (ascending, on the owner's node; the owner may be outside). Owner-direct (sami =
// false, owner a member): one multicast store of the whole expert from the owner's port. SAMI:
// member i pulls a 1/g share from the owner (none when i is the owner) and multicasts it from its
// own port; slices are pipelined (8 KiB in the paper, far below a share), so in the fluid model
// each member's pull and multicast run concurrently. Every member slot computes only after all
// of the broadcast's transfers are done (one helper index per broadcast, symmetric slots).
struct MulticastMove {
  int32_t expert = -1, owner = -1;
  std::vector<int32_t> members, slots;
  bool sami = false;
};

struct PlanOptions {
  bool split = true;       // redistribute inter-node rows over the node's NICs (eq. (2)/(3))
  bool merge = true;       // dispatch dedup + combine pre-reduction per node
  bool overlap = true;     // Algorithm 1 data dependencies; false: per-GPU phase barriers
                           // (dispatch, then compute, then combine) and one GEMM per slot
  double nic_slack = 0.0;  // C_NIC >= 0 of eq. (2)
  bool round_order = false;  // keep_round_order: each NIC issues its puts (and each NVLink pair
                             // its relays) round after round, as Algorithm 1 does; false: all
                             // transfers may start at once, as an all-to-allv posts them
  bool pre_reduce = true;    // with merge: combine gathers a node's outputs of a token on the
                             // GPU that received it, sums them and returns one row (Algorithm 1
                             // lines 19-25, Zepp's §4.2); false: each remote (token, expert)
                             // output returns on its own, straight to the token's GPU
  bool split_if_it_pays = false;  // with split: split a flow only when the NIC time it saves
                                  // exceeds its NVLink hops (plan/flow.cpp, Zepp's choice);
                                  // false: every flow over the bound is split (FAST)
  bool local_first = false;  // with overlap: own-node rows of chosen slots form a group apart
                             // from remote rows, computed while dispatch runs (plan/builder.cpp,
                             // local_first_slots)
  bool round_order_combine = true;  // with round_order: also in combine (false: dispatch only)
  int combine_waves = 1;  // with merge and pre_reduce: combine rows of a (node, destination node)
                          // leave in completion waves (plan/combine.cpp), each pre-reduced and
                          // sent once its rows' GEMMs are done: on node d, min(this, the most
                          // GEMMs one GPU of d runs) waves, so a wave spans about one GEMM of
                          // its busiest GPU; 1: one pre-reduction per (GPU, destination node).
                          // In [1, 64].
  int dispatch_chunks = 1;  // with overlap: each inter-node dispatch flow is cut into chunks sent
                            // one after another on each NIC, ordered by the GEMMs that need
                            // them on the destination (plan/dispatch_chunks.cpp): at most this
                            // many per flow, fewer where the rule there says so; 1: one put per
                            // (NIC, peer) per flow. In [1, 64].
  bool combine_after_dispatch = false;  // every inter-node combine transfer waits for the
                                        // inter-node dispatch transfers its sender sends and
                                        // its receiver receives (combine_after_dispatch below)
  // The shared-expert window (iser-moe.txt §3.1, §4.4): with a model that has shared experts,
  // each GPU's compute stream first runs the shared experts over its own tokens (TaskKind::
  // SharedExpert), and its dispatch and routed GEMMs wait for it, while weight transfers
  // (replicas planned right after routing) start at once, beside it. The plan's
  // shared_expert_s is that window; executors report the layer from its end, like every plan
  // whose layer starts at dispatch (the shared expert is computed in every system).
  bool shared_expert_window = false;
};

// The plan: its tasks, and their rows, dependencies and multicast members in flat arrays (CSR:
// each task names its range of each array, Task::tokens_at ... multicast_at), so a plan of
// millions of rows is a handful of allocations. Token and pair indices and task indices are
// int32 (build_comm_plan refuses batches of 2^31 or more (token, expert) pairs).
struct CommPlan {
  int num_gpus = 0, gpus_per_node = 0, nodes = 0, top_k = 0;
  double token_bytes = 0;  // bytes of one row
  ModelShape model;        // for expert compute time (core/roofline.hpp)
  PlanOptions options;
  std::vector<Task> tasks;
  double shared_expert_s = 0;  // the shared-expert window (PlanOptions::shared_expert_window), s
  // The flat arrays (huge pages: core/huge_pages.hpp). A range no task names any more (after
  // set_rows, set_deps, add_dep moved a list) is unused space, never read.
  using Array = std::vector<int32_t, HugePageAllocator<int32_t>>;
  Array row_tokens, row_pair_begin, row_pairs, dep_index, multicast_gpus;

  // A task's lists (Task documents them). The non-const overloads allow editing in place.
  std::span<const int32_t> tokens(const Task& t) const { return view(row_tokens, t.tokens_at); }
  std::span<const int32_t> pair_begin(const Task& t) const { return view(row_pair_begin, t.pair_begin_at); }
  std::span<const int32_t> pairs(const Task& t) const { return view(row_pairs, t.pairs_at); }
  std::span<const int32_t> deps(const Task& t) const { return view(dep_index, t.deps_at); }
  std::span<const int32_t> multicast(const Task& t) const { return view(multicast_gpus, t.multicast_at); }
  std::span<int32_t> deps(const Task& t) { return view(dep_index, t.deps_at); }
  std::span<int32_t> pairs(const Task& t) { return view(row_pairs, t.pairs_at); }
  // Pairs of row r of a task with pair lists: pairs(t)[pair_begin(t)[r] .. pair_begin(t)[r+1]).
  std::span<const int32_t> row_pairs_of(const Task& t, int64_t r) const {
    const auto pb = pair_begin(t);
    return pairs(t).subspan(size_t(pb[size_t(r)]), size_t(pb[size_t(r) + 1] - pb[size_t(r)]));
  }

  // Appends a task (its ranges as given, usually empty); returns its index.
  int32_t add_task(const Task& t) {
    tasks.push_back(t);
    return int32_t(tasks.size() - 1);
  }
  // Replace task i's lists with copies of the arguments, appended to the flat arrays (the
  // arguments must not view the plan's own arrays). set_rows: pair_begin empty or
  // tokens.size() + 1 entries from 0 (Task's row layout).
  void set_rows(int32_t i, const std::vector<int32_t>& tokens, const std::vector<int32_t>& pair_begin = {},
                const std::vector<int32_t>& pairs = {}) {
    tasks[size_t(i)].tokens_at = append(row_tokens, tokens);
    tasks[size_t(i)].pair_begin_at = append(row_pair_begin, pair_begin);
    tasks[size_t(i)].pairs_at = append(row_pairs, pairs);
  }
  void set_deps(int32_t i, const std::vector<int32_t>& deps) { tasks[size_t(i)].deps_at = append(dep_index, deps); }
  void set_multicast(int32_t i, const std::vector<int32_t>& gpus) {
    tasks[size_t(i)].multicast_at = append(multicast_gpus, gpus);
  }
  // Appends one dependency to task i: in place when its list ends the array, else the list
  // moves to the end first (cost: the list's length).
  void add_dep(int32_t i, int32_t dep) {
    Range& r = tasks[size_t(i)].deps_at;
    if (r.end != int64_t(dep_index.size())) {
      const int64_t begin = int64_t(dep_index.size());
      for (int64_t k = r.begin; k < r.end; ++k) dep_index.push_back(dep_index[size_t(k)]);
      r = {begin, int64_t(dep_index.size())};
    }
    dep_index.push_back(dep);
    ++r.end;
  }

 private:
  static std::span<const int32_t> view(const Array& v, Range r) { return {v.data() + r.begin, size_t(r.size())}; }
  static std::span<int32_t> view(Array& v, Range r) { return {v.data() + r.begin, size_t(r.size())}; }
  static Range append(Array& v, const std::vector<int32_t>& x) {
    const int64_t begin = int64_t(v.size());
    v.insert(v.end(), x.begin(), x.end());
    return {begin, int64_t(v.size())};
  }
};

// Seconds of the shared experts' FFN over `tokens` tokens: the roofline of core/roofline.hpp with
// FFN width shared_experts x ffn (DeepSeek's and Kimi-K2's n_shared_experts x
// moe_intermediate_size); 0 without shared experts.
double shared_expert_time(int64_t tokens, const ModelShape& model, const Topology& topo);

// Appends a broadcast's tasks (phase Weights) to `plan`: owner-direct one multicast Transfer,
// SAMI a pull (point to point) and a multicast per member, and a Barrier (on the owner) that
// completes when all are done; returns the barrier's index. `bytes`: the expert's weights.
// Throws ArgumentError ("multicasts[i]: ...", i = `index`) when the move is malformed: members
// fewer than two, unsorted, repeated, off the owner's node or outside the topology, slots not
// one per member, owner-direct with the owner outside, or a topology that cannot multicast
// (NvlinkModel::Switch with multicast_port_output > 0).
int32_t add_broadcast_tasks(CommPlan& plan, const MulticastMove& move, double bytes, const Topology& topo,
                            size_t index);

// Builds the plan (paper §4.2, Algorithm 1). routing.slot_of_pair must be filled ([T * top_k]),
// each pair's slot holding the pair's expert; weight moves name slots and GPUs of `topo`.
// Compute groups: with overlap one group per (slot, source node), ordered by delivery
// (source nodes n+1, ..., n+N-1, then n's own tokens), which is also Algorithm 1's combine
// order (return groups for destination n+1, ..., n); consecutive source nodes share a group
// while it is below the roofline ridge (bytes_per_elem · peak_flops / (2 · hbm_bw) tokens),
// since a smaller GEMM re-reads the expert's weights for little work (the paper partitions
// computation to overlap communication, §4.2; memory-bound pieces gain nothing from it).
// Without overlap one group per slot. With options.local_first, the own-node rows of the slots
// local_first_slots picks (plan/builder.cpp) form a group of their own, at the own node's rank N.
// Priorities: transfers by phase and round (weights first; dispatch rounds 1..N-1, then
// intra-node; combine rounds 1..N-1, then intra-node; within a round the cyclic lane of lines
// 10 and 20); compute groups by delivery rank (1..N-1, own node N); pre-reductions -1 (their
// return transfer waits on them); final reductions N+1.
// Throws ArgumentError naming the argument when shapes disagree (batch vs placement vs
// topology vs model, a pair routed to a slot of another expert, nic_slack < 0) and "batch: ..."
// for 2^31 or more (token, expert) pairs (the plan's indices are int32).
// `multicasts`: replicas broadcast in the switch (MulticastMove); their member slots wait for
// the broadcast's barrier, and a slot may not be both moved and multicast.
CommPlan build_comm_plan(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                         const Topology& topo, const ModelShape& model, const PlanOptions& options,
                         const std::vector<WeightMove>& weight_moves = {},
                         const std::vector<MulticastMove>& multicasts = {});

namespace plan_detail {
struct Arrays;
}

// Builds plans one after another into plans it is given, keeping the builder's own arrays (at 32 x
// 4 GPUs and 64 MiB per GPU about a GB) from one build to the next: a serving system plans every
// layer, and memory it already holds costs no page faults. Each build gives the plan
// build_comm_plan gives for the same arguments (bit for bit), written into `plan`, whose previous
// contents are dropped and whose arrays' capacity is reused. Throws what build_comm_plan throws;
// `plan` is then left valid but unspecified. Not thread-safe: one builder per thread.
class CommPlanBuilder {
 public:
  CommPlanBuilder();
  ~CommPlanBuilder();
  CommPlanBuilder(CommPlanBuilder&&) noexcept;
  CommPlanBuilder& operator=(CommPlanBuilder&&) noexcept;
  void build(CommPlan& plan, const RoutingBatch& batch, const Placement& placement, const Routing& routing,
             const Topology& topo, const ModelShape& model, const PlanOptions& options,
             const std::vector<WeightMove>& weight_moves = {}, const std::vector<MulticastMove>& multicasts = {});

 private:
  std::unique_ptr<plan_detail::Arrays> memory_;
};

// Algorithm 1's round order (lines 3 and 17) as dependencies, for plans whose inter-node
// transfers carry rounds (Task::round >= 1): per phase (dispatch, combine) and sending GPU,
// every RDMA put (hop Put) of a round also depends on whatever that GPU's puts of the previous
// round it has depend on, so it is issued no earlier than they are (issue order; consecutive
// rounds may then share the NIC); per phase and NVLink pair, every relay (hop Relay) waits for
// the end of the previous round's relays. Invariants and proof: plan/rounds.cpp. build_comm_plan applies it when
// options.round_order; baselines that edit a plan's puts apply it after their edit.
// dispatch / combine: which phases keep the order (both by default).
void keep_round_order(CommPlan& plan, bool dispatch = true, bool combine = true);

// Algorithm 1's phase order on each NIC (dispatch rounds, then combine rounds; lines 3, 17):
// every inter-node (Link::NIC) combine transfer from GPU g to GPU h also depends on every
// inter-node dispatch transfer g sends and every one h receives (plan/nic_order.cpp says why the
// receiving end too). Why: links share bandwidth among concurrent flows
// (exec/sim.hpp, LinkSharing::Fair), so priorities alone do not keep the order, and a combine
// wave sent early takes a NIC from the dispatch that other GPUs' GEMMs still wait for (Qwen3-30B
// 4 x 4 A100 at 64 MB, a wave per GEMM up to 64 without this: node 1's dispatch ended at
// 11.8-12.8 ms instead of 8.0 and the layer took 20.3 ms instead of 17.0). A NIC's dispatch
// puts are ready early (after planning and their relays), so this delays a combine put only
// while its own NIC still dispatches.
// No cycle: dispatch transfers never depend on combine tasks. build_comm_plan applies it when
// options.combine_after_dispatch, after keep_round_order.
void combine_after_dispatch(CommPlan& plan);

}  // namespace zepp
