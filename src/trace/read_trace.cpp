// read_trace: list the files (natural order), skip empty ones, detect each format from content,
// hand each to its reader; with skip_invalid, drop a malformed file and go on.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "core/input_bounds.hpp"
#include "core/output_file.hpp"
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
  std::string unreadable;  // why it cannot be read as a file (a broken link, a FIFO), or ""
};

// Natural order: runs of digits compare as numbers ("prompt_2" before "prompt_10"), other
// characters as bytes; names equal that way (e.g. "07" and "7") fall back to byte order.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      size_t is = i, js = j;  // skip leading zeros
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      if (const int c = a.compare(is, ie - is, b, js, je - js); c != 0) return c < 0;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return (unsigned char)a[i] < (unsigned char)b[j];
      ++i, ++j;
    }
  }
  if (i < a.size() || j < b.size()) return j < b.size();  // a ran out first: shorter first
  return a < b;
}

// A folder's identity (device, inode), through symbolic links.
std::pair<uint64_t, uint64_t> folder_id(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) throw InputError(dir.string() + ": expected a readable folder");
  return {uint64_t(st.st_dev), uint64_t(st.st_ino)};
}

// Trace files under `dir`, following symbolic links to files and folders (a folder of links to
// traces elsewhere reads as those traces). A link back to a folder above it (a loop) or a folder
// reached twice (its files would count twice) is an InputError naming the link.
void walk(const fs::path& root, const fs::path& dir, std::vector<std::pair<uint64_t, uint64_t>>& above,
          std::map<std::pair<uint64_t, uint64_t>, fs::path>& seen, std::vector<TraceFile>& files) {
  const auto id = folder_id(dir);
  if (std::find(above.begin(), above.end(), id) != above.end())
    throw InputError(dir.string() + ": expected a trace folder, got a symbolic link loop (it leads back to a folder above it)");
  if (const auto it = seen.find(id); it != seen.end())
    throw InputError(dir.string() + ": expected each folder once, but it is " + it->second.string() +
                     " again (through a symbolic link): its files would count twice");
  seen.emplace(id, dir);
  above.push_back(id);
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
  if (ec) throw InputError(dir.string() + ": expected a readable folder, got: " + ec.message());
  for (const fs::path& p : entries) {
    const std::string name = p.filename().string(), ext = p.extension().string();
    if (name.starts_with(".")) continue;
    if (fs::is_directory(p, ec)) {  // follows links
      walk(root, p, above, seen, files);
    } else if (ext == ".json" || ext == ".jsonl" || ext == ".csv") {
      // A trace file that cannot be read is lost data: refused when read (read_trace_located),
      // or skipped and listed with --skip-invalid like a malformed one.
      std::string unreadable;
      if (fs::is_symlink(p, ec) && !fs::exists(p, ec))
        unreadable = p.string() + ": expected a trace file, got a broken symbolic link (to " + fs::read_symlink(p, ec).string() + ")";
      else if (const std::string kind = not_regular_kind(p.string()); !kind.empty())
        unreadable = p.string() + ": expected a trace file, got " + kind;
      files.push_back({p.string(), p.lexically_relative(root).generic_string(), unreadable});
    }
  }
  above.pop_back();
}

std::vector<TraceFile> list_files(const std::string& path) {
  std::error_code ec;
  const fs::path root(path);
  if (fs::is_regular_file(root, ec)) return {{path, root.filename().string()}};
  if (!fs::is_directory(root, ec))
    throw InputError(path + ": expected a trace file or a folder of trace files, got " +
                     (fs::exists(root, ec) ? not_regular_kind(path) : absent_kind(path, "nothing at that path")));
  std::vector<TraceFile> files;
  std::vector<std::pair<uint64_t, uint64_t>> above;
  std::map<std::pair<uint64_t, uint64_t>, fs::path> seen;
  walk(root, root, above, seen, files);
  if (files.empty()) {
    // The folder's hidden entries are skipped by design; say so when that is why nothing was found.
    std::string hidden;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
      if (const std::string name = it->path().filename().string(); name.starts_with(".") && hidden.size() < 200)
        hidden += (hidden.empty() ? "" : ", ") + name;
    throw InputError(path + ": expected trace files (*.json, *.jsonl, *.csv) in the folder, found none" +
                     (hidden.empty() ? "" : " (names starting with '.' are skipped: " + hidden + ")"));
  }
  std::sort(files.begin(), files.end(), [](const TraceFile& a, const TraceFile& b) { return natural_less(a.rel, b.rel); });
  return files;
}

