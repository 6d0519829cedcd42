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
  double zipf = 1.2;              // synthetic only: popularity of the r-th most popular expert ~ r^-zipf
  std::string dataset;            // load-only sources: which LoadTable(s) to use ("" = all, mixed evenly)
};

struct Workload {
  std::string description;        // human-readable: source, layer, split
  bool synthetic = false;         // true when no per-token source selections were sampled
  int layer = 0;
  int64_t tokens_per_gpu = 0;     // size_bytes / (hidden * 2)
  std::vector<double> history_load;  // [E] expert demand in history (tokens), placement input
  RoutingBatch batch;             // evaluation tokens, tokens_per_gpu per GPU
};

// Builds the workload. With a token-level trace: requests split into history and evaluation by
// `history_fraction`; each GPU gets tokens_per_gpu complete selections sampled with replacement
// from the evaluation tokens. With a load-only trace: selections of top-k distinct experts sampled
// from the table's per-expert popularity (history = the same load). With trace == nullptr: the
// synthetic power-law workload. Gate weights missing from the source are derived deterministically:
// the r-th listed expert (r = 0..k-1) gets (k - r) / (k (k + 1) / 2).
// Deterministic for a given seed. Throws ArgumentError (bad options, layer absent) naming the field.
Workload build_workload(const Trace* trace, const ModelShape& model, const Topology& topo,
                        const WorkloadOptions& opt);

}  // namespace zepp
