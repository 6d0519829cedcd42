#include "pipeline/zepp_hot.hpp"

#include <chrono>

#include "core/error.hpp"
#include "swap/hot.hpp"

namespace zepp {

StrategyDecision decide_zepp_hot(const StrategyInput& in, const ZeppHotParts& parts) {
  require(!parts.multicast || (in.topo.nvlink_model == NvlinkModel::Switch && in.topo.multicast_port_output > 0), "strategy",
          std::string(parts.resident ? "zepp+hot" : "zepp+hot/no-resident") +
              " needs NVSwitch nodes with in-switch multicast (topology " + in.topo.name +
              " has none; zepp+hot/no-multicast copies point to point)");
  StrategyDecision d = find_strategy("zepp").decide(in);  // Zepp's decision, then the hot pass on it

  HotOptions ho;
  ho.helper_slots = in.opt.extra_slots;
  ho.multicast = parts.multicast;
  if (in.state && parts.resident) ho.resident = in.state->resident;
  const auto t0 = std::chrono::steady_clock::now();
  HotPlan h = plan_hot(in.workload.batch, d.placement, d.routing, in.topo, in.model, ho);
  d.routing_wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (in.state) in.state->resident = h.resident;
  const int E = in.model.num_experts, G = in.topo.num_gpus();
  d.planning = per_batch_work(in.workload.batch, E, double(E) * G + h.cells, true);
  if (h.replicas.empty()) return d;

  d.placement = std::move(h.placement);
  d.routing = std::move(h.routing);
  d.balanced_routing = false;  // helper slots lie outside equation (1)'s bounds
  d.locality_routing = false;  // ranks need the hot pass too, not the count-level plan alone
  PlanOptions plan = zepp_plan_options(in.opt);
  plan.shared_expert_window = true;
  d.make_plan = [in, plan, moves = std::move(h.weight_moves), casts = std::move(h.multicasts)](
                    const Placement& placement, const Routing& routing) {
    return build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model, plan, moves, casts);
  };
  return d;
}

}  // namespace zepp
