// Real routing traces in one in-memory form (shared/data/traces/README.md describes the four
// source formats). Token-level sources keep every token's top-k expert ids in order, with gate
// weights where the source has them, and request/step boundaries; load-only sources keep
// per-layer per-expert load.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace zepp {

// All tokens of one layer, in source order (request by request, step by step).
struct LayerTrace {
  int layer = 0;                     // layer index as written in the source
  int top_k = 0;
  std::vector<int32_t> expert_ids;   // [T * top_k]
  std::vector<float> gate_weights;   // [T * top_k], or empty when the source has none
  std::vector<int32_t> request;      // [T] index into Trace::requests
  std::vector<int32_t> step;         // [T] 0 = prefill (prompt), s >= 1 = decode step s

  int64_t num_tokens() const { return int64_t(request.size()); }
};

// Per-expert load of every layer for one slice of a load-only source (e.g. dataset "arc",
// language "Hebrew"). Values are the source's own unit (Qwen3: fraction of tokens selecting the
// expert, a row sums to ~top-k).
struct LoadTable {
  std::string name;                             // e.g. "arc/English"
  std::map<int, std::vector<double>> per_layer; // layer -> [num_experts]
};

struct Trace {
  std::string path;                  // what was read (file or folder)
  std::string format;                // "selection-json", "deepseek-csv", "routing-jsonl", "load-csv"
  int num_experts = 0;               // token sources: max id + 1; load sources: column count
  std::vector<std::string> requests; // request names in order (file stem, problem id)
  std::map<int, LayerTrace> layers;  // token-level sources only
  std::vector<LoadTable> loads;      // load-only sources only

  bool has_tokens() const { return !layers.empty(); }
  std::vector<int> layer_ids() const;  // layers present, ascending
};

// Reads a trace file or a folder of trace files. A folder is read recursively: its *.json,
// *.jsonl and *.csv files (names starting with '.' and other files, e.g. README.md, skipped),
// sorted by relative path ("10.json" before "2.json"), all of one format. The format is
// detected from the content: '[' selection JSON, '{' JSON Lines, a CSV header starting
// "Layer ID," (DeepSeek) or "Layer,Language," (load). Per format (shared/data/traces/README.md):
// - "selection-json": one request per file, named by its relative path ("anatomy/100.json");
//   step 0 = prefill, step s = decode step s; null layers (dense) are skipped.
// - "deepseek-csv": one request per file; prompt tokens only (step 0); libcsv, RFC 4180.
// - "routing-jsonl": one request per (dataset, problem_id), named "FILE#dataset/problem_id";
//   gating_probs become gate_weights; step 0 for all (the log does not mark decode tokens);
//   token_idx must increase within a (request, layer).
// - "load-csv": one LoadTable per (dataset, language), dataset = file name up to its first '_'.
// Throws InputError "FILE:LINE: expected ..." (CSV, JSONL) or "FILE: byte OFFSET: expected ..."
// (JSON) on any malformed input: invalid or truncated JSON, a CSV row with the wrong number of
// fields, a non-numeric field, top-k varying within a layer, an expert id that is negative, not
// an integer, repeated within a token or >= 2^31 - 1, a gate weight negative or not finite, a
// negative or NaN load, a layer twice in one step or a load row twice, an empty file or folder,
// files of different formats, a layer with no tokens in the whole trace, no MoE layer at all.
Trace read_trace(const std::string& path);

// Throws ArgumentError naming the model when an expert id of `trace` is >= model.num_experts,
// when a load table has a column count other than model.num_experts, or when a layer's top-k
// differs from model.top_k.
void check_trace_matches_model(const Trace& trace, const ModelShape& model);

}  // namespace zepp
