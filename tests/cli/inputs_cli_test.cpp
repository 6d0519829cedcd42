// `--history` with `--iterations` (issue 26 item 6): the placement from one trace, the served
// stream from another.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"

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

}  // namespace
}  // namespace zepp::testing
