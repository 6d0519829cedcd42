// Per-invocation replication baselines: hot experts are replicated for the current batch and
// their weights copied from the owners within the layer, across nodes where needed, instead of
// Zepp's static placement plus intra-node swaps (paper §6.2 "MoonEP"; iser-moe.txt §4.1
// "HALO-Q"). Both start from contiguous home experts: expert e's owner is GPU e / H, H = E / G,
// in home slot e % H; each GPU has `extra` more slots (helper slots) after its H home slots.
//
// Shapes: demand d is [G * E] tokens, d[i * E + e] = (token, expert) pairs of source GPU i
// selecting e (RoutingBatch::demand()). Loads are in tokens.
#pragma once
#include <cstdint>
#include <vector>

#include "core/types.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

// One HALO-Q broadcast (iser-moe.txt §4.2): expert `expert` of rank `owner` installed in helper
// slot index `helper` (0-based, after the H home slots) of every rank of the aligned group
// [first, first + size). The owner may lie outside the group. MoonEP plans have none.
struct ReplicaBroadcast {
  int32_t expert = -1, owner = -1, first = 0, size = 0, helper = -1;
  bool owner_in_group() const { return owner >= first && owner < first + size; }
};

struct ReplicationPlan {
  Placement placement;             // H + extra slots per GPU
  std::vector<RouteCount> counts;  // M^e_ij, sorted by (expert, src_gpu, slot), no zeros
  // Replicas installed for this invocation, each copied point to point from the expert's owner
  // (NVLink within a node, the NIC across nodes). An unused helper slot holds its GPU's first
  // home expert as an alias: no weights move and no token is routed there.
  std::vector<WeightMove> weight_moves;
  std::vector<ReplicaBroadcast> broadcasts;  // HALO-Q only, in placement order
};

// MoonEP-style replication (DESIGN.md §2; iser-moe.txt §7 "MoonEP ... balances load exactly,
// each owner pushing weights with one store per destination"):
//  1. replica counts from this batch: G * extra times, one more replica to the expert with the
//     highest demand per replica (at most one replica per GPU; ties to the lowest expert);
//  2. redundant replicas, heaviest per-replica load first, onto the GPU with the least
//     estimated load (demand spread evenly over replicas) that has a free slot and does not
//     hold the expert (ties to the lowest GPU);
//  3. routing balanced exactly: each expert's demand is split over the GPUs holding it so that
//     the most loaded GPU carries the least possible load (max-flow feasibility, LEMON Preflow,
//     bisection on the integer bound); within an expert, source GPUs fill the replicas' quotas
//     by prefix sums (sources and replicas in index order).
// Throws ArgumentError naming the argument: topo (E % G != 0), demand (shape, negative),
// extra (negative).
ReplicationPlan plan_moonep(const std::vector<int64_t>& demand, int num_experts, const Topology& topo, int extra);

// HALO-Q (iser-moe.txt §4.1, Algorithm 1) with S = extra helper slots per rank (GPU):
//  1. loads L[r] of home experts; water level T = ceil(sum L / G);
//  2. placement: while some rank above T can still export, the busiest such rank o exports its
//     heaviest not yet exported expert among its min(S, H) heaviest (at most S exports per
//     owner) to an aligned group (level l: G / 2^l consecutive ranks, l = 0 and every finer
//     level with 2^l | G and group size >= 4) whose members all have a free helper slot: the
//     finest level with a group whose room below T (members other than o) absorbs
//     min(L[o] - T, demand of e), the group with the most room; if none absorbs it, the group
//     with the most room; if no group has room, o is frozen. Up to L[o] - T of e's routes move
//     from o to the members, coldest first, each up to T;
//  3. slot coloring: broadcasts from coarse to fine take the lowest helper index free on all
//     their members;
//  4. quota repair: for every rank pair (a, c) in a circle-method tournament, run twice and in
//     both orders, a takes from c's spare quota (quota beyond c's own routes) what a's own
//     routes need, on experts both host, and gives c as much of its own spare quota (where c's
//     routes need it first): equal amounts, so every load and total stays;
//  5. route rewrite, local first: each host keeps up to its quota of its own routes; the
//     surplus routes of all ranks, in rank order, fill the hosts' remaining quotas in rank order.
// The owner serves its quota in its home slot; a member in its helper slot. Weights are copied
// point to point from the owner to every other member (we model no in-switch multicast: our
// topology's groups span nodes, which NVLink SHARP cannot).
// domain_size > 0 (ISER-MoE's scope, one NVLink domain per group, §5): only groups inside the
// owner's block of domain_size consecutive ranks are candidates (levels halving from
// domain_size, so no group straddles two domains; domain_size must divide G). 0: every aligned
// group of all ranks.
// Throws ArgumentError like plan_moonep, and "domain_size" when it does not divide G.
ReplicationPlan plan_haloq(const std::vector<int64_t>& demand, int num_experts, const Topology& topo, int extra,
                           int domain_size);
ReplicationPlan plan_haloq(const std::vector<int64_t>& demand, int num_experts, const Topology& topo, int extra);

// Placement with no replicas (contiguous homes, `extra` alias slots) routed home: the
// "no balancing" reference of the excess-load metric (iser-moe.txt §6.1). Returns [G] loads.
std::vector<int64_t> home_loads(const std::vector<int64_t>& demand, int num_experts, const Topology& topo);

}  // namespace zepp
