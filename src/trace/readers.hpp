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
// Mixtral JSON Lines routing log: one request per (dataset, problem_id), in order of first use.
void read_routing_jsonl(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                        TraceBuilder& b);
// Qwen3 per-layer load CSV: one LoadTable per (file dataset, language).
void read_load_csv(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                   TraceBuilder& b);

}  // namespace zepp::trace_detail
