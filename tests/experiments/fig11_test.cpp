// Figure 11's experiment (issue 14 item 4): its CSV round-trips and rejects malformed rows; the
// report section puts the paper's numbers beside ours; a tiny run on the real Qwen3 loads.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "experiments/fig11.hpp"

namespace zepp::experiments {
namespace {

namespace fs = std::filesystem;

// Each speedup is the tokens/s over sglang's at the same size and phase, as run_fig11 writes them.
std::vector<Fig11Row> sample_rows() {
  return {{1, "prefill", "sglang", 256, 1024, 10, 6, 4, 400000, 1},  {1, "prefill", "zepp", 256, 1024, 8, 4, 4, 500000, 1.25},
          {1, "decode", "sglang", 256, 2000, 40, 6, 34, 100000, 1},  {1, "decode", "zepp", 256, 2000, 38, 4, 34, 100000 * 40.0 / 38, 40.0 / 38},
          {16, "prefill", "sglang", 4096, 1024, 90, 70, 20, 700000, 1}, {16, "prefill", "zepp", 4096, 1024, 50, 30, 20, 1260000, 1.8},
          {16, "decode", "sglang", 4096, 150, 100, 70, 30, 650000, 1}, {16, "decode", "zepp", 4096, 150, 60, 30, 30, 650000 * 100.0 / 60, 100.0 / 60}};
}

fs::path temp(const std::string& name) { return fs::path(::testing::TempDir()) / (name + std::to_string(getpid())); }

TEST(Fig11, CsvRoundTripsAndRejectsBadRows) {
  const fs::path p = temp("fig11.csv");
  std::ofstream(p) << fig11_csv(sample_rows());
  const auto back = read_fig11(p.string());
  ASSERT_EQ(back.size(), 8u);
  EXPECT_EQ(back[3].system, "zepp");
  EXPECT_EQ(back[3].context, 2000);
  EXPECT_NEAR(back[3].speedup, 40.0 / 38, 1e-6);
  std::ofstream(p) << fig11_csv(sample_rows()) << "1,sideways,zepp,1,1,1,1,1,1,1\n";
  EXPECT_THROW(read_fig11(p.string()), InputError);
  std::ofstream(p) << fig11_csv(sample_rows()) << "1,decode,zepp,1,1,x,1,1,1,1\n";
  try {
    read_fig11(p.string());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":11:"), std::string::npos) << e.what();  // names the line (after the provenance line)
  }
  EXPECT_THROW(read_fig11((p.string() + ".absent")), InputError);
  // A negative or zero step (the latency the report divides) was taken: refused naming line and field.
  for (const auto& [row, expected] : std::vector<std::pair<std::string, std::string>>{
           {"1,decode,zepp,1,1,-40,1,1,1,1\n", ":11: expected a positive number in field 6 (step_ms), got '-40'"},
           {"1,decode,zepp,1,1,0,1,1,1,1\n", ":11: expected a positive number in field 6 (step_ms), got '0'"},
           {"1,decode,zepp,1,1,40,-1,1,1,1\n", ":11: expected a non-negative number in field 7 (moe_ms), got '-1'"},
           {"1,decode,zepp,1,1,40,1,1,1,0\n", ":11: expected a positive number in field 10 (speedup), got '0'"}}) {
    std::ofstream(p) << fig11_csv(sample_rows()) << row;
    try {
      read_fig11(p.string());
      ADD_FAILURE() << "accepted " << row;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(p.string() + expected), std::string::npos) << e.what();
    }
  }
}

// The report trusted the CSV: a second row of a system at a size and phase (the last won), a size
// and phase without the reference row its speedups divide, and a speedup that disagrees with the
// row's tokens/s were all read. Each is refused naming the file and line; rounding to the written
// decimals is not.
TEST(Fig11, InconsistentRowsAreRefusedNamingTheLine) {
  const fs::path p = temp("fig11-inconsistent.csv");
  auto lines = [&](std::vector<Fig11Row> rows) {  // the CSV of `rows`: provenance, header, then line 3 on
    std::ofstream(p) << fig11_csv(rows);
  };
  auto refused = [&](const std::string& expected) {
    try {
      read_fig11(p.string());
      ADD_FAILURE() << "accepted, expected " << expected;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), p.string() + expected);
    }
  };
  auto rows = sample_rows();
  rows.push_back(rows[1]);  // line 11 repeats line 4
  lines(rows);
  refused(":11: a second row of zepp at 1 MB prefill (the first is line 4): each system runs once per size and "
          "phase; delete one of them");
  rows = sample_rows();
  rows.erase(rows.begin() + 2);  // 1 MB decode without sglang: its zepp row moves up to line 5
  lines(rows);
  refused(":5: 1 MB decode has no sglang row, the reference of its speedups (the file's first system, line 3)");
  rows = sample_rows();
  rows[3].speedup = 1.06;  // tokens/s say 1.052632
  lines(rows);
  refused(":6: speedup 1.06 disagrees with its tokens/s: 105263.158 / 100000 of sglang (line 5) is 1.052632");
  rows = sample_rows();
  rows[2].speedup = 1.01;  // the reference's own speedup is 1
  lines(rows);
  refused(":5: speedup 1.01 disagrees with its tokens/s: 100000 / 100000 of sglang (line 5) is 1.000000");
  // Written to 6 and 3 decimals, the figures agree within their rounding.
  rows = sample_rows();
  rows[3].tokens_per_s = 100000.0004 * 40 / 38;
  lines(rows);
  EXPECT_EQ(read_fig11(p.string()).size(), 8u);
}

