#include "plan/builder.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.hpp"
#include "core/roofline.hpp"
#include "plan/split.hpp"

namespace zepp::plan_detail {

static std::string str(int64_t v) { return std::to_string(v); }

Builder::Builder(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                 const Topology& topo, const ModelShape& model, const PlanOptions& options, CommPlan&& plan,
                 Arrays&& memory)
    : Arrays(std::move(memory)), batch_(batch), placement_(placement), routing_(routing), topo_(topo), opt_(options),
      plan_(std::move(plan)) {
  require(topo.nodes > 0 && topo.gpus_per_node > 0 && topo.nodes < (1 << 11) && topo.num_gpus() < (1 << 24), "topo",
          "nodes and gpus_per_node must be positive, below 2^11 nodes and 2^24 GPUs");
  require(options.nic_slack >= 0 && std::isfinite(options.nic_slack), "options.nic_slack", "must be finite and >= 0");
  require(options.combine_waves >= 1 && options.combine_waves <= 64, "options.combine_waves",
          "must be in [1, 64], got " + std::to_string(options.combine_waves));
  require(options.dispatch_chunks >= 1 && options.dispatch_chunks <= 64, "options.dispatch_chunks",
          "must be in [1, 64], got " + std::to_string(options.dispatch_chunks));
  placement.validate("placement");
  require(placement.num_gpus == topo.num_gpus(), "placement",
          "has " + str(placement.num_gpus) + " GPUs, topology has " + str(topo.num_gpus()));
  require(batch.num_gpus == topo.num_gpus(), "batch",
          "has " + str(batch.num_gpus) + " GPUs, topology has " + str(topo.num_gpus()));
  require(batch.num_experts == placement.num_experts && batch.num_experts == model.num_experts, "batch",
          "has " + str(batch.num_experts) + " experts, placement " + str(placement.num_experts) + ", model " +
              str(model.num_experts));
  require(batch.top_k == model.top_k && batch.top_k > 0, "batch",
          "top_k " + str(batch.top_k) + " differs from the model's " + str(model.top_k));
  require(model.hidden > 0 && model.ffn > 0 && model.bytes_per_elem > 0, "model", "hidden, ffn, bytes_per_elem must be positive");
  require(batch.token_offset.size() == size_t(batch.num_gpus) + 1 && batch.token_offset.front() == 0, "batch",
          "token_offset needs num_gpus + 1 entries starting at 0");
  for (int i = 0; i < batch.num_gpus; ++i)
    require(batch.token_offset[i] <= batch.token_offset[i + 1], "batch", "token_offset must not decrease");
  const int64_t T = batch.num_tokens(), P = T * batch.top_k;
  require(batch.expert_ids.size() == size_t(P) && batch.gate_weights.size() == size_t(P), "batch",
          "expert_ids and gate_weights need T * top_k = " + str(P) + " entries");
  require(routing.slot_of_pair.size() == size_t(P), "routing",
          "slot_of_pair has " + str(routing.slot_of_pair.size()) + " entries, expected T * top_k = " + str(P));

  N_ = topo.nodes;
  G_ = topo.gpus_per_node;
  K_ = batch.top_k;
  node_of_gpu_.resize(topo.num_gpus());
  local_of_gpu_.resize(topo.num_gpus());
  for (int g = 0; g < topo.num_gpus(); ++g) node_of_gpu_[g] = g / G_, local_of_gpu_[g] = g % G_;
  // A reused plan and reused arrays start empty (their memory stays).
  plan_.tasks.clear();
  for (auto* a : {&plan_.row_tokens, &plan_.row_pair_begin, &plan_.row_pairs, &plan_.dep_index, &plan_.multicast_gpus})
    a->clear();
  plan_.shared_expert_s = 0;
  for (Staged& s : staged_) s.tokens.clear(), s.pair_begin.clear(), s.pairs.clear(), s.deps.clear();
  final_of_task_.clear();
  gather_used_.clear();
  flow_used_.clear();
  plan_.num_gpus = topo.num_gpus();
  plan_.gpus_per_node = G_;
  plan_.nodes = N_;
  plan_.top_k = K_;
  plan_.token_bytes = model.token_bytes();
  plan_.model = model;
  plan_.options = options;

  src_gpu_of_token_.resize(T);
  for (int i = 0; i < batch.num_gpus; ++i)
    std::fill(src_gpu_of_token_.begin() + batch.token_offset[i], src_gpu_of_token_.begin() + batch.token_offset[i + 1], i);
  gpu_of_pair_.resize(P);
  for (int64_t p = 0; p < P; ++p) {
    const int32_t slot = routing.slot_of_pair[p];
    // Messages built only on failure: this loop runs over millions of pairs.
    if (slot < 0 || slot >= placement.num_slots())
      throw ArgumentError("routing: pair " + str(p) + " goes to slot " + str(slot) + ", expected [0, " +
                          str(placement.num_slots()) + ")");
    if (placement.phy2log[slot] != batch.expert_ids[p])
      throw ArgumentError("routing: pair " + str(p) + " (expert " + str(batch.expert_ids[p]) + ") goes to slot " +
                          str(slot) + " holding expert " + str(placement.phy2log[slot]));
    gpu_of_pair_[p] = placement.gpu_of_slot(slot);
  }
  require(P < (int64_t(1) << 31), "batch",
          "has " + str(P) + " (token, expert) pairs, at most 2^31 - 1 are supported (the plan's rows are int32)");
  remote_pairs_.assign(size_t(N_) * N_, 0);
  for (int64_t t = 0; t < T; ++t) {
    const int n = node_of(src_gpu_of_token_[t]);
    for (int64_t p = t * K_; p < (t + 1) * K_; ++p)
      if (const int d = node_of(gpu_of_pair_[p]); d != n) ++remote_pairs_[size_t(n) * N_ + d];
  }
  deliver_.assign(P, -1);
  if (options.merge && options.pre_reduce) receiver_.assign(P, -1);  // only combine's gathers need it
  else receiver_.clear();
  compute_of_pair_.assign(P, -1);
  weights_of_slot_.assign(placement.num_slots(), -1);
  const size_t W = size_t(options.combine_waves);
  direct_.assign(2 * size_t(plan_.num_gpus) * G_ * W, -1);
  gather_.assign(size_t(plan_.num_gpus) * G_ * W, -1);
  W_ = std::max(options.combine_waves, options.dispatch_chunks);
  flow_.assign(3 * size_t(G_) * G_ * size_t(W_), -1);
  flow_rows_.assign(flow_.size(), 0);
  flow_pairs_.assign(flow_.size(), 0);
  final_of_own_.assign(plan_.num_gpus, -1);
  split_of_flow_.resize(size_t(N_) * N_ * G_ * G_);
  split_known_.assign(size_t(N_) * N_, 0);
}

int32_t Builder::add_task(const Task& t) { return plan_.add_task(t); }

int64_t Builder::transfer_priority(Phase phase, int round, int lane) const {
  // Weights first; dispatch rounds 1..N-1, then intra-node; combine rounds 1..N-1, then
  // intra-node. `lane` orders transfers of one round (Algorithm 1's cyclic fan-out).
  if (phase == Phase::Weights) return -1;
  const int64_t base = phase == Phase::Dispatch ? 0 : N_ + 1;
  return (base + (round == 0 ? N_ : round)) * G_ + lane;
}

int32_t Builder::transfer(int src, int dst, Phase phase, int round, Hop hop, int64_t priority, int wave) {
  // The tables and why each key has one entry: builder.hpp (direct_, gather_).
  const size_t W = size_t(opt_.combine_waves), cell = (size_t(local_of(src)) * G_ + local_of(dst)) * W + wave;
  int32_t* id = nullptr;
  if (hop == Hop::Direct) {
    id = &direct_[(size_t(phase == Phase::Combine) * plan_.num_gpus + size_t(node_of(src)) * G_) * G_ * W + cell];
  } else if (hop == Hop::Gather) {
    id = &gather_[size_t(node_of(src)) * G_ * G_ * W + cell];
    if (*id < 0) gather_used_.push_back(size_t(id - gather_.data()));
  } else {
    throw std::logic_error("transfer: route_flow coalesces relays, puts and forwards");
  }
  if (*id < 0) *id = new_transfer(src, dst, phase, round, hop, priority);
  return *id;
}

int32_t Builder::new_transfer(int src, int dst, Phase phase, int round, Hop hop, int64_t priority) {
  Task t;
  t.kind = TaskKind::Transfer;
  t.phase = phase;
  t.gpu = src;
  t.dst_gpu = dst;
  t.link = node_of(src) == node_of(dst) ? Link::NVLink : Link::NIC;
  t.hop = hop;
  t.round = round;
  t.priority = priority;
  return add_task(std::move(t));
}

void Builder::add_multicasts(const std::vector<MulticastMove>& moves) {
  for (size_t m = 0; m < moves.size(); ++m) {
    const MulticastMove& mv = moves[m];
    const std::string name = "multicasts[" + str(int64_t(m)) + "]";
    const int32_t ready = add_broadcast_tasks(plan_, mv, plan_.model.expert_weight_bytes(), topo_, m);
    for (size_t i = 0; i < mv.slots.size(); ++i) {
      const int32_t slot = mv.slots[i];
      require(slot >= 0 && slot < placement_.num_slots() && placement_.gpu_of_slot(slot) == mv.members[i], name,
              "slot " + str(slot) + " is not on member " + str(mv.members[i]));
      require(placement_.phy2log[slot] == mv.expert, name,
              "slot " + str(slot) + " holds expert " + str(placement_.phy2log[slot]) + ", not " + str(mv.expert));
      require(weights_of_slot_[slot] < 0, name, "slot " + str(slot) + " receives weights twice");
      weights_of_slot_[slot] = ready;
    }
  }
}

void Builder::add_shared_experts() {
  const double token_bytes = plan_.token_bytes;
  std::vector<int32_t> shared(plan_.num_gpus);
  const size_t before = plan_.tasks.size();
  for (int g = 0; g < plan_.num_gpus; ++g) {
    Task t;
    t.kind = TaskKind::SharedExpert;
    t.phase = Phase::Compute;
    t.gpu = g;
    const int64_t tokens = batch_.token_offset[g + 1] - batch_.token_offset[g];
    t.bytes = double(tokens) * token_bytes;
    t.priority = std::numeric_limits<int64_t>::min();  // first on its stream
    plan_.shared_expert_s = std::max(plan_.shared_expert_s, shared_expert_time(tokens, plan_.model, topo_));
    shared[g] = add_task(t);
  }
  for (size_t i = 0; i < before; ++i) {
    const Task& t = plan_.tasks[i];
    if ((t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch) || t.kind == TaskKind::Compute)
      add_dep(int32_t(i), shared[t.gpu]);
  }
}

void Builder::add_weight_moves(const std::vector<WeightMove>& moves) {
  for (size_t m = 0; m < moves.size(); ++m) {
    const WeightMove& w = moves[m];
    const std::string name = "weight_moves[" + str(int64_t(m)) + "]";
    require(w.slot >= 0 && w.slot < placement_.num_slots(), name, "slot " + str(w.slot) + " out of range");
    require(w.src_gpu >= 0 && w.src_gpu < plan_.num_gpus && w.src_gpu != placement_.gpu_of_slot(w.slot), name,
            "src_gpu " + str(w.src_gpu) + " must be another GPU of the topology");
    require(weights_of_slot_[w.slot] < 0, name, "slot " + str(w.slot) + " moved twice");
    // One transfer per slot (not coalesced): each slot's compute waits only for its own weights.
    const int32_t id = new_transfer(w.src_gpu, placement_.gpu_of_slot(w.slot), Phase::Weights, 0, Hop::Direct,
                                    transfer_priority(Phase::Weights, 0, 0));
    Task& t = plan_.tasks[id];
    t.slot = w.slot;
    t.expert = placement_.phy2log[w.slot];
    t.bytes = plan_.model.expert_weight_bytes();
    weights_of_slot_[w.slot] = id;
  }
}

// Compute starts when rows are there (issue 24). Before the first inter-node rows reach a node,
// its GPUs hold only their node's rows; with those merged into a slot's remote group (delivery
// order puts the own node last, below the ridge it joins the group before), a GPU sits idle until
// dispatch ends (Kimi-K2 4 x 4, 4 MB: 2,379 us without this rule, 2,097 us with it). Rule: the
// GPU's idle window lasts until the first inter-node rows it can compute arrive, estimated as
//   A_d = nic_latency + f_d · rows into node d from other nodes · token_bytes / (G · nic_bw),
// the node's inbound dispatch over its G NICs up to the end of the first dispatch chunk, f_d
// being the largest share of an inbound flow's rows in that flow's first chunk (all flows into d
// share its NICs and progress together; a GPU's first remote group waits for the first chunk of
// every flow that carries its rows). The chunks are those dispatch_chunks.cpp cuts, computed by
// its rule on the groups without local-first (split, chunk count, slot order); f_d = 1 without
// chunks. (With f_d = 1 under chunked dispatch the window outlasted the GPU's idle: Qwen3-235B
// 4 nodes 4 MB, each GPU already held ~190 us of own-node slots when remote rows came at
// ~210-270 us, yet split slots to fill ~420 us; the extra weight reads pushed its remote groups,
// and so the inter-node combine, later: 1,025.2 us against 961.5 without local-first.) It is
// filled, slot by slot, with the own-node rows computed as a group of their own. Splitting
// slot s costs a second GEMM launch and, below the ridge, a second weight read; what it takes off
// the time after arrival is gain_s = T(all rows) − T(remote rows) (T the roofline time), so slots
// are taken by gain descending (ties: lower slot), only with gain > 0, while the window is not yet
// full: the work the GPU holds in it anyway — slots with only own-node rows, and own-node rows
// that delivery order already makes a group of their own (the remote group before them and they
// are both at the ridge) — plus Σ T(own rows) of the slots taken is below A_d (the last group may
// outlast the window). A split group keeps the own node's delivery rank (N, last): the compute
// stream is work-conserving, so it still runs while nothing else is there, and once remote rows
// arrive they go first, as their outputs feed the inter-node combine. (Priority 0, ahead of
// arrived remote rows, delayed those outputs: Kimi-K2 4 nodes 16 MB 4,535 -> 4,747 us; with rank N
// 4,571.) So a split never makes a memory-bound GEMM pay a second weight read for nothing (gain 0
// when both parts are below the ridge), and the merging up to the ridge is kept where the GPU has
// other work.
std::vector<char> Builder::local_first_slots(const std::vector<int64_t>& count) {
  const int S = placement_.num_slots();
  std::vector<char> chosen(S, 0);
  if (N_ == 1) return chosen;
  // Rows of each flow m -> d, read off the dispatch flows (collect_dispatch): with merge a token
  // once per node, except toward nodes 64 and beyond, counted per pair (an upper bound: the rule
  // once tracked nodes in a 64-bit set, and plans are kept as they were).
  const auto per_pair = [&](int d) { return opt_.merge && d >= 64; };
  std::vector<int64_t> flow_rows(size_t(N_) * N_, 0);
  for (int m = 0; m < N_; ++m)
    for (int d = 0; d < N_; ++d) {
      const Flow& f = flows_[size_t(m) * N_ + d];
      flow_rows[size_t(m) * N_ + d] = int64_t(per_pair(d) ? f.pairs.size() : f.rows.size());
    }
  // The share of each flow's rows in its first dispatch chunk (1 without chunks), by the chunk
  // rule of dispatch_chunks.cpp on the groups without local-first: first[slot * N + m] marks the
  // slots whose pairs from node m travel in the first chunk of flow m -> node of slot, and a
  // flow's row is in its first chunk when one of its pairs is.
  std::vector<char> first(size_t(S) * N_);
  std::vector<int64_t> first_rows(size_t(N_) * N_, 0);
  std::vector<int64_t> volumes(G_);
  for (int m = 0; m < N_; ++m)
    for (int d = 0; d < N_; ++d) {
      if (flow_rows[size_t(m) * N_ + d] == 0) continue;
      const Flow& f = flows_[size_t(m) * N_ + d];
      const int64_t* x = nullptr;
      SplitMatrix own;
      if (per_pair(d)) {  // its own volumes (pairs per source GPU), so its own split
        std::fill(volumes.begin(), volumes.end(), 0);
        for (size_t r = 0; r < f.rows.size(); ++r) volumes[local_of(f.rows[r].src_gpu)] += f.pair_end(r) - f.rows[r].pair_begin;
        own = plan_split(volumes, opt_, topo_, plan_.token_bytes);
        x = own.data();
      } else {
        x = dispatch_split(m, d);
      }
      int64_t busiest = 0;
      for (int j = 0; j < G_; ++j) {
        int64_t carried = 0;
        for (int i = 0; i < G_; ++i) carried += x[size_t(i) * G_ + j];
        busiest = std::max(busiest, carried);
      }
      const int C = dispatch_chunk_count(m, d, busiest);
      if (C <= 1) {
        first_rows[size_t(m) * N_ + d] = flow_rows[size_t(m) * N_ + d];
        continue;
      }
      assign_slot_chunks(m, d, C);
      for (int s = d * G_ * placement_.slots_per_gpu; s < (d + 1) * G_ * placement_.slots_per_gpu; ++s)
        if (count[size_t(s) * N_ + m] > 0) first[size_t(s) * N_ + m] = chunk_of_slot_[size_t(s)] == 0;
      int64_t& in_first = first_rows[size_t(m) * N_ + d];
      for (size_t r = 0; r < f.rows.size(); ++r) {
        int64_t hits = 0;
        for (uint32_t i = f.rows[r].pair_begin; i < f.pair_end(r); ++i)
          hits += first[size_t(routing_.slot_of_pair[size_t(f.pairs[i])]) * N_ + m];
        in_first += per_pair(d) ? hits : hits > 0;
      }
    }
  std::vector<int64_t> inbound(N_, 0);  // rows into each node from other nodes
  std::vector<double> first_share(N_, 0.0);  // the largest first-chunk share of a flow into it
  for (int m = 0; m < N_; ++m)
    for (int d = 0; d < N_; ++d)
      if (const int64_t rows = flow_rows[size_t(m) * N_ + d]; rows > 0) {
        inbound[d] += rows;
        first_share[d] = std::max(first_share[d], double(first_rows[size_t(m) * N_ + d]) / double(rows));
      }
  const auto T = [&](int64_t rows) { return expert_compute_time(rows, plan_.model, topo_); };
  const double ridge = plan_.model.bytes_per_elem * topo_.compute.peak_flops / (2.0 * topo_.compute.hbm_bw);
  struct Candidate {
    double gain, cost;
    int slot;
  };
  const int spg = placement_.slots_per_gpu;
  for (int g = 0; g < plan_.num_gpus; ++g) {
    const int n = node_of(g);
    const double window = topo_.nic_latency + first_share[n] * double(inbound[n]) * plan_.token_bytes / (G_ * topo_.nic_bw);
    double used = 0;
    std::vector<Candidate> cand;
    for (int slot = g * spg; slot < (g + 1) * spg; ++slot) {
      int64_t all = 0;
      for (int m = 0; m < N_; ++m) all += count[size_t(slot) * N_ + m];
      const int64_t own = count[size_t(slot) * N_ + n];
      if (own == 0) continue;
      double open = 0;  // rows of the remote group still open when the own rows come (add_compute_groups)
      for (int r = 1; r < N_; ++r) {
        const int64_t c = count[size_t(slot) * N_ + (n + r) % N_];
        if (c == 0) continue;
        if (open >= ridge) open = 0;
        open += double(c);
      }
      if (own == all || (open >= ridge && double(own) >= ridge)) used += T(own);
      else cand.push_back({T(all) - T(all - own), T(own), slot});
    }
    std::stable_sort(cand.begin(), cand.end(), [](const Candidate& a, const Candidate& b) { return a.gain > b.gain; });
    for (const Candidate& c : cand) {
      if (c.gain <= 1e-12 * std::max(c.cost, 1e-9) || used >= window) continue;
      used += c.cost;
      chosen[c.slot] = 1;
    }
  }
  return chosen;
}

void Builder::plan_compute_groups() {
  // With overlap a slot's pairs are split by source node, in delivery order (source nodes
  // n+1, ..., n+N-1 arrive in rounds 1..N-1, own node last), which is also the combine return
  // order. A group smaller than the roofline ridge (tokens at which FLOP time equals the weight
  // read) would re-read the expert's weights for little work, so consecutive source nodes are
  // merged until a group reaches the ridge; a short tail joins the group before it. Without
  // overlap one group per slot. Pairs are visited in ascending order, so lists stay sorted.
  const int S = placement_.num_slots();
  std::vector<int64_t>& count = slot_count_;
  count.assign(size_t(S) * N_, 0);  // [slot][source node] pairs
  const int64_t T = batch_.num_tokens();
  for (int64_t t = 0; t < T; ++t) {
    const int n = node_of(src_gpu_of_token_[t]);
    for (int64_t p = t * K_; p < (t + 1) * K_; ++p) ++count[size_t(routing_.slot_of_pair[p]) * N_ + n];
  }
  if (!opt_.overlap) {  // one group per slot
    group_of_.assign(size_t(S) * N_, 0);
    rank_of_group_.assign(size_t(S) * N_, 0);
    return;
  }
  // Local-first's rule reads the dispatch chunks, which follow the groups without it.
  make_compute_groups(std::vector<char>(S, 0));
  if (!opt_.local_first) return;
  const std::vector<char> local_first = local_first_slots(count);
  if (std::find(local_first.begin(), local_first.end(), 1) != local_first.end()) make_compute_groups(local_first);
}

void Builder::make_compute_groups(const std::vector<char>& local_first) {
  const int S = placement_.num_slots();
  const double ridge = plan_.model.bytes_per_elem * topo_.compute.peak_flops / (2.0 * topo_.compute.hbm_bw);
  const std::vector<int64_t>& count = slot_count_;
  std::vector<int32_t>& group_of = group_of_;
  group_of.assign(size_t(S) * N_, 0);  // [slot][source node] -> group number
  std::vector<int32_t>& rank_of_group = rank_of_group_;
  rank_of_group.assign(size_t(S) * N_, 0);  // [slot][group] -> delivery rank of its last node
  for (int slot = 0; slot < S; ++slot) {
    const int n = node_of(placement_.gpu_of_slot(slot));
    const int last = local_first[slot] ? N_ - 1 : N_;  // local-first: own node apart
    int group = 0;
    double acc = 0;
    for (int r = 1; r <= last; ++r) {  // delivery ranks 1..N-1, then N = own node
      const int src_node = (n + r) % N_;
      const int64_t c = count[size_t(slot) * N_ + src_node];
      if (c == 0) continue;
      if (acc >= ridge) ++group, acc = 0;
      group_of[size_t(slot) * N_ + src_node] = group;
      rank_of_group[size_t(slot) * N_ + group] = r;
      acc += double(c);
    }
    // A final group below the ridge folds into the one before it.
    if (group > 0 && acc < ridge)
      for (int r = 1; r <= last; ++r) {
        int32_t& g = group_of[size_t(slot) * N_ + (n + r) % N_];
        if (g == group) g = group - 1, rank_of_group[size_t(slot) * N_ + group - 1] = r;
      }
    // Its own group at the own node's rank N; remote ones use groups 0..N-2, so N-1 is free.
    if (local_first[slot]) group_of[size_t(slot) * N_ + n] = N_ - 1, rank_of_group[size_t(slot) * N_ + N_ - 1] = N_;
  }
}

void Builder::add_compute_groups() {
  const int S = placement_.num_slots();
  const std::vector<int64_t>& count = slot_count_;
  const std::vector<int32_t>& group_of = group_of_;
  const std::vector<int32_t>& rank_of_group = rank_of_group_;
  std::vector<int64_t> group_pairs(size_t(S) * N_, 0);  // [slot][group] -> pairs
  for (size_t i = 0; i < count.size(); ++i) group_pairs[i / N_ * N_ + group_of[i]] += count[i];
  std::vector<int32_t> task_of(size_t(S) * N_, -1);  // [slot][group] -> Compute task
  std::vector<int64_t> fill(size_t(S) * N_, 0);      // [slot][group] -> its next pair's place in row_pairs
  plan_.row_pairs.reserve(plan_.row_pairs.size() + gpu_of_pair_.size());
  for (int64_t p = 0, t = 0, next = K_; p < int64_t(gpu_of_pair_.size()); ++p) {
    if (p == next) ++t, next += K_;  // p's token, without a division per pair
    const int32_t slot = routing_.slot_of_pair[p];
    const int src_node = node_of(src_gpu_of_token_[t]);
    const int32_t group = group_of[size_t(slot) * N_ + src_node];
    int32_t& g = task_of[size_t(slot) * N_ + group];
    if (g < 0) {
      Task t;
      t.kind = TaskKind::Compute;
      t.phase = Phase::Compute;
      t.gpu = gpu_of_pair_[p];
      t.slot = slot;
      t.expert = placement_.phy2log[slot];
      t.priority = opt_.overlap ? rank_of_group[size_t(slot) * N_ + group] : 0;
      const int64_t begin = int64_t(plan_.row_pairs.size());
      t.pairs_at = {begin, begin + group_pairs[size_t(slot) * N_ + group]};  // its pairs, known in advance
      plan_.row_pairs.resize(size_t(t.pairs_at.end));
      fill[size_t(slot) * N_ + group] = begin;
      g = add_task(t);
      add_dep(g, weights_of_slot_[slot]);
    }
    plan_.row_pairs[size_t(fill[size_t(slot) * N_ + group]++)] = int32_t(p);
    add_dep(g, deliver_[p]);
    compute_of_pair_[p] = g;
  }
}

void Builder::estimate_compute_finish() {
  est_done_.assign(plan_.tasks.size(), 0.0);
  node_span_.assign(N_, 0.0);
  node_waves_.assign(N_, 1);
  std::vector<std::vector<int32_t>> on_gpu(plan_.num_gpus);
  for (size_t i = 0; i < plan_.tasks.size(); ++i)
    if (plan_.tasks[i].kind == TaskKind::Compute) on_gpu[plan_.tasks[i].gpu].push_back(int32_t(i));
  for (int g = 0; g < plan_.num_gpus; ++g) {
    auto& ids = on_gpu[g];
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return plan_.tasks[a].priority < plan_.tasks[b].priority; });
    double t = 0;
    for (int32_t id : ids) est_done_[id] = t += expert_compute_time(plan_.tasks[id].rows(), plan_.model, topo_);
    node_span_[node_of(g)] = std::max(node_span_[node_of(g)], t);
    // A wave per GEMM of the node's busiest stream: more would leave waves empty on average.
    node_waves_[node_of(g)] = std::clamp(int(ids.size()), node_waves_[node_of(g)], opt_.combine_waves);
  }
  // Each compute task's wave (combine.cpp states the rule), once: combine asks per row.
  wave_of_task_.assign(plan_.tasks.size(), 0);
  for (int g = 0; g < plan_.num_gpus; ++g) {
    const int node = node_of(g), W = node_waves_[node];
    if (node_span_[node] <= 0) continue;  // all its GEMMs end at 0: wave 0
    for (int32_t id : on_gpu[g]) {
      // Wave w holds completions in (w, w + 1] * span / W: a GEMM ending at span / W is in wave 0.
      const double x = double(W) * est_done_[id] / node_span_[node];
      wave_of_task_[id] = uint8_t(std::clamp(int(std::ceil(x - 1e-9)) - 1, 0, W - 1));
    }
  }
}

