// `--timeline FILE` of `zepp simulate` and `zepp run`: FILE-<label>.json (Chrome trace, opens in
// Perfetto) and FILE-<label>.svg (gnuplot Gantt chart) per labelled result.
#pragma once
#include <string>
#include <vector>

#include "exec/result.hpp"

namespace zepp::cli {

struct LabelledTimeline {
  std::string label;  // e.g. "zepp", "zepp-predicted"; '+' becomes '_' in file names
  const LayerResult* result;
  std::string title;  // of the SVG chart
};

// FILE.json (or FILE) -> FILE-<label>.json and FILE-<label>.svg, creating FILE's folder; a notice
// per file on stderr, so --format json output stays machine-readable. ArgumentError("--timeline")
// when the folder cannot be made or a file written.
void write_timelines(const std::string& file, const std::vector<LabelledTimeline>& timelines, int gpus_per_node);

}  // namespace zepp::cli
