#include "report/timeline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "core/error.hpp"
#include "core/output_file.hpp"

namespace zepp {

namespace {

const char* const kTracks[] = {"compute", "nvlink-out", "nic-out"};
const char* const kTrackTitles[] = {"compute", "NVLink out", "NIC out"};
const char* const kTrackColors[] = {"#4477aa", "#228833", "#ee6677"};

int track_index(const std::string& track) {
  for (int i = 0; i < 3; ++i)
    if (track == kTracks[i]) return i;
  return 0;  // unknown tracks draw with compute
}

int num_gpus(const LayerResult& r) {
  int n = int(r.gpus.size());
  for (const TimelineEvent& e : r.timeline) n = std::max(n, e.gpu + 1);
  return n;
}

// gnuplot strings are single-quoted; a quote inside is doubled.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

// A shell word: single-quoted, a quote inside written as '\''.
std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

// Times as whole nanoseconds, as Perfetto stores them: lanes are decided on what it will see.
static int64_t ns(double seconds) { return std::llround(seconds * 1e9); }

std::vector<int> timeline_lanes(const std::vector<TimelineEvent>& events) {
  // Greedy interval partitioning: events by start time, each onto the lowest lane of its (GPU,
  // track) that is free by then. No two events of a lane overlap, so they nest trivially; the
  // number of lanes is the most events of that track in flight at once (the optimum).
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return events[a].start_s < events[b].start_s; });
  std::map<std::pair<int, std::string>, std::vector<int64_t>> lane_end;  // per (gpu, track): when each lane frees
  std::vector<int> lane(events.size(), 0);
  for (size_t i : order) {
    auto& ends = lane_end[{events[i].gpu, events[i].track}];
    size_t l = 0;
    while (l < ends.size() && ends[l] > ns(events[i].start_s)) ++l;
    if (l == ends.size()) ends.push_back(0);
    ends[l] = std::max(ns(events[i].start_s), ns(events[i].end_s));
    lane[i] = int(l);
  }
  return lane;
}

std::string chrome_trace_json(const LayerResult& result, int gpus_per_node) {
  require(gpus_per_node > 0, "gpus_per_node", "must be positive");
  const std::vector<int> lane = timeline_lanes(result.timeline);
  // Thread id of (track, lane): track * kLaneStride + lane, so a GPU's tracks sort compute, NVLink, NIC.
  constexpr int kLaneStride = 1000;
  std::map<std::pair<int, int>, int> lanes_used;  // (gpu, track) -> lanes
  for (size_t i = 0; i < result.timeline.size(); ++i) {
    int& n = lanes_used[{result.timeline[i].gpu, track_index(result.timeline[i].track)}];
    n = std::max(n, std::min(lane[i], kLaneStride - 1) + 1);
  }
  nlohmann::json events = nlohmann::json::array();
  for (int g = 0; g < num_gpus(result); ++g) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", g},
                      {"args", {{"name", "GPU " + std::to_string(g) + " (node " + std::to_string(g / gpus_per_node) + ")"}}}});
    for (int t = 0; t < 3; ++t) {
      const auto it = lanes_used.find({g, t});
      const int n = it == lanes_used.end() ? 1 : it->second;
      for (int l = 0; l < n; ++l) {
        const int tid = t * kLaneStride + l;
        const std::string name = l == 0 ? kTracks[t] : std::string(kTracks[t]) + " " + std::to_string(l + 1);
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", g}, {"tid", tid}, {"args", {{"name", name}}}});
        events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", g}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
      }
    }
  }
  for (size_t i = 0; i < result.timeline.size(); ++i) {
    const TimelineEvent& e = result.timeline[i];
    nlohmann::json args = nlohmann::json::object();
    if (e.rows >= 0) args["rows"] = e.rows;
    if (e.bytes >= 0) args["bytes"] = e.bytes;
    if (e.expert >= 0) args["expert"] = e.expert;
    if (e.peer >= 0) args["peer"] = e.peer;
    if (e.node >= 0) args["node"] = e.node;
    if (e.round >= 0) args["round"] = e.round;
    events.push_back({{"ph", "X"}, {"name", e.name}, {"cat", e.track}, {"pid", e.gpu},
                      {"tid", track_index(e.track) * kLaneStride + std::min(lane[i], kLaneStride - 1)},
                      {"ts", double(ns(e.start_s)) / 1e3}, {"dur", double(ns(e.end_s) - ns(e.start_s)) / 1e3},
                      {"args", args}});
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ns"}}.dump();
}

