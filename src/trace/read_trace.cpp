// read_trace: list the files, detect their format from content, hand each to its reader.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "trace/builder.hpp"
#include "trace/layer_check.hpp"
#include "trace/readers.hpp"

namespace zepp {

namespace fs = std::filesystem;
using namespace trace_detail;

namespace {

struct TraceFile {
  std::string path;  // as opened, for messages
  std::string rel;   // relative to the given folder (or the file name), for request names
};

std::vector<TraceFile> list_files(const std::string& path) {
  std::error_code ec;
  const fs::path root(path);
  if (fs::is_regular_file(root, ec)) return {{path, root.filename().string()}};
  if (!fs::is_directory(root, ec))
    throw InputError(path + ": expected a trace file or a folder of trace files, got " +
                     (fs::exists(root, ec) ? "something else" : "nothing at that path"));
  std::vector<TraceFile> files;
  fs::recursive_directory_iterator it(root, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string ext = it->path().extension().string();
    if (name.starts_with(".") || !it->is_regular_file(ec)) continue;
    if (ext != ".json" && ext != ".jsonl" && ext != ".csv") continue;
    files.push_back({it->path().string(), it->path().lexically_relative(root).generic_string()});
  }
  if (ec) throw InputError(path + ": expected a readable folder, got: " + ec.message());
  if (files.empty()) throw InputError(path + ": expected trace files (*.json, *.jsonl, *.csv) in the folder, found none");
  std::sort(files.begin(), files.end(), [](const TraceFile& a, const TraceFile& b) { return a.rel < b.rel; });
  return files;
}

// Formats are told apart by their first bytes: '[' selection JSON, '{' JSON Lines, else the
// CSV header's first fields.
std::string detect_format(const std::string& file, std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) throw InputError(file + ": expected trace data, got an empty file");
  if (text[first] == '[') return "selection-json";
  if (text[first] == '{') return "routing-jsonl";
  if (text.starts_with("Layer ID,")) return "deepseek-csv";
  if (text.starts_with("Layer,Language,")) return "load-csv";
  throw InputError(file + ":1: expected a trace: a JSON list of steps ('['), JSON Lines records ('{'), or a CSV "
                   "header starting \"Layer ID,\" or \"Layer,Language,\"");
}

}  // namespace

Trace read_trace(const std::string& path) {
  std::map<int, std::string> unused;
  return read_trace_located(path, unused);
}

Trace read_trace_located(const std::string& path, std::map<int, std::string>& layer_source) {
  Trace trace;
  trace.path = path;
  TraceBuilder builder(trace);
  std::string first_file;
  for (const TraceFile& f : list_files(path)) {
    simdjson::padded_string text;
    if (auto error = simdjson::padded_string::load(f.path).get(text))
      throw InputError(f.path + ": expected a readable file (" + simdjson::error_message(error) + ")");
    const std::string format = detect_format(f.path, std::string_view(text.data(), text.size()));
    if (trace.format.empty()) {
      trace.format = format;
      first_file = f.path;
    } else if (format != trace.format) {
      throw InputError(f.path + ": expected " + trace.format + " like " + first_file + ", got " + format);
    }
    if (format == "selection-json") read_selection_json(f.path, text, f.rel, builder);
    if (format == "deepseek-csv") read_deepseek_csv(f.path, text, f.rel, builder);
    if (format == "routing-jsonl") read_routing_jsonl(f.path, text, f.rel, builder);
    if (format == "load-csv") read_load_csv(f.path, text, f.rel, builder);
  }
  builder.finish();
  layer_source = builder.layer_sources();
  return trace;
}

std::vector<int> Trace::layer_ids() const {
  std::vector<int> ids;
  for (const auto& [layer, lt] : layers) ids.push_back(layer);
  for (const LoadTable& t : loads)
    for (const auto& [layer, row] : t.per_layer) ids.push_back(layer);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace zepp
