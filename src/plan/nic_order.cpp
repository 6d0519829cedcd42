// Algorithm 1's phase order on each NIC as dependencies (comm_plan.hpp, combine_after_dispatch).
//
// Both ends of a NIC: a combine transfer from GPU g to GPU h waits for every inter-node dispatch
// transfer g sends (g's egress) and every one h receives (h's ingress). Why the receiving end:
// with the NIC split (eq. (2)) all of a node's NICs finish dispatch together and start their
// combines together, and under fair sharing a combine arriving at h takes half of h's ingress
// from h's last dispatch chunk, which the GEMMs wait for (Qwen3 at 8 nodes, 4 MB: one 229 KB
// chunk took 149.4 us, 140 over line rate, and that NIC's combine started at 970 us where the
// others started at about 775; waiting for it took the layer from 1675.4 to 1586.3 us).
//
// Invariants:
//  (1) Every inter-node combine transfer sent by GPU g to GPU h becomes ready no earlier than the
//      end of every inter-node dispatch transfer g sends and of every one h receives. Proof: each
//      gets all of them as dependencies.
//  (2) No cycle is added: a new edge goes from a dispatch transfer to a combine transfer, and no
//      dispatch transfer depends, directly or not, on a combine task (dispatch transfers depend
//      on planning, weights, relays and the round order's edges among dispatch puts only).
//  (3) Rows, bytes and links are unchanged: only dependency lists grow.
#include <algorithm>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp {

void combine_after_dispatch(CommPlan& plan) {
  // [GPU] the inter-node dispatch transfers it sends, and those it receives
  std::vector<std::vector<int32_t>> sent(plan.num_gpus), received(plan.num_gpus);
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind == TaskKind::Transfer && t.link == Link::NIC && t.phase == Phase::Dispatch) {
      sent[size_t(t.gpu)].push_back(int32_t(i));
      received[size_t(t.dst_gpu)].push_back(int32_t(i));
    }
  }
  std::vector<int32_t> deps;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Transfer || t.link != Link::NIC || t.phase != Phase::Combine) continue;
    const auto& out = sent[size_t(t.gpu)];
    const auto& in = received[size_t(t.dst_gpu)];
    if (out.empty() && in.empty()) continue;
    const auto own = plan.deps(t);
    deps.assign(own.begin(), own.end());
    deps.insert(deps.end(), out.begin(), out.end());
    deps.insert(deps.end(), in.begin(), in.end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    plan.set_deps(int32_t(i), deps);
  }
}

}  // namespace zepp
