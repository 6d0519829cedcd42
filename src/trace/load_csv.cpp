// Qwen3 per-layer load CSV: header "Layer,Language,Expert_0,...,Expert_{E-1}"; each value is
// the fraction of tokens that selected the expert (finite, >= 0). One LoadTable per
// (dataset, language), named "<dataset>/<Language>"; read_trace names the dataset by the file
// name's dataset token ("arc_en_he_500_avg_activation.csv" -> "arc";
// "moe_all_layers_analysis_copa_en_..." beside "moe_all_layers_analysis_arc_en_..." -> "copa").
#include <cmath>
#include <vector>

#include "core/input_bounds.hpp"
#include "trace/csv_rows.hpp"
#include "trace/readers.hpp"
#include "trace/text_parse.hpp"

namespace zepp::trace_detail {

void read_load_csv(const std::string& file, const simdjson::padded_string& text, const std::string& dataset,
                   TraceBuilder& b) {
  size_t columns = 0;
  size_t rows = 0;
  for_each_csv_row(file, std::string_view(text.data(), text.size()), [&](int64_t line, std::span<const std::string> f) {
    const SourcePos at{&file, line};
    if (columns == 0) {
      bool ok = f.size() >= 3 && f[0] == "Layer" && f[1] == "Language";
      for (size_t i = 2; ok && i < f.size(); ++i) ok = f[i] == "Expert_" + std::to_string(i - 2);
      if (!ok) fail(at, "expected the header \"Layer,Language,Expert_0,Expert_1,...\"");
      columns = f.size();
      b.set_load_columns(int(columns - 2), at);
      return;
    }
    if (f.size() != columns)
      fail(at, "expected " + std::to_string(columns) + " fields (Layer, Language, " + std::to_string(columns - 2) +
                   " experts), got " + std::to_string(f.size()));
    const int64_t layer = parse_int(f[0], at, "a Layer");
    if (layer < 0 || layer > INT32_MAX) fail(at, "expected a Layer in [0, 2^31), got " + std::to_string(layer));
    if (trim(f[1]).empty()) fail(at, "expected a Language name, got an empty field");
    std::vector<double> row(columns - 2);
    for (size_t e = 0; e < row.size(); ++e) {
      row[e] = parse_double(f[e + 2], at, "the load of Expert_" + std::to_string(e));
      if (!std::isfinite(row[e]) || row[e] < 0 || row[e] > kMaxLoad)
        fail(at, "expected a load in [0, 1e15] for Expert_" + std::to_string(e) + ", got " + shown(f[e + 2]));
    }
    b.add_load_row(dataset + "/" + std::string(trim(f[1])), int(layer), std::move(row), at);
    ++rows;
  });
  if (rows == 0) throw InputError(file + ": expected a header and at least one load row, got " +
                                  (columns ? "only the header" : "no records"));
}

}  // namespace zepp::trace_detail
