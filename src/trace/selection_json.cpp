// Expert-selection JSON: [ step0, step1, ... ], each step {"<layer>": null | [[id, ...], ...]}.
// Step 0 is the prefill (all prompt tokens), steps s >= 1 decode steps.
#include <vector>

#include "trace/json_scan.hpp"
#include "trace/json_util.hpp"
#include "trace/readers.hpp"

namespace zepp::trace_detail {

using namespace simdjson;

void read_selection_json(const std::string& file, const padded_string& text, const std::string& rel,
                         TraceBuilder& b) {
  thread_local ondemand::parser parser;
  const char* base = text.data();
  auto at = [&](const char* p) { return SourcePos{&file, -1, int64_t(p - base)}; };
  const int32_t request = b.add_request(rel);
  const char* expecting = "a JSON list of steps";
  // simdjson checks the root's closing bracket before anything else and reports a truncated or
  // over-long file at byte 0, so say where the document really ends.
  const std::string_view all(text.data(), text.size());
  const size_t last = all.find_last_not_of(" \t\r\n");
  if (last != std::string_view::npos && all[last] != ']') {
    // Text after a complete list ("[...] x") is no truncation: find where the root list closes
    // (brackets outside strings) and name the first byte after it.
    int depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < last; ++i) {
      const char c = all[i];
      if (in_string) {
        if (escaped) escaped = false;
        else if (c == '\\') escaped = true;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if ((c == ']' || c == '}') && --depth == 0) {
        fail(at(base + all.find_first_not_of(" \t\r\n", i + 1)),
             "expected the end of the document after the list of steps, got more text");
      }
    }
    fail(at(base + last), "expected ']' closing the list of steps at the end of the file, got " +
                              shown(all.substr(last, 1)) + " (truncated file?)");
  }
  ondemand::document doc;
  if (auto error = parser.iterate(text).get(doc)) {
    const int64_t offset = locate_index_error(all, error);
    const std::string what = std::string("expected a JSON document (simdjson: ") + error_message(error) + ")";
    if (offset < 0) throw InputError(file + ": " + what);
    fail(at(base + offset), what);
  }
  try {
    int32_t step = 0;
    std::vector<int64_t> ids;
    std::vector<int> layers_in_step;
    for (auto step_value : doc.get_array()) {
      expecting = "a step: an object keyed by layer index";
      ondemand::object step_obj = step_value.get_object();
      layers_in_step.clear();
      for (ondemand::field field : step_obj) {
        expecting = "a layer index key";
        const char* key_at = field.key().raw() - 1;
        std::string_view key = field.unescaped_key();
        if (key.empty() || key.size() > 9 || key.find_first_not_of("0123456789") != std::string_view::npos)
          fail(at(key_at), "expected a layer index key (a non-negative integer in quotes), got " + shown(key));
        const int layer = int(parse_int(key, at(key_at), "a layer index"));
        for (int seen : layers_in_step)
          if (seen == layer) fail(at(key_at), "expected each layer once per step, got layer " + std::to_string(layer) + " twice");
        layers_in_step.push_back(layer);
        expecting = "null (dense layer) or a list of tokens";
        ondemand::value tokens = field.value();
        if (tokens.is_null()) continue;
        b.touch_layer(layer, at(key_at));
        for (ondemand::value token : tokens.get_array()) {
          expecting = "a token: a list of expert ids";
          const char* token_at = token.raw_json_token().data();
          ids.clear();
          for (ondemand::value id : token.get_array()) {
            expecting = "an expert id";
            ids.push_back(json_int(id, at(id.raw_json_token().data()), "an expert id"));
          }
          b.add_token(layer, ids, {}, request, step, at(token_at));
          expecting = "',' or ']' after a token";
        }
        expecting = "',' and another layer key, or '}', after a layer";
      }
      ++step;
      expecting = "',' or ']' after a step";
    }
    if (step == 0) fail(at(base), "expected at least one step (step 0 = prefill), got an empty list");
    const char* rest = nullptr;  // current_location() is OUT_OF_BOUNDS exactly at the end
    if (doc.current_location().get(rest) == SUCCESS)
      fail(at(rest), "expected the end of the document after the list of steps, got more text");
  } catch (const simdjson_error& e) {
    const char* p = nullptr;
    if (doc.current_location().get(p) != SUCCESS) p = base + text.size();  // ran off the end
    fail(at(p), std::string("expected ") + expecting + " (simdjson: " + e.what() + ")");
  }
}

}  // namespace zepp::trace_detail
