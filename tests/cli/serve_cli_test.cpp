// `zepp simulate --iterations N` end to end on the real Llama-4 trace, and its bad arguments.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../common/refusal_cells.hpp"
#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp {
namespace {

using testing::run_zepp;
using testing::shared_dir;

const std::string kArgs = " --trace " + shared_dir() + "/data/traces/llama4-maverick-mmlu --model llama4-maverick";

TEST(ServeCli, IterationsReportEveryIterationOnTheSimulator) {
  if (!std::filesystem::exists(shared_dir() + "/data/traces/llama4-maverick-mmlu")) GTEST_SKIP() << "traces absent";
  const auto r = run_zepp("simulate --executor sim --format json --iterations 2 --drift rotating --dataset anatomy --drift-period 1"
                          " --size-mb 1 --strategies zepp,zepp+swaps" + kArgs);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["executor"], "sim");
  ASSERT_EQ(j["systems"].size(), 2u);
  for (const auto& s : j["systems"]) {
    ASSERT_EQ(s["iterations"].size(), 2u);
    EXPECT_EQ(s["iterations"][0]["dataset"], "abstract_algebra");
    EXPECT_EQ(s["iterations"][1]["dataset"], "anatomy");
    double total = 0;
    for (const auto& it : s["iterations"]) {
      EXPECT_GT(it["latency_ms"].get<double>(), 0);
      total += it["latency_ms"].get<double>();
      EXPECT_EQ(it["weight_nic_mb"].get<double>(), 0);  // static placement, swaps over NVLink only
    }
    EXPECT_NEAR(s["total_latency_ms"].get<double>(), total, 1e-9 * total) << s["system"];
  }
  // Llama-4's ~250 MB experts: zepp+swaps refuses every swap at 1 MB per GPU (serve_test), so it
  // serves the same batches on the same placement as static Zepp, the same routing and loads.
  const auto& fixed = j["systems"][0]["iterations"];
  const auto& swapped = j["systems"][1]["iterations"];
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(swapped[i]["swaps"].get<int>(), 0);
    EXPECT_EQ(swapped[i]["weight_moves"].get<int>(), 0);
    EXPECT_EQ(swapped[i]["imbalance"].get<double>(), fixed[i]["imbalance"].get<double>());
    EXPECT_EQ(swapped[i]["home_imbalance"].get<double>(), fixed[i]["home_imbalance"].get<double>());
  }
}

