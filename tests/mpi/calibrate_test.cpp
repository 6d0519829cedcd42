// `zepp calibrate` and `zepp run --predict/--timeline` under mpirun (issue 16): calibration on 2
// ranks writes a topology file `zepp simulate` accepts; a paced transfer's measured time matches
// the calibrated bandwidth within 20%; `--timeline` writes valid Chrome trace JSON with one track
// (process) per rank, beside the simulator's prediction of the same plan.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"
#include "../common/chrome_trace_check.hpp"
#include "core/presets.hpp"
#include "pipeline/strategy.hpp"
#include "plan/comm_plan.hpp"
#include "workload/workload.hpp"

namespace zepp {
namespace {

namespace fs = std::filesystem;

// Small shapes keep the suite fast on two cores; the link sizes still span 64 B to 256 kB.
const std::string kShape = " --hidden 48 --ffn 32";
constexpr double kPaceGbps = 0.005;  // 5 MB/s: the ~0.9 MB a rank sends in dispatch below takes ~170 ms

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "zepp_calib_" + std::to_string(getpid()) + "_" + name;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Every X event on a known track and every rank a named process with events; returns the pids.
void expect_one_track_per_rank(const std::string& path, int ranks) {
  SCOPED_TRACE(path);
  ASSERT_TRUE(fs::exists(path));
  const auto trace = read_json(path);  // throws (fails the test) unless valid JSON
  std::set<int> named, with_events, expected;
  for (int r = 0; r < ranks; ++r) expected.insert(r);
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") named.insert(e["pid"].get<int>());
    if (e["ph"] != "X") continue;
    with_events.insert(e["pid"].get<int>());
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    const std::string track = e["cat"];
    EXPECT_TRUE(track == "compute" || track == "nvlink-out" || track == "nic-out") << track;
  }
  EXPECT_EQ(named, expected);        // one process (a group of tracks) per rank
  EXPECT_EQ(with_events, expected);  // and every rank did something
}

TEST(RunTimeline, ChromeTraceWithOneTrackPerRank) {
  const std::string stem = temp_path("four-ranks");
  const auto r = testing::mpirun_zepp(4, "run --model deepseek-v2-lite --gpus-per-node 2" + kShape +
                                             " --size-mb 0.01 --strategy a2av,zepp --format json --timeline " + stem + ".json");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string label : {"a2av", "zepp"}) {
    expect_one_track_per_rank(stem + "-" + label + ".json", 4);
    EXPECT_TRUE(fs::exists(stem + "-" + label + ".svg"));
  }
  // Zepp's plan sends over NICs and NVLink and computes expert groups, each named as the simulator names them.
  const auto trace = read_json(stem + "-zepp.json");
  std::set<std::string> tracks;
  bool expert = false;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") tracks.insert(e["cat"].get<std::string>()), expert = expert || e["name"] == "expert GEMM";
  EXPECT_EQ(tracks, (std::set<std::string>{"compute", "nvlink-out", "nic-out"}));
  EXPECT_TRUE(expert);
  // Perfetto shows every slice: none partially overlaps another on its thread (issue 26).
  for (const std::string label : {"a2av", "zepp"}) EXPECT_EQ(test::partial_overlaps(read_json(stem + "-" + label + ".json")), 0) << label;
}

class Calibrated : public ::testing::Test {
 protected:
  // One calibration of 2 ranks on 2 "nodes" (one rank each), paced, shared by the tests below.
  static void SetUpTestSuite() {
    file_ = temp_path("two-ranks.json");
    const auto r = testing::mpirun_zepp(2, "calibrate --gpus-per-node 1" + kShape + " --tokens 1,16,128 --repeat 3"
                                           " --message-bytes 64,16384,262144 --nic-gbps " + std::to_string(kPaceGbps) +
                                           " --output " + file_, 180);
    status_ = r.status;
    log_ = r.err + r.out;
  }
  void SetUp() override { ASSERT_EQ(status_, 0) << log_; }

  static std::string file_, log_;
  static int status_;
};
std::string Calibrated::file_, Calibrated::log_;
int Calibrated::status_ = -1;

