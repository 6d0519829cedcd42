// Algorithm 1's phase order on each NIC as dependencies (comm_plan.hpp, combine_after_dispatch).
//
// Invariants:
//  (1) Every inter-node combine transfer sent by GPU g becomes ready no earlier than the end of
//      every inter-node dispatch transfer g sends. Proof: each gets all of them as dependencies.
//  (2) No cycle is added: a new edge goes from a dispatch transfer to a combine transfer, and no
//      dispatch transfer depends, directly or not, on a combine task (dispatch transfers depend
//      on planning, weights, relays and the round order's edges among dispatch puts only).
//  (3) Rows, bytes and links are unchanged: only dependency lists grow.
#include <algorithm>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp {

void combine_after_dispatch(CommPlan& plan) {
  std::vector<std::vector<int32_t>> dispatch_of(plan.num_gpus);  // [GPU] its inter-node dispatch transfers
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind == TaskKind::Transfer && t.link == Link::NIC && t.phase == Phase::Dispatch)
      dispatch_of[size_t(t.gpu)].push_back(int32_t(i));
  }
  std::vector<int32_t> deps;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Transfer || t.link != Link::NIC || t.phase != Phase::Combine) continue;
    const auto& before = dispatch_of[size_t(t.gpu)];
    if (before.empty()) continue;
    const auto own = plan.deps(t);
    deps.assign(own.begin(), own.end());
    deps.insert(deps.end(), before.begin(), before.end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    plan.set_deps(int32_t(i), deps);
  }
}

}  // namespace zepp