// --iterations rows carried plain names under Zepp's ablation flags, and its CSV left out the
// swap rule's figures that the JSON has.
TEST(ServeCli, RowsNameTheirAblationsAndTheCsvCarriesTheSwapRule) {
  if (!std::filesystem::exists(shared_dir() + "/data/traces/llama4-maverick-mmlu")) GTEST_SKIP() << "traces absent";
  const std::string args = "simulate --iterations 1 --size-mb 1 --strategies eplb,zepp+swaps --no-split" + kArgs;
  const auto csv = run_zepp(args + " --format csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find(",swap_triggered,swaps_refused,best_refused_saved_us_per_iteration,best_refused_unhidden_us,"
                         "best_refused_weight_us,best_refused_dispatch_us,best_refused_after_dispatch_us,"
                         "best_refused_combine_us,swap_horizon\n"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("\neplb,0,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",,,,,,,,,\nzepp+swaps/no-split,0,"), std::string::npos) << csv.out;  // eplb has no swap rule
  // The NIC floor's two figures, as the JSON has them (the CSV lacked them): the best refused
  // pair's GEMMs after dispatch and its node's combine, both non-zero on these 4 nodes.
  const auto json = run_zepp(args + " --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  const auto parsed = nlohmann::json::parse(json.out);
  const auto& it = parsed["systems"][1]["iterations"][0];
  EXPECT_GT(it["best_refused_after_dispatch_us"].get<double>(), 0);
  EXPECT_GT(it["best_refused_combine_us"].get<double>(), 0);
  EXPECT_NE(csv.out.find(zepp::testing::refusal_cells(it) + ",8\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\nzepp+swaps/no-split,0,"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.back(), '\n');
  const std::string last = csv.out.substr(csv.out.rfind('\n', csv.out.size() - 2) + 1);
  EXPECT_EQ(last.substr(last.rfind(',') + 1), "8\n");  // the default horizon
  const auto table = run_zepp(args);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("zepp+swaps/no-split swaps: 0 accepted"), std::string::npos) << table.out;
}

// The time budget ignored --iterations: 2147483647 iterations ran for hours, printing nothing.
TEST(ServeCli, TheTimeBudgetCoversEveryIteration) {
  if (!std::filesystem::exists(shared_dir() + "/data/traces/llama4-maverick-mmlu")) GTEST_SKIP() << "traces absent";
  const auto r = run_zepp("simulate --iterations 2147483647 --strategies zepp" + kArgs);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--max-minutes: this run needs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use fewer --iterations"), std::string::npos) << r.err;
  const auto two = run_zepp("simulate --iterations 2 --size-mb 0.25 --strategies eplb" + kArgs);
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.err.find("iterations: 2/2 (eplb)"), std::string::npos) << two.err;  // progress
}

TEST(ServeCli, BadArgumentsExitTwoNamingTheFlag) {
  if (!std::filesystem::exists(shared_dir() + "/data/traces/llama4-maverick-mmlu")) GTEST_SKIP() << "traces absent";
  auto r = run_zepp("simulate --iterations 2 --drift sometimes" + kArgs);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--drift"), std::string::npos) << r.err;
  r = run_zepp("simulate --iterations 2 --executor estimate" + kArgs);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--executor"), std::string::npos) << r.err;
  r = run_zepp("simulate --iterations 2 --drift only --dataset law" + kArgs);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("invalid argument: --dataset: 'law' is not a dataset of the trace (abstract_algebra, anatomy)"), std::string::npos)
      << r.err;
  // With drift none every dataset is served: a --dataset was ignored (found by a fresh-user review).
  r = run_zepp("simulate --iterations 2 --dataset anatomy" + kArgs);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("invalid argument: --dataset: with --iterations, picks the dataset --drift only or rotating "
                       "serves; with --drift none every dataset is served"),
            std::string::npos)
      << r.err;
  if (std::filesystem::exists(shared_dir() + "/data/traces/qwen3-30b-a3b-load")) {  // a prefix names two tables
    r = run_zepp("simulate --iterations 2 --drift only --dataset arc --trace " + shared_dir() +
                 "/data/traces/qwen3-30b-a3b-load --model qwen3-30b-a3b --nodes 2 --strategies zepp");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--dataset: --drift serves one dataset, named whole; 'arc' names 2: arc/English, arc/Hebrew"),
              std::string::npos)
        << r.err;
  }
  r = run_zepp("simulate --iterations 2 --drift rotating" + kArgs);  // no --dataset
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("invalid argument: --dataset: --drift only and rotating need one (--dataset), one of the trace's datasets: "
                       "abstract_algebra, anatomy"),
            std::string::npos)
      << r.err;
  r = run_zepp("simulate --iterations 2 --model kimi-k2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--trace"), std::string::npos) << r.err;
}

// --iterations and --layers skipped simulate's placement check: a2av on 3 x 8 GPUs said
// "num_experts: 64 is not a positive multiple of the 24 GPUs", iser-moe "topo: ... (contiguous
// homes)", neither naming a flag. Refused before the trace is read (it need not exist).
TEST(ServeCli, PlacementsThatDoNotDivideNameTheFlagsWithIterationsAndLayers) {
  for (const char* mode : {"--iterations 2", "--layers 1"})
    for (const char* s : {"a2av", "iser-moe"}) {
      const auto r = run_zepp(std::string("simulate ") + mode + " --topology dgx-h100 --nodes 3 --strategies " + s +
                              " --trace /nonexistent --model deepseek-v2-lite");
      EXPECT_EQ(r.status, 2) << mode << " " << s;
      EXPECT_NE(r.err.find(std::string("strategies: ") + s + " cannot place 64 experts on 3 x 8 GPUs (change --nodes"),
                std::string::npos) << mode << " " << s << ": " << r.err;
    }
}

