// The paper's workload construction (§6.1, DESIGN.md §3): one layer, history for placement,
// evaluation tokens sampled with replacement until each GPU holds the target activation size.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "trace/trace.hpp"

namespace zepp {

struct WorkloadOptions {
  int layer = -1;                 // -1: the trace's first MoE layer present
  double size_mb = 1.0;           // BF16 input activations per GPU, MiB = 2^20 bytes, before top-k
  uint64_t seed = 1;
  double history_fraction = 0.5;  // first share of requests (in source order) is history
  // Synthetic only: popularity of the r-th most popular expert ~ r^-zipf. 0.73 is fitted to real
  // top-8 loads (issue 24): the median over the 288 layer rows of shared/data/traces/
  // qwen3-30b-a3b-load of the exponent whose busiest/mean expert load, under this sampler (8
  // distinct experts per token, 128 experts), equals the row's (scripts/fit_popularity.py; the
  // busiest-10% share gives 0.83). Used unchanged for other expert counts (Kimi-K2: 384). Was 1.2,
  // chosen by hand, which gave a2av's busiest GPU 8.6x the mean at 16 nodes.
  double zipf = 0.73;
  std::string dataset;            // load-only sources: which LoadTable(s) to use ("" = all, mixed evenly)
};

struct Workload {
  std::string description;        // human-readable: source, layer, split
  bool synthetic = false;         // true when no per-token source selections were sampled
  int layer = 0;
  int64_t tokens_per_gpu = 0;     // size_bytes / (hidden * 2)
  std::vector<double> history_load;  // [E] expert demand in history (tokens), placement input
  RoutingBatch batch;             // evaluation tokens, tokens_per_gpu per GPU
  // [E * E] history tokens that selected both e and f (symmetric, zero diagonal): which experts
  // are selected together, for co-activation-aware placement (epic). Empty when the history has
  // no per-token selections (load-only and synthetic sources, whose tokens are drawn
  // independently, so no pair is selected together more often than by chance) and for serve's
  // drifting workloads (serving/drift.hpp keeps loads only).
  std::vector<double> history_coactivation;
};

// Builds the workload (paper §6.1, DESIGN.md §3).
//
// tokens_per_gpu = max(1, floor(size_mb * 2^20 / model.token_bytes())), token_bytes = hidden * 2
// for BF16; every GPU of `topo` gets that many complete selections (top-k ids + gate weights).
//
// - Token-level trace (layer: opt.layer, or the smallest layer present): requests split in
//   source order; the first floor(history_fraction * R) requests are history, history_load[e] =
//   number of history tokens of the layer that selected e; the others are evaluation, and the
//   batch is sampled with replacement from the evaluation tokens of the layer. A trace of one
//   request is split by tokens instead: the first floor(history_fraction * T) tokens of the
//   layer are history (the description says so).
// - With a separate `history` trace (--history): history_load counts every token of the layer
//   in `history` (a load-only history: its mean load, scaled as below), and the batch is
//   sampled from all tokens of `trace` (all of its requests are evaluation); history_fraction
//   is not used.
// - Load-only trace: the per-expert load of `layer` (mean over the tables picked by
//   opt.dataset: "" all, "arc" every "arc/..." table, "arc/Hebrew" that table) is the
//   popularity; each token gets top-k distinct experts drawn one after another proportionally
//   to it. history_load = that load scaled to the batch's (token, expert) pairs. synthetic = true.
// - trace == nullptr: expert of popularity rank r has weight r^-zipf, ranks shuffled by the
//   seed; top-k distinct per token as above; history_load counts as many tokens drawn from the
//   same distribution with an independent stream. synthetic = true, layer = max(opt.layer, 0).
// Gate weights missing from the source are derived deterministically: the r-th listed expert
// (r = 0..k-1) gets (k - r) / (k (k + 1) / 2).
//
// Deterministic: std::mt19937_64 seeded with opt.seed, with the integer/real mappings written
// out (workload/sampling.hpp), so one seed gives the same batch with any standard library.
//
// Throws ArgumentError naming the field: size_mb (not positive or finite, or more than 2^31
// (token, expert) pairs in all), layer (< -1, or absent from the trace: the message lists the
// layers present), history_fraction (outside (0, 1), or the history or evaluation part of the
// layer is empty), history (without a trace, or without the layer), zipf (negative or not
// finite, or so large that r^-zipf leaves fewer than top-k experts of positive weight), dataset
// (set for a trace that is not load-only, matches no table, or leaves fewer than top-k experts
// with positive load), model / topo (unusable shapes), trace (check_trace_matches_model), and
// workload when a token of the result breaks what the planner assumes (ids in [0, E) and
// distinct, gate weights in [0, 1] summing to at most 1 + kGateSumTolerance, history load finite
// and non-negative): checked on every result, whatever its source.
Workload build_workload(const Trace* trace, const ModelShape& model, const Topology& topo,
                        const WorkloadOptions& opt, const Trace* history = nullptr);

// How build_workload splits `layer` of a token-level trace (no separate history): the first
// history_units of `units` (requests, or the tokens of a single request) are history, and the
// layer's tokens fall `history` / `evaluation` on either side. A layer that some requests lack
// can have all its tokens on one side: build_workload then refuses it (history_fraction).
struct TokenSplit {
  bool by_tokens = false;       // one request: split by its tokens
  int64_t units = 0, history_units = 0;
  int64_t history = 0, evaluation = 0;  // tokens of the layer
};
TokenSplit token_split(const Trace& trace, int layer, double history_fraction);

}  // namespace zepp
