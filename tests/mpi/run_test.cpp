// `zepp run` under mpirun (issue 4): outputs equal the dense reference for a2av, eplb and zepp on
// the real DeepSeek-V2-Lite, Llama-4 and Mixtral traces with 2, 4 and 8 ranks; bytes per link
// class equal the comm plan's; repeated runs are bit-identical; pacing bounds the time; bad input
// ends every rank, in bounded time, with the message.
#include <unistd.h>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"
#include "core/presets.hpp"
#include "pipeline/strategy.hpp"
#include "plan/comm_plan.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"

namespace zepp {
namespace {

namespace fs = std::filesystem;
const std::string kTraces = std::string(ZEPP_SHARED_DIR) + "/data/traces";

using Launch = testing::ProgramResult;

// mpirun -np N zepp run ARGS (tests/cli/run_zepp.hpp).
Launch mpirun(int np, const std::string& args, int limit_s = 120) { return testing::mpirun_zepp(np, "run " + args, limit_s); }

// A folder of links to the first `count` files of a trace folder: a small real trace, not a copy.
std::string trace_subset(const std::string& folder, int count) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  const fs::path dir = fs::path(::testing::TempDir()) /
                       ("zepp_mpi_" + std::to_string(getpid()) + "_" + fs::path(folder).filename().string());
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int i = 0; i < count && i < int(files.size()); ++i) fs::create_symlink(files[i], dir / files[i].filename());
  return dir.string();
}

struct Case {
  std::string trace, model;
  int np, gpn;
  int hidden = 48, ffn = 32;
  double size_mb = 0.01;
  std::string args() const {
    return "--trace " + trace + " --model " + model + " --gpus-per-node " + std::to_string(gpn) + " --hidden " +
           std::to_string(hidden) + " --ffn " + std::to_string(ffn) + " --size-mb " + std::to_string(size_mb) +
           " --format json";
  }
};

// What `zepp run` decides on the case's inputs, in this process: the workload, the model with fp32
// rows and the topology, for StrategyEntry::decide.
struct Decided {
  Workload w;
  ModelShape m;
  Topology t;
  StrategyOptions so;
  StrategyDecision decide(const std::string& name) const { return find_strategy(name).decide(StrategyInput{w, m, t, so}); }
};
Decided inputs_of(const Case& c) {
  Decided d;
  d.m = model_preset(c.model);  // the workload's size is in BF16 bytes (paper §6.1) ...
  d.m.hidden = c.hidden, d.m.ffn = c.ffn;
  d.t = topology_preset("a100", c.np / c.gpn);
  d.t.gpus_per_node = c.gpn;
  const Trace trace = read_trace(c.trace);
  WorkloadOptions wo;
  wo.size_mb = c.size_mb;
  d.w = build_workload(&trace, d.m, d.t, wo);
  d.m.bytes_per_elem = 4;  // ... while the plan moves fp32 rows, as `zepp run` does
  d.so.optimal = false;
  return d;
}

// The comm plan's Transfer bytes per link class, from this process's own pipeline on the same inputs.
std::map<std::string, std::pair<double, double>> plan_bytes(const Case& c, const std::vector<std::string>& strategies) {
  const Decided in = inputs_of(c);
  std::map<std::string, std::pair<double, double>> out;
  for (const auto& e : strategy_registry()) {
    if (std::find(strategies.begin(), strategies.end(), e.name) == strategies.end()) continue;
    const StrategyDecision d = in.decide(e.name);
    const CommPlan plan = d.make_plan(d.placement, d.routing);
    for (const Task& task : plan.tasks)
      if (task.kind == TaskKind::Transfer) (task.link == Link::NIC ? out[e.name].second : out[e.name].first) += task.bytes;
  }
  return out;
}