// Load CSVs are named by their dataset token: the first '_'-separated token of the file name
// in which the names differ ("moe_all_layers_analysis_copa_en_..." and "moe_all_layers_analysis_
// arc_en_..." -> "copa", "arc"), or the first token when they share no prefix (or there is one).
std::map<std::string, std::string> load_dataset_names(const std::vector<TraceFile>& files) {
  std::vector<std::vector<std::string>> tokens;
  for (const TraceFile& f : files) {
    if (!f.rel.ends_with(".csv")) continue;
    std::vector<std::string> t;
    std::stringstream ss(fs::path(f.rel).stem().string());
    for (std::string part; std::getline(ss, part, '_');) t.push_back(part);
    tokens.push_back(t);
  }
  size_t shared = 0;  // leading tokens every name has in common
  if (tokens.size() >= 2)
    while (std::all_of(tokens.begin(), tokens.end(), [&](const auto& t) {
      return shared + 1 < t.size() && t[shared] == tokens.front()[shared];
    }))
      ++shared;
  std::map<std::string, std::string> names;
  size_t i = 0;
  for (const TraceFile& f : files) {
    if (!f.rel.ends_with(".csv")) continue;
    const auto& t = tokens[i++];
    names[f.path] = t.empty() ? fs::path(f.rel).stem().string() : t[std::min(shared, t.size() - 1)];
  }
  return names;
}

bool blank(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// A file whose size reads 0 but which yields bytes when read (/proc, /sys): read by its size, it
// looked empty and was reported as "an empty file".
bool special_with_content(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return in.get() != std::ifstream::traits_type::eof();
}

struct Detected {
  std::string format;
  std::string why;  // what in the file chose the format, for error messages
};

// Formats are told apart by their first bytes: '[' selection JSON; '{' a JSON document with an
// "expert_usage_by_layer" member (expert counts), else JSON Lines (vLLM's route log when the
// first record has a "type" field); else the CSV header's first fields.
Detected detect_format(const std::string& file, std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (text[first] == '[') return {"selection-json", "the file starts with '['"};
  if (text[first] == '{') {
    if (text.find("\"expert_usage_by_layer\"") != std::string_view::npos)
      return {"expert-count-json", "the file starts with '{' and names \"expert_usage_by_layer\""};
    if (text.find("\"logical_count\"") != std::string_view::npos)
      return {"sglang-stats-json", "the file starts with '{' and names \"logical_count\""};
    const std::string_view line = text.substr(first, text.find('\n', first) - first);
    if (line.find("\"type\"") != std::string_view::npos)
      return {"vllm-route-jsonl", "the first record has a \"type\" field"};
    return {"routing-jsonl", "the file starts with '{' and its first record has no \"type\" field"};
  }
  if (text.starts_with("Layer ID,")) return {"deepseek-csv", "the header starts \"Layer ID,\""};
  if (text.starts_with("Layer,Language,")) return {"load-csv", "the header starts \"Layer,Language,\""};
  throw InputError(file + ":1: expected a trace: a JSON list of steps ('['), JSON Lines records or an expert-count "
                   "JSON object ('{'), or a CSV header starting \"Layer ID,\" or \"Layer,Language,\"");
}

void read_one(const TraceFile& f, const simdjson::padded_string& text, const std::string& format,
              const std::string& dataset, TraceBuilder& builder) {
  const std::string_view view(text.data(), text.size());
  // Bounded before parsing (core/input_bounds.hpp): simdjson stops at its own depth, but only
  // after taking memory per level; CSV and JSON Lines are read a line at a time.
  if (format.ends_with("json") || format.ends_with("jsonl")) check_nesting(view, f.path);
  if (format.ends_with("csv") || format.ends_with("jsonl")) check_line_length(view, f.path);
  if (format == "selection-json") read_selection_json(f.path, text, f.rel, builder);
  if (format == "deepseek-csv") read_deepseek_csv(f.path, text, f.rel, builder);
  if (format == "routing-jsonl") read_routing_jsonl(f.path, text, f.rel, builder, false);
  if (format == "vllm-route-jsonl") read_routing_jsonl(f.path, text, f.rel, builder, true);
  if (format == "load-csv") read_load_csv(f.path, text, dataset, builder);
  if (format == "expert-count-json") read_expert_count_json(f.path, text, f.rel, builder);
  if (format == "sglang-stats-json") read_sglang_stats_json(f.path, text, f.rel, builder);
}

}  // namespace

