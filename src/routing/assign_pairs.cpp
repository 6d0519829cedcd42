// Pair level of Zepp's routing (§5): turn the count plan M into one slot per (token, k) pair,
// consolidating each token's remote requests onto few nodes so that merged dispatch (§4.2)
// sends the token across the network fewer times.
//
// Per token it prefers a slot on its own node with quota (own GPU first), then a remote slot on
// a node the token already goes to, then opens the remote node where most of the token's other
// still unassigned experts have quota. Quotas belong to (source GPU, expert) keys, so the tokens
// of different source GPUs never interact: threads split the GPUs and give the same slots as
// one thread. Flat arrays only; nothing is allocated per token.
//
// Fixed keys first (assign_gpus with fixed_first: the rule's slots, faster). Most keys have
// exactly one entry once the quotas are built (one replica, or all of a source's quota on
// one): such a key is fixed, its pairs get that entry's slot whatever the token, and its
// quota running out is an error. So every token's pairs first take their keys' slots from a
// table (Router::fixed_; one load per pair, no branch) and count their keys' quotas down
// (left_); a token with a key that is not fixed goes on: (a) when none of those keys has two
// remote entries or more (kOpen), their pairs take their local entry in q order, else their
// one remote entry; (b) otherwise (kChoice) the rule itself runs on the token. At the end
// every fixed key must have counted down to zero (route_tokens skips the count: it planned m
// from these very tokens, so each fixed key serves exactly its quota); if one has not, or a
// token failed, the GPUs are assigned again by the rule alone, in token order, which raises
// the rule's error.
// Proof that the slots are the rule's when no error is raised. A key's entries are read and
// written only by its own pairs. (1) The rule reads a fixed key only through its one entry,
// which serves every pair until its quota runs out; the counts show it never did (a fixed
// key's pairs number exactly its quota), so its pairs get its slot in the rule's run as in the
// table, and in (b) the rule sees its quota no lower than the rule alone would (tokens outside
// (b) do not count it there), hence still one remote entry or a local one: the same
// decisions. (2) A key that is not fixed is updated by the same steps in the same token
// order: in (a) by the rule's forced case (a pending pair of a fixed key has one remote entry
// too, and the rule serves it from it), local steps and remote takes of different keys
// commute, and a key's repeated pairs keep their q order; in (b) by the rule. A key flagged
// kOpen never gains remote entries; one flagged kChoice that has lost some only takes the
// rule's path, as does a token whose fixed slot has bit 30 set (2^30 slots or more). The
// rule's error for leftover quota (check_quotas_used) still applies: fixed keys are marked
// spent after the check.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <vector>
#include <string>
#include <type_traits>

#include "core/error.hpp"
#include "routing/detail.hpp"
#include "routing/router.hpp"

