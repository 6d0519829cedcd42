// COMET and COMET+EPLB (docs/baselines/comet.md): dense all-gather dispatch, tiled overlap.
#include <algorithm>

#include "baselines/baselines.hpp"
#include "baselines/plan_edit.hpp"
#include "core/error.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"

namespace zepp {
namespace baselines {

void allgather_dispatch(CommPlan& plan, const RoutingBatch& batch) {
  const int G = plan.gpus_per_node, N = plan.nodes, P = plan.num_gpus;
  require(batch.num_gpus == P && batch.token_offset.size() == size_t(P) + 1, "batch",
          "has " + std::to_string(batch.num_gpus) + " GPUs, the plan " + std::to_string(P));
  std::vector<char> drop(plan.tasks.size(), 0);
  for (size_t i = 0; i < plan.tasks.size(); ++i)
    drop[i] = plan.tasks[i].kind == TaskKind::Transfer && plan.tasks[i].phase == Phase::Dispatch;

  auto add = [&](int src, int dst, int round, Hop hop, int64_t first, int64_t last, int32_t dep) {
    Task t;
    t.kind = TaskKind::Transfer;
    t.phase = Phase::Dispatch;
    t.gpu = src;
    t.dst_gpu = dst;
    t.link = src / G == dst / G ? Link::NVLink : Link::NIC;
    t.hop = hop;
    t.round = round;
    t.priority = round;  // rounds in order on every queue; own node's copies first
    t.bytes = double(last - first) * plan.token_bytes;
    const int32_t id = plan.add_task(t);
    std::vector<int32_t> tokens;
    for (int64_t tok = first; tok < last; ++tok) tokens.push_back(int32_t(tok));
    plan.set_rows(id, tokens);
    if (dep >= 0) plan.set_deps(id, {dep});
    drop.push_back(0);
    return id;
  };
  // deliver[s * P + h]: the transfer bringing source GPU s's tokens to GPU h.
  std::vector<int32_t> deliver(size_t(P) * P, -1);
  for (int s = 0; s < P; ++s) {
    const int64_t first = batch.token_offset[s], last = batch.token_offset[s + 1];
    if (first == last) continue;
    const int n = s / G;
    for (int h = n * G; h < (n + 1) * G; ++h)
      if (h != s) deliver[size_t(s) * P + h] = add(s, h, 0, Hop::Direct, first, last, -1);
    for (int m = 0; m < N; ++m) {
      if (m == n) continue;
      const int round = (n - m + N) % N, peer = m * G + s % G;
      const int32_t put = add(s, peer, round, Hop::Put, first, last, -1);
      deliver[size_t(s) * P + peer] = put;
      for (int h = m * G; h < (m + 1) * G; ++h)
        if (h != peer) deliver[size_t(s) * P + h] = add(peer, h, round, Hop::Forward, first, last, put);
    }
  }

  std::vector<int32_t> src_of_token(size_t(batch.num_tokens()));
  for (int s = 0; s < P; ++s)
    std::fill(src_of_token.begin() + batch.token_offset[s], src_of_token.begin() + batch.token_offset[s + 1], s);
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Compute) continue;
    const auto own = plan.deps(t);
    std::vector<int32_t> deps(own.begin(), own.end());
    for (int64_t p : plan.pairs(t)) {
      const int s = src_of_token[size_t(p / plan.top_k)];
      if (s != t.gpu) deps.push_back(deliver[size_t(s) * P + t.gpu]);
    }
    plan.set_deps(int32_t(i), deps);
  }
  drop_tasks(plan, drop);  // also sorts and dedups every task's dependencies
}

}  // namespace baselines

namespace {

StrategyDecision comet_on(Placement placement, const StrategyInput& in) {
  StrategyDecision d;
  d.placement = std::move(placement);
  route_timed(d, [&] { return route_even(in.workload.batch, d.placement); });
  d.make_plan = [in](const Placement& placement, const Routing& routing) {
    // Compute tiles per (slot, source node) start as their tokens arrive (overlap); outputs
    // return one per (token, k) pair (no merge), each leaving when its tile is done.
    CommPlan plan = build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model,
                                    PlanOptions{/*split=*/false, /*merge=*/false, /*overlap=*/true, 0.0});
    baselines::allgather_dispatch(plan, in.workload.batch);
    return plan;
  };
  return d;
}

}  // namespace

StrategyDecision decide_comet(const StrategyInput& in) {
  return comet_on(static_placement(in, [&] { return place_contiguous(in.model.num_experts, in.topo); }), in);
}

StrategyDecision decide_comet_eplb(const StrategyInput& in) {
  // The `eplb` strategy's placement: ceil(E / GPUs) + R slots per GPU; one expert group per
  // node when E divides (hierarchical EPLB), else global (strategies.cpp, eplb_groups_for).
  return comet_on(static_placement(in,
                                   [&] {
                                     const int gpus = in.topo.num_gpus();
                                     const int slots = (in.model.num_experts + gpus - 1) / gpus + in.opt.extra_slots;
                                     const int groups = in.opt.eplb_groups > 0 ? in.opt.eplb_groups
                                                        : (in.model.num_experts % in.topo.nodes == 0 ? in.topo.nodes : 1);
                                     return place_eplb(in.workload.history_load, in.topo, slots, groups);
                                   }),
                  in);
}

}  // namespace zepp
