// Routing logs in JSON Lines, one record per (token, layer). Two schemas:
// - Mixtral-style log ("routing-jsonl"): {"dataset", "problem_id", "layer", "experts": [..],
//   "gating_probs": [..], "token_idx"}. Requests are (dataset, problem_id) in order of first
//   appearance. token_idx increases within a (request, layer); when it does not, the problem was
//   recorded again, and the records from there on are a new request "(run 2)", "(run 3)", ...
//   (Trace::repeated_runs). The log does not mark prefill and decode, so every token is step 0.
// - vLLM per-token route log ("vllm-route-jsonl", e.g. Qwen1.5-MoE): a {"type": "meta", "top_k",
//   ...} header and {"type": "route", "req_id", "token_idx", "layer", "topk_ids",
//   "topk_weights"} records. A request is a req_id; token_idx counts the tokens of one forward
//   pass, so when it does not increase the next pass (decode step) has begun: step 0 is the
//   prefill, step s the s-th later pass.
// Field aliases (docs/trace-formats.md): token position token_idx | token_pos | token_position |
// position | pos; layer layer | layer_idx | layer_id | layer_index; experts experts | expert_ids
// | topk_ids | selected_experts; gate weights gating_probs | gate_weights | topk_weights |
// routing_weights; request problem_id (integer) | req_id | request_id (string or integer).
#include <map>
#include <optional>
#include <vector>

#include "trace/json_util.hpp"
#include "trace/readers.hpp"

