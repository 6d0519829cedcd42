// `zepp experiment validate --from-results`: the report is rewritten from RESULTS/runs.json alone.
// A malformed file is refused naming the file and field (it ended in an internal error); the
// report describes the runs recorded, with the settings recorded (it described the default sweep,
// and listed the default workloads it had not run as "not measured"); a measurement flag that
// disagrees with the recorded settings is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp::testing {
namespace {
namespace fs = std::filesystem;

// What `zepp experiment validate --workloads llama4 --ranks 4 --hidden 256 --ffn 128 ...` writes
// when cut short after its first run (paced): one calibration and one run.
nlohmann::json recorded_runs() {
  const nlohmann::json load = {1.5, 1.25, 1.0};
  const nlohmann::json phases = {{"dispatch_s", 0.001}, {"compute_s", 0.002}, {"combine_s", 0.001}};
  nlohmann::json predicted = phases;
  predicted["wall_s"] = 0.004;
  return {
      {"machine", "2 CPU cores (test)"},
      {"started", 1796090573},
      {"finished", 1796090671},
      {"hidden", 256},
      {"ffn", 128},
      {"size_mb", 0.5},
      {"nic_gbps", 0.05},
      {"repeat", 2},
      {"workloads", {"llama4"}},
      {"ranks", {4}},
      {"made_by", {{"version", "0"}, {"commit", "abc"}, {"command", "zepp experiment validate --workloads llama4 --ranks 4"}}},
      {"calibrations",
       {{"4",
         {{"file", "r/calibration-4-ranks.json"},
          {"load_before", load},
          {"load_after", nlohmann::json::array()},
          {"topology",
           {{"calibration", {{"wall_s", 1.5}, {"nic_unpaced", {{"bandwidth_bytes_per_s", 1e9}, {"latency_s", 5e-6}}}}},
            {"compute", {{"hbm", "1 GB/s"}, {"gemm", {{{"points", {{1, "10 us"}, {4, "20 us"}}}}}}}},
            {"nvlink", {{"bandwidth", "2 GB/s"}, {"latency", "1 us"}}},
            {"nic", {{"bandwidth", "0.05 GB/s"}, {"latency", "50 us"}}}}}}}}},
      {"runs",
       {{{"workload", "llama4"},
         {"model", "llama4-maverick"},
         {"ranks", 4},
         {"paced", true},
         {"load_before", load},
         {"load_after", load},
         {"run",
          {{"strategies",
            {{{"strategy", "a2av"}, {"wall_s", 0.0044}, {"measured_over_predicted", 1.1}, {"predicted", predicted},
              {"ranks", {phases, phases}}}}},
           {"a2av_over_zepp", {{"wall", 1.5}, {"predicted_wall", 1.4}}}}}}}}};
}

struct Results {
  fs::path dir = scratch("validate-from-results");
  std::string file() const { return (dir / "r" / "runs.json").string(); }
  std::string args() const {
    return "experiment validate --from-results --results " + (dir / "r").string() + " --out " + (dir / "v.md").string();
  }
  void write(const nlohmann::json& doc) const {
    fs::create_directories(dir / "r");
    std::ofstream(file()) << doc.dump(1);
  }
  std::string report() const {
    std::ifstream in(dir / "v.md");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

void expect_refused(const ProgramResult& r, const std::string& says) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << "no '" << says << "' in\n" << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
}

TEST(ValidateFromResults, ReportDescribesTheRecordedRunsAndSettings) {
  const Results res;
  res.write(recorded_runs());
  const ProgramResult r = run_zepp(res.args());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string md = res.report();
  EXPECT_NE(md.find("- Command: `zepp experiment validate --workloads llama4 --ranks 4`."), std::string::npos) << md;
  EXPECT_NE(md.find("- Traces: Llama-4 Maverick (MMLU), each model's experts, top-k and routing, with the expert shape "
                    "reduced to hidden 256, ffn 128"),
            std::string::npos) << md;
  EXPECT_NE(md.find("; 0.5 MiB of BF16 activations per rank"), std::string::npos) << md;
  EXPECT_NE(md.find("- Ranks: 4 (2 nodes x 2); \"paced\": inter-node sends through a token bucket at 0.05 GB/s"),
            std::string::npos) << md;
  EXPECT_NE(md.find("fastest of 2 repeats"), std::string::npos) << md;
  // The one run the sweep missed, not the default sweep's workloads and rank counts.
  EXPECT_NE(md.find("Not measured (the sweep was cut short): llama4 4 ranks unpaced.\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("DeepSeek-V2-Lite (puffin)"), std::string::npos) << md;
  EXPECT_EQ(md.find("8 ranks"), std::string::npos) << md;
  EXPECT_NE(md.find("Every rank is a process; 4 ranks on "), std::string::npos) << md;
  EXPECT_NE(md.find("over strategies and traces: 10% paced, none measured unpaced."), std::string::npos) << md;
  EXPECT_NE(md.find("The goal's case, paced 8-rank DeepSeek, was not part of this sweep."), std::string::npos) << md;
  EXPECT_NE(md.find("| llama4 | 4 | paced | a2av | 4.4 | 4.0 | 1.10 | 1.0 / 1.0 | 2.0 / 2.0 | 1.0 / 1.0 |"), std::string::npos) << md;
}

// Files written before the sweep's workloads and ranks were recorded: those of the runs in them.
TEST(ValidateFromResults, OlderFilesTakeTheWorkloadsAndRanksOfTheirRuns) {
  const Results res;
  nlohmann::json doc = recorded_runs();
  doc.erase("workloads"), doc.erase("ranks"), doc.erase("made_by");
  res.write(doc);
  const ProgramResult r = run_zepp(res.args());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string md = res.report();
  EXPECT_NE(md.find("- Traces: Llama-4 Maverick (MMLU), each"), std::string::npos) << md;
  EXPECT_NE(md.find("- Ranks: 4 (2 nodes x 2);"), std::string::npos) << md;
  EXPECT_NE(md.find("Not measured (the sweep was cut short): llama4 4 ranks unpaced.\n"), std::string::npos) << md;
  EXPECT_EQ(md.find("- Command:"), std::string::npos) << md;
}

TEST(ValidateFromResults, FlagsThatDisagreeWithTheRecordedSettingsAreRefused) {
  const Results res;
  res.write(recorded_runs());
  const std::string tail = " disagrees with the runs recorded in " + res.file();
  expect_refused(run_zepp(res.args() + " --hidden 512"), "--hidden: 512" + tail + " (256); --from-results describes those runs");
  expect_refused(run_zepp(res.args() + " --workloads deepseek,llama4"), "--workloads: deepseek,llama4" + tail + " (llama4)");
  expect_refused(run_zepp(res.args() + " --ranks 4,8"), "--ranks: 4,8" + tail + " (4)");
  expect_refused(run_zepp(res.args() + " --size-mb 0.25"), "--size-mb: 0.25" + tail + " (0.5)");
  expect_refused(run_zepp(res.args() + " --nic-gbps 0.02"), "--nic-gbps: 0.02" + tail + " (0.05)");
  expect_refused(run_zepp(res.args() + " --repeat 3"), "--repeat: 3" + tail + " (2)");
  expect_refused(run_zepp(res.args() + " --traces /nonexistent"), "--traces: only acts when measuring, and --from-results runs nothing");
  expect_refused(run_zepp(res.args() + " --mpirun mpiexec"), "--mpirun: only acts when measuring");
  EXPECT_FALSE(fs::exists(res.dir / "v.md"));
  // The recorded values themselves are taken.
  const ProgramResult same = run_zepp(res.args() + " --hidden 256 --workloads llama4 --ranks 4 --size-mb 0.5");
  EXPECT_EQ(same.status, 0) << same.err;
}

TEST(ValidateFromResults, MalformedFileIsRefusedNamingTheFileAndField) {
  const Results res;
  struct Case {
    void (*edit)(nlohmann::json&);
    std::string says;
  };
  for (const Case& c : {
           Case{[](nlohmann::json& d) { d["runs"][0]["run"]["strategies"][0]["wall_s"] = "fast"; },
                "runs[0].run.strategies[0].wall_s: expected a number, got \"fast\""},
           Case{[](nlohmann::json& d) { d["runs"][0].erase("run"); }, "runs[0].run: expected an object, got nothing (the field is missing)"},
           Case{[](nlohmann::json& d) { d["runs"][0]["paced"] = 1; }, "runs[0].paced: expected true or false, got 1"},
           Case{[](nlohmann::json& d) { d["runs"][0]["workload"] = "qwen3"; },
                "runs[0].workload: expected deepseek, llama4 or mixtral, got 'qwen3'"},
           Case{[](nlohmann::json& d) { d["runs"][0]["run"]["strategies"][0]["ranks"][1].erase("compute_s"); },
                "runs[0].run.strategies[0].ranks[1].compute_s: expected a number, got nothing"},
           Case{[](nlohmann::json& d) { d["runs"][0]["load_before"] = {1, 2}; },
                "runs[0].load_before: expected [] or three load averages (1, 5 and 15 min), got 2 numbers"},
           Case{[](nlohmann::json& d) { d["calibrations"]["4"]["topology"]["compute"]["gemm"] = nlohmann::json::array(); },
                "calibrations.4.topology.compute.gemm[0]: expected an object, got nothing (the list is empty)"},
           Case{[](nlohmann::json& d) { d["calibrations"]["4"]["topology"]["nic"].erase("latency"); },
                "calibrations.4.topology.nic.latency: expected a string, got nothing"},
           Case{[](nlohmann::json& d) { d["hidden"] = 2.5; }, "hidden: expected a whole number, got 2.5"},
           Case{[](nlohmann::json& d) { d["ranks"] = {"4"}; }, "ranks[0]: expected a whole number, got \"4\""},
           Case{[](nlohmann::json& d) { d["workloads"] = {"bogus"}; }, "workloads: expected deepseek, llama4 or mixtral, got 'bogus'"},
           Case{[](nlohmann::json& d) { d = nlohmann::json::array({1, 2}); },
                "expected the object zepp experiment validate writes ({\"machine\": ..., \"runs\": [...]}), got a list"},
       }) {
    nlohmann::json doc = recorded_runs();
    c.edit(doc);
    res.write(doc);
    const ProgramResult r = run_zepp(res.args());
    expect_refused(r, "zepp: error: " + res.file() + ": " + c.says);
    EXPECT_LT(r.cpu_seconds, kQuick);
  }
  EXPECT_FALSE(fs::exists(res.dir / "v.md"));
  // Not JSON at all: the parser's message, under the file's name.
  fs::create_directories(res.dir / "r");
  std::ofstream(res.file()) << "{\"runs\": [";
  expect_refused(run_zepp(res.args()), "zepp: error: " + res.file() + ": [json.exception.parse_error");
}

}  // namespace
}  // namespace zepp::testing
