// Issue 23: every reproduction of the hostile-user sweep exits with status 2 and a message naming
// the flag or file the user wrote, having done little work: at most kQuick CPU seconds (CPU time,
// not wall time, so that a loaded machine cannot fail the test) and 200 MB resident.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp {
namespace {

using testing::kMaxRssMb;
using testing::kQuick;
using testing::ProgramResult;
using testing::run_zepp;
using testing::write_file;

// 100,000 levels, as the sweep's files: `open` around `inner`, closed again.
std::string deep(const std::string& open, const std::string& inner, const std::string& close) {
  std::string s;
  for (int i = 0; i < 100000; ++i) s += open;
  s += inner;
  for (int i = 0; i < 100000; ++i) s += close;
  return s;
}

// Exit status 2, every one of `names` in the message, little work done.
void expect_refused(const std::string& args, std::initializer_list<std::string> names) {
  const ProgramResult r = run_zepp(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  for (const auto& n : names) EXPECT_NE(r.err.find(n), std::string::npos) << args << ": no '" << n << "' in\n" << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_LT(r.cpu_seconds, kQuick) << args;
  EXPECT_LT(r.peak_rss_mb, kMaxRssMb) << args;
}

std::string load_file() {
  return write_file("load.json", R"({"weight": [[5, 3, 2, 1]], "num_replicas": 8, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
}

TEST(Hardening, DeepNestingIsRefusedByEveryReaderNamingTheFileAndOffset) {
  const std::string load = write_file("deep_load.json", "{\"weight\": " + deep("[", "1", "]") + "}");
  // The object is level 1, the list opened at byte 11 level 2: level 65 opens at byte 74.
  expect_refused("place --load " + load, {load + ": byte 74: expected lists or objects nested at most 64 deep"});
  const std::string eplb = write_file("deep_eplb.json", "{\"phy2log\": " + deep("[", "0", "]") + "}");
  expect_refused("place --load " + load_file() + " --previous " + eplb, {eplb + ": byte", "nested at most 64"});
  const std::string sglang = write_file("deep_sglang.json", "{\"physical_to_logical_map\": " + deep("[", "0", "]") + "}");
  expect_refused("place --load " + load_file() + " --previous " + sglang + " --previous-format sglang", {sglang + ": byte"});
  const std::string trtllm = write_file("deep_trtllm.yaml", "num_slots: 8\ninitial_global_assignments: " + deep("{0: ", "[0]", "}") + "\n");
  expect_refused("place --load " + load_file() + " --previous " + trtllm + " --previous-format trtllm", {trtllm + ": byte"});
  const std::string topo = write_file("deep_topology.yaml", "nvlink: " + deep("[", "1", "]") + "\n");
  expect_refused("simulate --executor estimate --topology " + topo, {topo + ": byte", "nested at most 64"});
  const std::string trace = write_file("deep_trace.json", deep("[", "", "]"));
  expect_refused("simulate --executor estimate --model mixtral-8x7b --nodes 1 --gpus-per-node 4 --trace " + trace,
                 {trace + ": byte 64: expected lists or objects nested at most 64 deep"});
  const std::string jsonl = write_file("deep.jsonl", "{\"problem_id\": \"a\", \"layer\": 0, \"token_idx\": 0, \"experts\": " +
                                                         deep("[", "0", "]") + "}\n");
  expect_refused("place --model mixtral-8x7b --nodes 1 --gpus-per-node 4 --trace " + jsonl, {jsonl + ": byte"});
}

TEST(Hardening, DuplicateKeyInATopologyFileIsAnError) {
  const std::string topo = write_file("dup.yaml", "base: a100\nnvlink:\n  bandwidth: 300 GB/s\n  bandwidth: 1 GB/s\n");
  expect_refused("simulate --executor estimate --topology " + topo, {topo + ":4: expected each key once per mapping, got 'bandwidth' twice"});
}

// --experts 10^7 ran past 120 s: Zepp's placement refinement is quadratic in E. The estimate
// says so, with the figure, before anything is built.
TEST(Hardening, ExpertCountsBeyondTheTimeBudgetAreRefusedWithTheEstimate) {
  for (const char* args : {"simulate --experts 10000000", "simulate --experts 10000000 --executor estimate",
                           "simulate --experts 1000000", "run --experts 10000000"})
    expect_refused(args, {"--max-minutes: this run needs about", " s (", "more than the 3.6 k s allowed", "--experts"});
  // Paced sends take wall time, not CPU: --nic-gbps 1e-6 ran for minutes without a word. 8,192
  // tokens x top-6 x 64 fp32 x 2 phases x 2 strategies at 1 kB/s: 50,331.6 s.
  expect_refused("run --model deepseek-v2-lite --hidden 64 --ffn 64 --size-mb 1 --nic-gbps 1e-6 --strategy a2av,zepp",
                 {"--nic-gbps: at 1e-06 GB/s a rank's inter-node rows", "may take up to 5.03e+04 s, more than "
                  "--max-minutes allows (3600 s)"});
  // The budget is a flag: a smaller one refuses a smaller run, naming it.
  expect_refused("simulate --experts 3000 --max-minutes 0.001", {"--max-minutes: this run needs about"});
  expect_refused("simulate --max-minutes nan", {"--max-minutes"});
}

// The sweep's reproductions; every float flag of every subcommand: float_flags_cli_test.cpp.
TEST(Hardening, FloatFlagsMustBeFiniteAndInRange) {
  for (const char* flag : {"--kernel-launch-us", "--nvlink-gbps", "--nic-gbps", "--peak-tflops", "--hbm-tbps"})
    expect_refused(std::string("simulate --executor estimate ") + flag + " 1e308",
                   {std::string(flag) + ": expected a number in ", ", 1e+06]", "got 1e+308"});
  // A link latency is 0 or at least the simulator's 1e-12 s precision: 1e-12 us crashed SimGrid.
  for (const char* flag : {"--nvlink-latency-us", "--nic-latency-us"})
    for (const auto& [value, said] : {std::pair{"1e308", "1e+308"}, std::pair{"1e-12", "1e-12"}})
      expect_refused(std::string("simulate ") + flag + " " + value,
                     {std::string(flag) + ": expected 0 or a number in [1e-06, 1e+06] us, got " + said});
  expect_refused("calibrate --model kimi-k2 --nic-gbps 1e308", {"--nic-gbps: expected a number in [1e-06, 1e+06] GB/s, got 1e+308"});
  expect_refused("place --load " + load_file() + " --max-moved-mb nan", {"--max-moved-mb: expected a number in [0, 1e+09] MB per layer, got nan"});
  // Numbers in lists typed as text: checked before MPI starts.
  expect_refused("calibrate --model kimi-k2 --message-bytes 64,inf", {"--message-bytes: expected a comma-separated ascending list of at least 2 whole numbers in [1, 268435456], got 'inf'"});
  expect_refused("calibrate --model kimi-k2 --tokens 4,1", {"--tokens: expected a comma-separated ascending list", "got 4,1"});
}

TEST(Hardening, NegativeSeedsAndCountsNameTheirFlag) {
  expect_refused("calibrate --data-seed -1", {"--data-seed", "-1"});
  expect_refused("run --extra-slots -1", {"--extra-slots: expected a number in [0, 65536], got -1"});
}

// The synthetic workload has no layers: --layer 5 only relabelled its output "layer 5", and
// --skip-invalid without a trace did nothing; zepp run also took --zipf beside --trace and
// --history-fraction beside --history (or without a trace), which zepp simulate refuses.
TEST(Hardening, WorkloadFlagsOfAnotherWorkloadAreRefusedBySimulateAndRun) {
  const std::string trace = write_file("modes.jsonl", "");  // never read: refused before
  const std::string no_trace =
      "only acts with --trace (the synthetic workload has no layers and reads no files); leave it out or add that";
  for (const std::string cmd : {"simulate --executor estimate ", "run "}) {
    SCOPED_TRACE(cmd);
    expect_refused(cmd + "--layer 5", {"zepp: invalid argument: --layer: " + no_trace});
    expect_refused(cmd + "--skip-invalid", {"zepp: invalid argument: --skip-invalid: " + no_trace});
    expect_refused(cmd + "--trace " + trace + " --model mixtral-8x7b --zipf 2",
                   {"zepp: invalid argument: --zipf: only acts with the synthetic workload (no --trace); leave it out or "
                    "add that"});
    expect_refused(cmd + "--history-fraction 0.3",
                   {"zepp: invalid argument: --history-fraction: only acts with --trace and no --history"});
    expect_refused(cmd + "--trace " + trace + " --history " + trace + " --model mixtral-8x7b --history-fraction 0.3",
                   {"zepp: invalid argument: --history-fraction: only acts with --trace and no --history"});
  }
  // A load-only trace has no requests to split: --history-fraction 0.9 gave the default's figures.
  const std::string counts =
      write_file("counts.json", R"({"num_experts": 8, "expert_usage_by_layer": {"0": {"0": 5, "1": 3, "2": 1}}})");
  const std::string load = "simulate --executor estimate --nodes 2 --gpus-per-node 2 --strategies a2av "
                           "--model mixtral-8x7b --trace " + counts;
  expect_refused(load + " --history-fraction 0.9",
                 {"zepp: invalid argument: --history-fraction: only acts with a trace of per-token selections (it "
                  "splits its requests); " + counts + " holds per-expert loads only; leave it out"});
  EXPECT_EQ(run_zepp(load).status, 0);
}

// --eplb-groups shapes EPLB's placement only: beside a2av and zepp it was ignored, even a group
// count the experts do not divide.
TEST(Hardening, EplbGroupsWithoutAnEplbPlacementIsRefused) {
  expect_refused("simulate --executor estimate --nodes 2 --strategies a2av,zepp --eplb-groups 7",
                 {"zepp: invalid argument: --eplb-groups: only acts with a strategy on EPLB's placement in --strategies "
                  "(eplb, comet+eplb, zepp/eplb-placement); leave it out or add that"});
  for (const std::string s : {"eplb", "comet+eplb", "zepp/eplb-placement"}) {
    const ProgramResult r =
        run_zepp("simulate --executor estimate --nodes 2 --size-mb 0.1 --format csv --eplb-groups 2 --strategies " + s);
    EXPECT_EQ(r.status, 0) << s << "\n" << r.err;
    // 256 groups do not divide kimi-k2's 384 experts: refused before work, naming the flag
    // (zepp/eplb-placement's was "num_groups: ..." alone, after reading the workload).
    expect_refused("simulate --executor estimate --nodes 2 --size-mb 0.1 --eplb-groups 256 --strategies " + s,
                   {"zepp: invalid argument: strategies: " + s.substr(0, s.find('/')) +
                    " cannot place 384 experts on 2 x 4 GPUs (change --nodes, --gpus-per-node, --experts, --extra-slots "
                    "or --eplb-groups): num_groups: 256 does not divide the 384 experts"});
  }
}

// C_NIC (--nic-slack) bounds Zepp's NIC split only: beside a2av and eplb it changed nothing.
TEST(Hardening, NicSlackWithoutAZeppStrategyIsRefused) {
  expect_refused("simulate --executor estimate --nodes 2 --strategies a2av,eplb --nic-slack 5",
                 {"zepp: invalid argument: --nic-slack: only acts with a Zepp strategy in --strategies (zepp, zepp+swaps, "
                  "zepp+hot, zepp-overlap: equation (2)'s NIC split); leave it out or add that"});
  expect_refused("run --strategy a2av,eplb --nic-slack 5",
                 {"zepp: invalid argument: --nic-slack: only acts with a Zepp strategy in --strategy (zepp, zepp+swaps, "
                  "zepp-overlap: equation (2)'s NIC split); leave it out or add that"});
  const ProgramResult r = run_zepp("simulate --executor estimate --nodes 2 --size-mb 0.1 --strategies a2av,zepp/no-merge "
                                   "--nic-slack 5");
  EXPECT_EQ(r.status, 0) << r.err;
}

// R extra slots per GPU only act where experts are replicated: --strategies a2av --extra-slots 6
// ran plain EP unchanged.
TEST(Hardening, ExtraSlotsWithoutAReplicatingStrategyIsRefused) {
  const std::string why = "only acts with a strategy that replicates experts in --strateg";
  const std::string which = " (R extra slots per GPU; a2av, fast, comet, sglang and zepp-overlap keep one replica per "
                            "expert); leave it out or add that";
  expect_refused("simulate --executor estimate --nodes 2 --strategies a2av,fast,comet,sglang,zepp-overlap/no-merge "
                 "--extra-slots 6",
                 {"zepp: invalid argument: --extra-slots: " + why + "ies" + which});
  expect_refused("run --strategy a2av,fast --extra-slots 6", {"zepp: invalid argument: --extra-slots: " + why + "y" + which});
  for (const std::string s : {"eplb", "zepp/no-merge", "epic/zepp-placement", "halo-q"}) {
    const ProgramResult r =
        run_zepp("simulate --executor estimate --nodes 2 --size-mb 0.1 --strategies a2av," + s + " --extra-slots 1");
    EXPECT_EQ(r.status, 0) << s << "\n" << r.err;
  }
}

// Flags that act only in another mode were accepted and ignored.
TEST(Hardening, FlagsWithoutEffectInTheChosenModeAreRefusedNamingTheMode) {
  expect_refused("simulate --drift-period -1", {"--drift-period: only acts with --iterations N"});
  // zepp run took these and did nothing with them (found by a fresh-user review).
  expect_refused("run --layers all --layer 3", {"--layer: only acts with one layer (--layers picks the layers itself)"});
  expect_refused("run --link-sharing serial", {"--link-sharing: only acts with --predict"});
  // run's unknown-strategy message listed iser-moe and zepp+hot, which it then refuses as sim-only.
  const ProgramResult r = run_zepp("run --strategy nosuch");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--strategy: unknown strategy 'nosuch', expected one of a2av, eplb, "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("iser-moe"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("zepp+hot"), std::string::npos) << r.err;
  expect_refused("simulate --drift-groups 0", {"--drift-groups: only acts with --iterations N"});
  expect_refused("simulate --iterations 0", {"--iterations: expected a number of batches >= 1 (leave it out for one layer), got 0"});
  const std::string serve = "simulate --iterations 2 --trace x --model kimi-k2 ";
  expect_refused(serve + "--drift-period 3", {"--drift-period: only acts with --drift rotating"});
  expect_refused(serve + "--drift rotating --drift-period 0", {"--drift-period: expected iterations per dataset >= 1, got 0"});
  expect_refused(serve + "--drift only --drift-groups 0", {"--drift-groups: expected a number of groups >= 1, got 0"});
  // Zepp's ablations on baselines alone were ignored and printed as plain rows.
  expect_refused("simulate --strategies a2av,epic --no-merge",
                 {"--no-merge: only acts with a Zepp strategy in --strategies (zepp, zepp+swaps, zepp+hot, zepp-overlap)"});
  expect_refused("simulate --strategies zepp --swap-horizon 4", {"--swap-horizon: only acts with zepp+swaps in --strategies"});
  expect_refused("simulate --strategies zepp-overlap --no-locality",
                 {"--no-locality: only acts with a Zepp strategy that routes by locality in --strategies"});
}

// More groups than the trace has requests were clamped to one group per request (and the header
// listed 300 groups twice).
TEST(Hardening, MoreDriftGroupsThanRequestsAreRefused) {
  const std::string trace = testing::shared_dir() + "/data/traces/deepseek-v2-lite-puffin";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "real traces absent: " << trace;
  expect_refused("simulate --trace " + trace + " --model deepseek-v2-lite --nodes 2 --gpus-per-node 2 --size-mb 0.1 "
                 "--iterations 2 --drift only --dataset group1 --drift-groups 100000",
                 {"--drift-groups asks for 100000 groups of requests, but the trace has 300 requests", "give at most 300"});
}

// `experiment validate` checked its workloads, rank counts, shape and launcher only after
// calibrating (minutes of MPI runs), or failed inside a run with an internal error.
TEST(Hardening, ValidateChecksEveryFlagBeforeCalibrating) {
  const std::string out = "experiment validate --out " + (testing::scratch("validate") / "v.md").string() +
                          " --results " + (testing::scratch("validate") / "r").string() + " ";
  // A folder with every workload's trace folder (empty: the flags are refused before any is read),
  // so the test does not need the shared traces.
  const std::filesystem::path traces = testing::scratch("validate") / "traces";
  for (const char* folder : {"deepseek-v2-lite-puffin", "llama4-maverick-mmlu", "mixtral-8x7b-gsm8k"})
    std::filesystem::create_directories(traces / folder);
  const std::string base = out + "--traces " + traces.string() + " ";
  expect_refused(base + "--workloads bogus", {"--workloads: unknown workload 'bogus', expected deepseek, llama4 or mixtral"});
  expect_refused(base + "--workloads deepseek,deepseek", {"--workloads: names 'deepseek' twice"});
  expect_refused(base + "--ranks 4,4", {"--ranks: names 4 twice"});
  expect_refused(base + "--ranks 0", {"--ranks: expected even rank counts in [2, 1024] (2 nodes of ranks/2 GPUs), got 0"});
  expect_refused(base + "--hidden 0", {"--hidden: expected [1, 65536], got 0"});
  expect_refused(base + "--mpirun /nonexistent/mpirun", {"--mpirun: cannot find the program '/nonexistent/mpirun'"});
  expect_refused(out + "--traces /nonexistent", {"--traces: trace /nonexistent/"});
}

TEST(Hardening, ErrorsNameTheFlagNotTheInternalField) {
  const ProgramResult r = run_zepp("simulate --nvlink-gbps 1e308");
  EXPECT_EQ(r.err.find("topo:"), std::string::npos) << r.err;
  EXPECT_EQ(run_zepp("calibrate --model kimi-k2 --nic-gbps 1e308").err.find("nic_bytes_per_s"), std::string::npos);
  const ProgramResult moved = run_zepp("place --load " + load_file() + " --max-moved-mb nan");
  EXPECT_EQ(moved.err.find("load.json"), std::string::npos) << moved.err;  // the flag is wrong, not the file
  // 384 experts, 288 slots on 16 GPUs: 288 is a multiple of 16; the slots are too few.
  std::string w = "[";
  for (int e = 0; e < 384; ++e) w += (e ? ", " : "") + std::string("1");
  const std::string load = write_file("load384.json", "{\"weight\": [" + w + "]], \"num_replicas\": 288, \"num_groups\": 1, "
                                                      "\"num_nodes\": 2, \"num_gpus\": 16}");
  expect_refused("place --policy zepp --load " + load,
                 {"num_replicas: expected at least ceil(E / num_gpus) = 24 slots per GPU (384 in all for 384 experts on 16 GPUs), "
                  "got 288 (18 per GPU)"});
  EXPECT_EQ(run_zepp("place --policy zepp --load " + load).err.find("not a multiple"), std::string::npos);
}

// zepp run planned on every rank, then refused "plan: task 490: in-switch multicast and
// shared-expert tasks (iser-moe) run on the sim executor only": now before MPI starts.
TEST(Hardening, RunRefusesSimOnlyStrategiesNamingTheFlag) {
  expect_refused("run --strategy iser-moe", {"--strategy: iser-moe runs on the sim executor only (zepp simulate"});
  expect_refused("run --strategy zepp,zepp+hot/no-multicast",
                 {"--strategy: zepp+hot/no-multicast runs on the sim executor only"});
}

// iser-moe on 4 x 72 GPUs (384 experts) said "topo: the 288 GPUs must divide the 384 experts
// (contiguous homes)": the placement check before any work now knows iser-moe and zepp+hot.
TEST(Hardening, IserMoePlacementThatDoesNotDivideNamesTheFlags) {
  const ProgramResult gb = run_zepp("simulate --topology gb200-nvl72 --strategies iser-moe");
  EXPECT_EQ(gb.status, 2) << gb.err;
  EXPECT_NE(gb.err.find("strategies: iser-moe cannot place 384 experts on 4 x 72 GPUs (change --nodes, --gpus-per-node"),
            std::string::npos) << gb.err;
  EXPECT_EQ(gb.err.find("topo:"), std::string::npos) << gb.err;
}

// zepp+hot/no-resident on a topology without multicast was refused as "zepp+hot needs ...".
TEST(Hardening, ZeppHotNoResidentRefusalNamesTheStrategyAsked) {
  expect_refused("simulate --strategies zepp+hot/no-resident",
                 {"--topology: zepp+hot/no-resident needs NVSwitch nodes with in-switch multicast, and a100 has none "
                  "(e.g. --topology dgx-h100"});
}

// iser-moe on a topology without multicast was refused as "strategy: ...", an internal name.
TEST(Hardening, IserMoeWithoutMulticastNamesTheTopologyFlag) {
  expect_refused("simulate --strategies iser-moe",
                 {"--topology: iser-moe needs NVSwitch nodes with in-switch multicast, and a100 has none "
                  "(e.g. --topology dgx-h100; halo-q is the point-to-point variant)"});
}

// 2 x 10^9 tokens per rank ended in "out of memory (try a smaller --size-mb or fewer nodes)",
// flags iser-replay does not have.
TEST(Hardening, IserReplayTokensBeyondTheBatchLimitAreRefused) {
  expect_refused("experiment iser-replay --workloads deepseek --tokens-per-rank 2000000000 --out " + ::testing::TempDir(),
                 {"--tokens-per-rank: expected at most 1048576 tokens per rank at EP 4 (4194304 per iteration), got 2000000000"});
}

// The library's bounds reach the user under the flags they wrote, not "helper_slots:".
TEST(Hardening, IserReplayBoundsNameTheFlag) {
  expect_refused("experiment iser-replay --helper-slots 1000000 --out " + ::testing::TempDir(),
                 {"--helper-slots: must be in [1, 64] (got 1000000)"});
  expect_refused("experiment iser-replay --ep 6,2000 --out " + ::testing::TempDir(),
                 {"--ep: EP degrees must be even and in [4, 1024] (got 2000)"});
}

TEST(Hardening, IserReplayCountsBelowOneNameTheFlagWithoutCli11sRange) {
  for (const char* flag : {"--tokens-per-rank", "--iterations"})
    for (const char* value : {"0", "-3", "x"}) {
      const ProgramResult r = run_zepp(std::string("experiment iser-replay ") + flag + " " + value + " --out " +
                                       ::testing::TempDir());
      EXPECT_EQ(r.status, 2) << flag << " " << value;
      EXPECT_NE(r.err.find(std::string("expected a whole number >= 1, got '") + value + "'"), std::string::npos)
          << flag << " " << value << ": " << r.err;
      EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("1797693"), std::string::npos) << r.err;
    }
}

// iser-broadcast said "topo: a100 cannot multicast" and "topo: dgx-h100 has fewer than 16 GPUs".
TEST(Hardening, IserBroadcastTopologyRefusalsNameTheFlag) {
  expect_refused("experiment iser-broadcast --topology a100 --out " + ::testing::TempDir(),
                 {"--topology: expected an NVSwitch topology with in-switch multicast (e.g. gb200-nvl72), got a100"});
  expect_refused("experiment iser-broadcast --topology dgx-h100 --out " + ::testing::TempDir(),
                 {"--topology: expected at least 16 GPUs per NVLink domain", "got 8 in dgx-h100"});
}

// A bad --model or --topology said "model: ..." / "topology: ..." (the library's argument, as
// Python is told it), and place's rebalancing put it on the load file ("load.json: model: ...");
// every command names its flag, what was given and the names it takes, before any work.
TEST(Hardening, ModelAndTopologyRefusalsNameTheFlagInEveryCommand) {
  const std::string out = " --out " + ::testing::TempDir();
  const std::string models = "expected one of deepseek-v2-lite, llama4-maverick, ";
  const std::string presets = "is neither a preset (a100, h100, dgx-a100, ";
  expect_refused("place --trace /nonexistent.json --nodes 2 --gpus-per-node 2 --model deepseek",
                 {"zepp: invalid argument: --model: unknown preset 'deepseek', " + models});
  expect_refused("place --policy zepp --load " + load_file() + " --failed-gpus 1 --model deepseek",
                 {"zepp: invalid argument: --model: unknown preset 'deepseek', " + models});
  expect_refused("place --trace /nonexistent.json --nodes 2 --model deepseek-v2-lite --topology nosuch",
                 {"zepp: invalid argument: --topology: 'nosuch' " + presets});
  expect_refused("calibrate --model deepseek", {"zepp: invalid argument: --model: unknown preset 'deepseek', " + models});
  for (const char* experiment : {"fig12", "replay", "iser-broadcast"})
    expect_refused(std::string("experiment ") + experiment + " --topology nosuch" + out,
                   {"zepp: invalid argument: --topology: 'nosuch' " + presets});
  expect_refused("experiment replay --nodes 0" + out, {"zepp: invalid argument: --nodes: must be at least 1, got 0"});
  expect_refused("experiment fig9 --topologies a100,nosuch --plots " + ::testing::TempDir(),
                 {"zepp: invalid argument: --topologies: 'nosuch' " + presets});
  // A directory was "neither a preset nor a topology file": it is named as a directory.
  const std::string dir = ::testing::TempDir(), is_dir = "' is a directory; expected a preset (a100, h100, ";
  const std::string file = ") or a YAML or JSON topology file (docs/topology.md)";
  expect_refused("simulate --topology " + dir, {"zepp: invalid argument: --topology: '" + dir + is_dir, file});
  expect_refused("experiment fig12 --topology " + dir + out, {"zepp: invalid argument: --topology: '" + dir + is_dir, file});
  expect_refused("experiment fig9 --topologies a100," + dir + " --plots " + dir,
                 {"zepp: invalid argument: --topologies: '" + dir + is_dir, file});
  // A missing file or a device said only "neither a preset nor a topology file" (fresh-user review).
  expect_refused("simulate --topology /nonexistent/t.yaml", {"--topology: '/nonexistent/t.yaml' " + presets,
                                                             "(docs/topology.md): no file at that path"});
  expect_refused("simulate --topology /dev/null",
                 {"--topology: '/dev/null' " + presets, "(docs/topology.md): a character device, not a regular file"});
  expect_refused("simulate --trace /dev/null --model deepseek-v2-lite",
                 {"/dev/null: expected a trace file or a folder of trace files, got a character device"});
}

// Figure 12's and the replays' flags said "period: must be >= 1" or "strategies: unknown strategy",
// some only after other systems had run, and a misspelt workload was dropped without a word.
TEST(Hardening, DriftExperimentFlagsAreCheckedFirstNamingTheFlag) {
  const std::string out = " --out " + ::testing::TempDir();
  expect_refused("experiment replay --period 0" + out, {"zepp: invalid argument: --period: expected iterations per dataset >= 1, got 0"});
  expect_refused("experiment fig12 --only-iterations 0" + out, {"zepp: invalid argument: --only-iterations: expected iterations >= 1, got 0"});
  expect_refused("experiment replay --extra-slots -1" + out, {"zepp: invalid argument: --extra-slots: expected a number in [0, 65536], got -1"});
  expect_refused("experiment fig12 --systems comet,magic" + out,
                 {"zepp: invalid argument: --systems: unknown strategy 'magic', expected one of a2av, "});
  expect_refused("experiment replay --workloads llama4,qwen" + out,
                 {"zepp: invalid argument: --workloads: unknown workload 'qwen', expected some of llama4, qwen3, deepseek"});
  expect_refused("experiment iser-replay --workloads deep" + out,
                 {"zepp: invalid argument: --workloads: unknown workload 'deep', expected some of deepseek, llama4, qwen3"});
  // More extra slots than a workload's model has experts failed at its placement ("extra_slots: ..."),
  // after the traces were read and earlier workloads had run: refused first, as simulate refuses it
  // (check_strategy_fits), naming the workload. No traces: a late check reports them instead.
  const std::string no_traces = " --traces /nonexistent";
  const std::string deepseek =
      "zepp: invalid argument: deepseek (deepseek-v2-lite): strategies: zepp cannot place 64 experts on 4 x 4 GPUs "
      "(change --nodes, --topology, --extra-slots or --systems): extra_slots: 63 gives 67 slots per GPU, more than the "
      "64 experts";
  expect_refused("simulate --executor estimate --model deepseek-v2-lite --topology a100 --nodes 4 --extra-slots 63",
                 {"zepp: invalid argument: strategies: zepp cannot place 64 experts on 4 x 4 GPUs (change --nodes, "
                  "--gpus-per-node, --experts, --extra-slots or --eplb-groups): extra_slots: 63 gives 67 slots per GPU"});
  expect_refused("experiment fig12 --extra-slots 63" + no_traces + out, {deepseek});
  expect_refused("experiment replay --workloads qwen3,deepseek --extra-slots 63" + no_traces + out, {deepseek});
  expect_refused("experiment replay --extra-slots 200" + no_traces + out,
                 {"zepp: invalid argument: llama4 (llama4-maverick): strategies: zepp cannot place 128 experts",
                  "extra_slots: 200 gives 208 slots per GPU, more than the 128 experts"});
}

// Each flag a refusal's "(change ...)" suggests is one `subcommand --help` lists.
void expect_suggests_own_flags(const std::string& subcommand, const std::string& args) {
  const std::string err = run_zepp(subcommand + args).err, help = run_zepp(subcommand + " --help").out;
  const size_t from = err.find("(change "), to = err.find(')', from);
  ASSERT_NE(from, std::string::npos) << err;
  const std::string list = err.substr(from, to - from);
  for (size_t at = list.find("--"); at != std::string::npos; at = list.find("--", at + 2)) {
    const std::string flag = list.substr(at, list.find_first_of(" ,", at) - at);
    EXPECT_NE(help.find("  " + flag + " "), std::string::npos) << subcommand << " has no " << flag << ": " << err;
  }
}

// A sweep configuration no placement fits failed when its turn came, after the CSV was rewritten
// and the earlier configurations had run (fig9 --nodes 4,3 ran N=4 first; fig10 --nodes 2,5 too),
// suggesting nothing; fig11 took --extra-slots -1 and failed at its first zepp layer
// ("extra_slots: ..."), or said "spec: the weights do not fit". All refused first, naming the
// configuration and only flags the subcommand has (fig12 and replay too).
TEST(Hardening, ExperimentConfigurationsThatCannotBePlacedAreRefusedFirst) {
  const std::string args = " --traces /nonexistent --plots " + ::testing::TempDir();
  const std::string sweep = "(change --nodes, --topologies, --extra-slots, --strategies or --workloads): ";
  expect_refused("experiment fig9 --nodes 4,3" + args,
                 {"zepp: invalid argument: fig9: configuration deepseek-v2-lite a100 N=3 (model deepseek-v2-lite): "
                  "strategies: a2av cannot place 64 experts on 3 x 4 GPUs " + sweep +
                  "num_experts: 64 is not a positive multiple of the 12 GPUs"});
  expect_refused("experiment fig9 --workloads kimi-k2,llama4-maverick --extra-slots 200" + args,
                 {"zepp: invalid argument: fig9: configuration llama4-maverick a100 N=4 (model llama4-maverick): "
                  "strategies: epic cannot place 128 experts on 4 x 4 GPUs " + sweep +
                  "extra_slots: 200 gives 208 slots per GPU, more than the 128 experts"});
  expect_refused("experiment fig10 --nodes 2,5" + args,
                 {"zepp: invalid argument: fig10: configuration kimi-k2 a100 N=5 (model kimi-k2): strategies: a2av "
                  "cannot place 384 experts on 5 x 4 GPUs " + sweep + "num_experts: 384 is not a positive multiple of the 20 GPUs"});
  expect_refused("experiment fig10 --extra-slots 400" + args,
                 {"zepp: invalid argument: fig10: configuration kimi-k2 a100 N=2 (model kimi-k2): strategies: zepp "
                  "cannot place 384 experts on 2 x 4 GPUs " + sweep + "extra_slots: 400 gives 448 slots per GPU"});
  expect_refused("experiment fig11 --extra-slots -1" + args,
                 {"zepp: invalid argument: --extra-slots: expected a number in [0, 65536], got -1"});
  expect_refused("experiment fig11 --extra-slots 70000" + args,
                 {"zepp: invalid argument: --extra-slots: expected a number in [0, 65536], got 70000"});
  expect_refused("experiment fig11 --extra-slots 121" + args,
                 {"zepp: invalid argument: fig11: configuration a100 N=4 (model qwen3-30b-a3b): strategies: zepp "
                  "cannot place 128 experts on 4 x 4 GPUs (change --extra-slots): extra_slots: 121 gives 129 slots per GPU"});
  expect_suggests_own_flags("experiment fig9", " --nodes 3" + args);
  expect_suggests_own_flags("experiment fig10", " --nodes 5" + args);
  expect_suggests_own_flags("experiment fig11", " --extra-slots 121" + args);
  const std::string drift = " --traces /nonexistent --out " + ::testing::TempDir() + "/refused";
  expect_suggests_own_flags("experiment fig12", " --extra-slots 63" + drift);
  expect_suggests_own_flags("experiment replay", " --extra-slots 63" + drift);
}

// `experiment fig9 --sizes 1e6` (fig10, fig11 the same; fig12 and replay --size-mb 1e6) grew a
// worker's memory without bound, while `zepp simulate --size-mb 1e6` refused the size: every
// experiment now applies simulate's bound to each configuration before the first runs, naming
// the flag, the size and the configuration, and writes nothing.
TEST(Hardening, ExperimentSizesBeyondSimulatesBoundAreRefusedFirst) {
  const std::string dir = (testing::scratch("huge-sizes") / "out").string();
  const std::string plots = " --traces /nonexistent --plots " + dir;
  expect_refused("simulate --executor estimate --model deepseek-v2-lite --size-mb 1e6",
                 {"zepp: invalid argument: --max-memory: this run needs about "});
  expect_refused("experiment fig9 --workloads deepseek-v2-lite,kimi-k2 --nodes 4 --sizes 1,1e6" + plots,
                 {"zepp: invalid argument: --sizes: 1e+06 MiB per GPU in fig9 configuration deepseek-v2-lite a100 N=4: "
                  "this run needs about ",
                  "use a smaller --sizes"});
  expect_refused("experiment fig10 --sizes 1e6" + plots,
                 {"zepp: invalid argument: --sizes: 1e+06 MiB per GPU in fig10 configuration kimi-k2 a100 N=2: this run "
                  "needs about "});
  // Below one token per GPU the workload builder refused the size in the configuration's worker.
  expect_refused("experiment fig10 --sizes 1,1e-9" + plots,
                 {"zepp: invalid argument: --sizes: 1e-09 MiB per GPU in fig10 configuration kimi-k2 a100 N=2: 1e-09 MiB "
                  "per GPU holds less than one token of 14336 bytes (hidden x 2)"});
  expect_refused("experiment fig11 --sizes 1,1e6" + plots,
                 {"zepp: invalid argument: --sizes: 1e+06 MiB per GPU in fig11 configuration qwen3-30b-a3b a100 N=4 (48 "
                  "MoE layers): this run needs about "});
  const std::string out = " --traces /nonexistent --out " + dir;
  expect_refused("experiment fig12 --size-mb 1e6" + out,
                 {"zepp: invalid argument: --size-mb: 1e+06 MiB per GPU in fig12 workload llama4 (llama4-maverick) on "
                  "a100 N=4, each iteration: this run needs about "});
  expect_refused("experiment replay --workloads deepseek --size-mb 1e6" + out,
                 {"zepp: invalid argument: --size-mb: 1e+06 MiB per GPU in replay workload deepseek (deepseek-v2-lite) "
                  "on a100 N=4, each iteration: this run needs about "});
  EXPECT_FALSE(std::filesystem::exists(dir));  // refused before any output was made
  // The sizes the experiments run by default pass (a trace that cannot be read is the next error;
  // fig10 reads none, and would run).
  for (const std::string& cmd : {"experiment fig9", "experiment fig11"}) {
    const ProgramResult r = run_zepp(cmd + plots);
    EXPECT_EQ(r.err.find("MiB per GPU in"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("/nonexistent"), std::string::npos) << cmd << ": " << r.err;
  }
}

// `experiment fig9 --nodes 4,4`, `--sizes 1,1.0` and `--strategies a2av,a2av,zepp` ran each
// configuration twice and wrote its rows twice. Every comma-separated list flag of the
// experiments refuses a value given twice (equal numbers included), naming the flag and the value.
TEST(Hardening, ListFlagsRefuseAValueGivenTwice) {
  const std::string sweep = " --traces /nonexistent --plots " + ::testing::TempDir();
  const std::string drift = " --traces /nonexistent --out " + ::testing::TempDir() + "/refused";
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"experiment fig9 --nodes 4,4" + sweep, "--nodes: names 4 twice"},
           {"experiment fig9 --sizes 1,1.0" + sweep, "--sizes: names 1 twice"},
           {"experiment fig9 --strategies a2av,a2av,zepp" + sweep, "--strategies: names 'a2av' twice"},
           {"experiment fig9 --workloads kimi-k2,llama4-maverick,kimi-k2" + sweep, "--workloads: names 'kimi-k2' twice"},
           {"experiment fig9 --topologies a100,h100,a100" + sweep, "--topologies: names 'a100' twice"},
           {"experiment fig10 --nodes 2,4,2" + sweep, "--nodes: names 2 twice"},
           {"experiment fig11 --sizes 2,2" + sweep, "--sizes: names 2 twice"},
           {"experiment fig12 --workloads llama4,llama4" + drift, "--workloads: names 'llama4' twice"},
           {"experiment replay --workloads qwen3,qwen3" + drift, "--workloads: names 'qwen3' twice"},
           {"experiment iser-replay --ep 4,4" + drift, "--ep: names 4 twice"},
           {"experiment iser-replay --helper-slots 3,3" + drift, "--helper-slots: names 3 twice"},
           {"experiment validate --ranks 4,4 --traces /nonexistent", "--ranks: names 4 twice"}})
    expect_refused(args, {"zepp: invalid argument: " + says});
}

