#include "routing/detail.hpp"

#include <cmath>

#include "core/error.hpp"

// Messages are built only on failure: these checks run on every routing call, inside the
// planning time the benchmark measures.
namespace zepp::routing_detail {
namespace {
[[noreturn]] void fail(const std::string& name, const std::string& what) { throw ArgumentError(name + ": " + what); }
}  // namespace

void check_slack(double balance_slack) {
  if (!(std::isfinite(balance_slack) && balance_slack >= 0 && balance_slack < 1))
    fail("balance_slack", "expected a number in [0, 1), got " + std::to_string(balance_slack));
}

void check_placement(const Placement& placement) {
  bool ok = placement.num_gpus > 0 && placement.slots_per_gpu > 0 && placement.num_experts > 0 &&
            placement.phy2log.size() == size_t(placement.num_slots());
  if (ok) {
    std::vector<uint8_t> held(placement.num_experts, 0);
    for (int32_t e : placement.phy2log) {
      if (uint32_t(e) >= uint32_t(placement.num_experts)) {
        ok = false;
        break;
      }
      held[e] = 1;
    }
    for (uint8_t h : held) ok = ok && h;
  }
  if (!ok) placement.validate("placement");  // throws, naming the slot or expert at fault
}

void check_topology(const Topology& topo, const Placement& placement) {
  if (!(topo.nodes >= 1 && topo.gpus_per_node >= 1)) fail("topo", "nodes and gpus_per_node must be at least 1");
  if (topo.num_gpus() != placement.num_gpus)
    fail("topo", "has " + std::to_string(topo.num_gpus()) + " GPUs, the placement " +
                     std::to_string(placement.num_gpus));
}

void check_costs(const Topology& topo, double token_bytes) {
  if (!(std::isfinite(token_bytes) && token_bytes > 0)) fail("token_bytes", "must be positive and finite");
  if (!(std::isfinite(topo.nvlink_bw) && topo.nvlink_bw > 0 && std::isfinite(topo.nic_bw) && topo.nic_bw > 0))
    fail("topo", "nvlink_bw and nic_bw must be positive and finite");
}

void check_demand(const std::vector<int64_t>& demand, const Placement& placement) {
  const size_t want = size_t(placement.num_gpus) * placement.num_experts;
  if (demand.size() != want)
    fail("demand", "has " + std::to_string(demand.size()) + " entries, expected num_gpus * num_experts = " +
                       std::to_string(want));
  uint64_t any = 0;  // sign bits ORed together: a branch-free pass that vectorises
  for (int64_t d : demand) any |= uint64_t(d);
  if (!(any >> 63)) return;
  for (size_t x = 0; x < demand.size(); ++x)
    if (demand[x] < 0) fail("demand", "entry " + std::to_string(x) + " is negative (" + std::to_string(demand[x]) + ")");
}

void check_dense_demand(std::span<const int64_t> demand, int num_experts, int num_gpus) {
  const size_t want = size_t(num_experts) * num_gpus;
  if (demand.size() != want)
    fail("demand", "has " + std::to_string(demand.size()) + " entries, expected num_experts * num_gpus = " +
                       std::to_string(want));
  uint64_t any = 0;  // sign bits ORed together, as in check_demand
  for (int64_t d : demand) any |= uint64_t(d);
  if (!(any >> 63)) return;
  for (size_t x = 0; x < demand.size(); ++x)
    if (demand[x] < 0)
      fail("demand", "entry " + std::to_string(x) + " (expert " + std::to_string(x / num_gpus) + ", GPU " +
                         std::to_string(x % num_gpus) + ") is negative (" + std::to_string(demand[x]) + ")");
}

void check_rank_counts(std::span<const int64_t> counts, int num_gpus, int num_experts) {
  const size_t want = size_t(num_gpus) * num_experts;
  if (counts.size() != want)
    fail("counts", "has " + std::to_string(counts.size()) + " entries, expected num_gpus * num_experts = " +
                       std::to_string(want) + " (one row of num_experts per rank)");
  uint64_t any = 0;  // sign bits ORed together, as in check_demand
  for (int64_t d : counts) any |= uint64_t(d);
  if (!(any >> 63)) return;
  for (size_t x = 0; x < counts.size(); ++x)
    if (counts[x] < 0)
      fail("counts", "entry [" + std::to_string(x / num_experts) + ", " + std::to_string(x % num_experts) +
                         "] (rank, expert) is negative (" + std::to_string(counts[x]) + ")");
}

void check_dense_counts(std::span<const int64_t> m, int num_slots, int num_gpus) {
  const size_t want = size_t(num_slots) * num_gpus;
  if (m.size() != want)
    fail("counts", "has " + std::to_string(m.size()) + " entries, expected num_slots * num_gpus = " +
                       std::to_string(want));
}

void check_batch(const RoutingBatch& batch, const Placement& placement) {
  if (batch.num_gpus != placement.num_gpus)
    fail("batch", "has " + std::to_string(batch.num_gpus) + " GPUs, the placement " +
                      std::to_string(placement.num_gpus));
  if (batch.num_experts != placement.num_experts)
    fail("batch", "has " + std::to_string(batch.num_experts) + " experts, the placement " +
                      std::to_string(placement.num_experts));
  if (batch.top_k < 1) fail("batch", "top_k must be at least 1, got " + std::to_string(batch.top_k));
  if (batch.token_offset.size() != size_t(batch.num_gpus) + 1 || batch.token_offset[0] != 0)
    fail("batch", "token_offset must have num_gpus + 1 entries starting at 0");
  for (int i = 0; i < batch.num_gpus; ++i)
    if (batch.token_offset[i + 1] < batch.token_offset[i])
      fail("batch", "token_offset decreases at GPU " + std::to_string(i));
  const size_t pairs = size_t(batch.num_tokens()) * batch.top_k;
  if (batch.expert_ids.size() != pairs)
    fail("batch", "expert_ids has " + std::to_string(batch.expert_ids.size()) +
                      " entries, expected tokens * top_k = " + std::to_string(pairs));
  // One branch-free pass (vectorises); the search for the culprit runs only on failure.
  const uint32_t E = uint32_t(batch.num_experts);
  bool bad = false;
  for (int32_t e : batch.expert_ids) bad |= uint32_t(e) >= E;
  if (!bad) return;
  for (size_t p = 0; p < pairs; ++p)
    if (uint32_t(batch.expert_ids[p]) >= E)
      fail("batch", "expert_ids[" + std::to_string(p) + "] = " + std::to_string(batch.expert_ids[p]) +
                        ", expected [0, " + std::to_string(E) + ")");
}

ReplicaIndex::ReplicaIndex(const Placement& placement) : begin(placement.num_experts + 1, 0) {
  for (int32_t e : placement.phy2log) ++begin[e + 1];
  for (int e = 0; e < placement.num_experts; ++e) begin[e + 1] += begin[e];
  slot.resize(placement.phy2log.size());
  std::vector<int32_t> fill(begin.begin(), begin.end() - 1);
  for (int p = 0; p < placement.num_slots(); ++p) slot[fill[placement.phy2log[p]]++] = p;
}

}  // namespace zepp::routing_detail
