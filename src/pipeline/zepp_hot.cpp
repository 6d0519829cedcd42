#include "pipeline/zepp_hot.hpp"

#include <chrono>

#include "core/error.hpp"
#include "swap/hot.hpp"
#include "swap/nic_floor.hpp"

namespace zepp {

StrategyDecision decide_zepp_hot(const StrategyInput& in, const ZeppHotParts& parts) {
  // Named by the flag that fixes it, --topology (every command has it), and the strategy asked.
  require(!parts.multicast || (in.topo.nvlink_model == NvlinkModel::Switch && in.topo.multicast_port_output > 0),
          "--topology", std::string(parts.resident ? "zepp+hot" : "zepp+hot/no-resident") +
                            " needs NVSwitch nodes with in-switch multicast, and " + in.topo.name +
                            " has none (e.g. --topology dgx-h100; zepp+hot/no-multicast copies point to point on any topology)");
  StrategyDecision d = find_strategy("zepp").decide(in);  // Zepp's decision, then the hot pass on it

  HotOptions ho;
  ho.helper_slots = in.opt.extra_slots;
  ho.multicast = parts.multicast;
  if (in.state && parts.resident) ho.resident = in.state->resident;
  const auto t0 = std::chrono::steady_clock::now();
  // Zepp's NIC floor on its own routing, as the swap rule takes it: a copy pays only with GEMM
  // time above the node's combine on the NICs.
  PlanOptions plan = zepp_plan_options(in.opt);
  NicFloor nic = nic_floor(in.workload.batch, d.placement, d.routing.slot_of_pair, in.topo, plan, in.model);
  ho.dispatch_seconds = nic.dispatch_seconds;
  ho.combine_seconds = std::move(nic.combine_seconds);
  HotPlan h = plan_hot(in.workload.batch, d.placement, d.routing, in.topo, in.model, ho);
  d.routing_wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (in.state) in.state->resident = h.resident;
  // Zepp's work, the NIC floor's (each rank's N rows toward each node all-gathered, the split of
  // every flow: N x G cells) and the hot pass's cells.
  const int E = in.model.num_experts, G = in.topo.num_gpus(), N = in.topo.nodes;
  d.planning = per_batch_work(in.workload.batch, E + N, double(E) * G + consolidate_work(d) + double(N) * G + h.cells, true);
  add_routing_work(d);
  if (h.replicas.empty()) return d;

  d.placement = std::move(h.placement);
  d.routing = std::move(h.routing);
  d.balanced_routing = false;  // helper slots lie outside equation (1)'s bounds
  d.locality_routing = false;  // ranks need the hot pass too, not the count-level plan alone
  plan.shared_expert_window = true;
  d.make_plan = [in, plan, moves = std::move(h.weight_moves), casts = std::move(h.multicasts)](
                    const Placement& placement, const Routing& routing) {
    return build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model, plan, moves, casts);
  };
  return d;
}

}  // namespace zepp
