// Internal: what plan_moonep and plan_haloq share (replicate.cpp). Not a public API.
#pragma once
#include <cstdint>
#include <vector>

#include "swap/replicate.hpp"

namespace zepp::replicate_detail {

// Validates the arguments (ArgumentError naming them) and returns H = E / G.
int check_args(const std::vector<int64_t>& demand, int num_experts, const Topology& topo, int extra);

// Contiguous homes in slots [0, H) of each GPU; helper slots set to -1 (free).
Placement home_layout(int num_experts, const Topology& topo, int extra);

// Free helper slots (-1) become aliases of their GPU's first home expert.
void fill_aliases(Placement& p);

// Prefix-sum (north-west corner) assignment of one expert: sources in index order fill the
// slots' quotas in the order given. `supply[i]` routes of source i, `quota[j]` of slots[j];
// the sums must match. Appends to `out`.
void prefix_fill(int32_t expert, const std::vector<int64_t>& supply, const std::vector<int32_t>& slots,
                 std::vector<int64_t> quota, std::vector<RouteCount>& out);

// Sorts by (expert, src_gpu, slot), merges duplicates, drops zeros.
void normalize_counts(std::vector<RouteCount>& counts);

}  // namespace zepp::replicate_detail
