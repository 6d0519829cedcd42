// The sweep's CSV: one row per (configuration, strategy). Written and read here only, so the
// sweep, --resume and the report agree on the columns. Among the formats (not experiments/) so
// that its fuzz harness (tests/fuzz/harnesses/results_csv.cpp) links the reader alone.
#pragma once
#include <cstdint>
#include <string>
#include <optional>
#include <vector>

#include "core/provenance.hpp"

namespace zepp::experiments {

struct ResultRow {
  std::string experiment, workload, model, trace;  // trace: folder name, "" for synthetic
  bool synthetic = false;
  int layer = 0;
  std::string topology;
  int nodes = 0, gpus = 0;
  double size_mb = 0;          // MiB of BF16 activations per GPU before top-k
  int64_t tokens_per_gpu = 0;
  std::string strategy;
  double latency_us = 0;       // slowest GPU's finish, simulated
  double speedup_vs_a2av = 0;  // a2av latency / this latency in the same configuration
  double inter_node_bytes = 0, nvlink_bytes = 0, max_nic_bytes = 0;
  double imbalance = 0;        // max / mean (token, expert) pairs per GPU
  double comm_hidden_fraction = 0;
  double max_compute_us = 0;   // busiest GPU's time in expert GEMMs (roofline, simulated)
  double routing_wall_us = 0;  // planning cost on this machine (not simulated)
  // Per-batch metadata all-gather and per-rank planning on the simulated critical path (issue
  // 20; plan/planning.hpp), included in latency_us when planning == "model", 0 when "free".
  double metadata_us = 0, planning_us = 0;
  std::string planning = "model";
  int64_t line = 0;            // the row's line in its file (read_results); 0 for a row not read from one
};

// The header line (with '\n') and one row as a CSV line (with '\n'); names never hold commas.
std::string csv_header();
std::string csv_line(const ResultRow& r);

// A configuration's identity: workload, topology, nodes and size.
std::string config_key(const ResultRow& r);
std::string config_key(const std::string& workload, const std::string& topology, int nodes, double size_mb);

// Reads a CSV written by csv_header/csv_line, after its provenance line (core/provenance.hpp;
// absent in files written before it existed: `made_by` is then nullopt). A file written before
// the planning columns (the header ends at routing_wall_us) is read with planning "free". Throws InputError
// "FILE:LINE: expected ..." on another header, a row with the wrong number of fields, a field
// that is not a number where one is expected, a latency_us or speedup_vs_a2av that is not
// positive, a negative measure (bytes, imbalance, times), or a second row of the same experiment,
// configuration and strategy (naming the first's line); InputError "FILE: cannot read" when the file cannot
// be opened; the file's size and lines are bounded before parsing (core/input_bounds.hpp).
std::vector<ResultRow> read_results(const std::string& path, std::optional<Provenance>* made_by = nullptr);

// Replaces `path` with `text` atomically: written to PATH.tmp beside it, flushed to disk, then
// renamed over it, so a process killed at any moment leaves either the old or the new file,
// never a torn row. Throws ArgumentError naming --csv when the file cannot be written.
// For the interrupted-write test: ZEPP_FAULT_KILL_IN_WRITE=N makes the N-th call of the process
// write half of PATH.tmp and SIGKILL itself.
void write_results_atomically(const std::string& path, const std::string& text);

}  // namespace zepp::experiments
