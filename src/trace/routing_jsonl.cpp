// Mixtral routing log, JSON Lines: one record per (token, layer),
// {"dataset", "problem_id", "layer", "experts": [..], "gating_probs": [..], "token_idx"}.
// Requests are (dataset, problem_id) in order of first appearance. The log does not mark
// prefill and decode tokens apart, so every token gets step 0. token_idx must increase
// within a (request, layer): a repeated or out-of-order token would be counted twice.
#include <map>
#include <optional>
#include <vector>

#include "trace/json_util.hpp"
#include "trace/readers.hpp"

namespace zepp::trace_detail {

using namespace simdjson;

namespace {

struct Record {
  std::string dataset;
  std::optional<int64_t> problem_id, layer, token_idx;
  std::vector<int64_t> experts;
  std::vector<double> gate_weights;
  bool has_experts = false;
};

Record parse_record(ondemand::object obj, const SourcePos& at) {
  Record r;
  std::vector<std::string_view> seen;
  for (ondemand::field field : obj) {
    std::string_view key = field.unescaped_key();
    for (auto s : seen)
      if (s == key) fail(at, "expected each field once per record, got " + shown(key) + " twice");
    seen.push_back(key);
    ondemand::value v = field.value();
    auto non_negative = [&](const char* what) {
      int64_t x = json_int(v, at, what);
      if (x < 0 || x > INT32_MAX) fail(at, std::string("expected ") + what + " in [0, 2^31), got " + std::to_string(x));
      return x;
    };
    if (key == "dataset") {
      std::string_view s;
      if (v.get_string().get(s)) fail(at, "expected \"dataset\" to be a string");
      r.dataset = std::string(s);
    } else if (key == "problem_id") {
      r.problem_id = non_negative("\"problem_id\"");
    } else if (key == "layer") {
      r.layer = non_negative("\"layer\"");
    } else if (key == "token_idx") {
      r.token_idx = non_negative("\"token_idx\"");
    } else if (key == "experts") {
      r.has_experts = true;
      for (ondemand::value x : v.get_array()) r.experts.push_back(json_int(x, at, "an expert id in \"experts\""));
    } else if (key == "gating_probs") {
      for (ondemand::value x : v.get_array()) r.gate_weights.push_back(json_number(x, at, "a gate probability in \"gating_probs\""));
    }
  }
  for (auto [ok, name] : {std::pair{r.problem_id.has_value(), "problem_id"}, {r.layer.has_value(), "layer"},
                          {r.token_idx.has_value(), "token_idx"}, {r.has_experts, "experts"}})
    if (!ok) fail(at, std::string("expected field \"") + name + "\" in every record");
  return r;
}

}  // namespace

void read_routing_jsonl(const std::string& file, const padded_string& text, const std::string& rel, TraceBuilder& b) {
  thread_local ondemand::parser parser;
  std::map<std::pair<std::string, int64_t>, int32_t> requests;
  std::map<std::pair<int32_t, int64_t>, int64_t> last_token;  // (request, layer) -> token_idx
  const std::string_view all(text.data(), text.size());
  int64_t line = 0;
  size_t records = 0;
  for (size_t pos = 0; pos < all.size();) {
    size_t nl = all.find('\n', pos);
    size_t end = nl == std::string_view::npos ? all.size() : nl;
    std::string_view rec = all.substr(pos, end - pos);
    const size_t capacity = all.size() + SIMDJSON_PADDING - pos;  // the rest of the padded file
    pos = end + 1;
    ++line;
    if (trim(rec).empty() || rec == "\r") continue;
    const SourcePos at{&file, line};
    Record r;
    try {
      ondemand::document doc = parser.iterate(rec.data(), rec.size(), capacity);
      r = parse_record(doc.get_object(), at);
      const char* rest = nullptr;  // current_location() is OUT_OF_BOUNDS exactly at the end
      if (doc.current_location().get(rest) == SUCCESS) fail(at, "expected one JSON object per line, got more text after it");
    } catch (const simdjson_error& e) {
      fail(at, std::string("expected a JSON object with fields problem_id, layer, experts, token_idx (simdjson: ") +
                   e.what() + ")");
    }
    auto [it, fresh] = requests.try_emplace({r.dataset, *r.problem_id}, 0);
    if (fresh) it->second = b.add_request(rel + "#" + r.dataset + "/" + std::to_string(*r.problem_id));
    auto [last, first_token] = last_token.try_emplace({it->second, *r.layer}, *r.token_idx);
    if (!first_token) {
      if (*r.token_idx <= last->second)
        fail(at, "expected token_idx above " + std::to_string(last->second) + " for this problem and layer, got " +
                     std::to_string(*r.token_idx));
      last->second = *r.token_idx;
    }
    b.add_token(int(*r.layer), r.experts, r.gate_weights, it->second, 0, at);
    ++records;
  }
  if (records == 0) throw InputError(file + ": expected at least one JSON record, got none");
}

}  // namespace zepp::trace_detail
