// Help, names and formats a user reads (issue 26 item 5): every defect the issue lists, one test
// each, through the built program.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp::testing {
namespace {
namespace fs = std::filesystem;

const std::string kEplbExample = shared_dir() + "/data/eplb/readme-example.json";
const std::string kTiny = "simulate --nodes 2 --gpus-per-node 2 --experts 8 --top-k 2 --size-mb 0.05 --optimum off";

TEST(Help, StrategiesListEveryRegisteredOneAndThoseServedOnly) {
  const auto r = run_zepp("simulate --help");
  ASSERT_EQ(r.status, 0);
  for (const char* s : {"a2av", "eplb", "epic", "zepp", "zepp+swaps", "zepp-overlap"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " missing from:\n" << r.out;
}

// --executor's help left out none (valid with --iterations), and the README's strategy list left
// out sglang and zepp-overlap: every executor is in the help, every registered strategy in the
// README's prose (in backticks).
TEST(Help, ExecutorsInTheHelpAndEveryStrategyInTheReadme) {
  const auto help = run_zepp("simulate --help");
  ASSERT_EQ(help.status, 0);
  const size_t at = help.out.find("--executor");
  ASSERT_NE(at, std::string::npos);
  const std::string line = help.out.substr(at, help.out.find("\n  -", at) - at);
  for (const char* e : {"sim", "estimate", "none"}) EXPECT_NE(line.find(e), std::string::npos) << e << " in: " << line;

  const auto r = run_zepp("simulate --strategies none-such");  // the message lists the registry
  const size_t from = r.err.find("expected one of "), to = r.err.find(';', from);
  ASSERT_NE(from, std::string::npos) << r.err;
  std::stringstream names(r.err.substr(from + 16, to - from - 16));
  std::ifstream in(std::string(ZEPP_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int count = 0;
  for (std::string name; std::getline(names, name, ',');) {
    name = name.substr(name.find_first_not_of(' '));
    ++count;
    EXPECT_TRUE(readme.find("`" + name + "`") != std::string::npos || readme.find("," + name + ",") != std::string::npos ||
                readme.find("," + name + "`") != std::string::npos)
        << name << " is not in README.md";
  }
  EXPECT_GE(count, 16);
}

TEST(Help, ExperimentNamesEverySubcommandInItsDescription) {
  const auto r = run_zepp("--help");
  ASSERT_EQ(r.status, 0);
  const auto line = r.out.find("experiment");
  ASSERT_NE(line, std::string::npos);
  const std::string desc = r.out.substr(line, r.out.find('\n', line) - line);
  for (const char* s : {"fig9", "fig10", "fig11", "fig12", "replay", "validate", "report", "iser-replay", "iser-broadcast"})
    EXPECT_NE(desc.find(s), std::string::npos) << s << " missing from: " << desc;
}

// The README's table of commands left out `zepp experiment iser-replay` and `iser-broadcast`
// (experiments, not --strategies names: `zepp simulate --strategies iser-replay` is refused).
// Every subcommand `zepp experiment --help` lists has a row (or is in the row of its siblings),
// and every docs/ page a row names exists.
TEST(Help, ReadmeCommandTableNamesEveryExperiment) {
  const auto r = run_zepp("experiment --help");
  ASSERT_EQ(r.status, 0);
  std::ifstream in(std::string(ZEPP_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> rows;  // the command column of each row "| `zepp experiment ...` | ... |"
  for (size_t at = readme.find("\n| `zepp experiment "); at != std::string::npos; at = readme.find("\n| `zepp experiment ", at + 1))
    rows.push_back(readme.substr(at + 3, readme.find("` |", at) - at - 3));
  ASSERT_FALSE(rows.empty());
  const std::string subs = r.out.substr(r.out.find("Subcommands:"));
  std::stringstream lines(subs);
  int count = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  ", 0) != 0) continue;
    const std::string name = line.substr(2, line.find(' ', 2) - 2);
    ++count;
    bool named = false;
    for (std::string row : rows) {
      row += "\\|";
      named = named || row.find(" " + name + "\\|") != std::string::npos || row.find("\\|" + name + "\\|") != std::string::npos;
    }
    EXPECT_TRUE(named) << "zepp experiment " << name << " has no row in README.md's table of commands";
  }
  EXPECT_EQ(count, 9);
  for (const char* page : {"docs/baselines/iser-replay/iser-replay.md", "docs/baselines/iser-broadcast/iser-broadcast.md"}) {
    EXPECT_NE(readme.find(page), std::string::npos) << page;
    EXPECT_TRUE(std::filesystem::exists(std::string(ZEPP_SOURCE_DIR) + "/" + page)) << page;
  }
  EXPECT_NE(run_zepp("simulate --strategies iser-replay").status, 0);
}

TEST(Names, AblationRowsAreNotLabelledZepp) {
  const auto r = run_zepp(kTiny + " --strategies a2av,zepp --no-split --no-merge --format csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\nzepp/no-split/no-merge,"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nzepp,"), std::string::npos) << r.out;
}

TEST(Names, JsonAndCsvNameTheRoutingCostAlike) {
  const auto j = run_zepp(kTiny + " --strategies a2av --format json");
  ASSERT_EQ(j.status, 0) << j.err;
  const auto s = nlohmann::json::parse(j.out)["strategies"][0];
  EXPECT_TRUE(s.contains("routing_cost_us"));
  EXPECT_TRUE(s.contains("routing_cost_optimal_us"));
  EXPECT_FALSE(s.contains("routing_cost"));
  const auto c = run_zepp(kTiny + " --strategies a2av --format csv");
  EXPECT_NE(c.out.find(",routing_cost_us,routing_cost_optimal_us,"), std::string::npos) << c.out;
}

TEST(Names, PlaceTraceWithoutNodesSaysItIsRequired) {
  const std::string trace = shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  if (!fs::exists(trace)) GTEST_SKIP() << trace << " is absent";
  const auto r = run_zepp("place --trace " + trace + " --model mixtral-8x7b --gpus-per-node 4");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--nodes: is required with --trace"), std::string::npos) << r.err;
}

// eplb-json's log2phy lists each expert's slots in replica order, like the program's own JSON
// (and zepp.rebalance_experts, DeepSeek's eplb.py), and reads back unchanged.
TEST(Formats, EplbJsonLog2phyInReplicaOrderLikeStdout) {
  if (!fs::exists(kEplbExample)) GTEST_SKIP() << kEplbExample << " is absent";
  const fs::path dir = scratch("eplb");
  const auto r = run_zepp("place --policy eplb --load " + kEplbExample + " --output-format eplb-json --output " +
                          (dir / "map.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto printed = run_zepp("place --policy eplb --load " + kEplbExample);  // the JSON it prints without --output
  ASSERT_EQ(printed.status, 0) << printed.err;
  const auto out = nlohmann::json::parse(printed.out);
  const auto file = nlohmann::json::parse(slurp(dir / "map.json"));
  EXPECT_EQ(file["log2phy"], out["log2phy"]);
  EXPECT_EQ(file["phy2log"], out["phy2log"]);
  // Replica order differs from ascending slots somewhere in this example, or the test shows nothing.
  bool unsorted = false;
  for (const auto& layer : out["log2phy"])
    for (const auto& slots : layer)
      for (size_t i = 1; i < slots.size(); ++i) unsorted = unsorted || (slots[i] >= 0 && slots[i] < slots[i - 1]);
  EXPECT_TRUE(unsorted) << out["log2phy"];
}

TEST(Formats, SglangOutputPrintsTheRedundantExpertFlag) {
  if (!fs::exists(kEplbExample)) GTEST_SKIP() << kEplbExample << " is absent";
  const fs::path dir = scratch("sglang");
  const auto r = run_zepp("place --policy eplb --load " + kEplbExample + " --output-format sglang --output " +
                          (dir / "loc.json").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("--ep-num-redundant-experts 4"), std::string::npos) << r.err;  // 16 slots, 12 experts
}

// Layers 1 and 2 were taken for the load file's rows 0 and 1 by file order (and written back as
// 1 and 2); a load file's rows are layers 0..L-1, so layer 2 names no load row and is refused.
TEST(Formats, TrtllmPreviousLayersMustBeTheLoadRows) {
  if (!fs::exists(kEplbExample)) GTEST_SKIP() << kEplbExample << " is absent";
  const fs::path dir = scratch("trtllm");
  std::ofstream(dir / "prev.yaml") << "num_slots: 16\ninitial_global_assignments:\n"
                                      "  1: [5, 6, 5, 7, 8, 4, 3, 4, 10, 9, 10, 2, 0, 1, 11, 1]\n"
                                      "  2: [7, 10, 6, 8, 6, 11, 8, 9, 2, 4, 5, 1, 5, 0, 3, 1]\n"
                                      "layer_updates_per_iter: 0\n";
  const auto r = run_zepp("place --policy zepp --load " + kEplbExample + " --previous " + (dir / "prev.yaml").string() +
                          " --previous-format trtllm --output-format trtllm --output " + (dir / "out.yaml").string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--previous: " + (dir / "prev.yaml").string() + " places layer 2, which the loads do not have: "
                       "expected layers 0..1 (the rows of " + kEplbExample + ", in order)"),
            std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out.yaml"));
}

// What zepp.write_sglang_stats writes is a trace the CLI reads (load-only, a row per layer).
TEST(Formats, SglangStatisticsJsonIsATrace) {
  const fs::path dir = scratch("stats");
  std::ofstream(dir / "stats.json") << R"({"logical_count": [[10, 0, 3, 7, 1, 9, 2, 8], [4, 4, 4, 4, 1, 1, 1, 1]]})";
  const auto r = run_zepp("place --trace " + (dir / "stats.json").string() +
                          " --model mixtral-8x7b --nodes 1 --gpus-per-node 4 --policy eplb");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["layers"], (nlohmann::json{0, 1}));
  // [steps, layers, experts]: steps summed; a ragged row is an error naming the field.
  std::ofstream(dir / "steps.json") << R"({"logical_count": [[[1, 2, 3, 4, 5, 6, 7, 8]], [[1, 1, 1, 1, 1, 1, 1, 1]]]})";
  EXPECT_EQ(run_zepp("place --trace " + (dir / "steps.json").string() + " --model mixtral-8x7b --nodes 1 --gpus-per-node 4").status, 0);
  std::ofstream(dir / "bad.json") << R"({"logical_count": [[1, 2, 3, 4, 5, 6, 7, 8], [1, 2]]})";
  const auto bad = run_zepp("place --trace " + (dir / "bad.json").string() + " --model mixtral-8x7b --nodes 1 --gpus-per-node 4");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("logical_count"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace zepp::testing