// CLI11 drops the empty entries of a comma-separated list: `--strategies a2av,zepp,`, `--sizes
// 1,,4` and `--nodes 4,` ran the sweep as if they were not there. Every list flag of every command
// refuses an empty entry (main.cpp reads the values as typed), naming the flag, the entry and the value.
TEST(Hardening, ListFlagsRefuseAnEmptyEntry) {
  const std::string sweep = " --traces /nonexistent --plots " + ::testing::TempDir();
  const std::string drift = " --traces /nonexistent --out " + ::testing::TempDir() + "/refused";
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"experiment fig9 --strategies a2av,zepp," + sweep, "--strategies: entry 3 of 'a2av,zepp,' is empty"},
           {"experiment fig9 --sizes 1,,4" + sweep, "--sizes: entry 2 of '1,,4' is empty"},
           {"experiment fig9 --nodes 4," + sweep, "--nodes: entry 2 of '4,' is empty"},
           {"experiment fig9 --nodes=,4" + sweep, "--nodes: entry 1 of ',4' is empty"},
           {"experiment fig9 --workloads kimi-k2,\\ " + sweep, "--workloads: entry 2 of 'kimi-k2, ' is empty"},
           {"experiment fig10 --topologies a100,,h100" + sweep, "--topologies: entry 2 of 'a100,,h100' is empty"},
           {"experiment fig11 --sizes 1," + sweep, "--sizes: entry 2 of '1,' is empty"},
           {"experiment fig12 --systems zepp,," + drift, "--systems: entry 2 of 'zepp,,' is empty"},
           {"experiment iser-replay --ep 4,,8" + drift, "--ep: entry 2 of '4,,8' is empty"},
           {"experiment validate --ranks 4, --from-results", "--ranks: entry 2 of '4,' is empty"},
           {"simulate --failed-nodes 1,", "--failed-nodes: entry 2 of '1,' is empty"},
           {"place --failed-gpus 1,,2 --load " + load_file(), "--failed-gpus: entry 2 of '1,,2' is empty"},
           {"simulate --strategies a2av,zepp,", "--strategies: entry 3 of 'a2av,zepp,' is empty"}})
    expect_refused(args, {"zepp: invalid argument: " + says});
  // A value that is a subcommand's name is a value, not the subcommand: `--out fig9` of fig9.
  const ProgramResult help = run_zepp("experiment fig9 --out fig9 --nodes 4,8 --help");
  EXPECT_EQ(help.status, 0) << help.err;
}

