// `zepp simulate --timeline` on a real trace writes Chrome trace JSON that Perfetto shows whole
// (issue 26): no slice partially overlaps another on its thread, names are kinds with the counts in
// "args" (the same check on MPI timelines: tests/mpi/calibrate_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "../common/chrome_trace_check.hpp"
#include "../common/run_zepp.hpp"

namespace zepp::testing {
namespace {
namespace fs = std::filesystem;

TEST(SimulateTimeline, ZeppOnDeepSeekNestsAndNamesKinds) {
  const std::string trace = shared_dir() + "/data/traces/deepseek-v2-lite-puffin";
  if (!fs::exists(trace)) GTEST_SKIP() << trace << " is absent";
  const fs::path dir = fs::path(::testing::TempDir()) / ("zepp-timeline-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto r = run_zepp("simulate --trace " + trace + " --model deepseek-v2-lite --nodes 4 --gpus-per-node 4 --strategies a2av,zepp "
                          "--optimum off --format csv --timeline " + (dir / "t.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* label : {"a2av", "zepp"}) {
    std::ifstream in(dir / (std::string("t-") + label + ".json"));
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(zepp::test::partial_overlaps(j), 0) << label;
    std::set<std::string> names;
    size_t slices = 0;
    for (const auto& e : j["traceEvents"])
      if (e["ph"] == "X") {
        ++slices;
        names.insert(e["name"].get<std::string>());
        EXPECT_TRUE(e["args"].contains("rows")) << e.dump();
      }
    EXPECT_GT(slices, 100u) << label;
    // Kinds: 4 dispatch and 4 combine hops, expert GEMM, pre-reduce, final reduce, and the
    // per-batch counts all-gather and planning (issue 20) — 13 at most.
    EXPECT_LE(names.size(), 13u) << label << ": names are kinds, not one per event";
    EXPECT_TRUE(names.count("expert GEMM")) << label;
    if (std::string(label) == "zepp") EXPECT_TRUE(names.count("planning") && names.count("counts all-gather"));
  }
  fs::remove_all(dir);
}

// A strategy name with '/' or '+' (a variant, zepp+hot) cannot be one file name: it becomes '_',
// and both commands' --help say so (a user looking for FILE-zepp/no-split.json did not find it).
TEST(SimulateTimeline, SlashAndPlusInStrategyNamesBecomeUnderscoreAsHelpSays) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("zepp-timeline-names-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto r = run_zepp("simulate --model mixtral-8x7b --nodes 2 --gpus-per-node 2 --size-mb 0.05 --optimum off "
                          "--strategies a2av,zepp/no-split --format csv --timeline " + (dir / "t.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "t-a2av.json"));
  EXPECT_TRUE(fs::exists(dir / "t-zepp_no-split.json"));
  EXPECT_TRUE(fs::exists(dir / "t-zepp_no-split.svg"));
  EXPECT_FALSE(fs::exists(dir / "t-zepp"));  // no folder named after the part before '/'
  fs::remove_all(dir);
  for (const char* command : {"simulate --help", "run --help"}) {
    std::string help = run_zepp(command).out;
    help.erase(std::remove(help.begin(), help.end(), '\n'), help.end());  // CLI11 wraps long descriptions
    std::string flat;
    for (char c : help)
      if (c != ' ' || flat.empty() || flat.back() != ' ') flat += c;
    EXPECT_NE(flat.find("In file names a strategy's '/' and '+' become '_' (zepp/no-split: FILE-zepp_no-split.json"),
              std::string::npos) << command << "\n" << help;
  }
}

}  // namespace
}  // namespace zepp::testing
