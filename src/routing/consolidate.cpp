// Consolidation by GEMM time (issue 24 item 6, beyond the paper; `zepp/no-consolidate` is its
// ablation). Equation (1) balances rows: each replica of an expert gets its share within
// (1 +- C) of T_e / r_e. Below the roofline ridge a GEMM costs its weight read whatever its rows
// (core/roofline.hpp), so splitting a cold expert's few rows over r replicas costs r weight
// reads where one would do. Llama-4 Maverick at 1 MB (102 tokens per GPU, top-1, about 13 rows
// per expert at 4 nodes) is the case: every GEMM is a 167 us read, a GPU's compute is its count
// of non-empty slots times that, and the busiest GPU ran 9 GEMMs where `fast` (one replica per
// expert, home routing) ran 8 (docs/baselines/fast.md, "Where fast beats Zepp").
//
// The step, on the finished count plan m (slot-major, [S * G]) of the water-filling
// (locality.cpp). With L_p the rows of slot p and t(n) the roofline time of a GEMM of n rows
// (GemmCost::time, 0 for n = 0), a GPU's time is T_g = sum over its slots of t(L_p), summed in
// ascending slot order. Node s sends out_s inter-node rows and receives in_s; B is the largest
// of all out_s and in_s in the water-filling's plan (the busiest node's NIC rows, eq. (2)'s
// load). Repeat: let g be the busiest GPU (largest T_g, the lowest id on ties). A move takes
// every row of a slot p on g (its expert e has r_e >= 2 replicas, L_p > 0, and the GEMM is
// weight-bound: 6 L_p hidden ffn / peak <= read) to one other replica q of e with L_q > 0, each
// source's rows to the same source's entry of q (m[q][i] += m[p][i], m[p][i] = 0). A move
// within p's node is always allowed; one to another node n' only while out_n and in_n' stay
// <= B afterwards (n = p's node: its own rows of p now leave it; n' receives p's rows but its
// own). Among the allowed moves whose new max(T_g, T_h) (h the GPU of q; T_g alone when h = g)
// is below T_g - M (M the margin, below): a move within the node beats one across, then the
// lower new maximum wins, then the fewer rows newly crossing nodes, then the lower p, then the
// lower q; the best is applied. Stop when g has none; then undo, newest first, the moves made after the maximum over
// all GPUs last fell (with several GPUs tied at the top, a move on the first of them alone
// lowers nothing the layer waits for, and on Qwen3 at 4 nodes, 1 MB such moves cost 2% in
// rows sent across nodes for no compute). Why cross nodes at all: Zepp's placement puts a hot expert's
// replicas on different nodes (one per node where it pays), so on Llama-4 at 4 nodes no
// weight-bound replica on a busiest GPU had a sibling on its own node; the rows it sends across
// are few (the move is weight-bound) and B bounds what any node's NICs carry.
//
// Margin: M = T_g / 100, 1% of the busiest GPU's time. The roofline model sees neither what a
// move costs downstream (rows that newly cross nodes delay that node's first dispatch chunks; the
// plan builder's local-first step may split the receiving slot into two GEMMs, each a full
// weight read) nor the schedule the GEMMs run in, so a predicted gain smaller than that is as
// likely a loss. Evidence (sim, a100, at bee92c7, before level 2 of the water-filling spread
// remote demand evenly): on Qwen3 at 4 nodes, 1 MB (Figure 9) the only move made without M
// gained 0.12 us of 297.6 (0.04%: one row's FLOPs, the second-busiest GPU being that close) and
// cost 10.6 us (433.8 against 423.2 without consolidation); on DeepSeek-V2-Lite's
// whole trace at 4 x 4 (the README's first example) one move gains 4.47 us of 128.0 (3.5%) and
// 9.3 us in the simulation (272.4 -> 263.1); every move Llama-4 makes in Figure 9 gains 5% of
// T_g or more (5.0% at 8 nodes, 16 MB; 9-29% elsewhere). Any M between 0.05% and 3.4% of T_g
// makes the same moves in all of these.
//
// Exact early exit: the water-filling keeps every slot's rows (count_plan), so T_g for every GPU
// and the first step's compute test (the new maximum below T_g - M, ignoring (c)'s node test,
// which can only refuse more) need the S slot loads and not the S x G plan. When no move of the
// busiest GPU passes it, the first step would apply none and nothing would change: return then.
//
// Invariants and proofs.
// (a) Every pair is still served: a move only relabels rows of (source i, expert e) from one
//     replica of e to another, so sum over e's replicas of m[.][i] is unchanged for every i and
//     e; assign_pairs (which needs exactly these sums) serves every (token, k) pair.
// (b) The busiest GPU's roofline time never rises, and falls whenever the plan changes: a move
//     changes only T_g and T_h; both new values are computed by the same function, in the same
//     order, as they are kept afterwards (Router::gpu_time), and the move is applied only when
//     both are below T_g - M < T_g = max over GPUs; every other GPU is unchanged and was <= T_g. So the
//     maximum never rises from move to move, and the moves kept end where it last fell below
//     the water-filling's (none kept when it never fell: m is restored exactly, the undo
//     putting back each moved row).
// (c) The busiest node's inter-node rows never rise: no node ever sends or receives more than
//     B. A move within a node keeps every row's destination node, so no flow changes. A move
//     from node n to n' changes only out_n (+ p's rows from n), in_n' (+ p's rows not from
//     n'), and lowers out_n' and in_n (the rows from n' become local, n no longer receives
//     p's); the first two are checked against B before the move, so every out and in stays
//     <= B. Total inter-node rows may grow (by the rows of n it moves, minus those of n'); the
//     pair level merges a token's pairs per destination node (§4.2), so bytes are measured:
//     docs/baselines/fast.md ("Consolidation by GEMM time").
// (d) Equation (1)'s bound still holds for every expert no move touched: its replicas' rows
//     are the water-filling's. A moved expert keeps T_e rows on fewer replicas (by design its
//     emptied replica is below the lower bound and the receiving one may exceed the upper).
// (e) It ends after at most (non-empty multi-replica slots) moves: each move empties a
//     non-empty slot and makes no empty slot non-empty (q has L_q > 0 already). Undoing a
//     suffix of the moves returns each node flow to a value it had after a kept move, so (c)
//     holds for the result.
// (f) Every rank computes the same m (the per-rank protocol, router.hpp): the step reads only m
//     and the Router's tables and GemmCost, all the same on every rank; its loops run in a fixed
//     order; its floating-point values are sums and maxima of IEEE 754 operations on equal
//     inputs in equal order, so every comparison comes out the same on every rank of a build.
//
// Where it fires: only on weight-bound slots, so never where every replica of a multi-replica
// expert has rows above the ridge (compute-bound GEMMs at large batches); then it stops after
// looking at the water-filling's loads of those replicas. docs/baselines/fast.md lists where it
// changes Figure 9.
//
// Cost: when some weight-bound replica has rows, the S slot loads (the GPU times and the early
// exit); when a move passes the compute test, one pass over m (S x G additions: source totals),
// the node flows, then per move a scan of the G GPU times and of the busiest GPU's slots and
// replicas.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "routing/router.hpp"

