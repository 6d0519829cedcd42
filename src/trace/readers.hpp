// One reader per source format (shared/data/traces/README.md). Each parses one file's text
// (`file`: its path, for messages; `rel`: its name relative to what read_trace was given, for
// request and table names) into the builder, throwing InputError at the first problem.
#pragma once
#include <simdjson.h>

#include <string>

#include "trace/builder.hpp"

namespace zepp::trace_detail {

// Expert-selection JSON ("Patterns behind Chaos" format): one request per file.
void read_selection_json(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                         TraceBuilder& b);
// DeepSeek per-(token, layer) CSV: one request per file, all tokens prompt tokens (step 0).
void read_deepseek_csv(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                       TraceBuilder& b);
// JSON Lines routing log: Mixtral-style (one request per (dataset, problem_id) and run, in order
// of first use) or, with `vllm`, vLLM's per-token route log (one request per req_id, a step per
// forward pass).
void read_routing_jsonl(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                        TraceBuilder& b, bool vllm);
// Qwen3 per-layer load CSV: one LoadTable per (dataset, language); `dataset` named by read_trace
// from the file names.
void read_load_csv(const std::string& file, const simdjson::padded_string& text, const std::string& dataset,
                   TraceBuilder& b);
// Per-layer expert-count JSON {"num_experts": E, "expert_usage_by_layer": {"<layer>": {"<expert>":
// count}}}: one LoadTable named by the file (rel without extension); load-only.
void read_expert_count_json(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                            TraceBuilder& b);
// SGLang expert-distribution statistics {"logical_count": [[steps]][layers][experts]} (what
// zepp.write_sglang_stats writes): one LoadTable named by the file, a row per layer; load-only.
void read_sglang_stats_json(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                            TraceBuilder& b);

}  // namespace zepp::trace_detail
