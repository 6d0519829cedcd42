// `zepp place` end to end: the EPLB README example, Zepp and contiguous policies on a load
// file, a real trace, and malformed load files (exit status 2 with a message naming the field).
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_zepp.hpp"

namespace zepp {
namespace {

using nlohmann::json;
using testing::run_zepp;
using testing::shared_dir;

const std::string kReadme = shared_dir() + "/data/eplb/readme-example.json";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + std::to_string(getpid()) + "_" + name;  // tests run in parallel
  std::ofstream(path) << text;
  return path;
}

TEST(PlaceCli, EplbReadmeExamplePrintsPublishedPhy2log) {
  if (!std::filesystem::exists(kReadme)) GTEST_SKIP() << "shared EPLB data absent: " << kReadme;
  const auto r = run_zepp("place --policy eplb --load " + kReadme);
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = json::parse(r.out);
  const json expected = json::parse(std::ifstream(kReadme))["expected_phy2log"];
  EXPECT_EQ(out["policy"], "eplb");
  EXPECT_EQ(out["phy2log"], expected);
  ASSERT_EQ(out["logcnt"].size(), 2u);
  EXPECT_EQ(out["logcnt"][0], json({1, 2, 1, 1, 2, 2, 1, 1, 1, 1, 2, 1}));
  EXPECT_EQ(out["log2phy"][0][5], json({0, 2, -1, -1, -1}));  // X = 16 - 12 + 1
}

// The hand case of tests/placement: 2 nodes x 2 GPUs, 8 slots -> S = 2, R = 1.
TEST(PlaceCli, ZeppAndContiguousOnLoadFile) {
  const std::string f = write_temp("place_zepp.json",
      R"({"weight": [[100, 10, 10, 10]], "num_replicas": 8, "num_groups": 1, "num_nodes": 2, "num_gpus": 4})");
  const auto z = run_zepp("place --policy zepp --load " + f);
  ASSERT_EQ(z.status, 0) << z.err;
  EXPECT_EQ(json::parse(z.out)["phy2log"], json({{0, 2, 0, 1, 0, 3, 0, 1}}));
  EXPECT_EQ(json::parse(z.out)["logcnt"], json({{4, 2, 1, 1}}));
  const auto c = run_zepp("place --policy contiguous --load " + f);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(json::parse(c.out)["phy2log"], json({{0, 1, 2, 3}}));
}

TEST(PlaceCli, MalformedLoadFilesExitTwoNamingTheField) {
  const std::string missing = write_temp("place_missing.json",
      R"({"weight": [[1, 2]], "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  auto r = run_zepp("place --policy eplb --load " + missing);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(missing + ": expected a field \"num_replicas\""), std::string::npos) << r.err;

  const std::string typed = write_temp("place_typed.json",
      R"({"weight": [[1, "x"]], "num_replicas": 2, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  r = run_zepp("place --policy zepp --load " + typed);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(typed + ": weight[0][1]: expected a number, got \"x\""), std::string::npos) << r.err;

  const std::string broken = write_temp("place_broken.json", R"({"weight": [[1, 2]], )");
  r = run_zepp("place --policy eplb --load " + broken);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(broken + ":1: expected valid JSON"), std::string::npos) << r.err;

  const std::string indivisible = write_temp("place_indivisible.json",
      R"({"weight": [[1, 2, 3]], "num_replicas": 5, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  r = run_zepp("place --policy eplb --load " + indivisible);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(indivisible + ": num_replicas: 5 is not a multiple of num_gpus = 2"), std::string::npos)
      << r.err;
}

// A real trace: Mixtral-8x7B GSM8K (32 layers, 8 experts, top-2) on 2 nodes x 2 GPUs, R = 2.
TEST(PlaceCli, TraceLoadsEveryLayer) {
  const std::string trace = shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "trace absent: " << trace;
  const auto r = run_zepp("place --policy zepp --trace " + trace + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out["layers"].size(), 32u);
  ASSERT_EQ(out["phy2log"].size(), 32u);
  for (const auto& row : out["logcnt"]) {
    int total = 0;
    for (const auto& c : row) total += c.get<int>();
    EXPECT_EQ(total, 4 * (2 + 2));  // S = ceil(8 / 4) + 2 slots on each of 4 GPUs
  }
  const auto e = run_zepp("place --policy eplb --trace " + trace + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2");
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(json::parse(e.out)["phy2log"][0].size(), 16u);
}

TEST(PlaceCli, BadArgumentsExitTwo) {
  auto r = run_zepp("place --policy nope --load x.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--policy"), std::string::npos) << r.err;
  r = run_zepp("place --policy zepp");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--load"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace zepp
