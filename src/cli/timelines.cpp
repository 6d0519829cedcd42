#include "cli/timelines.hpp"

#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "report/timeline.hpp"

namespace zepp::cli {

namespace {

std::string stem_of(const std::string& file) {
  const auto dot = file.rfind('.');
  const bool has_ext = dot != std::string::npos && file.find('/', dot) == std::string::npos;
  return has_ext ? file.substr(0, dot) : file;
}

std::string file_label(std::string name) {
  for (char& c : name)
    if (c == '+' || c == '/') c = '_';  // zepp+swaps, zepp/no-split: one file name
  return name;
}

}  // namespace

void check_timeline_outputs(const std::string& file, const std::vector<std::string>& labels) {
  // FILE itself is never written, but naming a device or folder (--timeline /dev/null) is a
  // mistake: the files would land beside it as /dev/null-zepp.json.
  check_file_name(file, "--timeline");  // DIR/ wrote DIR/-a2av.json
  const std::string kind = not_regular_kind(file);
  require(kind.empty(), "--timeline",
          file + " is " + kind + "; --timeline FILE writes FILE-<strategy>.json and FILE-<strategy>.svg, so name a file in a folder");
  const std::string stem = stem_of(file);
  for (const auto& l : labels)
    for (const char* ext : {".json", ".svg", ".svg.dat", ".svg.gp"}) check_output_file(stem + "-" + file_label(l) + ext, "--timeline");
}

void write_timelines(const std::string& file, const std::vector<LabelledTimeline>& timelines, int gpus_per_node) {
  std::vector<std::string> labels;
  for (const auto& t : timelines) labels.push_back(t.label);
  check_timeline_outputs(file, labels);
  const std::string stem = stem_of(file);
  const auto dir = std::filesystem::path(stem).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  require(!ec, "--timeline", "cannot create folder " + dir.string() + ": " + ec.message());
  for (const auto& t : timelines) {
    const std::string name = file_label(t.label);
    const std::string json = stem + "-" + name + ".json", svg = stem + "-" + name + ".svg";
    write_chrome_trace(*t.result, gpus_per_node, json, "--timeline");
    write_gantt_svg(*t.result, gpus_per_node, svg, t.title, "--timeline");
    std::fprintf(stderr, "timeline %s: %s (Perfetto), %s\n", t.label.c_str(), json.c_str(), svg.c_str());
  }
}

}  // namespace zepp::cli
