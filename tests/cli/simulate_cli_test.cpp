// `zepp simulate` end to end: the built-in workload, real traces, and bad arguments (exit 2).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../common/refusal_cells.hpp"
#include "../common/run_zepp.hpp"

namespace zepp {
namespace {

using testing::run_zepp;
using testing::shared_dir;

nlohmann::json simulate_json(const std::string& args) {
  const auto r = run_zepp("simulate --format json " + args);
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& strategy(const nlohmann::json& j, const std::string& name) {
  for (const auto& s : j["strategies"])
    if (s["name"] == name) return s;
  throw std::runtime_error("no strategy " + name);
}

TEST(SimulateCli, BuiltInWorkloadReportsEveryStrategy) {
  const auto j = simulate_json("--executor estimate --size-mb 1 --nodes 2");
  ASSERT_EQ(j["strategies"].size(), 3u);
  EXPECT_EQ(j["workload"]["synthetic"], true);
  EXPECT_EQ(j["workload"]["model"], "kimi-k2");
  // 1 MiB of BF16 Kimi-K2 tokens (hidden 7168): floor(2^20 / 14336) = 73 tokens per GPU.
  EXPECT_EQ(j["workload"]["tokens_per_gpu"], 73);
  EXPECT_DOUBLE_EQ(strategy(j, "a2av")["speedup_vs_a2av"].get<double>(), 1.0);
  for (const auto& s : j["strategies"]) {
    EXPECT_GT(s["latency_us"].get<double>(), 0) << s["name"];
    EXPECT_GE(s["imbalance"].get<double>(), 1.0) << s["name"];
    // The exact optimum of equation (1) is a lower bound of any routing on that placement.
    EXPECT_GE(s["routing_cost_us"].get<double>() * (1 + 1e-9), s["routing_cost_optimal_us"].get<double>()) << s["name"];
  }
  // One replica per expert leaves routing no choice: plain EP is already optimal.
  EXPECT_NEAR(strategy(j, "a2av")["routing_gap"].get<double>(), 0.0, 1e-9);
}

// 3 x 8 NVSwitch GPUs (G / 8 not a power of two): HALO-Q's levels halved G into groups of 6
// that straddle two nodes, and iser-moe exited 2 with the internal "multicasts[0]: member 8 is
// not a GPU of the owner's node (one NVLink domain)".
TEST(SimulateCli, IserMoeRunsOnThreeNvSwitchNodes) {
  const auto j = simulate_json("--topology dgx-h100 --nodes 3 --size-mb 0.25 --optimum off --strategies iser-moe");
  ASSERT_EQ(j["strategies"].size(), 1u);
  EXPECT_GT(strategy(j, "iser-moe")["latency_us"].get<double>(), 0);
}

TEST(SimulateCli, AStrategyNamedTwiceIsRefused) {
  const auto r = run_zepp("simulate --executor estimate --strategies a2av,zepp,a2av");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--strategies: names 'a2av' twice"), std::string::npos) << r.err;
}

// Entries are trimmed: " zepp+swaps" was taken for another strategy, so --swap-horizon was
// refused as if zepp+swaps were not named; an empty entry was skipped without a word.
TEST(SimulateCli, StrategyEntriesAreTrimmedAndEmptyOnesRefused) {
  const auto j = simulate_json("--executor estimate --nodes 2 --strategies 'a2av, zepp+swaps ' --swap-horizon 3");
  ASSERT_EQ(j["strategies"].size(), 2u);
  EXPECT_EQ(j["strategies"][0]["name"], "a2av");
  EXPECT_EQ(j["strategies"][1]["name"], "zepp+swaps");
  EXPECT_EQ(j["strategies"][1]["swaps"]["horizon"], 3);
  for (const auto& [list, entry] : {std::pair{"a2av,,zepp", 2}, {"a2av,", 2}, {"' '", 1}}) {
    const auto r = run_zepp(std::string("simulate --executor estimate --strategies ") + list);
    EXPECT_EQ(r.status, 2) << list;
    EXPECT_NE(r.err.find("--strategies: entry " + std::to_string(entry) + " of '"), std::string::npos) << r.err;
  }
}

// One layer of zepp+swaps said nothing of its swaps; now the row carries the rule's outcome and
// the table a line that says why none was accepted (the estimate executor decides as sim does).
TEST(SimulateCli, ZeppSwapsReportsItsSwapRuleOnOneLayer) {
  const auto j = simulate_json("--executor estimate --nodes 2 --strategies zepp,zepp+swaps");
  ASSERT_EQ(j["strategies"].size(), 2u);
  EXPECT_FALSE(j["strategies"][0].contains("swaps"));
  const auto& w = j["strategies"][1]["swaps"];
  EXPECT_EQ(w["horizon"], 8);
  EXPECT_GE(w["accepted"].get<int>(), 0);
  if (!w["triggered"].get<bool>()) EXPECT_EQ(w["accepted"], 0);
  const auto table = run_zepp("simulate --executor estimate --nodes 2 --strategies zepp,zepp+swaps");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("zepp+swaps    swaps: " + std::to_string(w["accepted"].get<int>()) + " accepted, " +
                           std::to_string(w["refused"].get<int>()) + " refused as not paying, triggered in " +
                           (w["triggered"].get<bool>() ? "1" : "0") + " of 1 iteration (horizon 8 iterations)"),
            std::string::npos)
      << table.out;
  const auto csv = run_zepp("simulate --executor estimate --nodes 2 --strategies zepp,zepp+swaps --format csv");
  // Named and ordered as the --iterations CSV names them; zepp's swap columns are empty.
  EXPECT_NE(csv.out.find(",swaps,swap_triggered,swaps_refused,best_refused_saved_us_per_iteration,best_refused_unhidden_us,"
                         "best_refused_weight_us,best_refused_dispatch_us,best_refused_after_dispatch_us,"
                         "best_refused_combine_us,swap_horizon\n"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(",model,,,,,,,,,,\nzepp+swaps,"), std::string::npos) << csv.out;
  // zepp+swaps' row ends with the JSON's six refusal figures and the horizon (the CSV lacked the
  // NIC floor's two).
  EXPECT_NE(csv.out.find(zepp::testing::refusal_cells(w) + ",8\n"), std::string::npos) << csv.out;
}

TEST(SimulateCli, ZeppHotRowsNameTheZeppAblationTheyRan) {
  const auto j = simulate_json("--executor estimate --topology dgx-h100 --strategies zepp,zepp+hot --no-split");
  ASSERT_EQ(j["strategies"].size(), 2u);
  EXPECT_EQ(j["strategies"][0]["name"], "zepp/no-split");
  EXPECT_EQ(j["strategies"][1]["name"], "zepp+hot/no-split");
}

TEST(SimulateCli, EveryZeppRowNamesEveryAblationItRan) {
  // zepp+swaps and zepp-overlap rows and the waves, round-order and local-first flags were
  // printed under plain names although their latency changed; zepp-overlap routes home, so it
  // takes no /no-locality or /no-consolidate.
  const auto j = simulate_json("--executor estimate --strategies zepp,zepp-overlap,zepp+swaps --no-merge --no-waves "
                               "--round-order-always --no-local-first --no-locality --no-dispatch-chunks --no-consolidate");
  ASSERT_EQ(j["strategies"].size(), 3u);
  EXPECT_EQ(j["strategies"][0]["name"],
            "zepp/no-merge/no-locality/no-waves/round-order-always/no-local-first/no-dispatch-chunks/no-consolidate");
  EXPECT_EQ(j["strategies"][1]["name"], "zepp-overlap/no-merge/no-waves/round-order-always/no-local-first/no-dispatch-chunks");
  EXPECT_EQ(j["strategies"][2]["name"],
            "zepp+swaps/no-merge/no-locality/no-waves/round-order-always/no-local-first/no-dispatch-chunks/no-consolidate");
}

// The variant names the sweeps and tables print run beside their base on one layer, each equal
// to the base with the flag that switches its stage.
TEST(SimulateCli, VariantNamesRunBesideTheirBase) {
  const std::string base = "--executor sim --model deepseek-v2-lite --nodes 2 --gpus-per-node 4 --size-mb 1 --optimum off ";
  const auto j = simulate_json(base + "--strategies a2av,zepp,zepp/no-waves,epic/zepp-placement,zepp/eplb-placement");
  ASSERT_EQ(j["strategies"].size(), 5u);
  EXPECT_EQ(j["strategies"][2]["name"], "zepp/no-waves");
  EXPECT_EQ(j["strategies"][3]["name"], "epic/zepp-placement");
  EXPECT_EQ(j["strategies"][4]["name"], "zepp/eplb-placement");
  const auto flagged = simulate_json(base + "--strategies zepp --no-waves");
  EXPECT_EQ(flagged["strategies"][0]["name"], "zepp/no-waves");
  EXPECT_DOUBLE_EQ(strategy(j, "zepp/no-waves")["latency_us"].get<double>(),
                   flagged["strategies"][0]["latency_us"].get<double>());
  EXPECT_NE(strategy(j, "zepp/no-waves")["latency_us"].get<double>(), strategy(j, "zepp")["latency_us"].get<double>());

  auto r = run_zepp("simulate " + base + "--strategies zepp,zepp/no-waves --no-waves");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--strategies: 'zepp/no-waves' runs zepp/no-waves, which 'zepp' with these flags runs too"), std::string::npos) << r.err;
  r = run_zepp("simulate " + base + "--strategies zepp/bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("or a variant: epic/zepp-placement"), std::string::npos) << r.err;
}

// A row name the program prints is a name --strategies takes back: `--strategies zepp/no-waves
// --no-split` printed zepp/no-split/no-waves, which --strategies refused as unknown. Switches
// combine in any order, run as the flags do, and are taken over --iterations too (they were
// refused there as "one-layer variants").
TEST(SimulateCli, EveryPrintedRowNameIsAcceptedBack) {
  const std::string base = "--executor sim --model deepseek-v2-lite --nodes 2 --gpus-per-node 4 --size-mb 1 --optimum off ";
  const auto flagged = simulate_json(base + "--strategies zepp/no-waves --no-split");
  const std::string printed = flagged["strategies"][0]["name"];
  EXPECT_EQ(printed, "zepp/no-split/no-waves");
  const auto back = simulate_json(base + "--strategies " + printed + ",zepp/no-waves/no-split/no-merge");
  EXPECT_EQ(back["strategies"][0]["name"], printed);
  EXPECT_DOUBLE_EQ(back["strategies"][0]["latency_us"].get<double>(), flagged["strategies"][0]["latency_us"].get<double>());
  EXPECT_EQ(back["strategies"][1]["name"], "zepp/no-split/no-merge/no-waves");  // printed in the flags' order
  for (const char* bad : {"zepp/no-split/no-split", "zepp/no-split/", "a2av/no-split", "zepp-overlap/no-locality",
                          "zepp+hot/eplb-placement", "zepp+swaps/eplb-placement"}) {
    const auto r = run_zepp("simulate " + base + "--strategies " + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("--strategies: unknown strategy '" + std::string(bad) + "'"), std::string::npos) << r.err;
  }
  // Over iterations: zepp+swaps with a switch, by flag and by the name it prints.
  const std::string serve = "simulate --trace " + shared_dir() + "/data/traces/deepseek-v2-lite-puffin --model deepseek-v2-lite "
                            "--nodes 2 --iterations 2 --format json --strategies ";
  if (!std::filesystem::exists(shared_dir() + "/data/traces/deepseek-v2-lite-puffin")) GTEST_SKIP() << "real traces absent";
  const auto by_flag = run_zepp(serve + "zepp+swaps --no-split");
  ASSERT_EQ(by_flag.status, 0) << by_flag.err;
  const auto f = nlohmann::json::parse(by_flag.out);
  EXPECT_EQ(f["systems"][0]["system"], "zepp+swaps/no-split");
  const auto by_name = run_zepp(serve + "zepp+swaps/no-split");
  ASSERT_EQ(by_name.status, 0) << by_name.err;
  const auto n = nlohmann::json::parse(by_name.out);
  EXPECT_EQ(n["systems"][0]["system"], "zepp+swaps/no-split");
  EXPECT_EQ(n["systems"][0]["strategy"], "zepp+swaps");
  EXPECT_DOUBLE_EQ(n["systems"][0]["total_latency_ms"].get<double>(), f["systems"][0]["total_latency_ms"].get<double>());
}

// --experts 16 on the 8-expert Mixtral trace added 8 experts no token selects; refused naming the
// flag and the trace's experts, over one layer, --layers and --iterations alike.
TEST(SimulateCli, ExpertsBeyondWhatTheTraceSelectsAreRefused) {
  const std::string trace = shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "real traces absent: " << trace;
  const std::string base = "simulate --trace " + trace + " --model mixtral-8x7b --nodes 2 --strategies a2av ";
  for (const std::string mode : {"--executor estimate", "--layers 0-1 --executor estimate", "--iterations 2"}) {
    const auto r = run_zepp(base + "--experts 16 " + mode);
    EXPECT_EQ(r.status, 2) << mode;
    EXPECT_NE(r.err.find("--experts: 16 experts, but " + trace + " selects experts 0-7 only: the other 8 would be experts no "
                         "token selects. Leave --experts out (mixtral-8x7b has 8) or give 8"),
              std::string::npos) << mode << ": " << r.err;
  }
  EXPECT_EQ(run_zepp(base + "--experts 8 --executor estimate").status, 0);
}

// A strategy whose placement does not fit the survivors is refused before anything runs, naming
// --failed-nodes and the strategy (it said only "num_experts: 64 is not a positive multiple of
// the 12 GPUs").
TEST(SimulateCli, LostNodesThatLeaveNoPlacementNameTheFlag) {
  const auto r = run_zepp("simulate --model deepseek-v2-lite --nodes 4 --gpus-per-node 4 --size-mb 0.25 --strategies a2av,zepp "
                          "--failed-nodes 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--failed-nodes: on the 3 surviving nodes, strategies: a2av cannot place 64 experts on 3 x 4 GPUs"),
            std::string::npos)
      << r.err;
}

// A workload flag that shapes another workload is refused, not ignored: --zipf beside --trace,
// --layer beside --layers, --link-sharing with the closed-form estimate.
TEST(SimulateCli, WorkloadFlagsOfAnotherModeAreRefused) {
  const std::string trace = shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "real traces absent: " << trace;
  const std::string t = "simulate --trace " + trace + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2 ";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{t + "--zipf 0.5", "--zipf: only acts with the synthetic workload"},
                        Case{t + "--layers 1-2 --layer 3", "--layer: only acts with one layer"},
                        Case{t + "--history " + trace + " --history-fraction 0.3", "--history-fraction: only acts with --trace and no --history"},
                        Case{"simulate --nodes 2 --history-fraction 0.3", "--history-fraction: only acts with --trace"},
                        Case{"simulate --nodes 2 --executor estimate --link-sharing serial", "--link-sharing: only acts with --executor sim"}}) {
    const auto r = run_zepp(c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
}

TEST(SimulateCli, SameSeedSameReport) {
  const auto a = run_zepp("simulate --format csv --executor estimate --nodes 2 --seed 7");
  const auto b = run_zepp("simulate --format csv --executor estimate --nodes 2 --seed 7");
  ASSERT_EQ(a.status, 0) << a.err;
  // Everything but the measured routing wall time is identical (the CSV omits it).
  EXPECT_EQ(a.out, b.out);
}

TEST(SimulateCli, RealDeepSeekTrace) {
  const std::string trace = shared_dir() + "/data/traces/deepseek-v2-lite-puffin";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "real traces absent: " << trace;
  const auto j = simulate_json("--executor estimate --trace " + trace + " --model deepseek-v2-lite --nodes 4 --gpus-per-node 4");
  EXPECT_EQ(j["workload"]["synthetic"], false);
  // Locality-preferred routing moves fewer tokens across nodes than EPLB's even split.
  EXPECT_LT(strategy(j, "zepp")["inter_node_bytes"].get<double>(), strategy(j, "eplb")["inter_node_bytes"].get<double>());
}

// Elastic EP: node 3 of 4 (4 GPUs each) lost. The same batch runs on the 3 surviving nodes (each GPU keeping its
// slots), every strategy reports a latency before and after, and Zepp's rebalancing keeps every
// expert served.
TEST(SimulateCli, LostNodeReportsBeforeAndAfter) {
  // a2av (contiguous EP) needs E % G == 0 on both clusters, which 64 experts on 12 GPUs are not.
  const auto j = simulate_json("--executor sim --model deepseek-v2-lite --nodes 4 --size-mb 0.25 --strategies eplb,zepp "
                               "--failed-nodes 3");
  ASSERT_TRUE(j.contains("before") && j.contains("after") && j.contains("degraded"));
  EXPECT_EQ(j["degraded"]["nodes_after"], 3);
  EXPECT_GE(j["degraded"]["zepp_rebalance"]["min_replicas"].get<int>(), 1);
  const auto before = j["before"]["workload"]["tokens_per_gpu"].get<int64_t>();
  const auto after = j["after"]["workload"]["tokens_per_gpu"].get<int64_t>();
  EXPECT_NEAR(double(after) / double(before), 4.0 / 3.0, 0.02);  // the same batch on 3/4 of the GPUs
  EXPECT_EQ(j["degraded"]["slots_per_gpu"], 6);  // ceil(64 / 16) + 2, kept on the 12 survivors
  for (const char* name : {"eplb", "zepp"}) {
    EXPECT_GT(strategy(j["before"], name)["latency_us"].get<double>(), 0) << name;
    EXPECT_GT(strategy(j["after"], name)["latency_us"].get<double>(), 0) << name;
  }
  const auto bad = run_zepp("simulate --model deepseek-v2-lite --nodes 4 --failed-nodes 4");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--failed-nodes: node 4 is outside [0, 4)"), std::string::npos) << bad.err;
}

// --timeline with --failed-nodes draws both clusters: FILE-<strategy>.json on all GPUs and
// FILE-<strategy>-degraded.json on the survivors (only the first was written).
TEST(SimulateCli, LostNodeTimelinesCoverBothClusters) {
  const std::string stem = ::testing::TempDir() + "zepp_lost_node_" + std::to_string(::getpid());
  const auto r = run_zepp("simulate --model deepseek-v2-lite --nodes 4 --gpus-per-node 2 --size-mb 0.1 --extra-slots 4 "
                          "--strategies eplb,zepp --failed-nodes 1 --timeline " + stem + ".json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto processes = [](const std::string& path) {
    std::ifstream in(path);
    const auto trace = nlohmann::json::parse(in);  // throws (fails the test) unless valid JSON
    std::set<int> pids;
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "X") pids.insert(e["pid"].get<int>());
    return pids.size();
  };
  for (const char* s : {"eplb", "zepp"}) {
    EXPECT_EQ(processes(stem + "-" + s + ".json"), 8u) << s;           // 4 nodes x 2 GPUs
    EXPECT_EQ(processes(stem + "-" + s + "-degraded.json"), 6u) << s;  // 3 surviving nodes
    EXPECT_TRUE(std::filesystem::exists(stem + "-" + s + "-degraded.svg")) << s;
  }
}

struct BadArgs {
  std::string args, message;
};

class SimulateCliRejects : public ::testing::TestWithParam<BadArgs> {};

TEST_P(SimulateCliRejects, WithExitStatus2AndAMessage) {
  const auto r = run_zepp("simulate " + GetParam().args);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Args, SimulateCliRejects,
    // --model and --topology named the library's argument ("model: ...", "topology: ..."), not the flag.
    ::testing::Values(BadArgs{"--model gpt-5", "zepp: invalid argument: --model: unknown preset 'gpt-5', expected one of deepseek-v2-lite, "},
                      BadArgs{"--nodes 0", "--nodes: must be at least 1"},
                      BadArgs{"--topology b300", "zepp: invalid argument: --topology: 'b300' is neither a preset (a100, h100, "},
                      BadArgs{"--format xml", "--format"},
                      BadArgs{"--strategies a2av,magic", "strategies: unknown strategy 'magic'"},
                      BadArgs{"--balance-slack 1.5", "--balance-slack"},
                      BadArgs{"--nic-gbps -3", "--nic-gbps"},
                      BadArgs{"--trace /nonexistent/trace.json --model kimi-k2", "/nonexistent/trace.json"},
                      BadArgs{"--trace /tmp", "--model"},
                      BadArgs{"--nodes four", "--nodes"},
                      // Integer flags said only "Could not convert: --swap-horizon = 1e9".
                      BadArgs{"--strategies zepp+swaps --swap-horizon 1e9",
                              "--swap-horizon: expected a whole number, got '1e9'"},
                      BadArgs{"--nodes 99999999999", "--nodes: expected a whole number <= 2147483647, got '99999999999'"},
                      BadArgs{"--seed 2.5", "--seed: expected a whole number, got '2.5'"},
                      // One layer's diagnostics were accepted and silently dropped in the other modes.
                      BadArgs{"--nodes 2 --strategies zepp --iterations 2 --timeline /tmp/zepp_never",
                              "--timeline: acts on one layer; it does not combine with --iterations"},
                      BadArgs{"--nodes 2 --strategies zepp --iterations 2 --optimum off",
                              "--optimum: acts on one layer; it does not combine with --iterations"},
                      BadArgs{"--nodes 2 --strategies zepp --layers 1-2 --optimum on",
                              "--optimum: acts on one layer; it does not combine with --layers"}));

// --optimum off leaves the exact optimum unsolved (null, "-"); a bad value exits 2 naming the flag.
TEST(SimulateCli, OptimumOffAndBadValue) {
  const auto off = run_zepp("simulate --nodes 2 --strategies zepp --optimum off --format json");
  ASSERT_EQ(off.status, 0) << off.err;
  const auto j = nlohmann::json::parse(off.out);
  EXPECT_TRUE(j["strategies"][0]["routing_cost_optimal_us"].is_null());
  EXPECT_TRUE(j["strategies"][0]["routing_gap"].is_null());
  const auto on = run_zepp("simulate --nodes 2 --strategies zepp --optimum on --format json");
  ASSERT_EQ(on.status, 0) << on.err;
  // The exact optimum of equation (1) is positive and never above the greedy routing's cost.
  const auto on_doc = nlohmann::json::parse(on.out);
  const auto& zepp_on = on_doc["strategies"][0];
  EXPECT_GT(zepp_on["routing_cost_optimal_us"].get<double>(), 0.0);
  EXPECT_LE(zepp_on["routing_cost_optimal_us"].get<double>(), zepp_on["routing_cost_us"].get<double>() * (1 + 1e-9));
  const auto bad = run_zepp("simulate --nodes 2 --strategies zepp --optimum maybe");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--optimum"), std::string::npos) << bad.err;
}

// NVLink 1e6 GB/s over a NIC of 1e-6 GB/s has no integer ratio below 2^31 for the exact
// solver's arc costs: the run stopped with "topo: nvlink_bw / nic_bw has no exact integer
// ratio". --optimum auto skips the optimum saying why; --optimum on is refused naming the flags.
TEST(SimulateCli, BandwidthsWithoutAnExactRatioSkipTheOptimumSayingWhy) {
  const std::string links = "simulate --nodes 2 --strategies zepp --executor estimate --nic-gbps 0.000001 --nvlink-gbps 1000000 ";
  const auto r = run_zepp(links + "--format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["strategies"][0]["routing_cost_optimal_us"].is_null());
  EXPECT_NE(r.err.find("optimum: skipped: NVLink / NIC bandwidth 1e+06 / 1e-06 GB/s (--nvlink-gbps / --nic-gbps"),
            std::string::npos) << r.err;
  const auto on = run_zepp(links + "--optimum on");
  EXPECT_EQ(on.status, 2);
  EXPECT_EQ(on.err.rfind("zepp: invalid argument: --optimum: on: the exact solver", 0), 0u) << on.err;
  EXPECT_NE(on.err.find("--nvlink-gbps / --nic-gbps"), std::string::npos) << on.err;
}

// At the lowest NIC bandwidth allowed (1 KB/s) a2av's latency has 11 digits before the point:
// it overflowed its 12-wide column and pushed the rest of its row right. Every column is now as
// wide as its widest cell: each line of the table has the header's length, and each row's
// latency ends under "latency(us)".
TEST(SimulateCli, TableColumnsStayAlignedAtExtremeBandwidths) {
  const auto r = run_zepp("simulate --nodes 2 --strategies a2av,zepp --executor estimate --optimum off --nic-gbps 0.000001");
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> table;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("strategy ", 0) == 0 || line.rfind("a2av ", 0) == 0 || line.rfind("zepp ", 0) == 0) table.push_back(line);
  ASSERT_EQ(table.size(), 3u) << r.out;
  const size_t latency_end = table[0].find("latency(us)") + std::string("latency(us)").size();
  size_t widest = 0;
  for (size_t i = 1; i < table.size(); ++i) {
    EXPECT_EQ(table[i].size(), table[0].size()) << r.out;
    std::istringstream cells(table[i]);
    std::string name, latency;
    cells >> name >> latency;
    widest = std::max(widest, latency.size());
    EXPECT_EQ(table[i].find(latency) + latency.size(), latency_end) << r.out;
  }
  EXPECT_GT(widest, 12u) << "the case no longer makes a latency wider than the column's 12:\n" << r.out;
}

}  // namespace
}  // namespace zepp
