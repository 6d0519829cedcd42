// `zepp simulate --roofline-placement` (placement/roofline.cpp, issue 24's experiment, off by
// default): the measured behaviour that keeps it off, on Figure 9's Llama-4 workload, and its flag
// rules.
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"

namespace zepp {
namespace {

using testing::run_zepp;
using testing::shared_dir;

const std::string kTrace = shared_dir() + "/data/traces/llama4-maverick-mmlu";

// Latency (us) of zepp with and without the roofline placement on Figure 9's Llama-4 layer, both
// routing rows only (--no-consolidate): the placements compared as they were measured. (Zepp's
// default consolidation by GEMM time, routing/consolidate.cpp, removes the weight reads that
// the roofline placement refuses at placement time, from the batch's own counts: 1,309 us at 4
// nodes, faster than either here; docs/baselines/fast.md.)
std::map<std::string, double> zepp_latency(int nodes, const std::string& history) {
  std::map<std::string, double> out;
  for (const std::string flag : {" --no-consolidate", " --no-consolidate --roofline-placement"}) {
    const auto r = run_zepp("simulate --trace " + kTrace + history + " --model llama4-maverick --layer 5"
                            " --gpus-per-node 4 --size-mb 1 --strategies zepp --optimum off --format json --nodes " +
                            std::to_string(nodes) + flag);
    EXPECT_EQ(r.status, 0) << r.err;
    if (r.status != 0) return out;
    const auto j = nlohmann::json::parse(r.out);
    out[j["strategies"][0]["name"].get<std::string>()] = j["strategies"][0]["latency_us"].get<double>();
  }
  return out;
}

// docs/baselines/epic.md, "Roofline placement": at 1 MB per GPU every Llama-4 replica is below
// the ridge. With the history split of Figure 9 (placement from the first half of the requests,
// the batch from the rest) the roofline rule wins on 4 nodes (refusing hot second copies: 1391.6
// against 1551.1 us when measured) and loses on 16 (1176.7 against 814.1): the history
// under-represents expert 4, which the rule left one replica where water-filling's spare hot
// copies absorbed it. With the batch's own tokens in the history it wins on both (1242.1 against
// 1521.0, 660.1 against 740.7): the mechanism is real, the loads it bets on are not.
TEST(RooflinePlacementCli, WinsWhenTheHistoryPredictsTheBatchAndLosesWhenItDoesNot) {
  if (!std::filesystem::exists(kTrace)) GTEST_SKIP() << "traces absent";
  const auto four = zepp_latency(4, "");
  const auto sixteen = zepp_latency(16, "");
  ASSERT_EQ(four.size(), 2u);
  ASSERT_EQ(sixteen.size(), 2u);
  EXPECT_LT(four.at("zepp/no-consolidate/roofline-placement"), 0.95 * four.at("zepp/no-consolidate"));
  EXPECT_GT(sixteen.at("zepp/no-consolidate/roofline-placement"), 1.2 * sixteen.at("zepp/no-consolidate"));
  const auto in_sample = zepp_latency(16, " --history " + kTrace);
  ASSERT_EQ(in_sample.size(), 2u);
  EXPECT_LT(in_sample.at("zepp/no-consolidate/roofline-placement"), 0.95 * in_sample.at("zepp/no-consolidate"));
}

TEST(RooflinePlacementCli, FlagNeedsAStrategyOnZeppsPlacement) {
  const auto r = run_zepp("simulate --size-mb 1 --nodes 2 --strategies a2av,eplb --roofline-placement");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--roofline-placement"), std::string::npos) << r.err;
  const auto ok = run_zepp("simulate --size-mb 1 --nodes 2 --strategies a2av,zepp+swaps --roofline-placement --optimum off"
                           " --format json");
  ASSERT_EQ(ok.status, 0) << ok.err;
  const auto j = nlohmann::json::parse(ok.out);
  EXPECT_EQ(j["strategies"][0]["name"], "a2av");
  EXPECT_EQ(j["strategies"][1]["name"], "zepp+swaps/roofline-placement");
}

}  // namespace
}  // namespace zepp
