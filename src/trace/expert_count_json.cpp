// Per-layer expert-count JSON, as published for Switch Transformer routing statistics:
// {"num_experts": E, "expert_usage_by_layer": {"<layer>": {"<expert>": count, ...}, ...}, ...}.
// Other top-level members are ignored; experts missing from a layer count 0. A load-only source
// like the load CSV: one LoadTable named by the file (its relative path without extension),
// one row of counts per layer.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <optional>
#include <vector>

#include "core/input_bounds.hpp"
#include "trace/json_scan.hpp"
#include "trace/json_util.hpp"
#include "trace/readers.hpp"

namespace zepp::trace_detail {

using namespace simdjson;

namespace {

// A JSON object key that must be a non-negative decimal integer below `limit`.
int64_t index_key(std::string_view key, const SourcePos& at, const std::string& what, int64_t limit) {
  if (key.empty() || key.size() > 10 || key.find_first_not_of("0123456789") != std::string_view::npos)
    fail(at, "expected " + what + " key (a non-negative integer in quotes), got " + shown(key));
  const int64_t v = parse_int(key, at, what);
  if (v >= limit) fail(at, "expected " + what + " below " + std::to_string(limit) + ", got " + std::to_string(v));
  return v;
}

}  // namespace

void read_expert_count_json(const std::string& file, const padded_string& text, const std::string& rel,
                            TraceBuilder& b) {
  thread_local ondemand::parser parser;
  const char* base = text.data();
  auto at = [&](const char* p) { return SourcePos{&file, -1, int64_t(p - base)}; };
  const std::string table = std::filesystem::path(rel).replace_extension().generic_string();
  ondemand::document doc;
  if (auto error = parser.iterate(text).get(doc)) {
    const int64_t offset = locate_index_error(std::string_view(text.data(), text.size()), error);
    const std::string what = std::string("expected a JSON document (simdjson: ") + error_message(error) + ")";
    if (offset < 0) throw InputError(file + ": " + what);
    fail(at(base + offset), what);
  }
  const char* expecting = "a JSON object with \"num_experts\" and \"expert_usage_by_layer\"";
  try {
    ondemand::object root = doc.get_object();
    std::optional<int64_t> experts;
    int rows = 0;
    bool usage_seen = false;
    std::vector<std::string> members;  // a second "expert_usage_by_layer" was read on top of the first
    for (ondemand::field top : root) {
      const SourcePos where = at(top.key().raw() - 1);  // raw key first: unescaped_key() consumes it
      const std::string_view key = top.unescaped_key();
      if (std::find(members.begin(), members.end(), key) != members.end())
        fail(where, "expected each member once, got \"" + std::string(key) + "\" twice");
      members.emplace_back(key);
      ondemand::value v = top.value();
      if (key == "num_experts") {
        expecting = "\"num_experts\"";
        experts = json_int(v, where, "\"num_experts\"");
        if (*experts < 1 || *experts >= INT32_MAX - 1)
          fail(where, "expected \"num_experts\" in [1, 2^31 - 1), got " + std::to_string(*experts));
        b.set_load_columns(int(*experts), where);
      } else if (key == "expert_usage_by_layer") {
        if (!experts) fail(where, "expected \"num_experts\" before \"expert_usage_by_layer\"");
        usage_seen = true;
        std::vector<int> layers;
        expecting = "\"expert_usage_by_layer\": an object {\"<layer>\": {\"<expert>\": count}}";
        for (ondemand::field layer_field : v.get_object()) {
          const SourcePos layer_at = at(layer_field.key().raw() - 1);  // before unescaped_key()
          const int layer = int(index_key(layer_field.unescaped_key(), layer_at, "a layer", INT32_MAX));
          for (int seen : layers)
            if (seen == layer) fail(layer_at, "expected each layer once, got layer " + std::to_string(layer) + " twice");
          layers.push_back(layer);
          std::vector<double> row(size_t(*experts), 0.0);
          std::vector<bool> given(row.size(), false);
          expecting = "a layer's counts: an object {\"<expert>\": count}";
          for (ondemand::field e : layer_field.value().get_object()) {
            const SourcePos e_at = at(e.key().raw() - 1);
            const int64_t expert = index_key(e.unescaped_key(), e_at, "an expert id", *experts);
            if (given[expert]) fail(e_at, "expected each expert once per layer, got expert " + std::to_string(expert) + " twice");
            given[expert] = true;
            ondemand::value count = e.value();
            row[expert] = json_number(count, at(count.raw_json_token().data()), "a count");
            if (!std::isfinite(row[expert]) || row[expert] < 0 || row[expert] > kMaxLoad)
              fail(e_at, "expected a count in [0, 1e15] for expert " + std::to_string(expert) + ", got " +
                             std::string(count.raw_json_token()));
          }
          b.add_load_row(table, layer, std::move(row), layer_at);
          ++rows;
          expecting = "',' and another layer, or '}'";
        }
      }
      expecting = "',' and another member, or '}'";
    }
    if (!experts) fail(at(base), "expected a member \"num_experts\" (the routed expert count)");
    if (!usage_seen || rows == 0)
      fail(at(base), "expected \"expert_usage_by_layer\" with at least one layer of counts");
    const char* rest = nullptr;  // current_location() is OUT_OF_BOUNDS exactly at the end
    if (doc.current_location().get(rest) == SUCCESS) fail(at(rest), "expected the end of the document, got more text");
  } catch (const simdjson_error& e) {
    const char* p = nullptr;
    if (doc.current_location().get(p) != SUCCESS) p = base + text.size();
    fail(at(p), std::string("expected ") + expecting + " (simdjson: " + e.what() + ")");
  }
}

}  // namespace zepp::trace_detail
