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
      append_rows(plan.tasks[put], plan.tasks[i]);
      drop[i] = 1;
    } else {
      plan.tasks[i].dst_gpu = peer;
      put_of.emplace(Key{src, peer, phase, round}, put);
    }

    // The forward peer -> dst carries the same rows; whoever waited for the put waits for it.
    int32_t fwd;
    if (auto it = forward_of.find(Key{peer, dst, phase, round}); it != forward_of.end()) {
      fwd = it->second;
      Task rows = plan.tasks[i];
      rows.deps.clear();
      append_rows(plan.tasks[fwd], rows);
    } else {
      Task f = plan.tasks[i];
      f.gpu = peer;
      f.dst_gpu = dst;
      f.link = Link::NVLink;
      f.hop = Hop::Forward;
      f.deps.clear();
      plan.tasks.push_back(std::move(f));
      fwd = int32_t(plan.tasks.size() - 1);
      forward_of.emplace(Key{peer, dst, phase, round}, fwd);
    }
    plan.tasks[fwd].deps.push_back(put);
    for (int32_t u : users[i])
      for (int32_t& d : plan.tasks[u].deps)
        if (d == int32_t(i)) d = fwd;
  }
  drop.resize(plan.tasks.size(), 0);
  for (Task& t : plan.tasks) {
    std::sort(t.deps.begin(), t.deps.end());
    t.deps.erase(std::unique(t.deps.begin(), t.deps.end()), t.deps.end());
  }
  drop_tasks(plan, drop);
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
