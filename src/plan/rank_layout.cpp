// One rank's dispatch layout: two passes over its pairs (tally, then fill), as a counting sort.
// The rank's own node gets no node_tokens: its pairs there are not inter-node rows.
#include "plan/rank_layout.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace zepp {

namespace {

// Which GPUs and nodes the current token already has a pair on. SeenMasks keeps them in two
// registers (G, N <= 64); SeenArrays in the last token seen per GPU and node, for any size.
struct SeenMasks {
  uint64_t gpus = 0, nodes = 0;
  void start(int64_t) { gpus = nodes = 0; }
  void restart() {}
  bool first_gpu(int g) {
    const uint64_t bit = uint64_t(1) << g;
    const bool first = !(gpus & bit);
    gpus |= bit;
    return first;
  }
  bool first_node(int n) {
    const uint64_t bit = uint64_t(1) << n;
    const bool first = !(nodes & bit);
    nodes |= bit;
    return first;
  }
};

struct SeenArrays {
  int64_t *gpu, *node, t = 0;
  int nodes;
  SeenArrays(std::vector<int64_t>& g, std::vector<int64_t>& n, int G, int N) : nodes(N) {
    g.assign(G, -1);
    n.assign(N, -1);
    gpu = g.data();
    node = n.data();
  }
  void start(int64_t token) { t = token; }
  void restart() { std::fill_n(node, nodes, -1); }  // the fill pass asks about nodes only
  bool first_gpu(int g) {
    const bool first = gpu[g] != t;
    gpu[g] = t;
    return first;
  }
  bool first_node(int n) {
    const bool first = node[n] != t;
    node[n] = t;
    return first;
  }
};

// The send side: two passes over the pairs (tally, then fill), as a counting sort. Branch-free
// (whether a pair opens a row is data, not control flow: mispredicted branches were half the
// cost); padding is the one branch, and it is rare.
template <class Seen, class Slot>
void send_lists(Seen seen, int own, const int32_t* gpu_of, const int32_t* node_of, const Slot* slot_of_pair,
                int64_t T, int top_k, int S, RankLayout& out) {
  const int G = int(out.rows_to_gpu.size()), N = int(out.node_begin.size()) - 1;
  int64_t* const gb = out.gpu_begin.data();
  int64_t* const rows = out.rows_to_gpu.data();
  int64_t* const nb = out.node_begin.data();
  // Tally: pairs per GPU, and a token's first pair on a GPU (node) counts a row.
  for (int64_t t = 0; t < T; ++t) {
    seen.start(t);
    for (int q = 0; q < top_k; ++q) {
      const Slot s = slot_of_pair[t * top_k + q];
      if (uint64_t(int64_t(s) + 1) > uint64_t(S))  // checked in this pass: never taken on valid input
        throw ArgumentError("slot_of_pair: entry " + std::to_string(t * top_k + q) + " is " + std::to_string(s) +
                            ", expected [0, " + std::to_string(S) + ") or -1 (padding)");
      if (s < 0) continue;
      const int g = gpu_of[s], n = node_of[s];
      ++gb[g + 1];
      rows[g] += seen.first_gpu(g);
      nb[n + 1] += seen.first_node(n) & (n != own);
    }
  }
  for (int g = 0; g < G; ++g) gb[g + 1] += gb[g];
  for (int n = 0; n < N; ++n) nb[n + 1] += nb[n];
  out.gpu_pairs.resize(gb[G]);
  out.node_tokens.resize(nb[N] + 1);  // + 1: where tokens that open no row are written
  // Fill: cursors start at each list's begin.
  out.cursor_.resize(G + N);
  int64_t* const cg = out.cursor_.data();
  int64_t* const cn = cg + G;
  std::copy_n(gb, G, cg);
  std::copy_n(nb, N, cn);
  seen.restart();
  int64_t* const gp = out.gpu_pairs.data();
  int64_t* const nt = out.node_tokens.data();
  const int64_t spare = nb[N];
  for (int64_t t = 0; t < T; ++t) {
    seen.start(t);
    for (int q = 0; q < top_k; ++q) {
      const int64_t p = t * top_k + q;
      const Slot s = slot_of_pair[p];
      if (s < 0) continue;
      const int g = gpu_of[s], n = node_of[s];
      gp[cg[g]++] = p;
      const bool opens = seen.first_node(n) & (n != own);
      const int64_t at = cn[n];
      nt[opens ? at : spare] = t;  // a select, not a branch
      cn[n] = at + opens;
    }
  }
  out.node_tokens.pop_back();
}

}  // namespace

template <class Slot>
void rank_layout(const Placement& placement, const Topology& topo, std::span<const int64_t> m, int rank,
                 const Slot* slot_of_pair, int64_t T, int top_k, RankLayout& out) {
  const int G = placement.num_gpus, S = placement.num_slots(), N = topo.nodes, spg = placement.slots_per_gpu;
  if (topo.num_gpus() != G)
    throw ArgumentError("topo: has " + std::to_string(topo.num_gpus()) + " GPUs, the placement " + std::to_string(G));
  if (rank < 0 || rank >= G)
    throw ArgumentError("rank: expected [0, " + std::to_string(G) + "), got " + std::to_string(rank));
  if (top_k < 1 || T < 0) throw ArgumentError("top_k: expected T >= 0 tokens of top_k >= 1 pairs");
  if (m.size() != size_t(S) * G)
    throw ArgumentError("plan: has " + std::to_string(m.size()) + " entries, expected num_slots * num_gpus = " +
                        std::to_string(size_t(S) * G));
  out.rank = rank;
  const int gpn = topo.gpus_per_node, own = rank / gpn;
  if (out.tables_ != std::tuple(S, spg, gpn)) {  // slot -> GPU, node: built once per shape
    out.gpu_of_slot_.resize(S + 1);  // entry 0: padding (slot -1), then slot p at p + 1
    out.node_of_slot_.resize(S + 1);
    out.gpu_of_slot_[0] = out.node_of_slot_[0] = -1;
    for (int p = 0; p < S; ++p) {
      out.gpu_of_slot_[p + 1] = p / spg;
      out.node_of_slot_[p + 1] = p / spg / gpn;
    }
    out.tables_ = {S, spg, gpn};
  }
  const int32_t* const gpu_of = out.gpu_of_slot_.data() + 1;
  const int32_t* const node_of = out.node_of_slot_.data() + 1;
  out.gpu_begin.assign(G + 1, 0);
  out.rows_to_gpu.assign(G, 0);
  out.node_begin.assign(N + 1, 0);
  if (G <= 64 && N <= 64)
    send_lists(SeenMasks{}, own, gpu_of, node_of, slot_of_pair, T, top_k, S, out);
  else
    send_lists(SeenArrays{out.seen_gpu_, out.seen_node_, G, N}, own, gpu_of, node_of, slot_of_pair, T, top_k, S, out);

  // Receive side: the rank's slots' rows of m.
  out.recv_pairs.assign(G, 0);
  out.slot_pairs.assign(spg, 0);
  for (int j = 0; j < spg; ++j) {
    const int64_t* const row = &m[size_t(rank * spg + j) * G];
    int64_t sum = 0;
    for (int i = 0; i < G; ++i) {
      out.recv_pairs[i] += row[i];
      sum += row[i];
    }
    out.slot_pairs[j] = sum;
  }
}

template void rank_layout(const Placement&, const Topology&, std::span<const int64_t>, int, const int32_t*, int64_t,
                          int, RankLayout&);
template void rank_layout(const Placement&, const Topology&, std::span<const int64_t>, int, const int64_t*, int64_t,
                          int, RankLayout&);

}  // namespace zepp