// With the GPUs not dividing the experts the home reference is undefined (NaN): the table printed
// "excess load removed nan%".
TEST(ServeCli, ExcessRemovedWithoutAHomeReferenceIsADashNotNan) {
  const std::string trace = shared_dir() + "/data/traces/deepseek-v2-lite-puffin";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "traces absent";
  const auto r = run_zepp("simulate --iterations 2 --topology dgx-h100 --nodes 3 --strategies eplb --size-mb 0.25 --trace " +
                          trace + " --model deepseek-v2-lite");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("excess load removed - (no home reference"), std::string::npos) << r.out;
}

// --executor none simulates nothing: its latency and the metadata / planning charged in it were
// printed as 0 (table "0.0000", JSON 0.0, "total latency 0.0000 ms"), read as real figures.
TEST(ServeCli, ExecutorNoneLeavesTheSimulatedFiguresEmpty) {
  const std::string trace = shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "traces absent";
  const std::string args = "simulate --executor none --iterations 2 --nodes 2 --gpus-per-node 2 --strategies a2av,zepp "
                           "--size-mb 0.1 --trace " + trace + " --model mixtral-8x7b";
  const auto j = run_zepp(args + " --format json");
  ASSERT_EQ(j.status, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["systems"].size(), 2u);
  for (const auto& s : doc["systems"]) {
    EXPECT_TRUE(s["total_latency_ms"].is_null()) << s;
    ASSERT_EQ(s["iterations"].size(), 2u);
    for (const auto& it : s["iterations"]) {
      for (const char* key : {"latency_ms", "metadata_us", "rank_planning_us", "planning_share"})
        EXPECT_TRUE(it[key].is_null()) << key << ": " << it;
      EXPECT_GT(it["imbalance"].get<double>(), 0);  // the decisions are still reported
    }
  }
  const auto t = run_zepp(args);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(testing::count_of(t.out, "total latency - (--executor none simulates no latency), mean R "), 2u) << t.out;
  EXPECT_EQ(t.out.find("0.0000"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("charged in the simulated latency"), std::string::npos) << t.out;
  const auto c = run_zepp(args + " --format csv");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("\na2av,0,all,,"), std::string::npos) << c.out;  // latency_ms empty
  EXPECT_NE(c.out.find("\nzepp,1,all,,"), std::string::npos) << c.out;
}

// A dataset is named by its folder: "x,y" was written into the CSV unquoted, shifting every
// later column of its rows.
TEST(ServeCli, CsvQuotesADatasetNameWithAComma) {
  testing::TempDir dir;
  std::string tokens;
  for (int t = 0; t < 64; ++t) tokens += (t ? "," : "") + std::string("[") + std::to_string(t % 8) + "," + std::to_string((t + 3) % 8) + "]";
  for (const char* f : {"x,y/1.json", "x,y/2.json", "z/1.json", "z/2.json"}) dir.write(f, "[{\"1\":[" + tokens + "]}]");
  const auto r = run_zepp("simulate --iterations 1 --drift only --dataset x,y --format csv --nodes 2 --gpus-per-node 2 "
                          "--strategies a2av --size-mb 0.01 --trace " + dir.path() + " --model mixtral-8x7b");
  ASSERT_EQ(r.status, 0) << r.err;
  const size_t row = r.out.find('\n') + 1;
  const std::string header = r.out.substr(0, row), line = r.out.substr(row, r.out.find('\n', row) - row);
  EXPECT_EQ(line.rfind("a2av,0,\"x,y\",", 0), 0u) << r.out;
  // The row has as many fields as the header once the quoted one counts as one.
  EXPECT_EQ(std::count(line.begin(), line.end(), ',') - 1, std::count(header.begin(), header.end(), ',')) << r.out;
}

}  // namespace
}  // namespace zepp