namespace zepp::trace_detail {

using namespace simdjson;

namespace {

enum Field { kDataset, kRequest, kLayer, kToken, kExperts, kGates, kType, kOther };

struct Alias {
  const char* name;
  Field field;
};
constexpr Alias kAliases[] = {
    {"dataset", kDataset},        {"problem_id", kRequest},   {"req_id", kRequest},        {"request_id", kRequest},
    {"layer", kLayer},            {"layer_idx", kLayer},      {"layer_id", kLayer},        {"layer_index", kLayer},
    {"token_idx", kToken},        {"token_pos", kToken},      {"token_position", kToken},  {"position", kToken},
    {"pos", kToken},              {"experts", kExperts},      {"expert_ids", kExperts},    {"topk_ids", kExperts},
    {"selected_experts", kExperts}, {"gating_probs", kGates}, {"gate_weights", kGates},    {"topk_weights", kGates},
    {"routing_weights", kGates},  {"type", kType},
};

Field field_of(std::string_view key) {
  for (const Alias& a : kAliases)
    if (key == a.name) return a.field;
  return kOther;
}

struct Record {
  std::string type;  // vLLM: "meta" or "route"
  std::string dataset;
  std::optional<std::string> request;
  std::optional<int64_t> layer, token_idx, meta_top_k;
  std::vector<int64_t> experts;
  std::vector<double> gate_weights;
  bool has_experts = false;
};

Record parse_record(ondemand::object obj, const SourcePos& at) {
  Record r;
  std::string_view seen[kOther] = {};
  for (ondemand::field field : obj) {
    std::string_view key = field.unescaped_key();
    const Field f = field_of(key);
    ondemand::value v = field.value();
    if (f == kOther) {
      if (key == "top_k") {  // the last of two was kept: {"top_k": 2, "top_k": 3} read as top-3
        if (r.meta_top_k) fail(at, "expected each field once per record, got \"top_k\" twice");
        r.meta_top_k = json_int(v, at, "\"top_k\"");
      }
      continue;
    }
    if (!seen[f].empty())
      fail(at, "expected each field once per record, got " + shown(seen[f]) +
                   (seen[f] == key ? " twice" : " and its alias " + shown(key)));
    seen[f] = key;  // keys point into the record's line, which outlives the loop
    auto non_negative = [&](const char* what) {
      int64_t x = json_int(v, at, what);
      if (x < 0 || x > INT32_MAX) fail(at, std::string("expected ") + what + " in [0, 2^31), got " + std::to_string(x));
      return x;
    };
    std::string quoted = "\"";  // appended piecewise: GCC 12's -Wrestrict misfires on "x" + string&&
    quoted.append(key).append("\"");
    std::string_view s;
    switch (f) {
      case kType:
        if (v.get_string().get(s)) fail(at, "expected \"type\" to be a string");
        r.type = std::string(s);
        break;
      case kDataset:
        if (v.get_string().get(s)) fail(at, "expected \"dataset\" to be a string");
        r.dataset = std::string(s);
        break;
      case kRequest:
        if (key == "problem_id") r.request = std::to_string(non_negative("\"problem_id\""));
        else if (v.get_string().get(s) == SUCCESS) r.request = std::string(s);
        else r.request = std::to_string(json_int(v, at, quoted + " (a string or integer)"));
        break;
      case kLayer: r.layer = non_negative(quoted.c_str()); break;
      case kToken: r.token_idx = non_negative(quoted.c_str()); break;
      case kExperts:
        r.has_experts = true;
        for (ondemand::value x : v.get_array()) r.experts.push_back(json_int(x, at, "an expert id in " + quoted));
        break;
      case kGates:
        for (ondemand::value x : v.get_array()) r.gate_weights.push_back(json_number(x, at, "a gate weight in " + quoted));
        break;
      default: break;
    }
  }
  return r;
}

void require_fields(const Record& r, const SourcePos& at, bool vllm) {
  const std::pair<bool, const char*> fields[] = {
      {r.request.has_value(), vllm ? "req_id\" (or request_id" : "problem_id\" (or req_id, request_id"},
      {r.layer.has_value(), "layer\" (or layer_idx, layer_id, layer_index"},
      {r.token_idx.has_value(), "token_idx\" (or token_pos, token_position, position, pos"},
      {r.has_experts, vllm ? "topk_ids\" (or experts, expert_ids, selected_experts" : "experts\" (or expert_ids, topk_ids, selected_experts"}};
  for (auto [ok, name] : fields)
    if (!ok) fail(at, std::string("expected field \"") + name + ") in every record");
}

}  // namespace

void read_routing_jsonl(const std::string& file, const padded_string& text, const std::string& rel, TraceBuilder& b,
                        bool vllm) {
  thread_local ondemand::parser parser;
  struct Run {
    int32_t request = 0;  // the request the records of this key go to now
    int run = 1;
    std::map<int64_t, int64_t> last_token;  // layer -> last token_idx
    std::map<int64_t, int32_t> step;        // vLLM: layer -> forward pass
  };
  std::map<std::pair<std::string, std::string>, Run> runs;  // (dataset, request id)
  std::optional<int64_t> top_k;                             // vLLM meta record
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
      fail(at, std::string("expected a JSON object with fields ") +
                   (vllm ? "type, req_id, layer, topk_ids, token_idx" : "problem_id, layer, experts, token_idx") +
                   " (simdjson: " + e.what() + ")");
    }
    if (vllm) {
      if (r.type == "meta") {
        top_k = r.meta_top_k;
        continue;
      }
      if (r.type != "route") fail(at, "expected \"type\": \"meta\" or \"route\", got " + shown(r.type));
    }
    require_fields(r, at, vllm);
    if (top_k && int64_t(r.experts.size()) != *top_k)
      fail(at, "expected top_k = " + std::to_string(*top_k) + " expert ids as the meta record says, got " +
                   std::to_string(r.experts.size()));
    const std::string name = rel + "#" + (r.dataset.empty() && vllm ? "" : r.dataset + "/") + *r.request;
    auto [it, fresh] = runs.try_emplace({r.dataset, *r.request});
    Run& run = it->second;
    if (fresh) run.request = b.add_request(name);
    if (const auto last = run.last_token.find(*r.layer); last != run.last_token.end() && *r.token_idx <= last->second) {
      if (vllm) {
        ++run.step[*r.layer];  // the next forward pass of this request
      } else {  // the problem recorded again: a new request from here on
        const std::string again = name + " (run " + std::to_string(++run.run) + ")";
        run.request = b.add_request(again);
        b.note_repeated_run(again);
        run.last_token.clear();
      }
    }
    run.last_token[*r.layer] = *r.token_idx;
    b.add_token(int(*r.layer), r.experts, r.gate_weights, run.request, vllm ? run.step[*r.layer] : 0, at);
    ++records;
  }
  if (records == 0) throw InputError(file + ": expected at least one JSON record, got none");
}

}  // namespace zepp::trace_detail