void Builder::add_barriers() {
  // overlap = false: per GPU, compute starts after every dispatch transfer into or out of it;
  // combine leaves after all its compute; final reductions wait for all combine transfers.
  const int n = plan_.num_gpus;
  std::vector<int32_t> dispatched(n), computed(n), combined(n);
  for (int g = 0; g < n; ++g) {
    for (auto* b : {&dispatched, &computed, &combined}) {
      Task t;
      t.kind = TaskKind::Barrier;
      t.gpu = g;
      (*b)[g] = add_task(t);
    }
  }
  const size_t real = plan_.tasks.size() - size_t(3 * n);
  for (size_t i = 0; i < real; ++i) {
    const Task& t = plan_.tasks[i];
    const auto id = int32_t(i);
    if (t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch) {
      add_dep(dispatched[t.gpu], id);
      add_dep(dispatched[t.dst_gpu], id);
    } else if (t.kind == TaskKind::Compute) {
      add_dep(id, dispatched[t.gpu]);
      add_dep(computed[t.gpu], id);
    } else if (t.kind == TaskKind::Transfer && t.phase == Phase::Combine) {
      add_dep(id, computed[t.gpu]);
      add_dep(combined[t.gpu], id);
      add_dep(combined[t.dst_gpu], id);
    } else if (t.kind == TaskKind::PreReduce) {
      add_dep(id, computed[t.gpu]);
    } else if (t.kind == TaskKind::FinalReduce) {
      add_dep(id, combined[t.gpu]);
      add_dep(id, computed[t.gpu]);
    }
  }
}

