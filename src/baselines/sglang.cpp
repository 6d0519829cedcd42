// The SGLang baseline of the paper's §6.4 (docs/baselines/sglang.md): SGLang's expert-parallel
// MoE under data-parallel attention, "fused all-gather, expert computation, and reduce-scatter
// sequentially without overlap". Every GPU gathers the whole batch (dense: every token reaches
// every GPU, whether or not one of its experts is there), computes its own experts over the
// tokens that chose them, and a reduce-scatter returns each GPU its own tokens' outputs summed
// over all GPUs (dense: one row per token from every GPU).
//
// Collectives as transfers, hierarchical (NVLink inside a node, one copy per token per node on
// the NICs), the least inter-node traffic an all-gather / reduce-scatter can have:
//  - all-gather: source GPU s sends its T_s rows over NVLink to each other GPU of its node, and
//    for each other node m puts them once to the peer GPU m·G + local(s), which forwards them
//    over NVLink to the other G-1 GPUs of m.
//  - reduce-scatter (reverse): for destination s and other node m, every GPU of m but the peer
//    sends its partial rows for s's T_s tokens to the peer over NVLink, the peer sums the G
//    partials (PreReduce) and puts one row per token to s; the GPUs of s's own node send their
//    partial rows to s over NVLink; s sums what arrives (FinalReduce).
// Bytes, with P = N·G GPUs and R = sum_s T_s rows of token_bytes each:
//    inter-node = 2 · (N - 1) · R · token_bytes,  NVLink = 2 · N · (G - 1) · R · token_bytes,
// i.e. every GPU receives (P - 1) · T_s-sized blocks in the all-gather and sends as many in the
// reduce-scatter (tests/baselines/sglang_test.cpp checks these against the plan).
// Sequential: a global barrier after the all-gather and another after expert computation (the
// collectives complete before the next step starts); one GEMM per expert.
#include <algorithm>
#include <functional>

#include "baselines/baselines.hpp"
#include "core/error.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"