void expect_correct(const Case& c, const std::vector<std::string>& strategies = {"a2av", "eplb", "zepp"}) {
  std::string list;
  for (const auto& s : strategies) list += (list.empty() ? "" : ",") + s;
  const Launch r = mpirun(c.np, c.args() + " --strategy " + list);
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["strategies"].size(), strategies.size());
  EXPECT_EQ(doc["ranks"], c.np);
  EXPECT_EQ(doc["nodes"], c.np / c.gpn);
  const auto expected = plan_bytes(c, strategies);
  const int64_t pairs = doc["tokens_per_gpu"].get<int64_t>() * c.np * model_preset(c.model).top_k;
  for (const auto& s : doc["strategies"]) {
    const std::string name = s["strategy"];
    SCOPED_TRACE(name);
    EXPECT_LT(s["max_rel_error"].get<double>(), 1e-5);
    EXPECT_TRUE(s["bytes_match_plan"].get<bool>());
    EXPECT_EQ(s["nvlink_bytes"].get<double>(), expected.at(name).first);
    EXPECT_EQ(s["nic_bytes"].get<double>(), expected.at(name).second);
    EXPECT_EQ(s["pairs_computed"].get<int64_t>(), pairs);  // every (token, expert) pair computed exactly once
    double per_rank_nic = 0;
    for (const auto& rank : s["ranks"]) per_rank_nic += rank["nic_bytes"].get<double>();
    EXPECT_EQ(per_rank_nic, s["nic_bytes"].get<double>());
    if (c.np == c.gpn) EXPECT_EQ(s["nic_bytes"].get<double>(), 0.0);  // one node: nothing crosses a NIC
    // Zepp's ranks each routed their own tokens from the all-gathered counts inside the run, and
    // the session checked the result equal to the global routing (else the run fails); the
    // static strategies decide nothing per batch on a rank.
    const bool per_rank = name == "zepp";
    EXPECT_EQ(s["rank_routing"].get<bool>(), per_rank);
    for (const auto& rank : s["ranks"]) {
      EXPECT_EQ(rank["metadata_s"].get<double>() > 0, per_rank);
      EXPECT_EQ(rank["planning_s"].get<double>() > 0, per_rank);
      EXPECT_LE(rank["planning_s"].get<double>(), s["planning_s"].get<double>());
    }
  }
  EXPECT_EQ(doc["strategies"][0]["executor"], strategies[0] == "a2av" ? "alltoallv" : "plan");
}

bool have(const std::string& path) { return fs::exists(path); }
#define NEED(path) \
  if (!have(path)) GTEST_SKIP() << "real traces absent: " << (path)

TEST(MpiRun, DeepSeekV2Lite8Ranks) {
  NEED(kTraces + "/deepseek-v2-lite-puffin");
  expect_correct({trace_subset(kTraces + "/deepseek-v2-lite-puffin", 6), "deepseek-v2-lite", 8, 4});
}

TEST(MpiRun, DeepSeekV2Lite2RanksOnTwoNodes) {
  NEED(kTraces + "/deepseek-v2-lite-puffin");
  expect_correct({trace_subset(kTraces + "/deepseek-v2-lite-puffin", 6), "deepseek-v2-lite", 2, 1});
}

TEST(MpiRun, Llama4Maverick4Ranks) {
  NEED(kTraces + "/llama4-maverick-mmlu");
  expect_correct({trace_subset(kTraces + "/llama4-maverick-mmlu/abstract_algebra", 10), "llama4-maverick", 4, 2});
}

TEST(MpiRun, Mixtral8Ranks) {
  NEED(kTraces + "/mixtral-8x7b-gsm8k");
  expect_correct({kTraces + "/mixtral-8x7b-gsm8k", "mixtral-8x7b", 8, 2});
}

TEST(MpiRun, Mixtral2RanksOneNode) {
  NEED(kTraces + "/mixtral-8x7b-gsm8k");
  expect_correct({kTraces + "/mixtral-8x7b-gsm8k", "mixtral-8x7b", 2, 2});
}

