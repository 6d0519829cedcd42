// `--timeline FILE` of `zepp simulate` and `zepp run`: FILE-<label>.json (Chrome trace, opens in
// Perfetto) and FILE-<label>.svg (gnuplot Gantt chart) per labelled result.
#pragma once
#include <string>
#include <vector>

#include "exec/result.hpp"

namespace zepp::cli {

struct LabelledTimeline {
  std::string label;  // e.g. "zepp", "zepp-predicted"; '+' and '/' become '_' in file names
  const LayerResult* result;
  std::string title;  // of the SVG chart
};

// FILE.json (or FILE) -> FILE-<label>.json and FILE-<label>.svg, creating FILE's folder; a notice
// per file on stderr, so --format json output stays machine-readable. ArgumentError("--timeline")
// when the folder cannot be made or a file written.
// Refuses (ArgumentError "--timeline") a FILE that is a device, FIFO or folder, and any of the
// files it would write for `labels` that exists and is not a regular file: call before any work.
void check_timeline_outputs(const std::string& file, const std::vector<std::string>& labels);

void write_timelines(const std::string& file, const std::vector<LabelledTimeline>& timelines, int gpus_per_node);

}  // namespace zepp::cli