// `experiment report` took a negative latency in a results CSV (nan and text were refused): the
// report divided by it. Refused naming the file, line and column.
TEST(Hardening, ReportRefusesLatenciesThatAreNotPositive) {
  std::ifstream in(std::string(ZEPP_SOURCE_DIR) + "/docs/results/fig9.csv");
  std::string provenance, header, row;
  std::getline(in, provenance), std::getline(in, header), std::getline(in, row);
  size_t at = 0;  // column 13, latency_us
  for (int comma = 0; comma < 12; ++comma) at = row.find(',', at) + 1;
  const std::string latency = row.substr(at, row.find(',', at) - at);
  const std::string csv = write_file("negative.csv", provenance + "\n" + header + "\n" + row.replace(at, latency.size(), "-" + latency) + "\n");
  expect_refused("experiment report --fig9 " + csv + " --out " + ::testing::TempDir() + "/report.md",
                 {"zepp: error: " + csv + ":3: expected a positive number in column latency_us, got '-" + latency + "'"});
  // --csv and --plots the same path: the sweep ran, then failed naming "out_dir".
  const std::string both = ::testing::TempDir() + "/both.csv";
  expect_refused("experiment fig9 --workloads deepseek-v2-lite --nodes 2 --sizes 1 --strategies a2av --csv " + both +
                     " --plots " + both,
                 {"--csv: " + both + " is also the --plots folder"});
  // The report overwrote a results CSV given as --out too; refused, the CSV kept.
  const std::string self = write_file("self.csv", provenance + "\n" + header + "\n" + row + "\n");
  expect_refused("experiment report --fig9 " + self + " --out " + self,
                 {"--out: " + self + " is the --fig9 results CSV; the report would replace it"});
  EXPECT_EQ(testing::slurp(self).substr(0, 9), "# made by");
}