namespace zepp {
namespace baselines {
namespace {

struct Builder {
  CommPlan& plan;
  int32_t add(const Task& t, const std::vector<int32_t>& deps) {
    const int32_t id = plan.add_task(t);
    plan.set_deps(id, deps);
    return id;
  }
  int32_t transfer(Phase phase, int src, int dst, Hop hop, int round, int32_t dep) {
    Task t;
    t.kind = TaskKind::Transfer;
    t.phase = phase;
    t.gpu = src;
    t.dst_gpu = dst;
    t.link = src / plan.gpus_per_node == dst / plan.gpus_per_node ? Link::NVLink : Link::NIC;
    t.hop = hop;
    t.round = round;
    t.priority = round;
    return add(t, dep >= 0 ? std::vector<int32_t>{dep} : std::vector<int32_t>{});
  }
  int32_t barrier(const std::vector<int32_t>& deps) {
    Task t;
    t.kind = TaskKind::Barrier;
    t.gpu = 0;  // global: everyone waits for it, anchored on GPU 0 (executors take no time for it)
    return add(t, deps);
  }
  // Sets the task's rows to tokens [first, last) (first < last); with `pairs_on` each row
  // carries the token's pairs for which pairs_on(pair) holds (possibly none: a zero row of the
  // dense collective).
  template <class F>
  void rows(int32_t task, int64_t first, int64_t last, F pairs_on, bool with_pairs) {
    const int k = plan.top_k;
    std::vector<int32_t> tokens, pair_begin, pairs;
    for (int64_t tok = first; tok < last; ++tok) {
      tokens.push_back(int32_t(tok));
      if (with_pairs) {
        if (pair_begin.empty()) pair_begin.push_back(0);
        for (int64_t p = tok * k; p < (tok + 1) * k; ++p)
          if (pairs_on(p)) pairs.push_back(int32_t(p));
        pair_begin.push_back(int32_t(pairs.size()));
      }
    }
    plan.set_rows(task, tokens, pair_begin, pairs);
    Task& t = plan.tasks[task];
    if (t.kind == TaskKind::Transfer || t.kind == TaskKind::FinalReduce) t.bytes += double(last - first) * plan.token_bytes;
  }
};

}  // namespace

CommPlan allgather_reduce_scatter_plan(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                                       const Topology& topo, const ModelShape& model) {
  const int G = topo.gpus_per_node, N = topo.nodes, P = topo.num_gpus(), K = batch.top_k;
  require(batch.num_gpus == P && placement.num_gpus == P, "batch", "GPU counts of batch, placement and topology differ");
  require(int64_t(routing.slot_of_pair.size()) == batch.num_tokens() * K, "routing", "slot_of_pair must hold one slot per pair");
  CommPlan plan;
  plan.num_gpus = P, plan.gpus_per_node = G, plan.nodes = N, plan.top_k = K;
  plan.token_bytes = model.token_bytes();
  plan.model = model;
  plan.options = PlanOptions{false, false, false, 0.0};
  Builder b{plan};
  auto gpu_of_pair = [&](int64_t p) { return placement.gpu_of_slot(routing.slot_of_pair[size_t(p)]); };
  auto all = [](int64_t) { return true; };

  // All-gather.
  std::vector<int32_t> gathered;
  for (int s = 0; s < P; ++s) {
    const int64_t first = batch.token_offset[s], last = batch.token_offset[s + 1];
    if (first == last) continue;
    const int n = s / G;
    for (int h = n * G; h < (n + 1) * G; ++h)
      if (h != s) b.rows(gathered.emplace_back(b.transfer(Phase::Dispatch, s, h, Hop::Direct, 0, -1)), first, last, all, false);
    for (int m = 0; m < N; ++m) {
      if (m == n) continue;
      const int round = (n - m + N) % N, peer = m * G + s % G;
      const int32_t put = b.transfer(Phase::Dispatch, s, peer, Hop::Put, round, -1);
      b.rows(put, first, last, all, false);
      gathered.push_back(put);
      for (int h = m * G; h < (m + 1) * G; ++h)
        if (h != peer) b.rows(gathered.emplace_back(b.transfer(Phase::Dispatch, peer, h, Hop::Forward, round, put)), first, last, all, false);
    }
  }
  const int32_t after_gather = b.barrier(gathered);

  // Expert computation: one GEMM per slot over the pairs routed to it.
  std::vector<std::vector<int32_t>> pairs_of_slot(size_t(placement.num_slots()));
  for (int64_t p = 0; p < batch.num_tokens() * K; ++p)
    pairs_of_slot[size_t(routing.slot_of_pair[size_t(p)])].push_back(int32_t(p));
  std::vector<int32_t> computed;
  for (int slot = 0; slot < placement.num_slots(); ++slot) {
    if (pairs_of_slot[slot].empty()) continue;
    Task t;
    t.kind = TaskKind::Compute;
    t.phase = Phase::Compute;
    t.gpu = placement.gpu_of_slot(slot);
    t.slot = slot;
    t.expert = placement.phy2log[size_t(slot)];
    computed.push_back(b.add(t, {after_gather}));
    plan.set_rows(computed.back(), {}, {}, pairs_of_slot[slot]);
  }
  const int32_t after_compute = b.barrier(computed.empty() ? std::vector<int32_t>{after_gather} : computed);

  // Reduce-scatter.
  for (int s = 0; s < P; ++s) {
    const int64_t first = batch.token_offset[s], last = batch.token_offset[s + 1];
    if (first == last) continue;
    const int n = s / G;
    auto final_reduce = [&](std::function<bool(int64_t)> on, int32_t dep) {
      Task t;
      t.kind = TaskKind::FinalReduce;
      t.phase = Phase::Combine;
      t.gpu = s;
      t.priority = N + 1;
      const int32_t id = b.add(t, {dep});
      b.rows(id, first, last, on, true);
    };
    final_reduce([&](int64_t p) { return gpu_of_pair(p) == s; }, after_compute);
    for (int h = n * G; h < (n + 1) * G; ++h) {
      if (h == s) continue;
      auto on_h = [&, h](int64_t p) { return gpu_of_pair(p) == h; };
      const int32_t t = b.transfer(Phase::Combine, h, s, Hop::Direct, 0, after_compute);
      b.rows(t, first, last, on_h, true);
      final_reduce(on_h, t);
    }
    for (int m = 0; m < N; ++m) {
      if (m == n) continue;
      const int round = (m - n + N) % N, peer = m * G + s % G;
      auto on_m = [&, m](int64_t p) { return gpu_of_pair(p) / G == m; };
      Task pre;
      pre.kind = TaskKind::PreReduce;
      pre.phase = Phase::Combine;
      pre.gpu = peer;
      pre.node = n;
      pre.priority = -1;
      std::vector<int32_t> pre_deps = {after_compute};
      for (int h = m * G; h < (m + 1) * G; ++h) {
        if (h == peer) continue;
        const int32_t g = b.transfer(Phase::Combine, h, peer, Hop::Gather, round, after_compute);
        b.rows(g, first, last, [&, h](int64_t p) { return gpu_of_pair(p) == h; }, true);
        pre_deps.push_back(g);
      }
      const int32_t pr = b.add(pre, pre_deps);
      b.rows(pr, first, last, on_m, true);
      plan.tasks[size_t(pr)].bytes = double(G) * double(last - first) * plan.token_bytes;  // G partials per row read
      const int32_t put = b.transfer(Phase::Combine, peer, s, Hop::Put, round, pr);
      b.rows(put, first, last, on_m, true);
      final_reduce(on_m, put);
    }
  }
  for (Task& t : plan.tasks) {  // each task's list is its own (set once)
    const auto deps = plan.deps(t);
    std::sort(deps.begin(), deps.end());
    t.deps_at.end = t.deps_at.begin + (std::unique(deps.begin(), deps.end()) - deps.begin());
  }
  return plan;
}

}  // namespace baselines

StrategyDecision decide_sglang(const StrategyInput& in) {
  // SGLang's EP without EPLB: contiguous experts, one replica each, every pair to its home GPU.
  StrategyDecision d;
  d.placement = static_placement(in, [&] { return place_contiguous(in.model.num_experts, in.topo); });
  route_timed(d, [&] { return route_even(in.workload.batch, d.placement); });
  d.make_plan = [in](const Placement& placement, const Routing& routing) {
    return baselines::allgather_reduce_scatter_plan(in.workload.batch, placement, routing, in.topo, in.model);
  };
  return d;
}

}  // namespace zepp