// zepp+swaps under MPI reports its swap rule as zepp simulate does (it printed nothing): the JSON
// "swaps" object holds the decision's own figures, the table says how many were accepted, and
// strategies without the rule carry no "swaps".
TEST(MpiRun, SwapRuleIsReported) {
  NEED(kTraces + "/deepseek-v2-lite-puffin");
  const Case c{trace_subset(kTraces + "/deepseek-v2-lite-puffin", 6), "deepseek-v2-lite", 8, 4, 256, 128, 1.0};
  const StrategyDecision d = inputs_of(c).decide("zepp+swaps");
  ASSERT_TRUE(d.swap.has_value());

  const Launch r = mpirun(c.np, c.args() + " --strategy zepp,zepp+swaps");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_FALSE(doc["strategies"][0].contains("swaps"));
  const auto& s = doc["strategies"][1]["swaps"];
  EXPECT_EQ(s["accepted"].get<int>(), d.swap->accepted);
  EXPECT_EQ(s["refused"].get<int>(), d.swap->refused);
  EXPECT_EQ(s["triggered"].get<bool>(), d.swap->triggered);
  EXPECT_EQ(s["horizon"].get<int>(), kDefaultSwapHorizon);
  EXPECT_LT(doc["strategies"][1]["max_rel_error"].get<double>(), 1e-5);

  std::string table_args = c.args();
  table_args.replace(table_args.find("--format json"), 13, "--format table");
  const Launch tab = mpirun(c.np, table_args + " --strategy zepp+swaps");
  ASSERT_EQ(tab.status, 0) << tab.err << tab.out;
  EXPECT_NE(tab.out.find("zepp+swaps    swaps: " + std::to_string(d.swap->accepted) + " accepted, " +
                         std::to_string(d.swap->refused) + " refused as not paying"),
            std::string::npos)
      << tab.out;

  EXPECT_NE(tab.out.find("not in the measured ms above"), std::string::npos) << tab.out;
  // --layers: each layer's JSON carries its rule, the table sums them over the layers; --swap-horizon
  // reaches the rule as in zepp simulate.
  const Launch stack = mpirun(c.np, c.args() + " --strategy zepp+swaps --layers 1-2 --swap-horizon 3");
  ASSERT_EQ(stack.status, 0) << stack.err << stack.out;
  int accepted = 0;
  const auto stack_doc = nlohmann::json::parse(stack.out);
  for (const auto& l : stack_doc["strategies"][0]["layers"]) {
    ASSERT_TRUE(l.contains("swaps")) << l;
    EXPECT_EQ(l["swaps"]["horizon"].get<int>(), 3);
    accepted += l["swaps"]["accepted"].get<int>();
  }
  const Launch stack_tab = mpirun(c.np, table_args + " --strategy zepp+swaps --layers 1-2 --swap-horizon 3");
  ASSERT_EQ(stack_tab.status, 0) << stack_tab.err << stack_tab.out;
  EXPECT_NE(stack_tab.out.find("zepp+swaps    swaps: " + std::to_string(accepted) + " accepted"), std::string::npos)
      << stack_tab.out;
  EXPECT_NE(stack_tab.out.find(" of 2 layers"), std::string::npos) << stack_tab.out;
}

