// Collects tokens and load rows from the per-format readers into one Trace, enforcing what
// every format shares: expert ids in [0, 2^31 - 1), one top-k per layer, distinct ids per
// token, gate weights finite and non-negative (present for all or none of a layer's tokens),
// and no layer without tokens.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <vector>
#include <string>

#include "trace/source_pos.hpp"
#include "trace/trace.hpp"

namespace zepp::trace_detail {

class TraceBuilder {
 public:
  explicit TraceBuilder(Trace& out) : out_(out) {}

  // Adds a request name; returns its index.
  int32_t add_request(std::string name);

  // Records that `layer` was named at `at` (even with no tokens), so finish() can report a
  // layer that never received a token.
  void touch_layer(int layer, const SourcePos& at);

  // Appends one token of `layer`. `gate_weights` is empty or has ids.size() entries.
  void add_token(int layer, std::span<const int64_t> ids, std::span<const double> gate_weights,
                 int32_t request, int32_t step, const SourcePos& at);

  // Appends one load row (validated by the caller) to table `table` at `layer`.
  void add_load_row(const std::string& table, int layer, std::vector<double> row, const SourcePos& at);

  // Load-only sources: every file must have the same number of expert columns.
  void set_load_columns(int num_experts, const SourcePos& at);

  // A request that a log recorded again (read as a new request named `name`).
  void note_repeated_run(const std::string& name) { out_.repeated_runs.push_back(name); }

  // What has been added so far; rollback(c) removes everything added after checkpoint() gave c
  // (read_trace's skip_invalid drops a malformed file's partial contents this way).
  struct Checkpoint {
    size_t requests = 0, repeated_runs = 0, loads = 0;
    std::map<int, int64_t> layer_tokens;       // layer -> tokens it had
    std::vector<int> seen_layers;              // layers named so far
    std::vector<std::vector<int>> table_layers;  // per load table: its layers
    std::string columns_seen;
    int num_experts = 0;
  };
  Checkpoint checkpoint() const;
  void rollback(const Checkpoint& c);

  // Final checks (no empty layer) and num_experts.
  void finish();

  // Where each layer (tokens or load rows) was first read.
  std::map<int, std::string> layer_sources() const;

 private:
  LayerTrace& layer_at(int layer, const SourcePos& at);

  Trace& out_;
  std::map<int, std::string> first_seen_;  // layer -> where it was first named
  std::map<int, std::string> load_seen_;   // layer -> where its first load row was read
  std::map<std::string, size_t> table_index_;
  std::string columns_seen_;  // where the load column count was first set
};

}  // namespace zepp::trace_detail