// A fresh user's review: messages that hid what was given or said the wrong thing.
TEST(Hardening, MessagesNameWhatWasGiven) {
  // "A subcommand is required", without the word typed.
  expect_refused("bogus", {"zepp: invalid argument: unknown subcommand 'bogus' of zepp; expected one of simulate, place, "
                           "experiment, run, presets, calibrate"});
  expect_refused("experiment bogus", {"unknown subcommand 'bogus' of zepp experiment; expected one of fig9, fig10, "});
  // 0.000000 MiB.
  expect_refused("simulate --executor estimate --size-mb 1e-300",
                 {"--size-mb: 1e-300 MiB per GPU holds less than one token of 14336 bytes"});
  // "--top-k: exceeds the expert count", no numbers.
  expect_refused("simulate --executor estimate --experts 1", {"--top-k: 8 exceeds the expert count 1"});
  // "an empty file": /proc files read 0 bytes by their size.
  expect_refused("simulate --executor estimate --model kimi-k2 --trace /proc/self/status",
                 {"/proc/self/status: expected a regular file of trace data, got a special file whose size reads 0"});
  // A survivors' placement (a --failed-gpus output, 3 of 4 GPUs) as --previous: the count named
  // is the one the load file sets, with what it means.
  const std::string load = write_file("four_gpus.json", R"({"weight": [[5, 3, 2, 1]], "num_replicas": 8, "num_groups": 1, "num_nodes": 1, "num_gpus": 4})");
  const std::string survivors = write_file("survivors.json", R"({"phy2log": [[0, 1, 2, 3, 0, 1]]})");
  expect_refused("place --policy zepp --load " + load + " --previous " + survivors,
                 {"--previous: " + survivors + " has 6 slots per layer, expected " + load +
                  "'s num_replicas = 8: 2 slots on each of the 4 GPUs, lost ones included"});
}

