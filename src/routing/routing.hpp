// Token routing: which replica serves every (token, expert) pair (paper §4.1 equation (1), §5).
//
// Shapes: G = placement.num_gpus GPUs, E experts, S = placement.num_slots() slots (physical
// experts); demand d is [G * E] tokens with d[i * E + e] = tokens of source GPU i selecting e
// (RoutingBatch::demand()). Loads are in tokens, costs in seconds.
//
// Errors: every entry point throws ArgumentError naming the argument ("batch", "placement",
// "topo", "demand", "counts", "balance_slack", "token_bytes") when shapes disagree (GPU or expert
// counts of batch, placement and topology), an expert id or slot is out of range, a count is
// negative, or balance_slack is NaN, < 0 or >= 1.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// Integer per-slot load bounds of equation (1) for slack C: per expert e with total demand T_e
// and r_e replicas, q = T_e / r_e, lower = floor((1 - C) q), upper = ceil((1 + C) q).
// Rounding is outward (a looser bound, never a tighter one), so the bounds of each expert are
// always jointly feasible: r_e * lower <= T_e <= r_e * upper. The paper bounds the load per
// GPU; bounds here are per slot, which is the same when a GPU holds at most one replica of an
// expert. Shape [S] each, in tokens.
struct ReplicaBounds {
  std::vector<int64_t> lower, upper;
};
ReplicaBounds replica_bounds(const std::vector<int64_t>& demand /*[G*E]*/, const Placement& placement,
                             double balance_slack);

// Inverse-bandwidth cost a_ij of equation (1) per token, in seconds: 0 on the same GPU,
// token_bytes / nvlink_bw within a node, token_bytes / nic_bw across nodes. Throws
// ArgumentError for a GPU outside the topology or non-positive bandwidths / token_bytes.
double pair_cost(int src_gpu, int dst_gpu, const Topology& topo, double token_bytes);

// Roofline time of one expert GEMM as the routing weighs it (core/roofline.hpp's model, the
// same arithmetic): t(n) = 0 for n = 0 rows, else max(6 n hidden ffn / peak_flops, read_s) +
// launch_s, in seconds. Below the ridge a GEMM costs its weight read whatever its rows.
// Disabled (read_s = 0, the default): routing balances rows only (equation (1)).
struct GemmCost {
  double hidden = 0, ffn = 0, peak_flops = 0;  // elements, elements, FLOP/s
  double read_s = 0, launch_s = 0;             // seconds: weight read, kernel launch
  int64_t ridge = 0;  // the most rows whose FLOP time is <= read_s (computed, not set)
  GemmCost() = default;
  // Throws ArgumentError("gemm: ...") unless every figure is finite, hidden, ffn, peak_flops
  // positive and read_s, launch_s >= 0.
  GemmCost(double hidden, double ffn, double peak_flops, double read_s, double launch_s);
  bool enabled() const { return read_s > 0; }
  double flop_time(int64_t rows) const { return 6.0 * double(rows) * hidden * ffn / peak_flops; }
  // Whether a GEMM of `rows` rows costs its weight read (FLOP time <= read_s).
  bool weight_bound(int64_t rows) const { return rows <= ridge; }
  double time(int64_t rows) const {
    if (rows <= 0) return 0.0;
    if (rows <= ridge) return read_s + launch_s;  // flop_time(rows) <= read_s: the same value
    const double f = flop_time(rows);
    return (f > read_s ? f : read_s) + launch_s;
  }
};
// The model's expert GEMM on the topology's GPUs: time(n) == expert_compute_time(n, model, topo).
// Throws ArgumentError("topo: ...") for a non-positive peak_flops or hbm_bw.
GemmCost gemm_cost(const ModelShape& model, const Topology& topo);

// Zepp's locality-preferred count-level plan (§4.1 eq. (1), §5 "Routing"): per expert, greedy
// water-filling by levels -- level 0 each source GPU to replicas on its own GPU, level 1 to
// replicas on other GPUs of its node, level 2 to remote replicas -- each allocation limited by
// the receiving slot's remaining capacity (upper - load) and by the reserve rule (unassigned
// demand must still cover every slot's unmet lower bound). Always satisfies the bounds of
// replica_bounds. Returns M^e_ij sorted by (expert, src_gpu, slot), no zeros. With `gemm`
// enabled the plan is then consolidated (routing/consolidate.cpp, beyond the paper): a
// weight-bound replica's rows move onto another replica of its expert while that lowers the
// busiest GPU's roofline GEMM time; the bounds then hold for every expert not moved.
std::vector<RouteCount> route_locality_counts(const std::vector<int64_t>& demand /*[G*E]*/,
                                              const Placement& placement, const Topology& topo,
                                              double balance_slack, const GemmCost& gemm = {});