namespace zepp {

GemmCost::GemmCost(double hidden_, double ffn_, double peak_flops_, double read_s_, double launch_s_)
    : hidden(hidden_), ffn(ffn_), peak_flops(peak_flops_), read_s(read_s_), launch_s(launch_s_) {
  if (!(std::isfinite(hidden) && hidden > 0 && std::isfinite(ffn) && ffn > 0 && std::isfinite(peak_flops) &&
        peak_flops > 0 && std::isfinite(read_s) && read_s >= 0 && std::isfinite(launch_s) && launch_s >= 0))
    throw ArgumentError("gemm: expected finite hidden, ffn, peak_flops > 0 and read_s, launch_s >= 0");
  // flop_time is monotone in rows: start near read_s / flop_time(1) and step to the last row
  // count whose computed flop_time is <= read_s, so weight_bound and time agree with it exactly.
  const double guess = std::floor(read_s / flop_time(1));
  ridge = guess > 4e18 ? int64_t(4e18) : int64_t(guess);
  while (ridge > 0 && flop_time(ridge) > read_s) --ridge;
  while (ridge < int64_t(4e18) && flop_time(ridge + 1) <= read_s) ++ridge;
}

GemmCost gemm_cost(const ModelShape& model, const Topology& topo) {
  const ComputeModel& c = topo.compute;
  if (!(c.peak_flops > 0 && std::isfinite(c.peak_flops) && c.hbm_bw > 0 && std::isfinite(c.hbm_bw)))
    throw ArgumentError("topo: compute.peak_flops and compute.hbm_bw must be positive and finite, got " +
                        std::to_string(c.peak_flops) + " and " + std::to_string(c.hbm_bw));
  // The operands of expert_compute_time, so time(n) is its value bit for bit.
  return GemmCost(double(model.hidden), double(model.ffn), c.peak_flops, model.expert_weight_bytes() / c.hbm_bw,
                  c.kernel_launch);
}

// T_g with slot p's rows read as load_p and slot q's as load_q (p, q: -1 for none), in
// ascending slot order: the same sum before and after a move.
double Router::gpu_time(int g, int p, int64_t load_p, int q, int64_t load_q) const {
  const int spg = placement_.slots_per_gpu;
  double t = 0;
  for (int s = g * spg; s < (g + 1) * spg; ++s) t += gemm_.time(s == p ? load_p : s == q ? load_q : slot_load_[s]);
  return t;
}

// The new maximum a move must stay below, given the busiest GPU's roofline time T_g (opening
// comment, "Margin": T_g - M, M = T_g / 100).
static double move_limit(double busiest) { return busiest - busiest / 100; }

// The new max(T_top, T_h) when slot p's rows (on GPU `top`) all go to slot q, from slot loads.
double Router::time_after_move(int top, int p, int q) const {
  const int h = q / placement_.slots_per_gpu;
  const int64_t to = slot_load_[q] + slot_load_[p];
  return h == top ? gpu_time(top, p, 0, q, to) : std::max(gpu_time(top, p, 0, -1, 0), gpu_time(h, q, to, -1, 0));
}

// Whether some move of the busiest GPU `top` passes the compute test alone (the node test of
// (c) can only refuse more): a weight-bound slot p of a multi-replica expert with rows, a sibling
// q with rows, and a new maximum below move_limit(T_top).
bool Router::compute_allows_a_move(int top) const {
  const int spg = placement_.slots_per_gpu;
  const double limit = move_limit(gpu_time_[size_t(top)]);
  for (int p = top * spg; p < (top + 1) * spg; ++p) {
    const int e = placement_.phy2log[p];
    const int b = rep_begin_[e], r = rep_begin_[e + 1] - b;
    if (r < 2 || slot_load_[p] == 0 || !gemm_.weight_bound(slot_load_[p])) continue;
    for (int x = b; x < b + r; ++x) {
      const int q = rep_slot_[x];
      if (q != p && slot_load_[q] > 0 && time_after_move(top, p, q) < limit) return true;
    }
  }
  return false;
}

void Router::consolidate(int64_t* m) {
  stats_ = {};
  const int G = G_, S = S_, spg = placement_.slots_per_gpu, N = G / gpn_;
  int64_t* const L = slot_load_.data();
  double* const T = gpu_time_.data();
  int64_t* const out = node_out_.data();
  int64_t* const in = node_in_.data();
  // Rows of slot p from the GPUs of node s.
  auto from_node = [&](int p, int s) {
    const int64_t* const row = m + size_t(p) * G;
    int64_t x = 0;
    for (int i = s * gpn_; i < (s + 1) * gpn_; ++i) x += row[i];
    return x;
  };
  // Nothing to do unless some replica of a multi-replica expert is weight-bound with rows
  // (compute-bound layers stop here). The water-filling kept every slot's rows in L
  // (locality.cpp: count_plan), so the GPU times and the busiest GPU's candidate moves are known
  // without reading m: when no candidate lowers the busiest GPU by the margin, compute alone
  // refuses every move, the first step below would stop with none, and m stays as it is (the
  // exact early exit of the opening comment).
  bool any = false;
  for (int e = 0; e < E_; ++e) {
    if (rep_begin_[e + 1] - rep_begin_[e] < 2) continue;
    for (int x = rep_begin_[e]; x < rep_begin_[e + 1]; ++x) {
      const int p = rep_slot_[x];
      any |= L[p] > 0 && gemm_.weight_bound(L[p]);
    }
  }
  if (!any) return;
  for (int g = 0; g < G; ++g) T[g] = gpu_time(g, -1, 0, -1, 0);
  stats_.cells += double(S);
  if (!compute_allows_a_move(int(std::max_element(T, T + G) - T))) return;
  stats_.cells += double(S) * G;
  int64_t* const src = source_rows_.data();  // rows of every source GPU
  std::fill_n(src, G, 0);
  for (int p = 0; p < S; ++p) {
    const int64_t* const row = m + size_t(p) * G;
    for (int i = 0; i < G; ++i) src[i] += row[i];
  }
  // Node flows: node s sends its GPUs' rows minus those served on s; node n receives the rows of
  // its slots minus its own GPUs'.
  std::fill_n(out, N, 0);
  std::fill_n(in, N, 0);
  for (int p = 0; p < S; ++p) {
    const int n = slot_node_[p];
    const int64_t own = from_node(p, n);
    out[n] -= own;
    in[n] += L[p] - own;
  }
  for (int i = 0; i < G; ++i) out[gpu_node_[i]] += src[i];
  int64_t busiest_nic = 0;  // B: the most inter-node rows a node sends or receives
  for (int s = 0; s < N; ++s) busiest_nic = std::max({busiest_nic, out[s], in[s]});
  // Moves are logged (slots and the rows moved) so that those after the last one that lowered
  // the maximum over all GPUs can be undone: with GPUs tied at the top, emptying a slot on the
  // first of them alone changes nothing the layer waits for.
  undo_moves_.clear();
  undo_rows_.clear();
  size_t keep = 0;
  double lowest = *std::max_element(T, T + G);
  for (;;) {
    const int top = int(std::max_element(T, T + G) - T);  // the first of the busiest
    const double before = T[top];
    if (before < lowest) lowest = before, keep = undo_moves_.size();
    int best_p = -1, best_q = -1;
    bool best_cross = true;
    double best_after = before;
    int64_t best_added = 0;
    for (int p = top * spg; p < (top + 1) * spg; ++p) {
      const int e = placement_.phy2log[p];
      const int b = rep_begin_[e], r = rep_begin_[e + 1] - b;
      if (r < 2 || L[p] == 0 || !gemm_.weight_bound(L[p])) continue;
      const int n = slot_node_[p];
      const int64_t own = from_node(p, n);
      for (int x = b; x < b + r; ++x) {
        const int q = rep_slot_[x];
        if (q == p || L[q] == 0) continue;
        const int nq = slot_node_[q];
        const bool cross = nq != n;
        int64_t added = 0;
        if (cross) {
          if (best_p >= 0 && !best_cross) continue;  // a move within the node wins
          const int64_t there = from_node(p, nq);
          // n sends its own rows of p to nq; nq receives all of p's rows but its own.
          if (out[n] + own > busiest_nic || in[nq] + (L[p] - there) > busiest_nic) continue;
          added = own - there;
        }
        const double after = time_after_move(top, p, q);
        if (!(after < move_limit(before))) continue;
        if (best_p < 0 || (best_cross && !cross) ||
            (cross == best_cross && (after < best_after || (after == best_after && added < best_added)))) {
          best_p = p, best_q = q, best_cross = cross, best_after = after, best_added = added;
        }
      }
    }
    if (best_p < 0) break;
    const int n = slot_node_[best_p], nq = slot_node_[best_q];
    if (n != nq) {  // the node flows of (c)
      for (int s = 0; s < N; ++s) {
        const int64_t x = from_node(best_p, s);
        if (s != n) out[s] -= x, in[n] -= x;
        if (s != nq) out[s] += x, in[nq] += x;
      }
    }
    int64_t* const from = m + size_t(best_p) * G;
    int64_t* const to = m + size_t(best_q) * G;
    undo_moves_.push_back({best_p, best_q});
    undo_rows_.insert(undo_rows_.end(), from, from + G);
    for (int i = 0; i < G; ++i) to[i] += from[i], from[i] = 0;
    L[best_q] += L[best_p];
    L[best_p] = 0;
    T[top] = gpu_time(top, -1, 0, -1, 0);
    T[best_q / spg] = gpu_time(best_q / spg, -1, 0, -1, 0);
    stats_.cells += 2.0 * G;  // the two rows moved
  }
  for (size_t x = undo_moves_.size(); x-- > keep;) {  // newest first
    const int64_t* const rows = &undo_rows_[x * size_t(G)];
    int64_t* const from = m + size_t(undo_moves_[x].first) * G;
    int64_t* const to = m + size_t(undo_moves_[x].second) * G;
    for (int i = 0; i < G; ++i) to[i] -= rows[i], from[i] = rows[i];
    stats_.cells += 2.0 * G;
  }
  stats_.moves = int(keep);
}

}  // namespace zepp
