// Replica broadcasts in the switch (comm_plan.hpp MulticastMove, iser-moe.txt §4.2-4.3) and the
// shared experts' time (PlanOptions::shared_expert_window, §3.1, §4.4).
#include <string>

#include "core/error.hpp"
#include "core/roofline.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {
namespace {

Task weights_transfer(int src, int dst, int32_t expert, double bytes) {
  Task t;
  t.kind = TaskKind::Transfer;
  t.phase = Phase::Weights;
  t.gpu = src;
  t.dst_gpu = dst;
  t.link = Link::NVLink;
  t.hop = Hop::Direct;
  t.round = 0;
  t.expert = expert;
  t.bytes = bytes;
  t.priority = -1;  // weights first (builder.cpp's transfer_priority)
  return t;
}

// Appends a multicast store from `src` into `members`; its dst_gpu is the first member other
// than src. Returns its index.
int32_t add_multicast(CommPlan& plan, int src, const std::vector<int32_t>& members, int32_t expert, double bytes) {
  int dst = -1;
  for (int32_t m : members)
    if (m != src && dst < 0) dst = m;
  const int32_t id = plan.add_task(weights_transfer(src, dst, expert, bytes));
  plan.set_multicast(id, members);
  return id;
}

}  // namespace

double shared_expert_time(int64_t tokens, const ModelShape& model, const Topology& topo) {
  if (model.shared_experts <= 0 || tokens <= 0) return 0.0;
  ModelShape shared = model;
  shared.ffn = model.shared_experts * model.ffn;
  return expert_compute_time(tokens, shared, topo);
}

int32_t add_broadcast_tasks(CommPlan& plan, const MulticastMove& move, double bytes, const Topology& topo,
                            size_t index) {
  const std::string name = "multicasts[" + std::to_string(index) + "]";
  const int n = topo.num_gpus();
  require(topo.nvlink_model == NvlinkModel::Switch && topo.multicast_port_output > 0, name,
          "in-switch multicast needs an NVSwitch topology with multicast_port_output > 0 (topology " + topo.name + ")");
  require(move.owner >= 0 && move.owner < n, name, "owner " + std::to_string(move.owner) + " outside the topology");
  require(move.members.size() >= 2, name, "needs at least two members");
  require(move.slots.size() == move.members.size(), name, "needs one slot per member");
  require(bytes > 0, name, "needs bytes > 0");
  bool owner_inside = false;
  for (size_t i = 0; i < move.members.size(); ++i) {
    const int m = move.members[i];
    require(m >= 0 && m < n && topo.node_of(m) == topo.node_of(move.owner), name,
            "member " + std::to_string(m) + " is not a GPU of the owner's node (one NVLink domain)");
    require(i == 0 || move.members[i - 1] < m, name, "members must be ascending and distinct");
    owner_inside |= m == move.owner;
  }
  require(move.sami || owner_inside, name, "owner-direct multicast needs the owner in the group (a writer is a member)");
  Task ready;
  ready.kind = TaskKind::Barrier;
  ready.phase = Phase::Weights;
  ready.gpu = move.owner;
  ready.expert = move.expert;
  std::vector<int32_t> deps;
  if (!move.sami) {
    deps.push_back(add_multicast(plan, move.owner, move.members, move.expert, bytes));
  } else {
    const double share = bytes / double(move.members.size());
    for (int32_t m : move.members) {
      if (m != move.owner)
        deps.push_back(plan.add_task(weights_transfer(move.owner, m, move.expert, share)));  // s1: pull the share
      deps.push_back(add_multicast(plan, m, move.members, move.expert, share));  // s2, s3: store it to the group
    }
  }
  const int32_t id = plan.add_task(ready);
  plan.set_deps(id, deps);
  return id;
}

}  // namespace zepp
