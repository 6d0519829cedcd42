// Count level of Zepp's locality-preferred routing (paper §4.1 equation (1), §5 "Routing").
//
// Per expert e with slots j (bounds lower <= load_j <= upper from replica_bounds) and source
// demands d_i, water-filling allocates x tokens of source i to slot j in three levels:
//   level 0: every source GPU to the slots on its own GPU (cost 0);
//   level 1: to slots on the other GPUs of its node (NVLink);
//   level 2: to slots on other nodes (NIC), most remaining capacity first.
// Every allocation is x = min(rem_i, upper - load_j, unmet_j + slack), where unmet_j =
// max(0, lower - load_j), remaining = unassigned demand of e, slack = remaining - sum_j unmet_j.
// The third term is the reserve rule: after the allocation the unassigned demand still covers
// every slot's unmet lower bound.
//
// Why level 2 places everything. Invariants (all start true since r*lower <= T <= r*upper):
// (a) slack >= 0 and never increases (an allocation lowers it by max(0, x - unmet_j));
// (b) sum_j (upper - load_j) >= remaining (both drop by x);
// (c) unmet_j never increases and upper >= lower gives upper - load_j >= unmet_j.
// Levels 0 and 1 visit every (source, slot on its node) pair once. If source i still has demand
// after such a visit, x < rem_i, so x was the capacity (slot j full) or unmet_j + slack (slack
// now 0); either way unmet_j = 0 afterwards, since x >= unmet_j by (c). So when level 2 reaches
// i with rem_i > 0, its node's slots have unmet 0 and either (1) slack = 0 or (2) they are full.
// (1) slack = 0 means remaining = sum of unmet, all of it on other nodes' slots, and
//     rem_i <= remaining; with slack 0 each visit gives min(rem_i, unmet_j), so visiting all
//     remote slots places rem_i.
// (2) by (b) the remote slots have >= rem_i capacity. Each remote visit fills the slot, ends
//     rem_i, or sets slack to 0 leaving unmet_j = 0 on every slot visited so far; from then on
//     case (1)'s argument applies to the slots still ahead.
// Hence rem_i reaches 0 for every source; the final check only guards this proof.
#include <algorithm>
#include <stdexcept>

#include "routing/detail.hpp"
#include "routing/routing.hpp"

namespace zepp {
using namespace routing_detail;
namespace {

// Working state of one expert's water-filling; buffers are reused across experts.
struct Filler {
  int r = 0;
  int64_t lower = 0, upper = 0, remaining = 0, unmet_total = 0;
  std::vector<int64_t> load;   // [r]
  std::vector<int64_t> rem;    // [G] unassigned demand per source GPU
  std::vector<int64_t> alloc;  // [G * r] tokens of source i on slot j

  void give(int i, int j) {
    const int64_t unmet = std::max<int64_t>(0, lower - load[j]);
    const int64_t x = std::min({rem[i], upper - load[j], unmet + (remaining - unmet_total)});
    if (x <= 0) return;
    load[j] += x;
    rem[i] -= x;
    remaining -= x;
    unmet_total -= std::min(x, unmet);
    alloc[size_t(i) * r + j] += x;
  }
};

}  // namespace

std::vector<RouteCount> route_locality_counts(const std::vector<int64_t>& demand, const Placement& placement,
                                              const Topology& topo, double balance_slack) {
  check_placement(placement);
  check_topology(topo, placement);
  check_demand(demand, placement);
  check_slack(balance_slack);
  const int G = placement.num_gpus, E = placement.num_experts, gpn = topo.gpus_per_node;
  const ReplicaIndex rep(placement);

  std::vector<RouteCount> out;
  out.reserve(size_t(G) * E + placement.num_slots());  // typical upper end; grows if needed

  Filler f;
  f.rem.resize(G);
  std::vector<int32_t> gpu, node, order;  // per slot of the current expert
  std::vector<int64_t> d(G);  // the current expert's column of the demand
  for (int e = 0; e < E; ++e) {
    int64_t total = 0;
    for (int i = 0; i < G; ++i) total += d[i] = demand[size_t(i) * E + e];
    if (total == 0) continue;
    const int r = rep.count(e);
    const int32_t* slots = &rep.slot[rep.begin[e]];
    if (r == 1) {  // the water-filling would send everything to the only slot
      for (int i = 0; i < G; ++i)
        if (d[i]) out.push_back({e, i, slots[0], d[i]});
      continue;
    }
    f.r = r;
    slot_bounds(total, r, balance_slack, f.lower, f.upper);
    f.remaining = total;
    f.unmet_total = f.lower * r;
    f.load.assign(r, 0);
    f.alloc.assign(size_t(G) * r, 0);
    f.rem = d;
    gpu.resize(r);
    node.resize(r);
    order.resize(r);
    for (int j = 0; j < r; ++j) {
      gpu[j] = placement.gpu_of_slot(slots[j]);
      node[j] = gpu[j] / gpn;
      order[j] = j;
    }

    for (int j = 0; j < r; ++j) f.give(gpu[j], j);  // level 0
    for (int j = 0; j < r; ++j)                      // level 1
      for (int i = node[j] * gpn; i < (node[j] + 1) * gpn; ++i)
        if (i != gpu[j]) f.give(i, j);
    // Level 2. All remote slots cost the same in eq. (1). Taking the one with the most room
    // (upper - load; upper is the same for all slots of e) first puts a source's remote demand
    // into few, large pieces: fewer messages and fewer destination nodes per token for
    // assign_pairs to consolidate. Ties go to the lower slot id. `order` stays sorted by
    // (load, j); allocations only raise loads, so an insertion sort per source is near-linear.
    for (int i = 0; i < G; ++i) {
      if (f.rem[i] == 0) continue;
      for (int a = 1; a < r; ++a)
        for (int b = a; b > 0 && std::pair(f.load[order[b]], order[b]) < std::pair(f.load[order[b - 1]], order[b - 1]); --b)
          std::swap(order[b], order[b - 1]);
      const int own = i / gpn;
      for (int a = 0; a < r && f.rem[i] > 0; ++a)
        if (node[order[a]] != own) f.give(i, order[a]);
      if (f.rem[i] != 0) throw std::logic_error("route_locality_counts: water-filling left demand unplaced");
    }
    for (int i = 0; i < G; ++i)
      for (int j = 0; j < r; ++j)
        if (int64_t x = f.alloc[size_t(i) * r + j]) out.push_back({e, i, slots[j], x});
  }
  return out;
}

Routing route_locality(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                       double balance_slack, bool assign) {
  check_placement(placement);
  check_batch(batch, placement);
  Routing out;
  out.counts = route_locality_counts(batch.demand(), placement, topo, balance_slack);
  if (assign) out.slot_of_pair = assign_pairs(batch, placement, topo, out.counts);
  return out;
}

}  // namespace zepp