namespace zepp {
using namespace routing_detail;

// The tokens to assign, T of them: token t's expert ids are ids[t * k ..], its slots go to
// out[t * k ..], and its GPU is the i with begin[i] <= t < begin[i + 1], or (begin null) src[t],
// or (both null: one rank's tokens) the first GPU of the range assigned. Tokens are visited in
// this order; only the order among one GPU's tokens matters. An id of -1 is padding: slot -1.
template <class Id, class Src, class Out>
struct Router::Tokens {
  const Id* ids;
  Out* out;
  int k;
  int64_t T;
  const Src* src;
  const int64_t* begin;
  bool planned = false;  // m was planned from exactly these tokens (route_tokens)
  const char* plan_name = "counts";  // m as the caller knows it, for the quota errors
};

namespace {

// assign_gpus' answer when a fixed key's count did not match: redo the range in token order.
constexpr int64_t kRedo = -2;
// Router::fixed_ of a key without a fixed slot: kChoice when it has two remote entries or more
// (a token may have to choose among them), kOpen otherwise. Both negative; kChoice has bit 30.
constexpr int32_t kOpen = INT32_MIN, kChoice = INT32_MIN | (1 << 30);

// Node sets as 64-bit masks (node mod 64). Above 64 nodes two nodes can share a bit, which can
// only make the consolidation choose worse, never break the plan: quotas are exact regardless.
inline uint64_t node_bit(int node) { return uint64_t(1) << (node & 63); }

// The error for topk_ids[t, q], an id neither in [0, E) nor -1 (padding).
template <class Id>
[[noreturn]] void bad_id(const Id* ids, int64_t t, int k, int q, int E) {
  throw ArgumentError("topk_ids: entry [" + std::to_string(t) + ", " + std::to_string(q) + "] is " +
                      std::to_string(ids[t * k + q]) + ", expected [0, " + std::to_string(E) + ") or -1 (padding)");
}

[[noreturn]] void mismatch(const char* plan_name, int gpu, int expert, const char* what) {
  throw ArgumentError(std::string(plan_name) + ": " + what + " tokens for (src_gpu " + std::to_string(gpu) +
                      ", expert " + std::to_string(expert) + ") than the batch selects");
}

}  // namespace

// Keys of GPUs [g0, g1), stored from row `home` on: key (i, e) is keys_[(i - home) * E + e] and
// keeps its entries at ents_[(i - home) * S + rep_begin_[e] ..], room for one per replica, so
// ranges of GPUs never share memory. One rank's call (route_rank) uses row 0 whatever its rank:
// the same few kilobytes stay in cache from call to call. Three stable passes over the replicas
// (ascending slots): own GPU, rest of the node, other nodes.
void Router::build_quotas(std::span<const int64_t> m, int g0, int g1, int home) {
  const int G = G_;
  for (int i = g0; i < g1; ++i) {
    const int own_node = i / gpn_;
    Quota* const keys = &keys_[size_t(i - home) * E_];
    const int32_t row = int32_t(size_t(i - home) * S_);
    int32_t* const fixed = &fixed_[size_t(i - home) * (E_ + 1)];
    int64_t* const left = &left_[size_t(i - home) * (E_ + 1)];
    fixed[0] = 0;  // padding: slot -1
    left[0] = 0;
    for (int e = 0; e < E_; ++e) {
      const int b = rep_begin_[e], r = rep_begin_[e + 1] - b;
      const int32_t base = row + b;
      int32_t w = base;
      Quota& qk = keys[e];
      if (r == 1) {  // most experts: one entry or none, local or remote
        const int64_t n = m[size_t(rep_slot_[b]) * G + i];
        const bool local = rep_node_[b] == own_node;
        if (n) ents_[w++] = {rep_slot_[b], rep_node_[b], n};
        qk.cur = base;
        qk.local_end = local ? w : base;
        qk.remote_end = w;
        qk.remote = n && !local ? node_bit(rep_node_[b]) : 0;
        qk.live = n && !local;
        fixed[e + 1] = n ? rep_slot_[b] + 1 : kOpen;
        left[e + 1] = n;
        continue;
      }
      for (int pass = 0; pass < 3; ++pass) {
        if (pass == 2) qk.local_end = w;
        for (int x = b; x < b + r; ++x) {
          const int cls = rep_gpu_[x] == i ? 0 : rep_node_[x] == own_node ? 1 : 2;
          if (cls != pass) continue;
          if (const int64_t n = m[size_t(rep_slot_[x]) * G + i]) ents_[w++] = {rep_slot_[x], rep_node_[x], n};
        }
      }
      qk.cur = base;
      qk.remote_end = w;
      qk.live = w - qk.local_end;
      qk.remote = 0;
      for (int32_t z = qk.local_end; z < w; ++z) qk.remote |= node_bit(ents_[z].node);
      fixed[e + 1] = w - base == 1 ? ents_[base].slot + 1 : w - qk.local_end > 1 ? kChoice : kOpen;
      left[e + 1] = w - base == 1 ? ents_[base].quota : 0;
    }
  }
}

void Router::check_quotas_used(int g0, int g1, int home, const char* plan_name) const {
  for (int i = g0; i < g1; ++i)
    for (int e = 0; e < E_; ++e) {
      const Quota& qk = keys_[size_t(i - home) * E_ + e];
      if (qk.cur != qk.local_end || qk.live != 0) mismatch(plan_name, i, e, "more");
    }
}

// Assigns the tokens of GPUs [g0, g1), in token order, with their keys stored from row `home`
// (build_quotas). Returns the index of the first token whose pairs the counts cannot serve (-1
// if none), with its error in `error`. With fixed_first (the opening comment) it returns -1
// or kRedo, after which the caller builds the quotas again and calls it without.
template <class Id, class Src, class Out>
int64_t Router::assign_gpus(const Tokens<Id, Src, Out>& tokens, int g0, int g1, int home,
                            std::exception_ptr& error, bool fixed_first) {
  const int k = tokens.k;
  // Raw pointers copied into the lambdas, so the hot loop keeps them in registers.
  Entry* const ents = ents_.data();
  Quota* const keys = keys_.data();
  const size_t E = size_t(E_);
  // Per token: pairs (index q) still without a slot, and their keys. On the stack for the
  // top-k of every model we know (<= 64), so the hot path allocates nothing.
  constexpr int kStack = 64;
  int pend_stack[kStack];
  Quota* pend_key_stack[kStack];
  std::vector<int> pend_buf(k > kStack ? k : 0);
  std::vector<Quota*> pend_key_buf(k > kStack ? k : 0);
  int* const pend = k > kStack ? pend_buf.data() : pend_stack;
  Quota** const pend_key = k > kStack ? pend_key_buf.data() : pend_key_stack;
  const Id* const ids0 = tokens.ids;
  Out* const out0 = tokens.out;
  // Pairs of each GPU's tokens that ran the rule's node choice (the planning cost model's term).
  int64_t* const rule = rule_pairs_.data();
  std::fill(rule + g0, rule + g1, 0);
  // Above 64 nodes two nodes share a mask bit, and "a node" below means the nodes of one bit.
  const bool wide = G_ > 64 * gpn_;
  // Serves pair q from remote entry x of qk, keeping `live` and the node mask exact when x runs
  // out: the bit goes when no other entry of its node has quota (they are adjacent, being in
  // slot order; above 64 nodes the whole mask is rebuilt).
  auto take = [ents, wide](Out* out, int q, Quota& qk, int32_t x) __attribute__((always_inline)) {
    out[q] = Out(ents[x].slot);
    if (--ents[x].quota > 0) return;
    --qk.live;
    const int32_t node = ents[x].node;
    if (wide) {
      qk.remote = 0;
      for (int32_t z = qk.local_end; z < qk.remote_end; ++z)
        if (ents[z].quota) qk.remote |= node_bit(ents[z].node);
      return;
    }
    for (int32_t z = x - 1; z >= qk.local_end && ents[z].node == node; --z)
      if (ents[z].quota) return;
    for (int32_t z = x + 1; z < qk.remote_end && ents[z].node == node; ++z)
      if (ents[z].quota) return;
    qk.remote &= ~node_bit(node);
  };
  // The first remote entry of qk with quota (qk.live > 0).
  auto first_live = [ents](const Quota& qk) __attribute__((always_inline)) {
    int32_t x = qk.local_end;
    while (!ents[x].quota) ++x;
    return x;
  };
  // The first remote entry of qk with quota on `node` (its bit is in qk.remote): a binary search
  // for the node's first entry, the entries being by node, then past exhausted ones.
  auto on_node = [ents, wide](const Quota& qk, int32_t node) __attribute__((always_inline)) {
    if (wide) {
      int32_t x = qk.local_end;
      while (!ents[x].quota || ((ents[x].node ^ node) & 63)) ++x;
      return x;
    }
    int32_t lo = qk.local_end, hi = qk.remote_end;
    while (lo < hi) {
      const int32_t mid = (lo + hi) >> 1;
      if (ents[mid].node < node)
        lo = mid + 1;
      else
        hi = mid;
    }
    while (!ents[lo].quota) ++lo;
    return lo;
  };
  // Token t of GPU i; false when the counts fall short.
  auto token = [=, &error](int i, int64_t t) __attribute__((always_inline)) {
    Quota* const kq = keys + size_t(i - home) * E;
    const Id* ids = ids0 + t * k;
    Out* out = out0 + t * k;
    int np = 0;
    for (int q = 0; q < k; ++q) {  // slots on the token's own node first
      if (ids[q] < 0) {  // padding (the callers let only -1 through)
        out[q] = Out(-1);
        continue;
      }
      // A branch on whether the pair is served on its node. A branch-free select (tried) ran
      // bench_routing's i.i.d. synthetic batches 1.4x faster, but one rank's whole planning of
      // the real DeepSeek-V2-Lite layer took 18.0 us against 14.9 us with the branch (A/B,
      // medians), and Python's int64 route_rank 25% longer: the branch stays.
      Quota& qk = kq[ids[q]];
      if (qk.cur < qk.local_end) {
        Entry& en = ents[qk.cur];
        out[q] = Out(en.slot);
        if (--en.quota == 0) ++qk.cur;
      } else {
        pend_key[np] = &qk;
        pend[np++] = q;
      }
    }
    // Every pending pair with exactly one remote entry (the common case: most experts have one
    // replica, or all of a source's remote quota on one): each takes its entry whatever the
    // order, as the general loop below would, without its node bookkeeping.
    bool forced = true;
    for (int a = 0; a < np; ++a) forced &= pend_key[a]->live == 1;
    if (forced) {
      for (int a = 0; a < np; ++a) {
        Quota& qk = *pend_key[a];
        if (qk.live == 0) {  // a repeated expert whose entry ran out
          try {
            mismatch(tokens.plan_name, i, int(ids[pend[a]]), "fewer");
          } catch (...) {
            error = std::current_exception();
          }
          return false;
        }
        take(out, pend[a], qk, first_live(qk));
      }
      return true;
    }
    for (int first = 0; first < np;) {
      // Open a node for the first pending pair: the one where most of the token's other pending
      // experts also have quota (they then join it), ties to the larger quota there (more room
      // left for later tokens), then to the earlier entry. With one candidate there is no choice.
      Quota& q0 = *pend_key[first];
      if (q0.live == 0) {
        try {
          mismatch(tokens.plan_name, i, int(ids[pend[first]]), "fewer");
        } catch (...) {
          error = std::current_exception();
        }
        return false;
      }
      int32_t best;
      if (q0.live > 1) {
        // joins(node) for every node bit at once: the other pending pairs' masks added bitwise
        // into binary counters (plane p holds bit p of every node's count), then q0's nodes
        // narrowed from the top plane down to those with the most joins; among their entries the
        // largest quota, then the earliest. The same choice as counting joins per entry, in
        // O(np + entries) instead of O(np * entries). Counts stay below 2^32: 32 planes.
        uint64_t plane[32];
        int top = 0;
        for (int b = first + 1; b < np; ++b)
          for (uint64_t c = pend_key[b]->remote, p = 0; c; ++p) {
            if (int(p) == top) plane[top++] = 0;
            const uint64_t carry = plane[p] & c;
            plane[p] ^= c;
            c = carry;
          }
        uint64_t most = q0.remote;
        for (int p = top - 1; p >= 0; --p)
          if (const uint64_t t = most & plane[p]) most = t;
        int64_t best_quota = 0;  // exhausted entries (quota 0) never win
        best = q0.local_end;
        for (int32_t x = q0.local_end; x < q0.remote_end; ++x)
          if ((node_bit(ents[x].node) & most) && ents[x].quota > best_quota) {
            best = x;
            best_quota = ents[x].quota;
          }
      } else {
        best = first_live(q0);
      }
      const int32_t opened_node = ents[best].node;
      const uint64_t opened = node_bit(opened_node);
      take(out, pend[first++], q0, best);
      // The other pending pairs whose expert has quota on a node the token already goes to.
      // Those still pending had none on the nodes opened before (masks only lose nodes), so
      // only the node just opened can take them.
      int w = first;
      for (int a = first; a < np; ++a) {
        Quota& qk = *pend_key[a];
        if (qk.remote & opened) {
          take(out, pend[a], qk, on_node(qk, opened_node));
        } else {
          pend_key[w] = &qk;
          pend[w++] = pend[a];
        }
      }
      np = w;
    }
    return true;
  };
  if (fixed_first) {
    const size_t E1 = E + 1;
    int32_t* const fixed0 = fixed_.data();
    int64_t* const left0 = left_.data();
    // Token t of GPU i: every pair takes its key's fixed slot (table entry - 1) and counts its
    // quota down; a token with another key goes on as (a) or (b) of the opening comment. False
    // when the counts fall short. Without `count` the quotas are not counted down: when m was
    // planned from these very tokens (route_tokens), every fixed key serves exactly its quota.
    auto fast = [=](int i, int64_t t, auto count) __attribute__((always_inline)) {
      const int32_t* const fx = fixed0 + size_t(i - home) * E1 + 1;
      int64_t* const left = left0 + size_t(i - home) * E1 + 1;
      const Id* ids = ids0 + t * k;
      Out* out = out0 + t * k;
      int32_t any = 0;
      for (int q = 0; q < k; ++q) {
        const Id e = ids[q];
        const int32_t v = fx[e];
        out[q] = Out(int64_t(v) - 1);  // a placeholder for a key not fixed (kOpen - 1 overflows int32)
        if constexpr (count) --left[e];
        any |= v;
      }
      if (any >= 0) return true;
      if (any & (1 << 30)) return rule[i] += k, token(i, t);
      Quota* const kq = keys + size_t(i - home) * E;
      for (int q = 0; q < k; ++q) {
        if (fx[ids[q]] >= 0) continue;
        Quota& qk = kq[ids[q]];
        if (qk.cur < qk.local_end) {
          Entry& en = ents[qk.cur];
          out[q] = Out(en.slot);
          if (--en.quota == 0) ++qk.cur;
        } else {
          if (qk.live == 0) return false;
          take(out, q, qk, first_live(qk));
        }
      }
      return true;
    };
    constexpr std::true_type count;
    if (!tokens.begin && !tokens.src) {
      for (int64_t t = 0; t < tokens.T; ++t)
        if (!fast(g0, t, count)) return kRedo;
    } else if (!tokens.begin) {
      auto run = [&](auto count) {
        for (int64_t t = 0; t < tokens.T; ++t) {
          const int i = int(tokens.src[t]);
          if (i >= g0 && i < g1 && !fast(i, t, count)) return false;
        }
        return true;
      };
      if (!(tokens.planned ? run(std::false_type()) : run(count))) return kRedo;
    } else {
      for (int i = g0; i < g1; ++i)
        for (int64_t t = tokens.begin[i]; t < tokens.begin[i + 1]; ++t)
          if (!fast(i, t, count)) return kRedo;
    }
    // Every fixed key must have served exactly its quota; then it is spent, as token order
    // would have left it.
    for (int i = g0; i < g1; ++i) {
      const int32_t* const fx = fixed0 + size_t(i - home) * E1 + 1;
      const int64_t* const left = left0 + size_t(i - home) * E1 + 1;
      Quota* const kq = keys + size_t(i - home) * E;
      for (size_t e = 0; e < E; ++e) {
        if (fx[e] <= 0) continue;
        if (left[e] != 0 && !tokens.planned) return kRedo;
        kq[e].cur = kq[e].local_end = kq[e].remote_end;
        kq[e].live = 0;
      }
    }
    return -1;
  }
  if (!tokens.begin && !tokens.src) {
    for (int64_t t = 0; t < tokens.T; ++t)
      if (rule[g0] += k, !token(g0, t)) return t;
  } else if (!tokens.begin) {
    for (int64_t t = 0; t < tokens.T; ++t) {
      const int i = int(tokens.src[t]);
      if (i >= g0 && i < g1 && (rule[i] += k, !token(i, t))) return t;
    }
  } else {
    for (int i = g0; i < g1; ++i)
      for (int64_t t = tokens.begin[i]; t < tokens.begin[i + 1]; ++t)
        if (rule[i] += k, !token(i, t)) return t;
  }
  return -1;
}

template <class Id, class Src, class Out>
void Router::assign_tokens(const Tokens<Id, Src, Out>& tokens, std::span<const int64_t> m, int threads) {
  check_dense_counts(m, S_, G_);
  if (threads < 1) throw ArgumentError("threads: expected at least 1, got " + std::to_string(threads));
  ents_.resize(size_t(G_) * S_);
  keys_.resize(size_t(G_) * E_);
  fixed_.resize(size_t(G_) * (E_ + 1));
  left_.resize(size_t(G_) * (E_ + 1));
  rule_pairs_.assign(size_t(G_), 0);
  // Contiguous GPU ranges of about equal demand, one per thread.
  const int n = std::min(threads, G_);
  std::vector<int> cut(n + 1, G_);
  cut[0] = 0;
  if (n > 1) {
    std::vector<int64_t> pairs(G_ + 1, 0);  // pairs of GPUs [0, i)
    for (int p = 0; p < S_; ++p)
      for (int i = 0; i < G_; ++i) pairs[i + 1] += m[size_t(p) * G_ + i];
    for (int i = 0; i < G_; ++i) pairs[i + 1] += pairs[i];
    for (int w = 1, i = 0; w < n; ++w) {
      while (i < G_ && pairs[i] * n < pairs[G_] * w) ++i;
      cut[w] = std::max(i, cut[w - 1]);
    }
  }
  std::vector<int64_t> failed(n, -1);
  std::vector<std::exception_ptr> error(n);
  run_workers(n, [&](int w, int) {
    try {
      build_quotas(m, cut[w], cut[w + 1], 0);
      failed[w] = assign_gpus(tokens, cut[w], cut[w + 1], 0, error[w], true);
      if (failed[w] == kRedo) {  // the counts do not match: in token order, for the first error
        build_quotas(m, cut[w], cut[w + 1], 0);
        failed[w] = assign_gpus(tokens, cut[w], cut[w + 1], 0, error[w], false);
      }
    } catch (...) {
      failed[w] = 0;
      error[w] = std::current_exception();
    }
  });
  // As one thread would: the first token the counts fall short for, else the first key with
  // quota left over.
  int first = -1;
  for (int w = 0; w < n; ++w)
    if (error[w] && (first < 0 || failed[w] < failed[first])) first = w;
  if (first >= 0) std::rethrow_exception(error[first]);
  check_quotas_used(0, G_, 0, tokens.plan_name);
}

void Router::assign(const RoutingBatch& batch, std::span<const int64_t> m, std::span<int32_t> slot_of_pair,
                    int threads) {
  check_batch(batch, placement_);
  if (slot_of_pair.size() != batch.expert_ids.size())
    throw ArgumentError("slot_of_pair: has " + std::to_string(slot_of_pair.size()) + " entries, expected " +
                        std::to_string(batch.expert_ids.size()));
  const Tokens<int32_t, int32_t, int32_t> tokens{batch.expert_ids.data(), slot_of_pair.data(), batch.top_k,
                                                 batch.num_tokens(), nullptr, batch.token_offset.data()};
  assign_tokens(tokens, m, threads);
}

template <class Id, class Src, class Out>
void Router::route_tokens(const Id* topk, const Src* src, int64_t T, int k, Out* slot_of_pair, int threads) {
  if (T < 0 || k < 1) throw ArgumentError("topk_ids: expected T >= 0 tokens of k >= 1 experts");
  check_apart(slot_of_pair, size_t(T) * k * sizeof(Out), topk, size_t(T) * k * sizeof(Id), "slot_of_pair", "topk_ids");
  check_apart(slot_of_pair, size_t(T) * k * sizeof(Out), src, size_t(T) * sizeof(Src), "slot_of_pair", "src_rank");
  const int G = G_;
  const uint64_t E = uint64_t(E_);
  // One pass: expert-major demand, the range checks and repeated experts within a token.
  demand_.assign(size_t(E_) * G, 0);
  last_token_.assign(size_t(E_), -1);
  int64_t* const last = last_token_.data();
  for (int64_t t = 0; t < T; ++t) {
    const uint64_t s = uint64_t(src[t]);
    if (s >= uint64_t(G))
      throw ArgumentError("src_rank: entry " + std::to_string(t) + " is " + std::to_string(src[t]) +
                          ", expected [0, " + std::to_string(G) + ")");
    const Id* ids = topk + t * k;
    for (int q = 0; q < k; ++q) {
      if (uint64_t(ids[q]) >= E) {
        if (ids[q] == -1) continue;  // padding
        bad_id(topk, t, k, q, E_);
      }
      if (last[ids[q]] == t) repeated_id(topk, t, k, q, int64_t(ids[q]));
      last[ids[q]] = t;
      ++demand_[size_t(ids[q]) * G + s];
    }
  }
  plan_.resize(size_t(S_) * G);
  route_counts(demand_, plan_);
  const Tokens<Id, Src, Out> tokens{topk, slot_of_pair, k, T, src, nullptr, true};
  assign_tokens(tokens, plan_, threads);
}

template <class Id>
void Router::count_rank(const Id* topk, int64_t T, int k, std::span<int64_t> counts) const {
  if (T < 0 || k < 1) throw ArgumentError("topk_ids: expected T >= 0 tokens of k >= 1 experts");
  if (counts.size() != size_t(E_))
    throw ArgumentError("counts: has " + std::to_string(counts.size()) + " entries, expected num_experts = " +
                        std::to_string(E_));
  check_apart(counts.data(), counts.size_bytes(), topk, size_t(T) * size_t(k) * sizeof(Id), "counts", "topk_ids");
  std::fill(counts.begin(), counts.end(), 0);
  const uint64_t E = uint64_t(E_);
  int64_t* const c = counts.data();
  // One pass: the counts, the range checks and repeated experts within a token. The scratch is
  // the thread's own: count_rank is const and may run on several threads at once.
  thread_local std::vector<int64_t> scratch;
  scratch.assign(size_t(E_), -1);
  int64_t* const last = scratch.data();
  for (int64_t t = 0; t < T; ++t)
    for (int q = 0; q < k; ++q) {
      const uint64_t e = uint64_t(topk[t * k + q]);
      if (e >= E) {
        if (topk[t * k + q] != -1) bad_id(topk, t, k, q, E_);
        continue;  // padding
      }
      if (last[e] == t) repeated_id(topk, t, k, q, int64_t(e));
      last[e] = t;
      ++c[e];
    }
}

template <class Id, class Out>
void Router::route_rank(const Id* topk, int64_t T, int k, int rank, std::span<const int64_t> m, Out* slot_of_pair) {
  if (rank < 0 || rank >= G_)
    throw ArgumentError("rank: expected [0, " + std::to_string(G_) + "), got " + std::to_string(rank));
  if (T < 0 || k < 1) throw ArgumentError("topk_ids: expected T >= 0 tokens of k >= 1 experts");
  if (m.size() != size_t(S_) * G_)
    throw ArgumentError("plan: has " + std::to_string(m.size()) + " entries, expected num_slots * num_gpus = " +
                        std::to_string(size_t(S_) * G_));
  // Ids in [0, E) or -1, one branch-free pass; the culprit is searched on failure.
  const int64_t P = T * k;
  check_apart(slot_of_pair, size_t(P) * sizeof(Out), topk, size_t(P) * sizeof(Id), "slot_of_pair", "topk_ids");
  const uint64_t E1 = uint64_t(E_) + 1;
  if (!ids_in_range(topk, P, E_))
    for (int64_t p = 0; p < P; ++p)
      if (uint64_t(int64_t(topk[p]) + 1) >= E1) bad_id(topk, p / k, k, int(p % k), E_);
  if (last_token_.size() < size_t(E_)) last_token_.resize(size_t(E_));
  check_distinct_ids(topk, T, k, E_, last_token_.data());
  if (ents_.size() < size_t(S_)) ents_.resize(size_t(S_));  // one GPU's keys, in row 0
  if (keys_.size() < size_t(E_)) keys_.resize(size_t(E_));
  if (fixed_.size() < size_t(E_) + 1) fixed_.resize(size_t(E_) + 1), left_.resize(size_t(E_) + 1);
  if (rule_pairs_.size() != size_t(G_)) rule_pairs_.assign(size_t(G_), 0);
  build_quotas(m, rank, rank + 1, rank);
  const Tokens<Id, int32_t, Out> tokens{topk, slot_of_pair, k, T, nullptr, nullptr, false, "plan"};
  std::exception_ptr error;
  int64_t failed = assign_gpus(tokens, rank, rank + 1, rank, error, true);
  if (failed == kRedo) {  // the counts do not match: in token order, for the first error
    build_quotas(m, rank, rank + 1, rank);
    failed = assign_gpus(tokens, rank, rank + 1, rank, error, false);
  }
  if (failed >= 0) std::rethrow_exception(error);
  check_quotas_used(rank, rank + 1, rank, tokens.plan_name);
}

template void Router::count_rank(const int32_t*, int64_t, int, std::span<int64_t>) const;
template void Router::count_rank(const int64_t*, int64_t, int, std::span<int64_t>) const;
template void Router::route_rank(const int32_t*, int64_t, int, int, std::span<const int64_t>, int32_t*);
template void Router::route_rank(const int64_t*, int64_t, int, int, std::span<const int64_t>, int64_t*);
template void Router::route_rank(const int64_t*, int64_t, int, int, std::span<const int64_t>, int32_t*);
template void Router::route_tokens(const int32_t*, const int32_t*, int64_t, int, int32_t*, int);
template void Router::route_tokens(const int32_t*, const int64_t*, int64_t, int, int32_t*, int);
template void Router::route_tokens(const int64_t*, const int32_t*, int64_t, int, int64_t*, int);
template void Router::route_tokens(const int64_t*, const int64_t*, int64_t, int, int64_t*, int);

}  // namespace zepp
