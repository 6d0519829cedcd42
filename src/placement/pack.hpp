// Replica counts and replica packing shared by Zepp's fresh placement and its rebalancing
// (internal to src/placement; pack.cpp states and proves the invariants).
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "placement/placement.hpp"

namespace zepp::placement_detail {

// Water-filling replica counts: every expert one replica, then each of the remaining
// `slots - E` slots to the expert with the highest demand per replica (ties: lower id), at most
// `cap` replicas each. Requires E <= slots <= E * cap.
std::vector<int> water_fill_counts(const std::vector<double>& load, int slots, int cap);

// GPUs of a (possibly degraded) cluster: node of each GPU, and S slots on every GPU.
struct Bins {
  std::vector<int> node;  // [G] node id of each GPU (any non-negative labels)
  int slots = 0;          // S
  int num_gpus() const { return int(node.size()); }
  int num_nodes() const;  // largest label + 1
};
Bins bins_of(const Topology& topo, int slots);  // every GPU of topo

// A packing in progress: which experts each GPU holds and its expected load.
struct Packing {
  std::vector<std::vector<int>> experts;  // [G][<= S] experts held, in placement order
  std::vector<double> load;               // [G] sum of per-replica weights held
  std::vector<char> holds;                // [G * E]
  std::vector<int> node_copies;           // [N * E] replicas of each expert per node

  Packing(const Bins& bins, int num_experts);
  void add(const Bins& bins, int gpu, int expert, double weight);
  double max_load() const;
};

// Longest-processing-time packing of count[e] replicas of weight w[e] = load[e] / count[e] onto
// the bins, every GPU exactly S replicas, no expert twice on a GPU. spread: replicas of an expert
// prefer the nodes holding fewest of its replicas. Requires sum(count) = G * S and
// 0 <= count[e] <= G (experts with count 0 are skipped).
Packing pack_lpt(const Bins& bins, const std::vector<double>& w, const std::vector<int>& count, bool spread);

// Cost of giving slot contents to a GPU during local search; the search prefers cheap swaps.
// nullptr: every swap costs 0 (fresh placement). Tables, not calls: the search reads them for
// every candidate swap.
struct SwapCost {
  size_t experts = 0;         // E
  std::vector<double> cost;   // [G * E] ranking cost of GPU g holding expert e (0 when it held it
                              // before; NVLink fetches cheaper than NIC ones)
  std::vector<double> bytes;  // [G * E] bytes of weights it must fetch for it
  double fetch_cost(int gpu, int expert) const { return cost[size_t(gpu) * experts + expert]; }
  double fetch_bytes(int gpu, int expert) const { return bytes[size_t(gpu) * experts + expert]; }
};

// Pairwise-exchange local search: while the most loaded GPU has a swap of one of its replicas
// with a lighter replica elsewhere that lowers the pair's maximum, apply the best such swap.
// spread: a swap across nodes may not make any expert's per-node replica counts less even.
// cost: among improving swaps, the one adding the least fetch cost wins (then the lowest
// resulting peak, then one within a node), and only while the bytes added stay within *budget
// (decremented); stops once max load <= target.
void refine_swaps(const Bins& bins, const std::vector<double>& w, Packing& pk, bool spread,
                  const SwapCost* cost = nullptr, double target = 0, double* budget = nullptr);

// Swaps that spread an expert's replicas more evenly over nodes without making another's less
// even or any GPU heavier than the current max load (pack.cpp proves termination).
void spread_swaps(const Bins& bins, const std::vector<double>& w, Packing& pk);

// Zepp's fresh packing (zepp.cpp): water-filled counts, spread and plain LPT plus local search,
// the spread one kept within kSpreadTolerance. Sets w[e] = load[e] / count[e]. With roofline:
// roofline_counts and roofline_weights instead (roofline.cpp), w[e] in seconds.
Packing fresh_packing(const Bins& bins, const std::vector<double>& load, std::vector<double>& w,
                      const RooflineBatch* roofline = nullptr);

// Roofline-time placement (roofline.cpp states the model and its properties).
// Throws ArgumentError("roofline: ...") unless b's fields are finite, rows, read_s, launch_s >= 0
// and row_s > 0.
void check_roofline(const RooflineBatch& b);
// tau(m): expected seconds of one replica's GEMM when its rows are Poisson(m), no launch.
double expected_gemm_seconds(const RooflineBatch& b, double m);
// Replica counts by the roofline lower bound: >= 1 and <= cap each, summing to `slots`
// (E <= slots <= E * cap); water-filling's far above the ridge.
std::vector<int> roofline_counts(const std::vector<double>& load, int slots, int cap, int num_gpus,
                                 const RooflineBatch& b);
// Packing weight of one replica of each expert: tau(mu_e / c_e) + launch P(rows > 0), seconds.
std::vector<double> roofline_weights(const std::vector<double>& load, const std::vector<int>& cnt,
                                     const RooflineBatch& b);

}  // namespace zepp::placement_detail
