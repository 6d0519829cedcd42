// Timelines of one simulated layer invocation (LayerResult::timeline, from the `sim`
// executor with want_timeline): Chrome trace-event JSON (opens in Perfetto or
// chrome://tracing) and an SVG Gantt chart drawn by gnuplot, one lane per GPU resource
// (compute, NVLink out, NIC out), in the spirit of the paper's Figure 13.
#pragma once
#include <string>
#include <vector>

#include "exec/result.hpp"

namespace zepp {

// Chrome trace-event JSON: one process per GPU ("GPU g (node n)"), a thread per lane of each track
// (compute, nvlink-out, nic-out; concurrent transfers of one track on lanes "nic-out 2", ...,
// timeline_lanes), so slices on one thread never overlap and Perfetto shows them all; complete
// events ("ph": "X") with ts/dur in microseconds, named by kind ("dispatch put", "expert GEMM"),
// with rows, bytes, expert, peer, node and round in "args" where they apply.
// gpus_per_node > 0 (ArgumentError "gpus_per_node").
// Lane of each event within its (GPU, track): the lowest lane free when it starts.
std::vector<int> timeline_lanes(const std::vector<TimelineEvent>& events);

std::string chrome_trace_json(const LayerResult& result, int gpus_per_node);

// Writes chrome_trace_json to `path` by the output-file rules (core/output_file.hpp: a path that
// exists and is not a regular file is refused before the JSON is built; written atomically, its
// folder created). Throws ArgumentError("<flag>: ...") when refused or it cannot be written.
void write_chrome_trace(const LayerResult& result, int gpus_per_node, const std::string& path,
                        const std::string& flag = "path");

// Writes `svg_path` with gnuplot: x = time in milliseconds, one lane per (GPU, track), boxes
// coloured by track. Leaves the data and script beside it (svg_path + ".dat", ".gp") so the
// chart can be restyled. The three paths follow the output-file rules (core/output_file.hpp):
// all are checked before the first is written, the data and script are written atomically and
// the folder is created. Throws ArgumentError("<flag>: ...") for a path refused or unwritable,
// std::runtime_error if gnuplot fails (its exit status in the message).
void write_gantt_svg(const LayerResult& result, int gpus_per_node, const std::string& svg_path,
                     const std::string& title = "MoE layer timeline", const std::string& flag = "svg_path");

}  // namespace zepp
