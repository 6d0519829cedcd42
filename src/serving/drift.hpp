// Workloads over many iterations, with the demand drifts of the paper's §6.5: the placement
// history and the batches served at iterations 0, 1, 2, ... of one MoE layer.
//
// Datasets. Token-level traces: a request's dataset is its path's first folder
// ("abstract_algebra/12.json" -> "abstract_algebra"); when that gives fewer than two datasets
// (DeepSeek-V2-Lite's prompts, Mixtral's problems) the requests, in source order, are split into
// `groups` consecutive groups "group1".."groupN". Load-only traces: one dataset per LoadTable
// ("arc/English", "arc/Hebrew", ...).
//
// History and evaluation. Token traces: the first `history_fraction` of each dataset's requests
// (in source order) are history, the rest evaluation (a dataset whose requests are too few for
// that, e.g. one, is split by its tokens instead; in mode none, when a dataset has fewer than
// two tokens, the whole trace is split as one dataset "all"); an iteration takes the next
// tokens_per_gpu * G evaluation tokens of its dataset in order (GPU i gets the i-th run of
// tokens_per_gpu consecutive tokens) and wraps to the start of that dataset's evaluation tokens
// when they run out (`wrapped` counts such restarts). Load traces have no order: history is the
// table itself, and each iteration samples tokens_per_gpu * G selections of top-k distinct
// experts from its table's per-expert load (seeded by seed and iteration).
//
// Modes (§6.5): none — history is every dataset's history tokens together, iterations walk all
// evaluation tokens in source order; only — history is an even mix of all datasets (each
// dataset's history load normalised to the same total), every iteration serves `dataset`;
// rotating — history is an even mix of all datasets except `dataset`, iterations cycle through
// all datasets in order, `period` iterations each.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "trace/trace.hpp"

namespace zepp {

enum class DriftMode { None, Only, Rotating };

struct DriftOptions {
  int layer = -1;                 // -1: the trace's first MoE layer
  double size_mb = 1.0;           // BF16 input activations per GPU, MiB, before top-k (§6.1)
  uint64_t seed = 1;
  double history_fraction = 0.5;  // token traces: share of each dataset's requests for history
  DriftMode mode = DriftMode::None;
  std::string dataset;            // only: the one served; rotating: the one left out of history
  int period = 4;                 // rotating: iterations per dataset
  int groups = 4;                 // token traces without dataset folders: request groups
  // Placement history from another trace (`zepp simulate --history`; mode none only): its
  // selections at `layer` (or its load tables there, summed) are the history, and every token of
  // the served trace is evaluation (history_fraction unused). Not owned; outlives the workload.
  const Trace* history = nullptr;
};

// Parses "none", "only", "rotating" (ArgumentError("mode: ...") otherwise).
DriftMode parse_drift_mode(const std::string& s);

class DriftWorkload {
 public:
  // Throws ArgumentError naming the option (layer absent, size_mb <= 0, history_fraction not in
  // (0, 1), unknown dataset — the message lists the trace's datasets —, period or groups < 1, a
  // dataset without history or evaluation requests) and "model" when the trace does not match it.
  DriftWorkload(const Trace& trace, const ModelShape& model, const Topology& topo, const DriftOptions& opt);

  const std::vector<std::string>& datasets() const { return names_; }
  const std::vector<double>& history_load() const { return history_; }  // [E] tokens
  int64_t tokens_per_gpu() const { return tokens_per_gpu_; }
  int layer() const { return layer_; }
  std::string description() const;
  // "too few requests, history/evaluation split by tokens in D1, D2" naming the datasets whose
  // requests were too few to split by requests in this layer, or "" when there are none.
  std::string split_note() const;

  // The dataset served at iteration i (>= 0).
  const std::string& dataset_of(int iteration) const;
  // Iteration i's batch. Token traces: iterations must be asked for in order 0, 1, 2, ... (each
  // continues where the previous one of its dataset stopped); ArgumentError otherwise.
  RoutingBatch batch(int iteration);
  int next_iteration() const { return next_iteration_; }
  int64_t wrapped() const { return wrapped_; }

 private:
  int dataset_index(int iteration) const;

  const Trace& trace_;
  DriftOptions opt_;
  int G_, E_, K_, layer_ = 0;
  int64_t tokens_per_gpu_ = 0;
  std::vector<std::string> names_;
  std::vector<std::string> split_by_tokens_;        // datasets whose requests were too few to split
  std::vector<double> history_;
  std::vector<std::vector<int64_t>> eval_tokens_;  // token traces: [dataset] token indices in order
  std::vector<std::vector<double>> tables_;         // load traces: [dataset] per-expert load
  std::vector<int64_t> cursor_;                     // token traces: [dataset] next eval position
  int next_iteration_ = 0;
  int64_t wrapped_ = 0;
};

}  // namespace zepp
