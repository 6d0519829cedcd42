// Router's replica tables, layout conversions, the even split's counts, the batched entry point,
// and the routing.hpp functions as wrappers over Router.
#include "routing/router.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <thread>

#include "core/error.hpp"
#include "routing/detail.hpp"
#include "routing/routing.hpp"

namespace zepp {
using namespace routing_detail;

void check_apart(const void* out, size_t out_bytes, const void* in, size_t in_bytes, const char* out_name,
                 const char* in_name) {
  const uintptr_t o = reinterpret_cast<uintptr_t>(out), i = reinterpret_cast<uintptr_t>(in);
  if (out_bytes && in_bytes && o < i + in_bytes && i < o + out_bytes)
    throw ArgumentError(std::string(out_name) + ": must not overlap " + in_name);
}

Router::Router(const Placement& placement, const Topology& topo, double balance_slack, const GemmCost& gemm)
    : placement_(placement), slack_(balance_slack), gemm_(gemm) {
  check_placement(placement);
  check_topology(topo, placement);
  check_slack(balance_slack);
  G_ = placement.num_gpus;
  E_ = placement.num_experts;
  S_ = placement.num_slots();
  gpn_ = topo.gpus_per_node;
  const ReplicaIndex rep(placement);
  rep_begin_ = rep.begin;
  rep_slot_ = rep.slot;
  rep_gpu_.resize(S_);
  rep_node_.resize(S_);
  slot_node_.resize(S_);
  int max_r = 1;
  for (int p = 0; p < S_; ++p) slot_node_[p] = placement.gpu_of_slot(p) / gpn_;
  for (int x = 0; x < S_; ++x) {
    rep_gpu_[x] = placement.gpu_of_slot(rep_slot_[x]);
    rep_node_[x] = rep_gpu_[x] / gpn_;
  }
  for (int e = 0; e < E_; ++e) {
    max_r = std::max(max_r, rep.count(e));
    if (rep.count(e) == 1) single_.push_back(e), single_slot_.push_back(rep.slot[rep.begin[e]]);
  }
  load_.resize(max_r);
  order_.resize(max_r);
  touched_.resize(max_r);
  gpu_node_.resize(G_);
  for (int i = 0; i < G_; ++i) gpu_node_[i] = i / gpn_;
  rem_.resize(G_);
  if (gemm_.enabled()) {
    slot_load_.resize(S_);
    gpu_time_.resize(G_);
    node_out_.resize(G_ / gpn_);
    source_rows_.resize(G_);
    node_in_.resize(G_ / gpn_);
  }
}

void Router::even_counts(std::span<const int64_t> demand, std::span<int64_t> m) const {
  if (demand.size() != size_t(E_) * G_) check_dense_demand(demand, E_, G_);  // throws, naming the size
  check_dense_counts(m, S_, G_);
  if (!even_count_plan(demand.data(), size_t(G_), 1, m.data())) check_dense_demand(demand, E_, G_);
}

void Router::even_plan(std::span<const int64_t> counts, std::span<int64_t> m) const {
  if (counts.size() != size_t(G_) * E_) check_rank_counts(counts, G_, E_);  // throws, naming the size
  if (m.size() != size_t(S_) * G_)
    throw ArgumentError("plan: has " + std::to_string(m.size()) + " entries, expected num_slots * num_gpus = " +
                        std::to_string(size_t(S_) * G_));
  check_apart(m.data(), m.size_bytes(), counts.data(), counts.size_bytes(), "plan", "counts");
  if (!even_count_plan(counts.data(), 1, size_t(E_), m.data())) check_rank_counts(counts, G_, E_);
}

// As count_plan: one pass reads (and sign-checks) the demand; the same copy of single-replica
// experts' columns.
bool Router::even_count_plan(const int64_t* demand, size_t se, size_t si, int64_t* m) const {
  const int G = G_;
  uint64_t signs = si == 1 ? 0 : copy_single_rank_major(demand, si, m);  // as count_plan
  for (int e = 0; e < E_; ++e) {
    const int64_t* d = demand + size_t(e) * se;
    const int b = rep_begin_[e], r = rep_begin_[e + 1] - b;
    if (r == 1) {
      if (si == 1) {
        int64_t* const row = m + size_t(rep_slot_[b]) * G;
        for (int i = 0; i < G; ++i) signs |= uint64_t(row[i] = d[i]);
      }
      continue;
    }
    // Request j of source i goes to replica (i + j) mod r: replica t receives n / r requests
    // plus one when (t - i) mod r < n mod r.
    for (int i = 0; i < G; ++i) {
      const int64_t n = d[i * si], q = n / r, extra = n % r;
      signs |= uint64_t(n);
      const int start = i % r;
      for (int t = 0; t < r; ++t) {
        const int off = t >= start ? t - start : t - start + r;
        m[size_t(rep_slot_[b + t]) * G + i] = q + (off < extra);
      }
    }
  }
  return !(signs >> 63);
}

template <class Id, class Out>
void Router::even_rank(const Id* topk, int64_t T, int k, int rank, Out* slot_of_pair) {
  if (rank < 0 || rank >= G_)
    throw ArgumentError("rank: expected [0, " + std::to_string(G_) + "), got " + std::to_string(rank));
  if (T < 0 || k < 1) throw ArgumentError("topk_ids: expected T >= 0 tokens of k >= 1 experts");
  const int64_t P = T * k;
  check_apart(slot_of_pair, size_t(P) * sizeof(Out), topk, size_t(P) * sizeof(Id), "slot_of_pair", "topk_ids");
  const uint64_t E1 = uint64_t(E_) + 1;
  if (!ids_in_range(topk, P, E_))  // as route_rank checks them
    for (int64_t p = 0; p < P; ++p)
      if (uint64_t(int64_t(topk[p]) + 1) >= E1)
        throw ArgumentError("topk_ids: entry [" + std::to_string(p / k) + ", " + std::to_string(p % k) + "] is " +
                            std::to_string(topk[p]) + ", expected [0, " + std::to_string(E_) + ") or -1 (padding)");
  // Cursor of e: the replica index its next pair takes, starting at rank mod r_e.
  even_next_.resize(E_);
  for (int e = 0; e < E_; ++e) even_next_[e] = rank % (rep_begin_[e + 1] - rep_begin_[e]);
  int32_t* const next = even_next_.data();
  const int32_t* const begin = rep_begin_.data();
  const int32_t* const slot = rep_slot_.data();
  for (int64_t p = 0; p < P; ++p) {
    const auto e = topk[p];
    if (e < 0) {
      slot_of_pair[p] = Out(-1);
      continue;
    }
    const int32_t b = begin[e], x = next[e];
    slot_of_pair[p] = Out(slot[b + x]);
    next[e] = x + 1 == begin[e + 1] - b ? 0 : x + 1;
  }
}

template void Router::even_rank(const int32_t*, int64_t, int, int, int32_t*);
template void Router::even_rank(const int64_t*, int64_t, int, int, int64_t*);

void Router::to_counts(std::span<const int64_t> m, std::vector<RouteCount>& out) const {
  check_dense_counts(m, S_, G_);
  out.clear();
  const int G = G_;
  for (int e = 0; e < E_; ++e) {
    const int b = rep_begin_[e], r = rep_begin_[e + 1] - b;
    for (int i = 0; i < G; ++i)
      for (int x = b; x < b + r; ++x)
        if (const int64_t n = m[size_t(rep_slot_[x]) * G + i]) out.push_back({e, i, rep_slot_[x], n});
  }
}

void Router::from_counts(const std::vector<RouteCount>& counts, std::span<int64_t> m) const {
  check_dense_counts(m, S_, G_);
  std::fill(m.begin(), m.end(), 0);
  for (size_t y = 0; y < counts.size(); ++y) {
    const RouteCount& c = counts[y];
    const char* bad = nullptr;
    if (!(c.expert >= 0 && c.expert < E_ && c.src_gpu >= 0 && c.src_gpu < G_ && c.slot >= 0 && c.slot < S_))
      bad = "has an expert, src_gpu or slot out of range";
    else if (placement_.phy2log[c.slot] != c.expert)
      bad = "sends an expert to a slot that does not hold it";
    else if (c.tokens <= 0)
      bad = "has tokens <= 0";
    else if (y > 0 && !(std::tuple(counts[y - 1].expert, counts[y - 1].src_gpu, counts[y - 1].slot) <
                        std::tuple(c.expert, c.src_gpu, c.slot)))
      bad = "is out of (expert, src_gpu, slot) order";
    if (bad)
      throw ArgumentError("counts: entry " + std::to_string(y) + " (expert " + std::to_string(c.expert) +
                          ", src_gpu " + std::to_string(c.src_gpu) + ", slot " + std::to_string(c.slot) +
                          ", tokens " + std::to_string(c.tokens) + ") " + bad);
    m[size_t(c.slot) * G_ + c.src_gpu] = c.tokens;
  }
}

void route_counts_layers(std::span<Router> routers, std::span<const std::vector<int64_t>> demands,
                         std::vector<std::vector<int64_t>>& plans, int threads) {
  if (demands.size() != routers.size())
    throw ArgumentError("demands: has " + std::to_string(demands.size()) + " layers, routers " +
                        std::to_string(routers.size()));
  if (threads < 1) throw ArgumentError("threads: expected at least 1, got " + std::to_string(threads));
  const int L = int(routers.size());
  plans.resize(L);
  for (int l = 0; l < L; ++l) plans[l].resize(size_t(routers[l].num_slots()) * routers[l].num_gpus());
  // Thread w routes layers w, w + threads, ...; the first failing layer's error is rethrown.
  std::vector<std::exception_ptr> error(L);
  run_workers(std::min(threads, std::max(L, 1)), [&](int w, int n) {
    for (int l = w; l < L; l += n) try {
        routers[l].route_counts(demands[l], plans[l]);
      } catch (...) {
        error[l] = std::current_exception();
      }
  });
  for (const auto& e : error)
    if (e) std::rethrow_exception(e);
}

void demand_by_expert(const RoutingBatch& batch, std::vector<int64_t>& out) {
  const int G = batch.num_gpus, k = batch.top_k;
  out.assign(size_t(batch.num_experts) * G, 0);
  for (int i = 0; i < G; ++i)
    for (int64_t p = batch.token_offset[i] * k; p < batch.token_offset[i + 1] * k; ++p)
      ++out[size_t(batch.expert_ids[p]) * G + i];
}

// routing.hpp's entry points.

std::vector<RouteCount> route_locality_counts(const std::vector<int64_t>& demand, const Placement& placement,
                                              const Topology& topo, double balance_slack, const GemmCost& gemm) {
  Router router(placement, topo, balance_slack, gemm);
  check_demand(demand, placement);  // names the entry in the caller's source-major layout
  const int G = placement.num_gpus, E = placement.num_experts;
  std::vector<int64_t> by_expert(demand.size()), m(size_t(placement.num_slots()) * G);
  for (int i = 0; i < G; ++i)
    for (int e = 0; e < E; ++e) by_expert[size_t(e) * G + i] = demand[size_t(i) * E + e];
  router.route_counts(by_expert, m);
  std::vector<RouteCount> out;
  router.to_counts(m, out);
  return out;
}

Routing route_locality(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                       double balance_slack, bool assign, const GemmCost& gemm, ConsolidateStats* stats,
                       RoutingWork* work) {
  check_placement(placement);
  check_batch(batch, placement);
  Router router(placement, topo, balance_slack, gemm);
  std::vector<int64_t> demand, m(size_t(placement.num_slots()) * placement.num_gpus);
  demand_by_expert(batch, demand);
  router.route_counts(demand, m);
  if (stats) *stats = router.consolidate_stats();
  if (work) work->remote_visits = router.remote_visits();
  Routing out;
  router.to_counts(m, out.counts);
  if (assign) {
    out.slot_of_pair.resize(batch.expert_ids.size());
    router.assign(batch, m, out.slot_of_pair);
    if (work) work->rule_pairs = router.rule_pairs();
  }
  return out;
}

std::vector<int32_t> assign_pairs(const RoutingBatch& batch, const Placement& placement, const Topology& topo,
                                  const std::vector<RouteCount>& counts) {
  Router router(placement, topo, 0.0);  // the slack only matters to route_counts
  check_batch(batch, placement);
  std::vector<int64_t> m(size_t(placement.num_slots()) * placement.num_gpus);
  router.from_counts(counts, m);
  std::vector<int32_t> slot_of_pair(batch.expert_ids.size());
  router.assign(batch, m, slot_of_pair);
  return slot_of_pair;
}

}  // namespace zepp
