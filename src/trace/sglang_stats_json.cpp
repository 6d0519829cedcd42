// SGLang's expert-distribution statistics as JSON: {"logical_count": [steps][layers][experts] or
// [layers][experts], ...} (token counts; what `zepp.write_sglang_stats` writes and SGLang's .pt
// recorder dump holds once converted, python/zepp/_formats.py). Other members are ignored. A
// load-only source like the expert-count JSON: one LoadTable named by the file, one row per layer
// (the row index is the layer id, as in SGLang's placement files), steps summed.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/input_bounds.hpp"
#include "trace/json_util.hpp"
#include "trace/readers.hpp"

namespace zepp::trace_detail {

using namespace simdjson;

void read_sglang_stats_json(const std::string& file, const padded_string& text, const std::string& rel,
                            TraceBuilder& b) {
  const SourcePos at{&file};  // DOM parsing keeps no offsets: messages name the field ("logical_count"[1][2])
  const std::string table = std::filesystem::path(rel).replace_extension().generic_string();
  thread_local dom::parser parser;
  dom::element doc;
  if (auto error = parser.parse(text).get(doc))
    fail(at, std::string("expected a JSON document (simdjson: ") + error_message(error) + ")");
  dom::element counts;
  if (dom::object members; doc.get(members) == SUCCESS) {  // a lookup finds the first of a repeated key
    std::vector<std::string_view> seen;
    for (dom::key_value_pair m : members) {
      if (std::find(seen.begin(), seen.end(), m.key) != seen.end())
        fail(at, "expected each member once, got \"" + std::string(m.key) + "\" twice");
      seen.push_back(m.key);
    }
  }
  if (doc.type() != dom::element_type::OBJECT || doc["logical_count"].get(counts) != SUCCESS)
    fail(at, "expected a JSON object with \"logical_count\" (SGLang expert-distribution statistics)");
  auto list = [&](dom::element e, const std::string& what) {
    dom::array a;
    if (e.get(a) != SUCCESS || a.size() == 0) fail(at, "expected " + what + " to be a non-empty list");
    return a;
  };
  dom::array outer = list(counts, "\"logical_count\"");
  dom::array first = list(outer.at(0), "\"logical_count\"[0]");
  dom::element probe = first.at(0);
  const bool three = probe.type() == dom::element_type::ARRAY;  // [steps][layers][experts]
  std::vector<std::vector<double>> rows;
  size_t experts = 0;
  size_t step = 0;
  for (dom::element s : outer) {
    dom::array layers = three ? list(s, "\"logical_count\"[" + std::to_string(step) + "]") : outer;
    size_t l = 0;
    for (dom::element layer : layers) {
      const std::string where = "\"logical_count\"" + (three ? "[" + std::to_string(step) + "]" : std::string()) + "[" +
                                std::to_string(l) + "]";
      dom::array row = list(layer, where);
      if (experts == 0) experts = row.size();
      if (row.size() != experts)
        fail(at, "expected " + std::to_string(experts) + " experts in " + where + ", got " + std::to_string(row.size()));
      if (rows.size() <= l) rows.emplace_back(experts, 0.0);
      size_t e = 0;
      for (dom::element c : row) {
        double v = 0;
        if (c.get(v) != SUCCESS) {  // integers
          int64_t i = 0;
          uint64_t u = 0;
          if (c.get(i) == SUCCESS) v = double(i);
          else if (c.get(u) == SUCCESS) v = double(u);
          else fail(at, "expected a number in " + where + "[" + std::to_string(e) + "]");
        }
        if (!std::isfinite(v) || v < 0 || v > kMaxLoad)
          fail(at, "expected a count in [0, 1e15] in " + where + "[" + std::to_string(e) + "], got " + simdjson::minify(c));
        if ((rows[l][e] += v) > kMaxLoad)
          fail(at, "expected the counts of " + where + "[" + std::to_string(e) + "] summed over steps to stay within 1e15");
        ++e;
      }
      ++l;
    }
    if (!three) break;
    if (l != rows.size()) fail(at, "expected every step of \"logical_count\" to have " + std::to_string(rows.size()) + " layers");
    ++step;
  }
  b.set_load_columns(int(experts), at);
  for (size_t l = 0; l < rows.size(); ++l) b.add_load_row(table, int(l), std::move(rows[l]), at);
}

}  // namespace zepp::trace_detail