// Any damage to a valid file (a byte replaced, the file cut short) is read or rejected with
// InputError, never a crash or another exception.
RC_GTEST_PROP(Fig11, DamagedCsvIsReadOrRejected, ()) {
  std::string text = fig11_csv(sample_rows());
  const size_t at = *rc::gen::inRange<size_t>(0, text.size());
  if (*rc::gen::arbitrary<bool>()) text[at] = *rc::gen::element(',', '\n', '"', 'x', '-', '1', '\0');
  else text.resize(at);
  const fs::path p = temp("fig11-fuzz.csv");
  std::ofstream(p, std::ios::binary) << text;
  try {
    for (const auto& r : read_fig11(p.string())) RC_ASSERT(r.phase == "prefill" || r.phase == "decode");
  } catch (const InputError&) {
  }
}

TEST(Fig11, ReportPutsThePaperBesideOurs) {
  const std::string md = fig11_markdown(sample_rows(), "fig11.csv", "figures/fig11.svg");
  EXPECT_NE(md.find("| 1 | 256 | 400000 | 500000 (1.25x) | 1.32x | 2000 | 40.000 | 38.000 (1.05x) | 1.04x |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 16 | 4096 | 700000 | 1260000 (1.80x) | 1.92x | 150 | 100.000 | 60.000 (1.67x) | 1.57x |"), std::string::npos) << md;
  EXPECT_NE(md.find("`zepp` prefill gains 1.25–1.80x, decode speedups 1.05–1.67x"), std::string::npos) << md;
  EXPECT_NE(md.find("MoE layers take 60% of sglang's step at 1 MB and 78% at 16 MB"), std::string::npos) << md;
}

TEST(Fig11, TinyRunOnTheRealQwenLoads) {
  const std::string traces = std::string(ZEPP_SHARED_DIR) + "/data/traces";
  if (!fs::exists(traces + "/qwen3-30b-a3b-load")) GTEST_SKIP() << "real traces absent: " << traces;
  Fig11Spec spec = fig11_spec();
  spec.sizes_mb = {1.0 / 64};  // 4 tokens per GPU: 48 layers x 2 systems stay quick
  const fs::path csv = temp("fig11-run.csv");
  const auto rows = run_fig11(spec, traces, csv.string(), StrategyOptions{}, nullptr);
  ASSERT_EQ(rows.size(), 6u);  // (prefill, decode) x (sglang, zepp, zepp+swaps)
  for (const auto& r : rows) {
    EXPECT_EQ(r.tokens_per_gpu, 4);
    EXPECT_NEAR(r.step_ms, r.non_moe_ms + r.moe_ms, 0.05 * r.step_ms) << r.phase << " " << r.system;  // host work hides
    if (r.system == "sglang") EXPECT_EQ(r.speedup, 1.0);
  }
  EXPECT_EQ(read_fig11(csv.string()).size(), 6u);
}

// More slots per GPU than experts failed at the first zepp layer, after the trace was read: now
// refused first (no trace here), naming the configuration and the one flag that changes it.
TEST(Fig11, ExtraSlotsBeyondTheExpertsAreRefusedBeforeTheTraceIsRead) {
  StrategyOptions opt;
  opt.extra_slots = 121;  // 128 experts / 16 GPUs + 121 = 129 slots per GPU
  try {
    run_fig11(fig11_spec(), "/nonexistent", temp("fig11-refused.csv").string(), opt, nullptr);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()),
              "fig11: configuration a100 N=4 (model qwen3-30b-a3b): strategies: zepp cannot place 128 experts on 4 x 4 "
              "GPUs (change --extra-slots): extra_slots: 121 gives 129 slots per GPU, more than the 128 experts (an "
              "expert holds at most one replica per GPU)");
  }
  EXPECT_FALSE(fs::exists(temp("fig11-refused.csv")));
}

}  // namespace
}  // namespace zepp::experiments
