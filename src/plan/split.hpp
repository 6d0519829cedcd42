// Split (paper §4.2, equations (2) and (3)): how one node's outgoing rows toward one
// destination node are redistributed across the node's G NICs. Units are rows (one token
// activation or partial sum, all of the same size), so a row never straddles two NICs and
// bytes = rows * token_bytes.
#pragma once
#include <cstdint>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp {

// Per-NIC bound of eq. (2) in rows: floor((1 + nic_slack) * V / G), raised to ceil(V / G) when
// that is smaller (whole rows must fit somewhere). With nic_slack = 0 this is V/G rounded up.
// Throws ArgumentError ("gpus", "nic_slack", "total") on G <= 0, nic_slack < 0, total < 0.
int64_t nic_capacity(int64_t total, int gpus, double nic_slack);

// x[i * G + j]: rows of GPU i sent through GPU j's NIC (i != j: moved over NVLink first).
using SplitMatrix = std::vector<int64_t>;

// Closed form of eq. (3) for equal NVLink costs: each GPU keeps min(V_i, cap) rows; the excess
// of GPUs above cap goes to GPUs below it, donors and receivers in ascending order. Moves
// sum_i (V_i - cap)^+ rows, the minimum; with cap = V/G exactly this is eq. (3).
// Throws ArgumentError ("volumes", "cap") on negative volumes or G * cap < V.
SplitMatrix split_closed_form(const std::vector<int64_t>& volumes, int64_t cap);

// Eq. (2) as a min-cost flow (LEMON NetworkSimplex, integer rows): minimize
// sum_{i != j} cost[i * G + j] * x_ij subject to sum_j x_ij = V_i and sum_i x_ij <= cap.
// cost: [G * G], non-negative, diagonal ignored (staying on one's own NIC is free).
// Throws ArgumentError ("volumes", "cap", "cost") on bad shapes, negatives or G * cap < V.
SplitMatrix split_min_cost(const std::vector<int64_t>& volumes, int64_t cap, const std::vector<int64_t>& cost);

// Rows moved over NVLink by a split: sum of x_ij over i != j.
int64_t moved_rows(const SplitMatrix& x, int gpus);

// The split build_comm_plan gives one inter-node flow with `volumes` [G] rows per GPU of its
// source node (G = topo.gpus_per_node): without opt.split every GPU keeps its rows (x_ii = V_i);
// else eq. (2)'s cap (nic_capacity with opt.nic_slack) by split_closed_form (nic_slack 0) or
// split_min_cost (uniform NVLink cost), and with opt.split_if_it_pays no split unless
// split_pays. token_bytes: bytes per row. The one source for the builder (plan/flow.cpp) and the
// swap rule's NIC estimate (swap/swap.hpp, nic_rows). Throws as nic_capacity and the splits.
SplitMatrix plan_split(const std::vector<int64_t>& volumes, const PlanOptions& opt, const Topology& topo,
                       double token_bytes);

// Whether split x of a flow with per-GPU rows `volumes` saves more NIC time (its busiest NIC's
// rows before and after, at topo.nic_bw) than its two NVLink hops cost (nvlink_latency plus the
// largest move at nvlink_bw, twice). A moved row crosses NVLink twice: the relay before its put
// (Algorithm 1 lines 4-5) and a forward after the return put, because a row lands on the rail of
// the NIC that carried it (dispatch: the combine return comes back on that rail; combine: the
// put itself lands there). Eq. (2) bounds the NICs; whether meeting the bound is worth its NVLink
// hops is the question the paper leaves to the cost c_ij. On the DeepSeek-V2-Lite trace (4 x 4
// A100 GPUs, 4 KiB rows) at 1 MiB a flow's excess is ~18 rows, ~3 us of NIC time, against ~5 us
// of hops: splitting every flow made full zepp slower than zepp/no-split, and splitting only
// when it pays leaves it no slower; at 16 MiB the excess outweighs the hops and splitting pays.
// The current effect in every Figure 9 configuration is the zepp/no-split column of the ablation
// table in docs/reproduction.md, regenerated with the figures (no number here to go stale).
bool split_pays(const std::vector<int64_t>& volumes, const SplitMatrix& x, const Topology& topo, double token_bytes);

}  // namespace zepp