Trace read_trace(const std::string& path, const ReadOptions& options) {
  std::map<int, std::string> unused;
  return read_trace_located(path, unused, options);
}

Trace read_trace_located(const std::string& path, std::map<int, std::string>& layer_source, const ReadOptions& options) {
  Trace trace;
  trace.path = path;
  TraceBuilder builder(trace);
  std::string first_file;
  const std::vector<TraceFile> files = list_files(path);
  const std::map<std::string, std::string> datasets = load_dataset_names(files);
  // Sizes before reading (core/input_bounds.hpp): each file is read whole, the trace kept in memory.
  double total = 0;
  for (const TraceFile& f : files)
    if (f.unreadable.empty()) total += double(check_file_size(f.path));
  if (const double budget = memory_budget_bytes(); total > budget)
    throw InputError(fmt::format("{}: expected trace files that fit in memory, got {:.3g} GiB in {} file(s), more than the "
                                 "{:.3g} GiB this process can allocate", path, total / (1 << 30), files.size(), budget / (1 << 30)));
  for (const TraceFile& f : files) {
    simdjson::padded_string text;
    const auto checkpoint = builder.checkpoint();
    try {
      if (!f.unreadable.empty()) throw InputError(f.unreadable);
      if (auto error = simdjson::padded_string::load(f.path).get(text))
        throw InputError(f.path + ": expected a readable file (" + simdjson::error_message(error) + ")");
      if (text.size() == 0 && special_with_content(f.path))
        throw InputError(f.path + ": expected a regular file of trace data, got a special file whose size reads 0 "
                                  "although it has content (as /proc and /sys files): copy it to a file first");
      if (blank(std::string_view(text.data(), text.size()))) {  // no tokens in it, nothing lost
        trace.skipped_empty.push_back(f.path);
        continue;
      }
    } catch (const InputError& e) {
      if (!options.skip_invalid) throw;
      trace.skipped_invalid.push_back(e.what());
      continue;
    }
    const std::string_view view(text.data(), text.size());
    try {
      const Detected d = detect_format(f.path, view);
      if (trace.format.empty() || (options.skip_invalid && first_file.empty())) {
        trace.format = d.format;
      } else if (d.format != trace.format) {
        throw InputError(f.path + ": expected " + trace.format + " like " + first_file + ", got " + d.format + " (" +
                         d.why + ")");
      }
      try {
        read_one(f, text, d.format, datasets.count(f.path) ? datasets.at(f.path) : "", builder);
      } catch (const InputError& e) {
        throw InputError(std::string(e.what()) + " [read as " + d.format + ": " + d.why + "]");
      }
      if (first_file.empty()) first_file = f.path;
    } catch (const InputError& e) {
      if (!options.skip_invalid) throw;
      builder.rollback(checkpoint);
      trace.skipped_invalid.push_back(e.what());
    }
  }
  if (first_file.empty()) {
    if (files.size() == 1 && trace.skipped_invalid.empty())
      throw InputError(files[0].path + ": expected trace data, got an empty file");
    throw InputError(path + ": expected trace data, got " + std::to_string(trace.skipped_empty.size()) +
                     " empty and " + std::to_string(trace.skipped_invalid.size()) + " invalid files, none readable");
  }
  builder.finish();
  layer_source = builder.layer_sources();
  return trace;
}

std::string Trace::reading_notes() const {
  std::vector<std::string> parts;
  const auto count = [](size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  if (!skipped_empty.empty()) parts.push_back(count(skipped_empty.size(), "empty file", "empty files") + " skipped");
  if (!skipped_invalid.empty())
    parts.push_back(count(skipped_invalid.size(), "invalid file", "invalid files") + " skipped (--skip-invalid)");
  if (!repeated_runs.empty())
    parts.push_back(count(repeated_runs.size(), "request", "requests") +
                    " recorded more than once, each run read as a separate request");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
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
