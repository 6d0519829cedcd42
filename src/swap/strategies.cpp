#include "swap/strategies.hpp"

#include <functional>

#include "routing/routing.hpp"
#include "core/error.hpp"
#include "swap/iser.hpp"
#include "swap/replicate.hpp"

namespace zepp {
namespace {

using PlanFn = ReplicationPlan (*)(const std::vector<int64_t>&, int, const Topology&, int);

// Per-invocation replication (MoonEP, HALO-Q, ISER-MoE): `plan` on the batch, the pairs assigned
// to its replicas, both timed as the strategy's routing. Charged per batch: the demand of every
// GPU (E counts each) all-gathered, replicas planned on it (E x G cells), the own pairs assigned.
// `r` keeps the plan's weight moves and broadcasts (its counts and placement move into the
// decision).
StrategyDecision replicate_and_route(const StrategyInput& in, const std::function<ReplicationPlan()>& plan,
                                     ReplicationPlan& r) {
  StrategyDecision d;
  route_timed(d, [&] {
    r = plan();
    Routing routing;
    routing.counts = std::move(r.counts);
    routing.slot_of_pair = assign_pairs(in.workload.batch, r.placement, in.topo, routing.counts);
    return routing;
  });
  d.placement = std::move(r.placement);
  const int E = in.model.num_experts, G = in.topo.num_gpus();
  d.planning = per_batch_work(in.workload.batch, E, double(E) * G, true);
  d.balanced_routing = false;  // the system's own assignment, not bounded by equation (1)'s C
  return d;
}

StrategyDecision decide_replicated(const StrategyInput& in, PlanFn plan_fn) {
  ReplicationPlan r;
  StrategyDecision d = replicate_and_route(
      in, [&] { return plan_fn(in.workload.batch.demand(), in.model.num_experts, in.topo, in.opt.extra_slots); }, r);
  d.make_plan = [in, moves = std::move(r.weight_moves)](const Placement& placement, const Routing& routing) {
    return build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model,
                           PlanOptions{false, false, false, 0.0}, moves);
  };
  return d;
}

}  // namespace

StrategyDecision decide_moonep(const StrategyInput& in) { return decide_replicated(in, plan_moonep); }
StrategyDecision decide_haloq(const StrategyInput& in) { return decide_replicated(in, plan_haloq); }

StrategyDecision decide_iser_moe(const StrategyInput& in) {
  // Named by the flag that fixes it, as zepp+hot's refusal is (pipeline/zepp_hot.cpp).
  require(in.topo.nvlink_model == NvlinkModel::Switch && in.topo.multicast_port_output > 0, "--topology",
          "iser-moe needs NVSwitch nodes with in-switch multicast, and " + in.topo.name +
              " has none (e.g. --topology dgx-h100; halo-q is the point-to-point variant)");
  const int H = in.model.num_experts / in.topo.num_gpus();
  ReplicationPlan r;
  std::vector<MulticastMove> multicasts;
  // Charged as halo-q's (every plan starts with the all-rank count exchange, iser-moe.txt §5):
  // MegaMoE waits for the plan, so dispatch cannot start before it. The paper runs HALO-Q on
  // the COPY stream beside the shared expert; our one compute stream per GPU runs the planning
  // task first, which delays the shared expert by at most the planning time.
  StrategyDecision d = replicate_and_route(
      in,
      [&] {
        ReplicationPlan p = plan_haloq(in.workload.batch.demand(), in.model.num_experts, in.topo,
                                       in.opt.extra_slots, in.topo.gpus_per_node);
        multicasts = iser_multicasts(p, H);
        return p;
      },
      r);
  d.make_plan = [in, multicasts = std::move(multicasts)](const Placement& placement, const Routing& routing) {
    // MegaMoE (iser-moe.txt §4.4): dispatch, GEMMs and combine fused, each tile when its rows
    // are there (overlap, no split or merge); the shared expert first, the copy beside it.
    PlanOptions o{false, false, true, 0.0};
    o.shared_expert_window = true;
    return build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model, o, {}, multicasts);
  };
  return d;
}

}  // namespace zepp
