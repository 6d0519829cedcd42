// Timelines (src/report/timeline.*) from a simulated plan: Chrome trace JSON read back, and the
// gnuplot Gantt chart written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../plan/fixture.hpp"
#include "../common/chrome_trace_check.hpp"
#include "core/error.hpp"
#include "exec/sim.hpp"
#include "report/timeline.hpp"

namespace zepp {
namespace {

LayerResult two_event_result() {
  LayerResult r;
  r.gpus.resize(2);
  r.timeline = {{0, "compute", "expert GEMM", 0.001, 0.0025, 7, -1, 3}, {1, "nic-out", "dispatch put", 0.0, 0.002, 5, 1e4, -1, 0, -1, 1}};
  return r;
}


TEST(ChromeTrace, OneProcessPerGpuThreadsPerTrackTimesInMicroseconds) {
  const auto j = nlohmann::json::parse(chrome_trace_json(two_event_result(), 1));
  const auto& ev = j.at("traceEvents");
  int names = 0, threads = 0;
  std::vector<nlohmann::json> spans;
  for (const auto& e : ev) {
    if (e["ph"] == "M" && e["name"] == "process_name") ++names;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++threads;
    if (e["ph"] == "X") spans.push_back(e);
  }
  EXPECT_EQ(names, 2);
  EXPECT_EQ(threads, 6);  // one lane per track: nothing overlaps
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["pid"], 0);
  EXPECT_EQ(spans[0]["tid"], 0);
  EXPECT_NEAR(spans[0]["ts"].get<double>(), 1000.0, 1e-9);
  EXPECT_NEAR(spans[0]["dur"].get<double>(), 1500.0, 1e-9);
  EXPECT_EQ(spans[1]["pid"], 1);
  EXPECT_EQ(spans[1]["tid"], 2000);  // nic-out, lane 0 (track * 1000 + lane)
  EXPECT_EQ(spans[1]["name"], "dispatch put");
  EXPECT_EQ(spans[1]["args"], (nlohmann::json{{"rows", 5}, {"bytes", 1e4}, {"peer", 0}, {"round", 1}}));
  EXPECT_EQ(spans[0]["args"], (nlohmann::json{{"rows", 7}, {"expert", 3}}));
  EXPECT_THROW(chrome_trace_json(two_event_result(), 0), ArgumentError);
}

// Concurrent transfers of one NIC go to lanes of their own: slices on one thread never partially
// overlap, and each lane is as full as it can be (3 in flight at most -> 3 lanes).
TEST(ChromeTrace, ConcurrentTransfersOnSeparateLanes) {
  LayerResult r;
  r.gpus.resize(1);
  r.timeline = {{0, "nic-out", "dispatch put", 0.0, 0.004}, {0, "nic-out", "dispatch put", 0.001, 0.003},
                {0, "nic-out", "dispatch put", 0.002, 0.006}, {0, "nic-out", "combine put", 0.004, 0.005},
                {0, "nic-out", "combine put", 0.0035, 0.0045}};
  EXPECT_EQ(timeline_lanes(r.timeline), (std::vector<int>{0, 1, 2, 0, 1}));
  const auto j = nlohmann::json::parse(chrome_trace_json(r, 1));
  EXPECT_EQ(test::partial_overlaps(j), 0);
  std::set<std::string> lanes;
  for (const auto& e : j["traceEvents"])
    if (e["name"] == "thread_name") lanes.insert(e["args"]["name"].get<std::string>());
  EXPECT_EQ(lanes, (std::set<std::string>{"compute", "nvlink-out", "nic-out", "nic-out 2", "nic-out 3"}));
}

// A simulated layer (2 nodes x 2 GPUs, top-2, most pairs remote): no slice partially overlaps
// another on its thread; names are kinds with the counts in args. (Real traces: tests/cli.)
TEST(ChromeTrace, SimulatedZeppLayerNests) {
  const Topology topo = test::small_topology(2, 2);
  const RoutingBatch batch = test::make_batch(4, 2, {{{2, 3}, {3, 1}, {0, 2}}, {{3, 0}, {2, 1}}, {{0, 1}, {1, 3}}, {{1, 2}, {0, 3}}});
  const Placement placement = test::identity_placement(4);
  PlanOptions po;
  const CommPlan plan = build_comm_plan(batch, placement, test::first_replica(batch, placement), topo, test::small_model(4, 2), po);
  const LayerResult r = simulate_plan(plan, topo, true);
  ASSERT_FALSE(r.timeline.empty());
  const auto j = nlohmann::json::parse(chrome_trace_json(r, topo.gpus_per_node));
  EXPECT_EQ(test::partial_overlaps(j), 0);
  std::set<std::string> names;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      names.insert(e["name"].get<std::string>());
      EXPECT_TRUE(e["args"].contains("rows") || e["name"] == "weights") << e.dump();
    }
  EXPECT_LE(names.size(), 12u) << "names are kinds, not one per event";
  EXPECT_TRUE(names.count("expert GEMM"));
}