// --predict was read after every rank had resolved the workload: a directory as an empty YAML
// file ("DIR:1: expected a mapping ..., got an empty file"), a missing file as "cannot open the
// topology file", each from every rank and then MPI_Abort. Refused first, naming the flag.
TEST(Hardening, RunPredictThatIsNoFileIsRefusedNamingTheFlag) {
  const std::string dir = ::testing::TempDir(), expected = "; expected a calibrated topology file (written by zepp calibrate)";
  expect_refused("run --predict " + dir, {"zepp: invalid argument: --predict: '" + dir + "' is a directory" + expected});
  expect_refused("run --predict /nonexistent.yaml",
                 {"zepp: invalid argument: --predict: '/nonexistent.yaml' does not exist" + expected});
  expect_refused("run --predict /dev/null", {"zepp: invalid argument: --predict: '/dev/null' is not a regular file" + expected});
  const std::string link = write_file("gone_link.yaml", "");  // a path to replace with a dangling link
  std::filesystem::remove(link);
  std::filesystem::create_symlink(link + ".gone", link);
  expect_refused("run --predict " + link, {"zepp: invalid argument: --predict: '" + link +
                                               "' is a broken symbolic link (to " + link + ".gone)" + expected});
}

// A trace is read into memory: files that cannot fit are refused by their sizes before any is read.
// 3 GiB (a sparse file: no disk used) under a 2.4 GiB address-space limit.
TEST(Hardening, TraceLargerThanTheMemoryIsRefusedBeforeReading) {
  if (testing::kSanitized) GTEST_SKIP() << "AddressSanitizer reserves more address space than this test allows";
  const std::filesystem::path dir = testing::scratch("big_trace");
  std::ofstream(dir / "a.json") << R"([{"1":[[1]]}])";
  std::ofstream(dir / "b.json").close();
  std::filesystem::resize_file(dir / "b.json", uint64_t(3) << 30);
  const ProgramResult r = testing::run_command("ulimit -v 2500000; ", "simulate --executor estimate --model mixtral-8x7b --nodes 1 "
                                                                      "--gpus-per-node 4 --trace " + dir.string());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(dir.string() + ": expected trace files that fit in memory, got 3 GiB in 2 file(s), more than the "),
            std::string::npos) << r.err;
  EXPECT_LT(r.cpu_seconds, kQuick);
}