void Builder::finalize_rows() {
  // Each task's staged rows, task after task, into the flat arrays (sized once).
  size_t tok = plan_.row_tokens.size(), pb = plan_.row_pair_begin.size(), pr = plan_.row_pairs.size();
  for (const Staged& s : staged_) tok += s.tokens.size(), pb += s.pair_begin.size(), pr += s.pairs.size();
  plan_.row_tokens.reserve(tok);
  plan_.row_pair_begin.reserve(pb);
  plan_.row_pairs.reserve(pr);
  auto move_in = [](CommPlan::Array& to, std::vector<int32_t>& from) {
    const auto begin = int64_t(to.size());
    to.insert(to.end(), from.begin(), from.end());
    from.clear();  // its memory serves the next build
    return Range{begin, int64_t(to.size())};
  };
  for (size_t i = 0; i < staged_.size(); ++i) {
    Staged& s = staged_[i];
    if (s.tokens.empty()) continue;  // compute tasks: pairs placed at creation
    Task& t = plan_.tasks[i];
    // One addition per row, in row order: the same sum, bit for bit, as adding each row's bytes
    // as it came (without touching the task once per row).
    if (t.kind == TaskKind::Transfer || t.kind == TaskKind::FinalReduce)
      for (size_t r = 0; r < s.tokens.size(); ++r) t.bytes += plan_.token_bytes;
    t.tokens_at = move_in(plan_.row_tokens, s.tokens);
    t.pair_begin_at = move_in(plan_.row_pair_begin, s.pair_begin);
    t.pairs_at = move_in(plan_.row_pairs, s.pairs);
  }
}