// Elastic EP: node 1 of 4 (2 GPUs each) lost; the 6 surviving ranks run the full cluster's batch
// with every GPU keeping its slots, and outputs still equal the dense reference.
TEST(MpiRun, DegradedPlacementOnSixRanks) {
  NEED(kTraces + "/mixtral-8x7b-gsm8k");
  const Case c{kTraces + "/mixtral-8x7b-gsm8k", "mixtral-8x7b", 6, 2};
  // a2av (contiguous EP) needs E % G == 0, which 8 experts on 6 GPUs are not.
  const Launch r = mpirun(6, c.args() + " --strategy eplb,zepp --nodes 4 --failed-nodes 1");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ranks"], 6);
  EXPECT_EQ(doc["nodes"], 3);
  const auto& d = doc["degraded"];
  EXPECT_EQ(d["failed_nodes"], nlohmann::json({1}));
  EXPECT_EQ(d["nodes_before"], 4);
  EXPECT_EQ(d["slots_per_gpu"], 3);  // ceil(8 / 8) + R = 2, kept by every surviving GPU
  EXPECT_GE(d["zepp_rebalance"]["min_replicas"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(d["size_mb_per_gpu_after"].get<double>(), c.size_mb * 4 / 3);  // the same batch on fewer GPUs
  for (const auto& s : doc["strategies"]) {
    EXPECT_LT(s["max_rel_error"].get<double>(), 1e-5) << s["strategy"];
    EXPECT_TRUE(s["bytes_match_plan"].get<bool>()) << s["strategy"];
  }
  const Launch bad = mpirun(6, c.args() + " --strategy zepp --failed-nodes 7");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--failed-nodes: node 7 is outside [0, 4)"), std::string::npos) << bad.err;
}

TEST(MpiRun, SameInputsGiveIdenticalBytesAndOutputs) {
  NEED(kTraces + "/deepseek-v2-lite-puffin");
  const Case c{trace_subset(kTraces + "/deepseek-v2-lite-puffin", 6), "deepseek-v2-lite", 4, 2};
  const std::string args = c.args() + " --strategy a2av,zepp --repeat 2";  // --repeat checks within a launch too
  const Launch a = mpirun(4, args), b = mpirun(4, args), other = mpirun(4, args + " --data-seed 99");
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  ASSERT_EQ(other.status, 0) << other.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out), jo = nlohmann::json::parse(other.out);
  for (int s = 0; s < 2; ++s) {
    EXPECT_EQ(ja["strategies"][s]["output_checksum"], jb["strategies"][s]["output_checksum"]);
    EXPECT_EQ(ja["strategies"][s]["wire_checksum"], jb["strategies"][s]["wire_checksum"]);
    EXPECT_NE(ja["strategies"][s]["output_checksum"], jo["strategies"][s]["output_checksum"]);  // the checksum sees the data
  }
}

TEST(MpiRun, PacedNicSendsTakeAtLeastBytesOverRate) {
  NEED(kTraces + "/deepseek-v2-lite-puffin");
  const Case c{trace_subset(kTraces + "/deepseek-v2-lite-puffin", 6), "deepseek-v2-lite", 4, 2};
  const double gbps = 0.05;  // 50 MB/s: tens of kB per rank take about a millisecond
  const Launch r = mpirun(4, c.args() + " --strategy a2av,zepp --nic-gbps " + std::to_string(gbps));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["nic_gbps"].get<double>(), gbps);
  for (const auto& s : doc["strategies"]) {
    EXPECT_LT(s["max_rel_error"].get<double>(), 1e-5);
    double most = 0;
    for (const auto& rank : s["ranks"]) {
      const double floor_s = rank["nic_bytes"].get<double>() / (gbps * 1e9);
      EXPECT_GE(rank["total_s"].get<double>(), floor_s) << s["strategy"] << " rank " << rank["rank"];
      most = std::max(most, floor_s);
    }
    EXPECT_GT(most, 0.0);
    EXPECT_GE(s["wall_s"].get<double>(), most);
  }
}

TEST(MpiRun, MalformedTraceEndsEveryRankWithTheMessage) {
  const std::string bad = ::testing::TempDir() + "zepp_mpi_bad_trace_" + std::to_string(getpid()) + ".json";
  std::ofstream(bad) << "[{\"1\": [[3, 4], [5,";  // truncated selection JSON
  const Launch r = mpirun(4, "--trace " + bad + " --model mixtral-8x7b --gpus-per-node 2 --hidden 16 --ffn 8", 60);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.status, -1) << "killed by the time limit: a rank hung";
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 60);
}

TEST(MpiRun, RankCountMustBeAMultipleOfGpusPerNode) {
  const Launch r = mpirun(4, "--model mixtral-8x7b --gpus-per-node 3 --hidden 16 --ffn 8", 60);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--gpus-per-node: 3 does not divide the 4 MPI ranks"), std::string::npos) << r.err;
  const Launch n = mpirun(2, "--model mixtral-8x7b --gpus-per-node 1 --nodes 3 --hidden 16 --ffn 8", 60);
  EXPECT_NE(n.status, 0);
  EXPECT_NE(n.err.find("--nodes"), std::string::npos) << n.err;
  // Without mpirun (one rank) the message says how to start it, with a rank count that fits.
  const auto alone = testing::run_zepp("run --model mixtral-8x7b --nodes 2 --hidden 16 --ffn 8");
  EXPECT_EQ(alone.status, 2);
  EXPECT_NE(alone.err.find("--gpus-per-node: 4 does not divide the 1 MPI ranks (nodes = ranks / GPUs per node); zepp run "
                           "runs one MPI rank per GPU: start it as mpirun -np 8 zepp run ..."),
            std::string::npos) << alone.err;
}


