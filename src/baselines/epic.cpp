// EPIC (docs/baselines/epic.md): co-activation placement with replication (epic_placement.cpp),
// nearest-replica routing, per-node
// dedup of dispatched tokens, outputs returned without node-level pre-reduction, one GEMM per
// expert started when its tokens are in.
#include <algorithm>
#include <map>

#include "baselines/baselines.hpp"
#include "baselines/plan_edit.hpp"
#include "core/error.hpp"
#include "placement/placement.hpp"

namespace zepp {
namespace baselines {

Routing route_nearest(const RoutingBatch& batch, const Placement& placement, const Topology& topo) {
  placement.validate("placement");
  require(batch.num_gpus == topo.num_gpus() && placement.num_gpus == topo.num_gpus(), "batch",
          "batch, placement and topology must have the same GPU count");
  require(batch.num_experts == placement.num_experts, "batch", "has another expert count than the placement");
  require(batch.token_offset.size() == size_t(batch.num_gpus) + 1 &&
              batch.expert_ids.size() == size_t(batch.num_tokens()) * size_t(batch.top_k),
          "batch", "needs num_gpus + 1 token offsets and T * top_k expert ids");
  const int E = batch.num_experts, K = batch.top_k, G = topo.gpus_per_node;
  const auto replicas = placement.replicas();

  // Per (source GPU, expert): the nearest replicas and a rotating cursor over them.
  Routing r;
  r.slot_of_pair.resize(batch.expert_ids.size());
  const int S = placement.num_slots();
  std::vector<int64_t> count(size_t(batch.num_gpus) * S, 0);  // [src * S + slot]
  std::vector<std::vector<int32_t>> nearest(E);
  std::vector<int64_t> cursor(E);
  for (int src = 0; src < batch.num_gpus; ++src) {
    for (int e = 0; e < E; ++e) nearest[e].clear(), cursor[e] = 0;
    for (int64_t tok = batch.token_offset[src]; tok < batch.token_offset[src + 1]; ++tok) {
      for (int k = 0; k < K; ++k) {
        const int64_t p = tok * K + k;
        const int32_t e = batch.expert_ids[p];
        require(e >= 0 && e < E, "batch", "pair " + std::to_string(p) + " names expert " + std::to_string(e));
        auto& near = nearest[e];
        if (near.empty()) {
          int best = 3;
          for (int32_t s : replicas[e]) {
            const int gpu = placement.gpu_of_slot(s);
            const int level = gpu == src ? 0 : gpu / G == src / G ? 1 : 2;
            if (level < best) best = level, near.clear();
            if (level == best) near.push_back(s);
          }
        }
        const int32_t slot = near[size_t(cursor[e]++ % int64_t(near.size()))];
        r.slot_of_pair[p] = slot;
        ++count[size_t(src) * S + slot];
      }
    }
  }
  for (int e = 0; e < E; ++e)
    for (int src = 0; src < batch.num_gpus; ++src)
      for (int32_t slot : replicas[e])
        if (const int64_t n = count[size_t(src) * S + slot]) r.counts.push_back({e, src, slot, n});
  return r;
}

void one_gemm_per_slot(CommPlan& plan) {
  std::map<int32_t, int32_t> first_of_slot;
  std::vector<char> drop(plan.tasks.size(), 0);
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Compute) continue;
    const auto [it, fresh] = first_of_slot.emplace(t.slot, int32_t(i));
    if (fresh) continue;
    append_rows(plan, it->second, int32_t(i));
    plan.set_deps(int32_t(i), {it->second});  // its dependents now wait for the merged GEMM
    drop[i] = 1;
  }
  for (const auto& [slot, i] : first_of_slot) {
    Task& t = plan.tasks[i];
    const auto pairs = plan.pairs(t);
    std::sort(pairs.begin(), pairs.end());
    t.priority = slot;  // expert order on the GPU (slots are numbered GPU by GPU)
  }
  drop_tasks(plan, drop);
}

}  // namespace baselines

StrategyDecision decide_epic(const StrategyInput& in) {
  StrategyDecision d;
  d.placement = static_placement(in, [&] {
    return in.opt.epic_zepp_placement
               ? zepp_placement(in)
               : baselines::place_coactivation(in.workload.history_load, in.workload.history_coactivation,
                                               in.model.top_k, in.topo,
                                               base_slots_per_gpu(in.model, in.topo) + in.opt.extra_slots);
  });
  route_timed(d, [&] { return baselines::route_nearest(in.workload.batch, d.placement, in.topo); });
  d.balanced_routing = false;  // nearest replica, no load bound
  // Per batch: nearest-replica routing of the own pairs (rotating over equally near replicas);
  // no exchange (each rank decides alone).
  d.planning = per_batch_work(in.workload.batch, 0, 0, true);
  d.make_plan = [in](const Placement& placement, const Routing& routing) {
    CommPlan plan = build_comm_plan(in.workload.batch, placement, routing, in.topo, in.model,
                                    PlanOptions{/*split=*/false, /*merge=*/true, /*overlap=*/true, 0.0,
                                                /*round_order=*/false, /*pre_reduce=*/false});
    baselines::one_gemm_per_slot(plan);
    return plan;
  };
  return d;
}

}  // namespace zepp
