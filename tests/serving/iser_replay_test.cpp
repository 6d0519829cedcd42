// ISER-MoE's replay setting (serving/iser_replay.hpp) on the DeepSeek-V2-Lite trace: the
// no-balancing R recomputed here from the raw trace, HALO-Q's bounds (an owner exports at most
// S experts, a broadcast's payload leaves its owner once), and argument errors.
#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "serving/iser_replay.hpp"
#include "trace/trace.hpp"

using namespace zepp;

namespace {
const std::string kTraces = std::string(ZEPP_SHARED_DIR) + "/data/traces";
}

TEST(IserReplay, NoBalancingRMatchesTheRawTraceAndHaloQKeepsItsBounds) {
  if (!std::filesystem::exists(kTraces + "/deepseek-v2-lite-puffin")) GTEST_SKIP() << "traces absent: " << kTraces;
  IserReplayOptions o;
  o.traces_dir = kTraces;
  o.ep = {8};
  o.helper_slots = {4};
  o.tokens_per_rank = 256;
  o.iterations = 1;
  const auto rows = run_iser_replay({{"deepseek", "deepseek-v2-lite-puffin", "deepseek-v2-lite"}}, o);
  ASSERT_EQ(rows.size(), 1u);
  const IserReplayRow& r = rows[0];
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_EQ(r.layers, 26);
  // Iteration 0 of each layer: the layer's first 8 * 256 tokens in source order; rank loads of
  // contiguous homes (8 experts per rank), R = max / mean, averaged over the layers.
  const Trace t = read_trace(kTraces + "/deepseek-v2-lite-puffin");
  double sum = 0;
  for (const auto& [id, L] : t.layers) {
    std::vector<double> load(8, 0);
    for (int64_t i = 0; i < 8 * 256 * L.top_k; ++i) load[L.expert_ids[i] / 8] += 1;
    sum += *std::max_element(load.begin(), load.end()) * 8 / (8.0 * 256 * L.top_k);
  }
  EXPECT_NEAR(r.r_none, sum / 26, 1e-9);
  EXPECT_GT(r.r_none, 1.05);
  EXPECT_LT(r.r_haloq, r.r_none);
  EXPECT_GE(r.r_haloq, 1.0);
  EXPECT_GT(r.excess_removed, 0.5);
  // HALO-Q: an owner exports at most S experts (multicast payloads); point to point the same
  // plan sends at most S * (P - 1) copies, and at least the multicast count.
  EXPECT_LE(r.busiest_multicast_max, 4);
  EXPECT_GE(r.busiest_multicast_max, 1);
  EXPECT_LE(r.busiest_p2p_max, 4 * 8);
  EXPECT_GE(r.busiest_p2p_max, r.busiest_multicast_max);
  EXPECT_GE(r.owner_outside, 0.0);
  EXPECT_LE(r.owner_outside, 1.0);
  EXPECT_NEAR(r.trace_tokens, 22287, 1);  // prefill tokens per layer (traces README: 579,462 rows / 26)
}

TEST(IserReplay, EpThatDoesNotDivideTheExpertsIsReportedNotRun) {
  if (!std::filesystem::exists(kTraces + "/deepseek-v2-lite-puffin")) GTEST_SKIP() << "traces absent: " << kTraces;
  IserReplayOptions o;
  o.traces_dir = kTraces;
  o.ep = {24};
  o.helper_slots = {3};
  const auto rows = run_iser_replay({{"deepseek", "deepseek-v2-lite-puffin", "deepseek-v2-lite"}}, o);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NE(rows[0].skipped.find("not divisible by 24"), std::string::npos) << rows[0].skipped;
}

TEST(IserReplay, ArgumentErrorsNameTheOption) {
  auto message = [](IserReplayOptions o) {
    try {
      run_iser_replay({}, o);
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  IserReplayOptions o;
  o.ep = {5};
  EXPECT_EQ(message(o).rfind("ep:", 0), 0u) << message(o);
  o = {};
  o.helper_slots = {0};
  EXPECT_EQ(message(o).rfind("helper_slots:", 0), 0u);
  o = {};
  o.iterations = 0;
  EXPECT_EQ(message(o).rfind("iterations:", 0), 0u);
  // Far past the paper's setting: refused at once instead of running for minutes or days.
  o = {};
  o.helper_slots = {1000000};
  EXPECT_EQ(message(o), "helper_slots: must be in [1, 64] (got 1000000)");
  o = {};
  o.iterations = 2000000000;
  EXPECT_EQ(message(o), "iterations: must be in [1, 1000] (got 2000000000)");
  o = {};
  o.ep = {1000000};
  EXPECT_EQ(message(o), "ep: EP degrees must be even and in [4, 1024] (got 1000000)");
  // 2 x 10^9 tokens per rank ran out of memory; refused before any trace is read.
  o = {};
  o.tokens_per_rank = 2000000000;
  o.traces_dir = "/nonexistent";
  std::string m;
  try {
    run_iser_replay({{"deepseek", "deepseek-v2-lite-puffin", "deepseek-v2-lite"}}, o);
  } catch (const ArgumentError& e) {
    m = e.what();
  }
  EXPECT_EQ(m.rfind("tokens_per_rank: expected at most 1048576 tokens per rank at EP 4", 0), 0u) << m;
}
