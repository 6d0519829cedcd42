#include "serving/iser_broadcast.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "exec/sim.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {
namespace {

// Seconds to broadcast `bytes` from GPU 0 to GPUs 0..g-1, alone on the topology.
double broadcast_seconds(const Topology& topo, int g, double bytes, bool sami) {
  CommPlan plan;
  plan.num_gpus = topo.num_gpus();
  plan.gpus_per_node = topo.gpus_per_node;
  plan.nodes = topo.nodes;
  MulticastMove m;
  m.expert = 0;
  m.owner = 0;
  m.sami = sami;
  for (int i = 0; i < g; ++i) m.members.push_back(i), m.slots.push_back(i);
  add_broadcast_tasks(plan, m, bytes, topo, 0);
  return simulate_plan(plan, topo).latency_s;
}

}  // namespace

std::vector<BroadcastPoint> run_iser_broadcast(const Topology& topo) {
  require(topo.nvlink_model == NvlinkModel::Switch && topo.multicast_port_output > 0, "topo",
          topo.name + " cannot multicast (needs NVSwitch with multicast_port_output > 0)");
  require(topo.gpus_per_node >= 16, "topo", topo.name + " has fewer than 16 GPUs per NVLink domain");
  const double MiB = 1048576.0;
  // iser-moe.txt §3.3 (single port: 535, 266, 127 GB/s per receiver) and §6.2 (SAMI's speedup).
  const BroadcastPoint paper[] = {{4, 144 * MiB, 0, 0, 535, 1.13}, {8, 160 * MiB, 0, 0, 266, 2.03},
                                  {16, 160 * MiB, 0, 0, 127, 3.76}};
  std::vector<BroadcastPoint> out;
  for (BroadcastPoint p : paper) {
    p.single_port_gbs = p.bytes / broadcast_seconds(topo, p.g, p.bytes, false) / 1e9;
    p.sami_gbs = p.bytes / broadcast_seconds(topo, p.g, p.bytes, true) / 1e9;
    out.push_back(p);
  }
  return out;
}

std::string iser_broadcast_markdown(const std::vector<BroadcastPoint>& points, const Topology& topo) {
  std::string s = fmt::format(
      "One owner broadcasts one bundle to g GPUs, itself included, on `{}` (NVLink port {:.0f} GB/s per direction, "
      "one port's multicast output {:.2f} TB/s); paper: iser-moe.txt §3.3 and §6.2, Figure 8(a), CE prototype on GB200.\n\n"
      "| g | bundle (MiB) | single port, model (paper) GB/s | SAMI, model (paper) GB/s | SAMI speedup, model (paper) |\n"
      "|---|---|---|---|---|\n",
      topo.name, topo.nvlink_bw / 1e9, topo.multicast_port_output / 1e12);
  for (const auto& p : points)
    s += fmt::format("| {} | {:.0f} | {:.0f} ({:.0f}) | {:.0f} ({:.0f}) | {:.2f}x ({:.2f}x) |\n", p.g, p.bytes / 1048576.0,
                     p.single_port_gbs, p.paper_single_gbs, p.sami_gbs, p.paper_single_gbs * p.paper_speedup,
                     p.sami_gbs / p.single_port_gbs, p.paper_speedup);
  s += "\nThe paper's SAMI bandwidth is its single-port figure times its speedup (the figure gives no value).\n";
  return s;
}

}  // namespace zepp
