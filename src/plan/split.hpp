// Split (paper §4.2, equations (2) and (3)): how one node's outgoing rows toward one
// destination node are redistributed across the node's G NICs. Units are rows (one token
// activation or partial sum, all of the same size), so a row never straddles two NICs and
// bytes = rows * token_bytes.
#pragma once
#include <cstdint>
#include <vector>

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

}  // namespace zepp