// The time estimate counts every repeat: a billion runs of a small layer are refused before MPI
// starts, naming the budget and --repeat (they ran unchecked for as long as they took).
TEST(MpiRun, RepeatsCountInTheTimeBudget) {
  const Launch r = mpirun(2, "--model mixtral-8x7b --gpus-per-node 2 --hidden 64 --ffn 64 --size-mb 0.01 --strategy a2av "
                             "--repeat 1000000000", 60);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--max-minutes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("or a smaller --repeat"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 60);
}

// Every rank reads the same trace: a reading warning (an empty file skipped) prints once, from
// rank 0, not once per rank.
TEST(MpiRun, TraceWarningPrintsOnce) {
  testing::TempDir dir;
  std::string tokens;
  for (int t = 0; t < 64; ++t) tokens += (t ? "," : "") + std::string("[") + std::to_string(t % 8) + "," + std::to_string((t + 3) % 8) + "]";
  dir.write("prompt_1.json", "[{\"1\":[" + tokens + "]}]");
  dir.write("prompt_2.json", "");
  const Launch r = mpirun(4, "--trace " + dir.path() + " --model mixtral-8x7b --gpus-per-node 2 --hidden 16 --ffn 8 --strategy zepp", 60);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::count_of(r.err, "skipped 1 empty file"), 1u) << r.err;
}

// Issue 15: a bad argument on 4 ranks is one message, exit status 2 on every rank (mpirun passes
// on the first non-zero one), and no MPI_Abort banner. Three kinds: a flag CLI11 rejects, a flag
// checked before MPI_Init, a flag that needs the rank count (checked after, reported by rank 0).
TEST(MpiRun, BadArgumentOnFourRanksIsOneMessage) {
  struct Case {
    std::string args, flag;
  };
  for (const Case& c : {Case{"--model mixtral-8x7b --seed '' --hidden 16 --ffn 8", "--seed"},
                        Case{"--model mixtral-8x7b --tolerance -1 --hidden 16 --ffn 8", "--tolerance"},
                        Case{"--model mixtral-8x7b --gpus-per-node 3 --hidden 16 --ffn 8", "--gpus-per-node"},
                        Case{"--model mixtral-8x7b --strategy zepp --swap-horizon 4 --hidden 16 --ffn 8", "--swap-horizon"}}) {
    const Launch r = mpirun(4, c.args, 60);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(testing::count_of(r.err, c.flag), 1u) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("MPI_ABORT"), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_LT(r.seconds, 60);
  }
}

}  // namespace
}  // namespace zepp