TEST_F(Calibrated, WritesATopologyFileThatSimulateAccepts) {
  const auto doc = read_json(file_);
  EXPECT_EQ(doc["gpus_per_node"], 1);
  EXPECT_EQ(doc["compute"]["model"], "measured");
  ASSERT_EQ(doc["compute"]["gemm"].size(), 1u);
  EXPECT_EQ(doc["compute"]["gemm"][0]["hidden"], 48);
  EXPECT_EQ(doc["compute"]["gemm"][0]["points"].size(), 3u);
  const auto& rec = doc["calibration"];
  EXPECT_EQ(rec["ranks"], 2);
  EXPECT_TRUE(rec["nic_unpaced"]["measured"].get<bool>());
  EXPECT_FALSE(rec["nvlink"]["measured"].get<bool>());  // one rank per node: no same-node pair, said in the note
  EXPECT_NE(rec["nvlink"]["note"].get<std::string>().find("no two ranks share a node"), std::string::npos);
  // The paced fit cannot beat the pacer (the pacer is the bottleneck; shared memory is far
  // faster). How close it comes depends on the machine's load, so that is measured by `zepp
  // validate` (docs/validation.md), not asserted here (issue 23: it flaked under load).
  const double paced = rec["nic_paced"]["bandwidth_bytes_per_s"].get<double>();
  EXPECT_GT(paced, 0.0);
  EXPECT_LE(paced, 1.05 * kPaceGbps * 1e9);

  const auto sim = testing::run_zepp("simulate --topology " + file_ + " --nodes 2 --model deepseek-v2-lite" + kShape +
                                     " --size-mb 0.02 --strategies a2av,zepp --format json");
  ASSERT_EQ(sim.status, 0) << sim.err;
  const auto s = nlohmann::json::parse(sim.out);
  for (const auto& row : s["strategies"]) EXPECT_GT(row["latency_us"].get<double>(), 0.0) << row.dump();

  // The compute model was measured for one expert shape only: another is an error naming it.
  const auto other = testing::run_zepp("simulate --topology " + file_ + " --nodes 2 --model deepseek-v2-lite --hidden 64 --ffn 32");
  EXPECT_EQ(other.status, 2) << other.out;
  EXPECT_NE(other.err.find("hidden 48"), std::string::npos) << other.err;
}

// Bytes each GPU sends over its NIC in dispatch, from the a2av comm plan `zepp run` executes on
// the same flags (synthetic workload, fp32 rows).
std::vector<double> a2av_dispatch_nic_bytes(double size_mb) {
  ModelShape m = model_preset("deepseek-v2-lite");
  m.hidden = 48, m.ffn = 32;
  Topology t = topology_preset("a100", 2);
  t.gpus_per_node = 1;
  WorkloadOptions wo;
  wo.size_mb = size_mb;
  const Workload w = build_workload(nullptr, m, t, wo);
  m.bytes_per_elem = 4;
  StrategyOptions so;
  so.optimal = false;
  const auto& reg = strategy_registry();
  const auto a2av = std::find_if(reg.begin(), reg.end(), [](const StrategyEntry& e) { return e.name == "a2av"; });
  const StrategyDecision d = a2av->decide(StrategyInput{w, m, t, so});
  std::vector<double> bytes(2, 0.0);
  for (const Task& task : d.make_plan(d.placement, d.routing).tasks)
    if (task.kind == TaskKind::Transfer && task.phase == Phase::Dispatch && task.link == Link::NIC) bytes[task.gpu] += task.bytes;
  return bytes;
}

TEST_F(Calibrated, PacedTransferTakesWhatTheCalibratedBandwidthSays) {
  // Plain EP on 2 nodes of one rank: dispatch is one paced message each way, and a rank's
  // dispatch ends when the larger of the two has arrived.
  const double size_mb = 0.1;
  const auto r = testing::mpirun_zepp(2, "run --model deepseek-v2-lite --gpus-per-node 1" + kShape + " --size-mb " +
                                             std::to_string(size_mb) + " --strategy a2av --repeat 5 --format json --nic-gbps " +
                                             std::to_string(kPaceGbps));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto run = nlohmann::json::parse(r.out);  // per-rank figures of the fastest repeat
  const auto doc = read_json(file_);
  const auto& fit = doc["calibration"]["nic_paced"];
  const double bw = fit["bandwidth_bytes_per_s"].get<double>(), latency = fit["latency_s"].get<double>();
  const std::vector<double> sent = a2av_dispatch_nic_bytes(size_mb);
  const double bytes = std::max(sent[0], sent[1]);
  double measured = 0;
  for (const auto& rank : run["strategies"][0]["ranks"]) measured = std::max(measured, rank["dispatch_s"].get<double>());
  ASSERT_GT(bytes, 5e5);  // a transfer long enough (> 100 ms) to time on a busy machine
  // The work done bounds the time from below: no rank sends its bytes faster than the pacer
  // allows. How close the calibrated fit predicts it is load-dependent: `zepp validate` measures
  // that (issue 23: the two-sided bound flaked under load).
  EXPECT_GE(measured, 0.95 * bytes / (kPaceGbps * 1e9)) << "bytes " << bytes;
  EXPECT_GT(bw, 0.0);
  EXPECT_GE(latency, 0.0);
}

