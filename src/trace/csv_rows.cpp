#include "trace/csv_rows.hpp"

#include <csv.h>

#include <vector>

#include "trace/source_pos.hpp"

namespace zepp::trace_detail {
namespace {

// libcsv is C: its callbacks must not throw, so they only collect finished records, which
// are handed to the caller after each csv_parse call returns.
struct Collector {
  std::vector<std::string> fields;  // fields of the record in progress
  size_t num_fields = 0;
  std::vector<std::pair<int64_t, std::vector<std::string>>> done;
  int64_t start_line = 0;
  bool mid_record = false;
};

void on_field(void* s, size_t len, void* data) {
  auto* c = static_cast<Collector*>(data);
  if (c->num_fields == c->fields.size()) c->fields.emplace_back();
  c->fields[c->num_fields++].assign(static_cast<const char*>(s), len);
}

void on_record(int, void* data) {
  auto* c = static_cast<Collector*>(data);
  c->done.emplace_back(c->start_line, std::vector<std::string>(c->fields.begin(), c->fields.begin() + c->num_fields));
  c->num_fields = 0;
  c->mid_record = false;
}

bool blank(std::string_view line) {
  for (char ch : line)
    if (ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') return false;
  return true;
}

}  // namespace

void for_each_csv_row(const std::string& file, std::string_view text,
                      const std::function<void(int64_t line, std::span<const std::string> fields)>& on_row) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  csv_parser p;
  csv_init(&p, CSV_STRICT | CSV_STRICT_FINI);
  Collector c;
  auto flush = [&] {
    for (auto& [line, fields] : c.done) on_row(line, fields);
    c.done.clear();
  };
  try {
    int64_t line = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
      std::string_view chunk = text.substr(pos, end - pos);
      pos = end;
      ++line;
      if (!c.mid_record) {
        if (blank(chunk)) continue;
        c.start_line = line;
        c.mid_record = true;
      }
      if (csv_parse(&p, chunk.data(), chunk.size(), on_field, on_record, &c) != chunk.size())
        fail({&file, line}, std::string("expected well-formed CSV (libcsv: ") + csv_strerror(csv_error(&p)) +
                                ", e.g. a quote inside an unquoted field)");
      flush();
    }
    if (csv_fini(&p, on_field, on_record, &c) != 0)
      fail({&file, c.start_line}, "expected a closing quote before the end of the file");
    flush();
  } catch (...) {
    csv_free(&p);
    throw;
  }
  csv_free(&p);
}

}  // namespace zepp::trace_detail

namespace zepp {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out(csv_write(nullptr, 0, text.data(), text.size()), '\0');
  csv_write(out.data(), out.size(), text.data(), text.size());
  return out;
}

}  // namespace zepp