namespace zepp {
namespace {

// Issue 14: three consecutive MoE layers on 4 ranks (2 nodes x 2), each layer's rows after a
// residual add and a norm feeding the next, each with its own routing from the trace; the
// stack's output equals the dense reference stack.
TEST(MpiRun, ThreeLayerStackMatchesTheDenseReference) {
  NEED(kTraces + "/deepseek-v2-lite-puffin");
  const Case c{trace_subset(kTraces + "/deepseek-v2-lite-puffin", 6), "deepseek-v2-lite", 4, 2};
  const Launch r = mpirun(4, c.args() + " --strategy a2av,zepp,sglang --layers 1-3");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["layers"], nlohmann::json({1, 2, 3}));
  ASSERT_EQ(doc["strategies"].size(), 3u);
  for (const auto& s : doc["strategies"]) {
    SCOPED_TRACE(s["strategy"].get<std::string>());
    EXPECT_LT(s["max_rel_error"].get<double>(), 1e-4);
    ASSERT_EQ(s["layers"].size(), 3u);
    double sum = 0;
    for (const auto& l : s["layers"]) {
      EXPECT_LT(l["max_rel_error"].get<double>(), 1e-4);
      EXPECT_GT(l["nic_bytes"].get<double>(), 0.0);  // two nodes: every layer crosses NICs
      sum += l["metadata_s"].get<double>() + l["planning_s"].get<double>() + l["wall_s"].get<double>() +
             l["norm_s"].get<double>();
      // zepp routes each rank's tokens from the all-gathered counts (checked equal to the
      // global routing by the run itself); a2av decides nothing per batch.
      EXPECT_EQ(l["planning_s"].get<double>() > 0, s["strategy"] == "zepp");
    }
    EXPECT_DOUBLE_EQ(s["total_s"].get<double>(), sum);
  }
}

TEST(MpiRun, StackRejectsALayerAbsentFromTheTrace) {
  NEED(kTraces + "/deepseek-v2-lite-puffin");
  const Case c{trace_subset(kTraces + "/deepseek-v2-lite-puffin", 6), "deepseek-v2-lite", 4, 2};
  const Launch bad = mpirun(4, c.args() + " --strategy zepp --layers 0");  // layer 0 is dense: not in the trace
  EXPECT_EQ(bad.status, 2);
  // As zepp simulate --layers says it: the layers the trace has are listed.
  EXPECT_NE(bad.err.find("layer 0 is not in the trace; its MoE layers are 1, 2, 3"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace zepp

namespace zepp {
namespace {

// A placement that cannot fit the ranks' cluster (zepp's 8 + 2 slots on one GPU for 8 experts) is
// refused before any rank runs, naming what to change, as zepp simulate refuses it: it came from
// rank 0 mid-run ("zepp run (rank 0): error: extra_slots: ...") with an MPI_Abort banner.
TEST(MpiRun, PlacementThatCannotFitIsOneMessage) {
  const Launch r = mpirun(1, "--model mixtral-8x7b --gpus-per-node 1 --hidden 16 --ffn 8 --strategy a2av,zepp", 60);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(testing::count_of(r.err, "zepp: invalid argument: strategies: zepp cannot place 8 experts on 1 x 1 GPUs "
                                     "(change the ranks (mpirun -np), --gpus-per-node, --experts or --extra-slots): "
                                     "extra_slots: 2 gives 10 slots per GPU, more than the 8 experts"),
            1u) << r.err;
  EXPECT_EQ(r.err.find("MPI_ABORT"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");  // a2av did not run first
}

// --layers' own checks and its trace are read before any rank runs: one message, exit status 2,
// no MPI_Abort banner (each rank printed the message, then the banner followed).
TEST(MpiRun, StackInputErrorsAreOneMessage) {
  testing::TempDir dir;
  std::string tokens;
  for (int t = 0; t < 64; ++t) tokens += (t ? "," : "") + std::string("[") + std::to_string(t % 8) + "," + std::to_string((t + 3) % 8) + "]";
  const std::string good = dir.path() + "/good";
  dir.write("good/prompt_1.json", "[{\"1\":[" + tokens + "],\"3\":[" + tokens + "]}]");
  dir.write("bad/prompt_1.json", "[{\"1\":[[3, 4], [5,");
  const std::string base = "--model mixtral-8x7b --gpus-per-node 1 --hidden 16 --ffn 8 --strategy zepp --layers 1,3 ";
  struct Case {
    std::string args, message;
  };
  for (const Case& c : {Case{"", "zepp: invalid argument: --trace: --layers runs the MoE layers of a trace; name one"},
                        Case{"--trace " + good + " --history " + good,
                             "zepp: invalid argument: --history: is not used with --layers"},
                        Case{"--trace " + dir.path() + "/bad", dir.path() + "/bad/prompt_1.json"}}) {
    const Launch r = mpirun(2, base + c.args, 60);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(testing::count_of(r.err, c.message), 1u) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.find("MPI_ABORT"), std::string::npos) << c.args << "\n" << r.err;
  }
  // The good trace still runs, both layers.
  const Launch ok = mpirun(2, base + "--trace " + good + " --format json", 60);
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["layers"], nlohmann::json({1, 3}));
}

}  // namespace
}  // namespace zepp
