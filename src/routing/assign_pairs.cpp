// Pair level of Zepp's routing (§5): turn the count plan M into one slot per (token, k) pair,
// consolidating each token's remote requests onto few nodes so that merged dispatch (§4.2)
// sends the token across the network fewer times. Flat arrays only; nothing is allocated per
// token.
#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "routing/detail.hpp"
#include "routing/routing.hpp"

namespace zepp {
using namespace routing_detail;
namespace {

// One count entry with its remaining quota.
struct Entry {
  int32_t slot, node;
  int64_t quota;
};

// Node sets as 64-bit masks (node mod 64). Above 64 nodes two nodes can share a bit, which can
// only make the consolidation choose worse, never break the plan: quotas are exact regardless.
inline uint64_t node_bit(int node) { return uint64_t(1) << (node & 63); }

// Entries of one (source GPU, expert): [cur, local_end) slots on the source's node that still
// have quota (own GPU first); [local_end, remote_end) remote slots with quota, kept compact by
// swap-removing exhausted ones; `remote` = their nodes.
struct Quota {
  int32_t cur = 0, local_end = 0, remote_end = 0;
  uint64_t remote = 0;
};

[[noreturn]] void mismatch(int gpu, int expert, const char* what) {
  throw ArgumentError("counts: " + std::string(what) + " tokens for (src_gpu " + std::to_string(gpu) +
                      ", expert " + std::to_string(expert) + ") than the batch selects");
}

// Validates `counts` (in range, sorted, slots holding their expert) and lays them out per
// (source GPU, expert) key = src * E + expert.
void build_quotas(const std::vector<RouteCount>& counts, const Placement& placement, const Topology& topo,
                  std::vector<Entry>& ents, std::vector<Quota>& keys) {
  const int G = placement.num_gpus, E = placement.num_experts, S = placement.num_slots();
  ents.resize(counts.size());
  keys.assign(size_t(G) * E, Quota{});
  for (size_t x = 0; x < counts.size();) {
    const RouteCount& c0 = counts[x];
    size_t y = x;  // the group [x, y) shares (expert, src_gpu)
    for (; y < counts.size() && counts[y].expert == c0.expert && counts[y].src_gpu == c0.src_gpu; ++y) {
      const RouteCount& c = counts[y];
      const char* bad = nullptr;
      if (!(c.expert >= 0 && c.expert < E && c.src_gpu >= 0 && c.src_gpu < G && c.slot >= 0 && c.slot < S))
        bad = "has an expert, src_gpu or slot out of range";
      else if (placement.phy2log[c.slot] != c.expert)
        bad = "sends an expert to a slot that does not hold it";
      else if (c.tokens <= 0)
        bad = "has tokens <= 0";
      else if (y > x && c.slot <= counts[y - 1].slot)
        bad = "is out of (expert, src_gpu, slot) order";
      if (bad)
        throw ArgumentError("counts: entry " + std::to_string(y) + " (expert " + std::to_string(c.expert) +
                            ", src_gpu " + std::to_string(c.src_gpu) + ", slot " + std::to_string(c.slot) +
                            ", tokens " + std::to_string(c.tokens) + ") " + bad);
    }
    if (x > 0 && !(std::pair(counts[x - 1].expert, counts[x - 1].src_gpu) < std::pair(c0.expert, c0.src_gpu)))
      throw ArgumentError("counts: entry " + std::to_string(x) + " is out of (expert, src_gpu, slot) order");
    // Three stable passes: own GPU, rest of the node, other nodes.
    const int src_node = topo.node_of(c0.src_gpu);
    size_t w = x;
    for (int pass = 0; pass < 3; ++pass)
      for (size_t z = x; z < y; ++z) {
        const int g = placement.gpu_of_slot(counts[z].slot), n = topo.node_of(g);
        const int cls = g == c0.src_gpu ? 0 : n == src_node ? 1 : 2;
        if (cls == pass) ents[w++] = {counts[z].slot, n, counts[z].tokens};
      }
    Quota& k = keys[size_t(c0.src_gpu) * E + c0.expert];
    k.cur = int32_t(x);
    k.local_end = int32_t(x);
    while (k.local_end < int32_t(y) && ents[k.local_end].node == src_node) ++k.local_end;
    k.remote_end = int32_t(y);
    for (int32_t z = k.local_end; z < k.remote_end; ++z) k.remote |= node_bit(ents[z].node);
    x = y;
  }
}

}  // namespace

std::vector<int32_t> assign_pairs(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                                  const std::vector<RouteCount>& counts) {
  check_placement(placement);
  check_topology(topo, placement);
  check_batch(batch, placement);
  if (counts.size() >= size_t(INT32_MAX)) throw ArgumentError("counts: more than 2^31 entries");
  const int G = placement.num_gpus, E = placement.num_experts, k = batch.top_k;
  std::vector<Entry> ents;
  std::vector<Quota> keys;
  build_quotas(counts, placement, topo, ents, keys);

  std::vector<int32_t> slot_of_pair(batch.expert_ids.size());
  std::vector<int> pend(k);        // per token: pairs (index q) still without a slot
  std::vector<Quota*> pend_key(k); // and their quota entries
  // Serves pair q from remote entry x of qk, keeping the active entries and their node mask
  // exact when x runs out.
  auto take = [&](int32_t* out, int q, Quota& qk, int32_t x) {
    out[q] = ents[x].slot;
    if (--ents[x].quota > 0) return;
    std::swap(ents[x], ents[--qk.remote_end]);
    qk.remote = 0;
    for (int32_t z = qk.local_end; z < qk.remote_end; ++z) qk.remote |= node_bit(ents[z].node);
  };
  for (int i = 0; i < G; ++i) {
    Quota* const kq = &keys[size_t(i) * E];
    for (int64_t t = batch.token_offset[i]; t < batch.token_offset[i + 1]; ++t) {
      const int32_t* ids = &batch.expert_ids[size_t(t) * k];
      int32_t* out = &slot_of_pair[size_t(t) * k];
      int np = 0;
      for (int q = 0; q < k; ++q) {  // slots on the token's own node first
        Quota& qk = kq[ids[q]];
        if (qk.cur < qk.local_end) {
          Entry& en = ents[qk.cur];
          out[q] = en.slot;
          if (--en.quota == 0) ++qk.cur;
        } else {
          pend_key[np] = &qk;
          pend[np++] = q;
        }
      }
      uint64_t used = 0;  // remote nodes this token already goes to
      for (int first = 0; first < np;) {
        // Open a node for the first pending pair: the one where most of the token's other pending
        // experts also have quota (they then join it), ties to the larger quota there (more room
        // left for later tokens), then to the earlier entry.
        Quota& q0 = *pend_key[first];
        if (q0.local_end == q0.remote_end) mismatch(i, ids[pend[first]], "fewer");
        int32_t best = -1;
        int best_joins = -1;
        int64_t best_quota = -1;
        for (int32_t x = q0.local_end; x < q0.remote_end; ++x) {
          const uint64_t bit = node_bit(ents[x].node);
          int joins = 0;
          for (int b = first + 1; b < np; ++b) joins += (pend_key[b]->remote & bit) != 0;
          if (joins > best_joins || (joins == best_joins && ents[x].quota > best_quota)) {
            best = x;
            best_joins = joins;
            best_quota = ents[x].quota;
          }
        }
        used |= node_bit(ents[best].node);
        take(out, pend[first++], q0, best);
        // The other pending pairs whose expert has quota on a node the token already goes to.
        int w = first;
        for (int a = first; a < np; ++a) {
          Quota& qk = *pend_key[a];
          int32_t x = qk.local_end;
          if (qk.remote & used)
            while (!(node_bit(ents[x].node) & used)) ++x;
          else
            x = -1;
          if (x >= 0) {
            take(out, pend[a], qk, x);
          } else {
            pend_key[w] = &qk;
            pend[w++] = pend[a];
          }
        }
        np = w;
      }
    }
  }
  for (int i = 0; i < G; ++i)
    for (int e = 0; e < E; ++e) {
      const Quota& qk = keys[size_t(i) * E + e];
      if (qk.cur != qk.local_end || qk.remote_end != qk.local_end) mismatch(i, e, "more");
    }
  return slot_of_pair;
}

}  // namespace zepp
