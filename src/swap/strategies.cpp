#include "swap/strategies.hpp"

#include <chrono>

#include "routing/routing.hpp"
#include "swap/replicate.hpp"

namespace zepp {
namespace {

using PlanFn = ReplicationPlan (*)(const std::vector<int64_t>&, int, const Topology&, int);

StrategyDecision decide_replicated(const StrategyInput& in, PlanFn plan_fn) {
  const auto t0 = std::chrono::steady_clock::now();
  ReplicationPlan r = plan_fn(in.workload.batch.demand(), in.model.num_experts, in.topo, in.opt.extra_slots);
  StrategyDecision d;
  d.placement = std::move(r.placement);
  d.routing.counts = std::move(r.counts);
  d.routing.slot_of_pair = assign_pairs(in.workload.batch, d.placement, in.topo, d.routing.counts);
  d.routing_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  d.balanced_routing = false;  // the system's own assignment, not bounded by equation (1)'s C
  d.make_plan = [in, moves = std::move(r.weight_moves)](const Placement& placement, const Routing& routing) {
    return build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model,
                           PlanOptions{false, false, false, 0.0}, moves);
  };
  return d;
}

}  // namespace

StrategyDecision decide_moonep(const StrategyInput& in) { return decide_replicated(in, plan_moonep); }
StrategyDecision decide_haloq(const StrategyInput& in) { return decide_replicated(in, plan_haloq); }

}  // namespace zepp