TEST(GanttSvg, GnuplotDrawsEveryLane) {
  // A real simulated plan: 2 nodes x 2 GPUs, everything crosses nodes.
  const Topology topo = test::small_topology(2, 2);
  const RoutingBatch batch = test::make_batch(4, 1, {{{2}, {3}}, {{3}}, {{0}}, {{1}}});
  const Placement placement = test::identity_placement(4);
  const CommPlan plan = build_comm_plan(batch, placement, test::first_replica(batch, placement), topo,
                                        test::small_model(4, 1), PlanOptions{});
  const LayerResult r = simulate_plan(plan, topo, true);
  ASSERT_FALSE(r.timeline.empty());

  const auto dir = std::filesystem::temp_directory_path() / ("zepp-gantt-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string svg = (dir / "layer.svg").string();
  write_gantt_svg(r, topo.gpus_per_node, svg, "two nodes");
  std::stringstream text;
  text << std::ifstream(svg).rdbuf();
  EXPECT_NE(text.str().find("<svg"), std::string::npos);
  EXPECT_NE(text.str().find("GPU 3 (n1)"), std::string::npos);
  EXPECT_NE(text.str().find("NIC out"), std::string::npos);
  // The data file holds one box per event (plus one empty row per track so every lane is drawn).
  std::ifstream dat(svg + ".dat");
  int boxes = 0;
  for (std::string line; std::getline(dat, line);) boxes += !line.empty() && line[0] != '#';
  EXPECT_EQ(boxes, int(r.timeline.size()) + 3);

  const std::string json = (dir / "layer.json").string();
  write_chrome_trace(r, 2, json);
  size_t slices = 0;
  const auto trace = nlohmann::json::parse(std::ifstream(json));  // named: a range-for over a temporary's member dangles
  for (const auto& e : trace["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_EQ(slices, r.timeline.size()) << trace.dump().substr(0, 400);
  std::filesystem::remove_all(dir);
}

// Both writers follow the output-file rules (core/output_file.hpp): a path that is not a regular
// file is refused naming the flag, before anything is written (a plain ofstream wrote into
// /dev/null and left the Gantt's data and script beside a folder named x.svg); files are replaced
// whole, with no PATH.tmp left, and a missing folder is created.
TEST(TimelineWriters, FollowTheOutputFileRules) {
  namespace fs = std::filesystem;
  const LayerResult r = two_event_result();
  const fs::path dir = fs::temp_directory_path() / ("zepp-timeline-rules-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "x.svg");
  auto error_of = [](auto&& write) -> std::string {
    try {
      write();
    } catch (const ArgumentError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of([&] { write_chrome_trace(r, 1, "/dev/null", "--timeline"); }),
            "--timeline: /dev/null is a character device; expected a regular file to write (or a new file name)");
  const std::string svg = (dir / "x.svg").string();
  EXPECT_EQ(error_of([&] { write_gantt_svg(r, 1, svg, "t", "--timeline"); }),
            "--timeline: " + svg + " is a directory; expected a regular file to write (or a new file name)");
  EXPECT_FALSE(fs::exists(svg + ".dat"));
  EXPECT_FALSE(fs::exists(svg + ".gp"));

  const std::string json = (dir / "new" / "t.json").string();
  write_chrome_trace(r, 1, json);  // the folder is created
  write_chrome_trace(r, 1, json);  // and the file replaced
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(json)), nlohmann::json::parse(chrome_trace_json(r, 1)));
  EXPECT_FALSE(fs::exists(json + ".tmp"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zepp