void write_chrome_trace(const LayerResult& result, int gpus_per_node, const std::string& path, const std::string& flag) {
  check_output_file(path, flag);  // before the JSON is built
  write_file_atomically(path, chrome_trace_json(result, gpus_per_node), flag);
}

void write_gantt_svg(const LayerResult& result, int gpus_per_node, const std::string& svg_path,
                     const std::string& title, const std::string& flag) {
  require(gpus_per_node > 0, "gpus_per_node", "must be positive");
  // All three files checked before the first is written: a refused one leaves nothing half-made.
  for (const char* suffix : {"", ".dat", ".gp"}) check_output_file(svg_path + suffix, flag);
  const int gpus = num_gpus(result);
  // Lane of (gpu, track): GPU 0 at the top, its compute lane above its links.
  auto lane = [&](int gpu, int track) { return double((gpus - 1 - gpu) * 4 + (2 - track)); };

  // One data block per track (x_center y half_width half_height, in ms), so each gets a key entry.
  std::string data;
  for (int t = 0; t < 3; ++t) {
    data += "# " + std::string(kTracks[t]) + "\n";
    for (const TimelineEvent& e : result.timeline)
      if (track_index(e.track) == t) {
        char row[128];
        std::snprintf(row, sizeof row, "%.9g %g %.9g 0.4\n", (e.start_s + e.end_s) * 500.0, lane(e.gpu, t),
                      (e.end_s - e.start_s) * 500.0);
        data += row;
      }
    data += "0 -10 0 0\n\n\n";  // a dummy box off-screen keeps every block non-empty
  }
  write_file_atomically(svg_path + ".dat", data, flag);

  std::string ytics;
  for (int g = 0; g < gpus; ++g) {
    if (g) ytics += ", ";
    ytics += "\"GPU " + std::to_string(g) + " (n" + std::to_string(g / gpus_per_node) + ")\" " +
             std::to_string(lane(g, 1));
  }
  const int height = std::max(300, 60 + 48 * gpus);
  std::string script = "set terminal svg size 1000," + std::to_string(height) + " dynamic background rgb 'white'\n";
  script += "set output " + quoted(svg_path) + "\n";
  script += "set title " + quoted(title) + " noenhanced\n";
  script += "set xlabel 'time (ms)'\nset xrange [0:*]\n";
  script += "set yrange [-1:" + std::to_string(gpus * 4) + "]\n";
  script += "set ytics (" + ytics + ") nomirror\nset grid xtics\n";
  script += "set key outside top center horizontal\n";
  script += "plot";
  for (int t = 0; t < 3; ++t)
    script += std::string(t ? "," : "") + " " + quoted(svg_path + ".dat") + " index " + std::to_string(t) +
              " using 1:2:3:4 with boxxyerror fs solid 0.8 noborder lc rgb '" + kTrackColors[t] + "' title '" +
              kTrackTitles[t] + "'";
  script += "\n";
  write_file_atomically(svg_path + ".gp", script, flag);

  const std::string cmd = "gnuplot " + shell_quoted(svg_path + ".gp") + " 1>&2";  // keep stdout clean
  const int status = std::system(cmd.c_str());
  if (status != 0) throw std::runtime_error("gnuplot " + svg_path + ".gp failed with status " + std::to_string(status));
}

}  // namespace zepp
