// Timelines (src/report/timeline.*) from a simulated plan: Chrome trace JSON read back, and the
// gnuplot Gantt chart written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../plan/fixture.hpp"
#include "core/error.hpp"
#include "exec/sim.hpp"
#include "report/timeline.hpp"

namespace zepp {
namespace {

LayerResult two_event_result() {
  LayerResult r;
  r.gpus.resize(2);
  r.timeline = {{0, "compute", "expert 3 (7 tok)", 0.001, 0.0025}, {1, "nic-out", "dispatch put r1 -> gpu 0", 0.0, 0.002}};
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
  EXPECT_EQ(threads, 6);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["pid"], 0);
  EXPECT_EQ(spans[0]["tid"], 0);
  EXPECT_NEAR(spans[0]["ts"].get<double>(), 1000.0, 1e-9);
  EXPECT_NEAR(spans[0]["dur"].get<double>(), 1500.0, 1e-9);
  EXPECT_EQ(spans[1]["pid"], 1);
  EXPECT_EQ(spans[1]["tid"], 2);  // nic-out
  EXPECT_EQ(spans[1]["name"], "dispatch put r1 -> gpu 0");
  EXPECT_THROW(chrome_trace_json(two_event_result(), 0), ArgumentError);
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

  EXPECT_THROW(write_gantt_svg(r, 2, (dir / "missing" / "x.svg").string()), ArgumentError);
  const std::string json = (dir / "layer.json").string();
  write_chrome_trace(r, 2, json);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(json))["traceEvents"].size(), 4 * 4 + r.timeline.size());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace zepp
