#include "cli/timelines.hpp"

#include <cstdio>
#include <filesystem>

#include "core/error.hpp"
#include "report/timeline.hpp"

namespace zepp::cli {

void write_timelines(const std::string& file, const std::vector<LabelledTimeline>& timelines, int gpus_per_node) {
  const auto dot = file.rfind('.');
  const bool has_ext = dot != std::string::npos && file.find('/', dot) == std::string::npos;
  const std::string stem = has_ext ? file.substr(0, dot) : file;
  const auto dir = std::filesystem::path(stem).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  require(!ec, "--timeline", "cannot create folder " + dir.string() + ": " + ec.message());
  for (const auto& t : timelines) {
    std::string name = t.label;
    for (char& c : name)
      if (c == '+') c = '_';
    const std::string json = stem + "-" + name + ".json", svg = stem + "-" + name + ".svg";
    write_chrome_trace(*t.result, gpus_per_node, json);
    write_gantt_svg(*t.result, gpus_per_node, svg, t.title);
    std::fprintf(stderr, "timeline %s: %s (Perfetto), %s\n", t.label.c_str(), json.c_str(), svg.c_str());
  }
}

}  // namespace zepp::cli