TEST_F(Calibrated, RunPredictsAndWritesOneTimelineTrackPerRank) {
  const std::string stem = temp_path("timeline");
  const auto r = testing::mpirun_zepp(2, "run --model deepseek-v2-lite --gpus-per-node 1" + kShape +
                                             " --size-mb 0.02 --strategy a2av,zepp --format json --nic-gbps " +
                                             std::to_string(kPaceGbps) + " --predict " + file_ + " --timeline " + stem + ".json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto run = nlohmann::json::parse(r.out);
  for (const auto& s : run["strategies"]) {
    SCOPED_TRACE(s["strategy"].get<std::string>());
    // The predicted phases lie within the predicted layer: dispatch ends, compute and combine
    // run, before the slowest rank finishes.
    const auto& p = s["predicted"];
    EXPECT_GT(p["wall_s"].get<double>(), 0.0);
    for (const char* phase : {"dispatch_s", "compute_s", "combine_s"}) {
      EXPECT_GT(p[phase].get<double>(), 0.0) << phase;
      EXPECT_LE(p[phase].get<double>(), p["wall_s"].get<double>() * (1 + 1e-9)) << phase;
    }
  }
  EXPECT_TRUE(run["a2av_over_zepp"].contains("predicted_wall"));
  for (const std::string label : {"a2av", "a2av-predicted", "zepp", "zepp-predicted"})
    expect_one_track_per_rank(stem + "-" + label + ".json", 2);
}

TEST_F(Calibrated, PredictRefusesAnotherPacingOrNodeShape) {
  const auto pace = testing::mpirun_zepp(2, "run --model deepseek-v2-lite --gpus-per-node 1" + kShape +
                                                " --size-mb 0.02 --strategy a2av --nic-gbps 0.5 --predict " + file_, 60);
  EXPECT_EQ(pace.status, 2);
  EXPECT_NE(pace.err.find("--predict: " + file_ + " was calibrated with NIC pacing 0.005 GB/s, the run paces at 0.5 GB/s"),
            std::string::npos) << pace.err;
  const auto shape = testing::mpirun_zepp(2, "run --model deepseek-v2-lite --gpus-per-node 2" + kShape +
                                                 " --size-mb 0.02 --strategy a2av --predict " + file_, 60);
  EXPECT_EQ(shape.status, 2);
  EXPECT_NE(shape.err.find("calibrated for 1 GPUs per node, the run has 2"), std::string::npos) << shape.err;
  // Said once, as the other inputs are, without MPI_Abort's banner (it was read inside the run).
  for (const auto* r : {&pace, &shape}) {
    EXPECT_EQ(testing::count_of(r->err, "--predict: "), 1u) << r->err;
    EXPECT_EQ(r->err.find("MPI_ABORT"), std::string::npos) << r->err;
    EXPECT_EQ(r->err.find("(rank "), std::string::npos) << r->err;
  }
}

TEST(Calibrate, BadArgumentsEndEveryRankWithTheFlag) {
  // Found after MPI starts (the rank count): said once, by rank 0, and every rank exits 2
  // without MPI_Abort's banner (each rank printed it, then aborted).
  const auto r = testing::mpirun_zepp(2, "calibrate --gpus-per-node 3 --hidden 16 --ffn 8", 60);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(testing::count_of(r.err, "--gpus-per-node: 3 does not divide the 2 MPI ranks"), 1u) << r.err;
  EXPECT_EQ(r.err.find("MPI_ABORT"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("(rank "), std::string::npos) << r.err;
  const auto t = testing::mpirun_zepp(2, "calibrate --hidden 16 --ffn 8 --tokens 8,4", 60);
  EXPECT_EQ(t.status, 2);
  EXPECT_NE(t.err.find("--tokens: expected a comma-separated ascending list of at least 2 whole numbers in [1, 65536], got 8,4"),
            std::string::npos)
      << t.err;
  // One token count (or one message size) passed the flag check and failed on every rank
  // ("zepp calibrate (rank 1): error: tokens: needs at least two token counts"), then MPI_Abort's
  // banner: now refused before MPI starts, said once.
  for (const auto& [args, said] : {std::pair<std::string, std::string>{"--tokens 1", "--tokens: expected a comma-separated "
                                                                                     "ascending list of at least 2 whole numbers in [1, 65536] (a line is fitted through the token counts timed), got '1'"},
                                   {"--message-bytes 64", "--message-bytes: expected a comma-separated ascending list of at "
                                                          "least 2 whole numbers in [1, 268435456]"}}) {
    const auto one = testing::mpirun_zepp(2, "calibrate --hidden 16 --ffn 8 " + args, 60);
    EXPECT_EQ(one.status, 2) << args;
    EXPECT_EQ(testing::count_of(one.err, said), 1u) << args << "\n" << one.err;
    EXPECT_EQ(one.err.find("MPI_ABORT"), std::string::npos) << one.err;
    EXPECT_EQ(one.err.find("(rank "), std::string::npos) << one.err;
  }
  // An output path that is a folder: said once, not once per rank.
  const auto o = testing::mpirun_zepp(2, "calibrate --hidden 16 --ffn 8 --output /tmp", 60);
  EXPECT_EQ(o.status, 2);
  const std::string said = "--output: /tmp is a directory";
  const size_t first = o.err.find(said);
  EXPECT_NE(first, std::string::npos) << o.err;
  EXPECT_EQ(o.err.find(said, first + 1), std::string::npos) << "said more than once:\n" << o.err;
}

}  // namespace
}  // namespace zepp
