// FAST+GEMM (docs/baselines/fast.md): split without merge, no overlap, peer-to-peer puts.
#include <map>
#include <tuple>

#include "baselines/baselines.hpp"
#include "baselines/plan_edit.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"

namespace zepp {
namespace baselines {

void reroute_via_peers(CommPlan& plan) {
  const int G = plan.gpus_per_node;
  const auto users = dependents(plan);
  const size_t n = plan.tasks.size();
  using Key = std::tuple<int, int, Phase, int>;  // (src, dst, phase, round)
  std::map<Key, int32_t> put_of, forward_of;
  auto is_put = [](const Task& t) { return t.kind == TaskKind::Transfer && t.link == Link::NIC && t.hop == Hop::Put; };
  for (size_t i = 0; i < n; ++i) {
    const Task& t = plan.tasks[i];
    if (is_put(t) && t.dst_gpu % G == t.gpu % G) put_of.emplace(Key{t.gpu, t.dst_gpu, t.phase, t.round}, int32_t(i));
  }

  std::vector<char> drop(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!is_put(plan.tasks[i]) || plan.tasks[i].dst_gpu % G == plan.tasks[i].gpu % G) continue;
    const int src = plan.tasks[i].gpu, dst = plan.tasks[i].dst_gpu, round = plan.tasks[i].round;
    const Phase phase = plan.tasks[i].phase;
    const int peer = dst / G * G + src % G;

    // The put now ends at the peer; coalesce with a put already going there.
    int32_t put = int32_t(i);
    if (auto it = put_of.find(Key{src, peer, phase, round}); it != put_of.end()) {
      put = it->second;
      append_rows(plan, put, int32_t(i));
      drop[i] = 1;
    } else {
      plan.tasks[i].dst_gpu = peer;
      put_of.emplace(Key{src, peer, phase, round}, put);
    }

    // The forward peer -> dst carries the same rows; whoever waited for the put waits for it.
    int32_t fwd;
    if (auto it = forward_of.find(Key{peer, dst, phase, round}); it != forward_of.end()) {
      fwd = it->second;
      const Range deps = plan.tasks[i].deps_at;
      plan.tasks[i].deps_at = {};  // the rows without the put's dependencies
      append_rows(plan, fwd, int32_t(i));
      plan.tasks[i].deps_at = deps;
    } else {
      Task f = plan.tasks[i];  // shares the put's rows (never edited in place)
      f.gpu = peer;
      f.dst_gpu = dst;
      f.link = Link::NVLink;
      f.hop = Hop::Forward;
      f.deps_at = {};
      fwd = plan.add_task(f);
      forward_of.emplace(Key{peer, dst, phase, round}, fwd);
    }
    plan.add_dep(fwd, put);
    for (int32_t u : users[i])
      for (int32_t& d : plan.deps(plan.tasks[u]))
        if (d == int32_t(i)) d = fwd;
  }
  drop.resize(plan.tasks.size(), 0);
  drop_tasks(plan, drop);  // also sorts and dedups every task's dependencies
}

}  // namespace baselines

StrategyDecision decide_fast(const StrategyInput& in) {
  StrategyDecision d;
  d.placement = static_placement(in, [&] { return place_contiguous(in.model.num_experts, in.topo); });
  route_timed(d, [&] { return route_even(in.workload.batch, d.placement); });
  // Per batch FAST schedules the all-to-all from the traffic matrix: each GPU's row (G counts)
  // all-gathered, the NIC split and rounds computed on the G x G matrix, own rows put on NICs.
  const int G = in.topo.num_gpus();
  d.planning = per_batch_work(in.workload.batch, G, double(G) * G, true);
  d.make_plan = [in](const Placement& placement, const Routing& routing) {
    // FAST balances each node's outgoing rows exactly over its NICs (C_NIC = 0).
    CommPlan plan = build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model,
                                    PlanOptions{/*split=*/true, /*merge=*/false, /*overlap=*/false, 0.0});
    baselines::reroute_via_peers(plan);
    keep_round_order(plan);  // FAST sends node-pair rounds one after the other
    return plan;
  };
  return d;
}

}  // namespace zepp
