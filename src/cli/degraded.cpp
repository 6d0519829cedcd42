#include "cli/degraded.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"

namespace zepp::cli {

Degraded degrade(const WorkloadFlags& flags, const StrategyOptions& opt, const std::vector<int>& failed,
                 const ResolvedWorkload& full) {
  const Topology& topo = full.topo;
  const int N = topo.nodes, gpn = topo.gpus_per_node, E = full.model.num_experts;
  std::vector<int> lost = failed;
  std::sort(lost.begin(), lost.end());
  for (size_t i = 0; i < lost.size(); ++i) {
    require(lost[i] >= 0 && lost[i] < N, "--failed-nodes",
            "node " + std::to_string(lost[i]) + " is outside [0, " + std::to_string(N) + ")");
    require(i == 0 || lost[i] != lost[i - 1], "--failed-nodes", "node " + std::to_string(lost[i]) + " is listed twice");
  }
  const int survivors = N - int(lost.size());
  require(survivors >= 1, "--failed-nodes", "leaves no node");
  const int G = topo.num_gpus(), Gs = survivors * gpn;
  const int S = (E + G - 1) / G + opt.extra_slots;
  require(int64_t(Gs) * S >= E, "--failed-nodes",
          "leaves " + std::to_string(Gs) + " GPUs x " + std::to_string(S) + " slots, too few for the " +
              std::to_string(E) + " experts (raise --extra-slots)");

  // Zepp's full-cluster placement rebalanced onto the survivors: what the weights must do.
  const Placement before = place_zepp(full.workload.history_load, topo, opt.extra_slots);
  RebalanceOptions ro;
  ro.previous = before.phy2log;
  for (int n : lost)
    for (int g = 0; g < gpn; ++g) ro.failed_gpus.push_back(n * gpn + g);
  ro.expert_bytes = full.model.expert_weight_bytes();
  const Rebalanced after = rebalance_zepp(full.workload.history_load, topo, S, ro);

  Degraded d{flags, opt, {}};
  d.flags.nodes = survivors;
  d.flags.workload.size_mb = flags.workload.size_mb * N / survivors;
  d.opt.extra_slots = S - (E + Gs - 1) / Gs;
  d.report = {{"failed_nodes", lost},
              {"nodes_before", N},
              {"nodes_after", survivors},
              {"slots_per_gpu", S},
              {"size_mb_per_gpu_after", d.flags.workload.size_mb},
              {"zepp_rebalance",
               {{"slots_changed", after.moves.slots_changed},
                {"nvlink_bytes", after.moves.nvlink_bytes},
                {"nic_bytes", after.moves.nic_bytes},
                {"imbalance_before", expected_imbalance(before, full.workload.history_load)},
                {"imbalance_after", after.imbalance},
                {"min_replicas", [&] {
                   const auto cnt = after.placement.logcnt();
                   return *std::min_element(cnt.begin(), cnt.end());
                 }()}}}};
  return d;
}

}  // namespace zepp::cli
