// DeepSeek per-(token, layer) CSV: header "Layer ID,Batch Number,Token,Activated Expert IDs";
// the last field is a quoted list "[a, b, ...]". One request per file; the data holds prompt
// tokens only, so every token gets step 0. Batch Number is checked to be an integer, not used.
#include <vector>

#include "trace/csv_rows.hpp"
#include "trace/readers.hpp"
#include "trace/text_parse.hpp"

namespace zepp::trace_detail {

namespace {

const std::vector<std::string> kHeader = {"Layer ID", "Batch Number", "Token", "Activated Expert IDs"};

void parse_id_list(std::string_view field, const SourcePos& at, std::vector<int64_t>& ids) {
  std::string_view s = trim(field);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']')
    fail(at, "expected the expert ids as a list \"[a, b, ...]\", got " + shown(field));
  s = s.substr(1, s.size() - 2);
  ids.clear();
  if (trim(s).empty()) return;  // the builder reports a token without ids
  for (size_t pos = 0;;) {
    size_t comma = s.find(',', pos);
    ids.push_back(parse_int(s.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos), at,
                            "an expert id"));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
}

}  // namespace

void read_deepseek_csv(const std::string& file, const simdjson::padded_string& text, const std::string& rel,
                       TraceBuilder& b) {
  const int32_t request = b.add_request(rel);
  bool header_seen = false;
  int64_t rows = 0;
  std::vector<int64_t> ids;
  for_each_csv_row(file, std::string_view(text.data(), text.size()), [&](int64_t line, std::span<const std::string> f) {
    const SourcePos at{&file, line};
    if (!header_seen) {
      if (!std::equal(f.begin(), f.end(), kHeader.begin(), kHeader.end()))
        fail(at, "expected the header \"Layer ID,Batch Number,Token,Activated Expert IDs\"");
      header_seen = true;
      return;
    }
    if (f.size() != kHeader.size())
      fail(at, "expected 4 fields (Layer ID, Batch Number, Token, Activated Expert IDs), got " + std::to_string(f.size()));
    const int64_t layer = parse_int(f[0], at, "a Layer ID");
    if (layer < 0 || layer > INT32_MAX) fail(at, "expected a Layer ID in [0, 2^31), got " + std::to_string(layer));
    if (parse_int(f[1], at, "a Batch Number") < 0) fail(at, "expected a non-negative Batch Number, got " + f[1]);
    parse_id_list(f[3], at, ids);
    b.add_token(int(layer), ids, {}, request, 0, at);
    ++rows;
  });
  if (rows == 0)
    throw InputError(file + ": expected a header and at least one row, got " + (header_seen ? "only the header" : "no records"));
}

}  // namespace zepp::trace_detail
