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

// Entries of one (source GPU, expert): [cur, local_end) slots on the source's node that still
// have quota (own GPU first); [local_end, remote_end) remote slots with quota, kept compact by
// swap-removing exhausted ones.
struct Quota {
  int32_t cur = 0, local_end = 0, remote_end = 0;
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
      const std::string at = "entry " + std::to_string(y) + " ";
      require(c.expert >= 0 && c.expert < E && c.src_gpu >= 0 && c.src_gpu < G && c.slot >= 0 && c.slot < S,
              "counts", at + "has an expert, src_gpu or slot out of range");
      require(placement.phy2log[c.slot] == c.expert, "counts",
              at + "sends expert " + std::to_string(c.expert) + " to slot " + std::to_string(c.slot) +
                  ", which holds expert " + std::to_string(placement.phy2log[c.slot]));
      require(c.tokens > 0, "counts", at + "has tokens <= 0");
      require(y == x || c.slot > counts[y - 1].slot, "counts", at + "is out of (expert, src_gpu, slot) order");
    }
    require(x == 0 || std::pair(counts[x - 1].expert, counts[x - 1].src_gpu) < std::pair(c0.expert, c0.src_gpu),
            "counts", "entry " + std::to_string(x) + " is out of (expert, src_gpu, slot) order");
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
    x = y;
  }
}

}  // namespace

std::vector<int32_t> assign_pairs(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                                  const std::vector<RouteCount>& counts) {
  placement.validate("placement");
  check_topology(topo, placement);
  check_batch(batch, placement);
  require(counts.size() < size_t(INT32_MAX), "counts", "too many entries");
  const int G = placement.num_gpus, E = placement.num_experts, k = batch.top_k;
  std::vector<Entry> ents;
  std::vector<Quota> keys;
  build_quotas(counts, placement, topo, ents, keys);

  std::vector<int32_t> slot_of_pair(batch.expert_ids.size());
  std::vector<int> pend(k), used(k);  // per token: pairs still without a slot, nodes it goes to
  for (int i = 0; i < G; ++i) {
    Quota* const kq = &keys[size_t(i) * E];
    for (int64_t t = batch.token_offset[i]; t < batch.token_offset[i + 1]; ++t) {
      const int32_t* ids = &batch.expert_ids[size_t(t) * k];
      int32_t* out = &slot_of_pair[size_t(t) * k];
      int np = 0, nu = 0;
      for (int q = 0; q < k; ++q) {  // on-node slots first
        Quota& qk = kq[ids[q]];
        if (qk.cur < qk.local_end) {
          Entry& en = ents[qk.cur];
          out[q] = en.slot;
          if (--en.quota == 0) ++qk.cur;
        } else {
          pend[np++] = q;
        }
      }
      auto take = [&](int q, Quota& qk, int32_t x) {
        out[q] = ents[x].slot;
        if (--ents[x].quota == 0) std::swap(ents[x], ents[--qk.remote_end]);
      };
      int first = 0;
      while (first < np) {
        // Pairs whose expert has quota on a node this token already goes to.
        int w = first;
        for (int a = first; a < np; ++a) {
          const int q = pend[a];
          Quota& qk = kq[ids[q]];
          if (qk.local_end == qk.remote_end) mismatch(i, ids[q], "fewer");
          int32_t hit = -1;
          for (int32_t x = qk.local_end; x < qk.remote_end && hit < 0; ++x)
            for (int u = 0; u < nu; ++u)
              if (ents[x].node == used[u]) {
                hit = x;
                break;
              }
          if (hit >= 0)
            take(q, qk, hit);
          else
            pend[w++] = q;
        }
        np = w;
        if (first == np) break;
        // Open a node for the first pending pair: the one where most of the token's other pending
        // experts also have quota (so they join it), ties to the larger summed quota (leaving
        // more room for later tokens), then to the earlier entry.
        const int q0 = pend[first++];
        Quota& q0k = kq[ids[q0]];
        int32_t best = -1;
        int best_joins = -1;
        int64_t best_quota = -1;
        for (int32_t x = q0k.local_end; x < q0k.remote_end; ++x) {
          int joins = 0;
          int64_t quota = ents[x].quota;
          for (int b = first; b < np; ++b) {
            const Quota& qb = kq[ids[pend[b]]];
            for (int32_t y = qb.local_end; y < qb.remote_end; ++y)
              if (ents[y].node == ents[x].node) {
                ++joins;
                quota += ents[y].quota;
                break;
              }
          }
          if (joins > best_joins || (joins == best_joins && quota > best_quota)) {
            best = x;
            best_joins = joins;
            best_quota = quota;
          }
        }
        used[nu++] = ents[best].node;
        take(q0, q0k, best);
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
