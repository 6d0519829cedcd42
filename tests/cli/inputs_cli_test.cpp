// `--history` with `--iterations` (issue 26 item 6): the placement from one trace, the served
// stream from another.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp::testing {
namespace {

TEST(Iterations, HistoryFromAnotherTrace) {
  const std::string mmlu = shared_dir() + "/data/traces/llama4-maverick-mmlu";
  if (!std::filesystem::exists(mmlu)) GTEST_SKIP() << mmlu << " is absent";
  const std::string args = "simulate --history " + mmlu + "/abstract_algebra --trace " + mmlu +
                           "/anatomy --model llama4-maverick --nodes 2 --gpus-per-node 4 --iterations 2 --strategies zepp "
                           "--size-mb 0.25 --format json";
  const auto r = run_zepp(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string w = j["workload"].get<std::string>();
  EXPECT_NE(w.find("history = all of " + mmlu + "/abstract_algebra"), std::string::npos) << w;
  EXPECT_EQ(j["systems"][0]["iterations"].size(), 2u);
  // A different history gives a different placement, so (here) different loads served.
  const auto own = run_zepp("simulate --trace " + mmlu + "/anatomy --model llama4-maverick --nodes 2 --gpus-per-node 4 "
                            "--iterations 2 --strategies zepp --size-mb 0.25 --format json");
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_NE(nlohmann::json::parse(own.out)["workload"], j["workload"]);
  // The drift modes split one trace's datasets: --history is refused there, naming both flags.
  const auto drift = run_zepp(args + " --drift rotating --dataset anatomy");
  EXPECT_EQ(drift.status, 2);
  EXPECT_NE(drift.err.find("--history: combines with --drift none only"), std::string::npos) << drift.err;
}

// Llama-4's layer 45 is one selection for all its tokens; every run warned about it, even one
// simulating layer 1 alone. The warning is about the layers a run uses.
TEST(TraceWarnings, OnlyAboutTheLayersTheRunUses) {
  const std::string mmlu = shared_dir() + "/data/traces/llama4-maverick-mmlu";
  if (!std::filesystem::exists(mmlu)) GTEST_SKIP() << mmlu << " is absent";
  const std::string base = "simulate --trace " + mmlu + " --model llama4-maverick --strategies a2av --executor estimate --size-mb 0.25 ";
  const auto first = run_zepp(base);  // layer 1, the trace's first
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_EQ(first.err.find("layer 45"), std::string::npos) << first.err;
  const auto l45 = run_zepp(base + "--layer 45");
  ASSERT_EQ(l45.status, 0) << l45.err;
  EXPECT_NE(l45.err.find("zepp: warning: " + mmlu + ": one top-k selection, experts (40), makes up 100% of the 34517 tokens of layer 45"),
            std::string::npos) << l45.err;
  const auto listed = run_zepp(base + "--layers 1,3 --format json");
  ASSERT_EQ(listed.status, 0) << listed.err;
  EXPECT_EQ(listed.err.find("layer 45"), std::string::npos) << listed.err;
}

// A load table with fewer loaded experts than top-k was blamed on --dataset ("--dataset: layer 0
// of '' in ...") when no --dataset had been given.
TEST(LoadTables, TooFewLoadedExpertsNameTheTraceOrTheDatasetGiven) {
  TempDir dir;
  const std::string file = dir.write("counts.json", R"({"num_experts": 8, "expert_usage_by_layer": {"0": {"3": 5}}})");
  const std::string args = "simulate --executor estimate --nodes 2 --gpus-per-node 2 --strategies a2av --model mixtral-8x7b "
                           "--trace " + file;
  const auto r = run_zepp(args);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: invalid argument: trace: layer 0 in " + file +
                       " has 1 experts with positive load, fewer than top-k 2\n");
  const auto d = run_zepp(args + " --dataset counts");
  EXPECT_EQ(d.status, 2);
  EXPECT_EQ(d.err, "zepp: invalid argument: --dataset: layer 0 of 'counts' in " + file +
                       " has 1 experts with positive load, fewer than top-k 2\n");
}

// The workload's messages about the history trace named "history:", no flag.
TEST(LoadTables, AHistoryWithoutTheLayerNamesTheFlag) {
  TempDir dir;
  const std::string counts = dir.write("counts.json", R"({"num_experts": 8, "expert_usage_by_layer": {"0": {"3": 5, "4": 1}}})");
  const std::string tokens = dir.write("tokens.json", "[{\"0\": [[0, 1], [2, 3]], \"5\": [[4, 5], [6, 7]]}]");
  const auto r = run_zepp("simulate --executor estimate --nodes 2 --gpus-per-node 2 --strategies a2av --model mixtral-8x7b "
                          "--trace " + tokens + " --history " + counts + " --layer 5");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: invalid argument: --history: layer 5 is not in load table counts of " + counts + "\n");
}

}  // namespace
}  // namespace zepp::testing