// mpi::calibrate() fits a line through at least two points of each curve, within its bounds:
// `--tokens 1` (or 100000, or 1e9 message bytes) passed the flag check and failed on every rank,
// each printing "tokens: needs at least two token counts", then MPI_Abort's banner. Refused once,
// before MPI starts (here without mpirun, where the rank count would be refused next).
TEST(Hardening, CalibratePointsBeyondWhatCalibrateTakesAreRefusedBeforeMpi) {
  const std::string list = ": expected a comma-separated ascending list of at least 2 whole numbers in [1, ";
  expect_refused("calibrate --model kimi-k2 --tokens 1",
                 {"--tokens" + list + "65536] (a line is fitted through the token counts timed), got '1'"});
  expect_refused("calibrate --model kimi-k2 --tokens 1,100000", {"--tokens" + list + "65536], got '100000'"});
  expect_refused("calibrate --model kimi-k2 --tokens 1,4,", {"--tokens" + list + "65536], got '1,4,' (its last entry is empty)"});
  expect_refused("calibrate --model kimi-k2 --message-bytes 64",
                 {"--message-bytes" + list + "268435456] (a line is fitted through the message sizes timed), got '64'"});
  expect_refused("calibrate --model kimi-k2 --message-bytes 64,1000000000", {"--message-bytes" + list + "268435456], got '1000000000'"});
  for (const char* args : {"calibrate --model kimi-k2 --tokens 1", "calibrate --model kimi-k2 --message-bytes 64"})
    EXPECT_EQ(run_zepp(args).err.find("MPI_ABORT"), std::string::npos) << args;
}

// One rank has no link to time: the file had a 0 GB/s NVLink that simulate then refused.
TEST(Hardening, CalibrateOnOneRankIsRefused) {
  const ProgramResult r = run_zepp("calibrate --model kimi-k2 --tokens 1,4 --message-bytes 8,64");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("mpirun -np: expected at least 2 MPI ranks"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace zepp
