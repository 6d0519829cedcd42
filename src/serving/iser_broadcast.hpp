// ISER-MoE's broadcast reference data (iser-moe.txt §6.2 "E2", Figure 8(a)) against our
// in-switch multicast model (exec/sim.hpp, Task::multicast): one owner broadcasts one bundle to g
// GPUs, itself included, single-port (owner-direct) or SAMI, simulated alone on `topo`.
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp {

struct BroadcastPoint {
  int g = 0;
  double bytes = 0;                          // the bundle (Figure 8(a): 144 MiB at g = 4, else 160 MiB)
  double single_port_gbs = 0, sami_gbs = 0;  // algorithm bandwidth, bytes / time, GB/s
  double paper_single_gbs = 0;               // §3.3: per-receiver bandwidth of one port (535/266/127)
  double paper_speedup = 0;                  // §6.2: SAMI over single port (1.13/2.03/3.76)
};

// g = 4, 8, 16 on GPUs 0..g-1 of node 0, owner GPU 0. Throws ArgumentError ("topo") when the
// topology cannot multicast or its first node has fewer than 16 GPUs, and what simulating throws.
std::vector<BroadcastPoint> run_iser_broadcast(const Topology& topo);

std::string iser_broadcast_markdown(const std::vector<BroadcastPoint>& points, const Topology& topo);

}  // namespace zepp
