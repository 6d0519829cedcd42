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
  std::string format;                // "selection-json", "deepseek-csv", "routing-jsonl", "vllm-route-jsonl",
                                     // "load-csv", "expert-count-json"
  int num_experts = 0;               // token sources: max id + 1; load sources: column count
  std::vector<std::string> requests; // request names in order (file stem, problem id)
  std::map<int, LayerTrace> layers;  // token-level sources only
  std::vector<LoadTable> loads;      // load-only sources only
  // What reading left out or read specially, for the workload line and warnings:
  std::vector<std::string> skipped_empty;    // files with no data (nothing lost)
  std::vector<std::string> skipped_invalid;  // "FILE:LINE: error" of files skipped by skip_invalid
  std::vector<std::string> repeated_runs;    // requests recorded again in a log, read as new requests

  bool has_tokens() const { return !layers.empty(); }
  std::vector<int> layer_ids() const;  // layers present, ascending
  // "2 empty files skipped; ..." or "" when nothing was skipped or repeated.
  std::string reading_notes() const;
};

struct ReadOptions {
  bool skip_invalid = false;  // skip malformed files (listed in Trace::skipped_invalid) instead of stopping
};

// Reads a trace file or a folder of trace files. A folder is read recursively: its *.json,
// *.jsonl and *.csv files (names starting with '.' and other files, e.g. README.md, skipped),
// in natural order of relative path (numbers compared as numbers: "2.json" before "10.json"),
// all of one format. Empty (blank) files are skipped and listed in skipped_empty. The format is
// detected from the content (docs/trace-formats.md): '[' selection JSON; '{' an expert-count
// JSON object when it names "expert_usage_by_layer", else JSON Lines (vLLM's route log when the
// first record has a "type" field); a CSV header starting "Layer ID," (DeepSeek) or
// "Layer,Language," (load). Per format (shared/data/traces/README.md):
// - "selection-json": one request per file, named by its relative path ("anatomy/100.json");
//   step 0 = prefill, step s = decode step s; null layers (dense) are skipped.
// - "deepseek-csv": one request per file; prompt tokens only (step 0); libcsv, RFC 4180.
// - "routing-jsonl": one request per (dataset, problem_id), named "FILE#dataset/problem_id";
//   gating_probs become gate_weights; step 0 for all (the log does not mark decode tokens);
//   when token_idx stops increasing within a (request, layer) the problem was recorded again,
//   and the records from there on are a new request "... (run 2)" (listed in repeated_runs).
//   Field aliases: token_pos etc. for token_idx, layer_idx etc. for layer (routing_jsonl.cpp).
// - "vllm-route-jsonl": vLLM's per-token route log ({"type": "meta"} header, {"type": "route",
//   "req_id", "token_idx", "layer", "topk_ids", "topk_weights"} records): one request per
//   req_id; a new forward pass (token_idx not increasing) is the next step.
// - "load-csv": one LoadTable per (dataset, language); dataset = the file name's dataset token
//   (the first '_'-separated token in which the folder's load CSV names differ).
// - "expert-count-json": {"num_experts", "expert_usage_by_layer": {"<layer>": {"<expert>":
//   count}}}: one LoadTable per file, named by the file; load-only.
// Throws InputError "FILE:LINE: expected ..." (CSV, JSONL) or "FILE: byte OFFSET: expected ..."
// (JSON), followed by "[read as FORMAT: why that format was chosen]", on any malformed input:
// invalid or truncated JSON, a CSV row with the wrong number of fields, a non-numeric field,
// top-k varying within a layer, an expert id that is negative, not an integer, repeated within
// a token or >= 2^31 - 1, a gate weight outside [0, 1] or not one per expert id, a token's gate
// weights summing past 1 + kGateSumTolerance (core/gate.hpp), a negative or NaN load or count, a layer twice in one step or a load row twice, files of different formats, a layer
// with no tokens in the whole trace, no MoE layer at all, nothing but empty files, a trace file
// that cannot be read (a broken symbolic link, a FIFO, no permission). With
// options.skip_invalid a malformed or unreadable file is skipped instead (its error kept in
// skipped_invalid) as long as some file is readable.
Trace read_trace(const std::string& path, const ReadOptions& options = {});

// Throws ArgumentError ("trace: ...", naming the trace and the model) when an expert id of
// `trace` is negative or >= model.num_experts, when a layer's top-k differs from model.top_k,
// when a layer's arrays disagree in length or name a request that does not exist (possible only
// for a Trace built by hand), or when a load table has a column count other than
// model.num_experts or a load that is negative or not finite.
void check_trace_matches_model(const Trace& trace, const ModelShape& model);

}  // namespace zepp