void Builder::finalize_deps() {
  // Each task's dependencies: those already in the plan (broadcasts) and the staged ones,
  // sorted and deduplicated, in a new dep_index.
  size_t total = plan_.dep_index.size();
  for (const Staged& s : staged_) total += s.deps.size();
  CommPlan::Array& out = spare_deps_;
  out.clear();
  out.reserve(total);
  for (size_t i = 0; i < plan_.tasks.size(); ++i) {
    Task& t = plan_.tasks[i];
    const auto first = ptrdiff_t(out.size());
    const auto own = plan_.deps(t);
    out.insert(out.end(), own.begin(), own.end());
    if (i < staged_.size()) {
      out.insert(out.end(), staged_[i].deps.begin(), staged_[i].deps.end());
      staged_[i].deps.clear();
    }
    std::sort(out.begin() + first, out.end());
    out.erase(std::unique(out.begin() + first, out.end()), out.end());
    t.deps_at = {first, int64_t(out.size())};
  }
  std::swap(plan_.dep_index, out);
}

CommPlan Builder::build(const std::vector<WeightMove>& weight_moves, const std::vector<MulticastMove>& multicasts,
                        Arrays& memory) {
  add_weight_moves(weight_moves);
  add_multicasts(multicasts);
  collect_dispatch();
  plan_compute_groups();
  route_dispatch();
  add_compute_groups();
  if (opt_.combine_waves > 1) estimate_compute_finish();
  add_combine();
  if (!opt_.overlap) add_barriers();
  finalize_rows();
  // The shared experts' dependencies go in before the round order's (which then carries them
  // along from round to round): the same sets as the other way round, as the round order
  // copies dependencies between puts of one sending GPU, and every dispatch transfer of a GPU
  // waits for the same SharedExpert task.
  if (opt_.shared_expert_window && plan_.model.shared_experts > 0) add_shared_experts();
  finalize_deps();
  if (opt_.round_order) keep_round_order(plan_, true, opt_.round_order_combine);
  if (opt_.combine_after_dispatch) combine_after_dispatch(plan_);
  memory = std::move(static_cast<Arrays&>(*this));
  return std::move(plan_);
}

}  // namespace zepp::plan_detail