// Pair level of §5: gives every (token, k) pair of `batch` a slot such that the per
// (expert, src_gpu, slot) tallies equal `counts` exactly. Per token it prefers a slot on its own
// node with quota (own GPU first), then a remote slot on a node the token already goes to, then
// the remote node where most of the token's other still unassigned experts have quota, so each
// token crosses to as few nodes as the counts allow (one transfer per destination node after
// merging, §4.2). Returns slot_of_pair [T * top_k]. Throws ArgumentError("counts: ...") when
// counts do not match the batch's demand or name a slot not holding the expert.
std::vector<int32_t> assign_pairs(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                                  const std::vector<RouteCount>& counts);

// route_locality_counts on batch.demand() (consolidated when `gemm` is enabled), then
// assign_pairs when `assign` is true (slot_of_pair stays empty otherwise).
// `stats`, when given, receives what the consolidation did; `work`, when given, the routing's
// own work (RoutingWork).
// What the locality routing did beyond its fixed work (cells, pairs), for the planning cost model
// (plan/planning.hpp): the count level's visits of remote replicas in level 2 of the
// water-filling (Router::remote_visits; every rank computes them), and per source GPU the pairs
// of the tokens that ran the pair level's node choice (Router::rule_pairs; empty unless assigned).
struct RoutingWork {
  int64_t remote_visits = 0;
  std::vector<int64_t> rule_pairs;  // [G]
};

struct ConsolidateStats {
  int moves = 0;      // replicas emptied
  double cells = 0;   // entries it read (its planning work): S slot loads, + S x G and 2 G per move when it moves
};
Routing route_locality(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                       double balance_slack, bool assign = true, const GemmCost& gemm = {},
                       ConsolidateStats* stats = nullptr, RoutingWork* work = nullptr);

// EPLB-style even split: source GPU i's j-th request (in token order) for expert e goes to
// replica (i + j) mod r_e of e's replicas in ascending slot order. The source-dependent start
// spreads the remainders of different sources over different replicas, so replica totals differ
// by little. With one replica per expert this is plain EP home routing. Ignores load bounds.
Routing route_even(const RoutingBatch& batch, const Placement& placement, bool assign = true);

// Objective of equation (1) for a plan, in seconds: sum of M^e_ij * pair_cost(i, gpu of slot).
// Computed from the integer totals of tokens per cost class (same node, remote), so equal plans
// cost exactly the same.
double routing_cost(const std::vector<RouteCount>& counts, const Placement& placement, const Topology& topo,
                    double token_bytes);
double routing_cost(const Routing& routing, const Placement& placement, const Topology& topo, double token_bytes);

// Exact optimum of equation (1) under the bounds of replica_bounds: per expert a min-cost flow
// (LEMON NetworkSimplex) source GPU -> slot -> sink, with slot -> sink arcs bounded by
// [lower, upper]. Integer arc costs are exact: a_ij is proportional to 1/bandwidth, so
// same-node arcs cost nic_bw / g and remote arcs nvlink_bw / g, with both bandwidths as whole
// bytes per second (within 1e-12 of an integer) or else as exact binary fractions, and g their
// greatest common divisor (a100: 1 and 4). Throws
// ArgumentError("topo: ...") when those integers exceed 2^31. Returns the optimal M.
std::vector<RouteCount> route_optimal_counts(const std::vector<int64_t>& demand /*[G*E]*/,
                                             const Placement& placement, const Topology& topo,
                                             double balance_slack);

// Whether route_optimal_counts can weigh `topo`'s links exactly: both bandwidths positive and
// finite, their ratio one of integers below 2^31 (false e.g. for NVLink 1e6 GB/s over a NIC of
// 1e-6 GB/s, a ratio of 1e12).
bool exact_optimum_possible(const Topology& topo);

// routing_cost of route_optimal_counts(batch.demand(), ...), in seconds.
double routing_cost_optimal(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                            double balance_slack, double token_bytes);

}  // namespace zepp
