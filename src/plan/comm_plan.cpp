#include "plan/comm_plan.hpp"

#include "plan/builder.hpp"

namespace zepp {

const char* to_string(TaskKind k) {
  switch (k) {
    case TaskKind::Transfer: return "transfer";
    case TaskKind::Compute: return "compute";
    case TaskKind::PreReduce: return "pre-reduce";
    case TaskKind::FinalReduce: return "final-reduce";
    case TaskKind::Barrier: return "barrier";
    case TaskKind::Planning: return "planning";
    case TaskKind::SharedExpert: return "shared-expert";
  }
  return "?";
}

const char* to_string(Link l) {
  switch (l) {
    case Link::None: return "none";
    case Link::NVLink: return "nvlink";
    case Link::NIC: return "nic";
  }
  return "?";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Dispatch: return "dispatch";
    case Phase::Compute: return "compute";
    case Phase::Combine: return "combine";
    case Phase::Weights: return "weights";
    case Phase::Planning: return "planning";
  }
  return "?";
}

const char* to_string(Hop h) {
  switch (h) {
    case Hop::Direct: return "direct";
    case Hop::Relay: return "relay";
    case Hop::Put: return "put";
    case Hop::Forward: return "forward";
    case Hop::Gather: return "gather";
  }
  return "?";
}

CommPlan build_comm_plan(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                         const Topology& topo, const ModelShape& model, const PlanOptions& options,
                         const std::vector<WeightMove>& weight_moves, const std::vector<MulticastMove>& multicasts) {
  CommPlan plan;
  CommPlanBuilder().build(plan, batch, placement, routing, topo, model, options, weight_moves, multicasts);
  return plan;
}

CommPlanBuilder::CommPlanBuilder() : memory_(std::make_unique<plan_detail::Arrays>()) {}
CommPlanBuilder::~CommPlanBuilder() = default;
CommPlanBuilder::CommPlanBuilder(CommPlanBuilder&&) noexcept = default;
CommPlanBuilder& CommPlanBuilder::operator=(CommPlanBuilder&&) noexcept = default;

void CommPlanBuilder::build(CommPlan& plan, const RoutingBatch& batch, const Placement& placement,
                            const Routing& routing, const Topology& topo, const ModelShape& model,
                            const PlanOptions& options, const std::vector<WeightMove>& weight_moves,
                            const std::vector<MulticastMove>& multicasts) {
  if (!memory_) memory_ = std::make_unique<plan_detail::Arrays>();  // moved from
  plan = plan_detail::Builder(batch, placement, routing, topo, model, options, std::move(plan), std::move(*memory_))
             .build(weight_moves, multicasts, *memory_);
}

}  // namespace zepp
