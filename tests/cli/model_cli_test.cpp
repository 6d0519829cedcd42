// `zepp simulate --layers ...` end to end (issue 14): every MoE layer of a real trace plus the
// model's dense layer, per-layer and total figures for each strategy; bad arguments exit 2.
#include <filesystem>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp {
namespace {

using testing::run_zepp;
using testing::shared_dir;

const std::string kDeepSeek = shared_dir() + "/data/traces/deepseek-v2-lite-puffin";

TEST(ModelCli, DeepSeekDecodeAllLayersPerLayerAndTotals) {
  if (!std::filesystem::exists(kDeepSeek)) GTEST_SKIP() << "real traces absent: " << kDeepSeek;
  const auto r = run_zepp("simulate --trace " + kDeepSeek + " --model deepseek-v2-lite --layers all --phase decode "
                          "--batch 16 --context 512 --strategies a2av,sglang,zepp --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["phase"], "decode");
  EXPECT_EQ(j["tokens_per_gpu"], 16);
  EXPECT_EQ(j["context"], 512);
  EXPECT_EQ(j["reference"], "sglang");
  ASSERT_EQ(j["systems"].size(), 3u);
  for (const auto& s : j["systems"]) {
    SCOPED_TRACE(s["system"].get<std::string>());
    const auto& stages = s["steps"][0]["stages"];
    ASSERT_EQ(stages.size(), 29u);  // embedding, 27 layers (layer 0 dense, 1..26 MoE), lm_head
    EXPECT_EQ(stages[1]["kind"], "dense");
    double moe = 0, non_moe = 0, prev_end = 0;
    int moe_layers = 0;
    for (const auto& st : stages) {
      moe += st["moe_ms"].get<double>(), non_moe += st["non_moe_ms"].get<double>();
      if (st["kind"] == "moe") {
        ++moe_layers;
        EXPECT_GT(st["moe_ms"].get<double>(), 0);
      }
      EXPECT_GE(st["start_ms"].get<double>(), prev_end);  // one layer after another on the device
      prev_end = st["end_ms"].get<double>();
    }
    EXPECT_EQ(moe_layers, 26);
    const double step = s["mean_step_ms"].get<double>();
    EXPECT_DOUBLE_EQ(step, prev_end);
    EXPECT_GE(step, moe + non_moe - 1e-9);
    EXPECT_DOUBLE_EQ(s["tpot_ms"].get<double>(), step);
    EXPECT_NEAR(s["tokens_per_s"].get<double>(), 16.0 * 16 / (step / 1e3), 1e-6 * s["tokens_per_s"].get<double>());
  }
  // The table prints the same per-layer rows and a summary line per strategy.
  const auto t = run_zepp("simulate --trace " + kDeepSeek + " --model deepseek-v2-lite --layers 1,2 --phase decode "
                          "--batch 16 --strategies sglang,zepp");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("TPOT ms"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("1.00x (ref)"), std::string::npos) << t.out;
}

// zepp+swaps under --layers said nothing of its swaps: the JSON sums its rule over every (iteration,
// layer) invocation and the table says how many were accepted and, when none, why.
TEST(ModelCli, ZeppSwapsReportsItsSwapRuleOverTheLayers) {
  if (!std::filesystem::exists(kDeepSeek)) GTEST_SKIP() << "real traces absent: " << kDeepSeek;
  const std::string args = "simulate --trace " + kDeepSeek +
                           " --model deepseek-v2-lite --nodes 4 --gpus-per-node 4 --layers 1-2 --iterations 2 --strategies zepp,zepp+swaps";
  const auto r = run_zepp(args + " --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["systems"][0].contains("swaps"));
  const auto& w = j["systems"][1]["swaps"];
  EXPECT_EQ(w["invocations"], 4);  // 2 iterations x 2 layers
  EXPECT_EQ(w["horizon"], 8);
  EXPECT_LE(w["triggered"].get<int>(), 4);
  const auto table = run_zepp(args);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("zepp+swaps    swaps: " + std::to_string(w["accepted"].get<int>()) + " accepted, " +
                           std::to_string(w["refused"].get<int>()) + " refused as not paying, triggered in " +
                           std::to_string(w["triggered"].get<int>()) + " of 4 layer invocations"),
            std::string::npos)
      << table.out;
}

TEST(ModelCli, BadArgumentsExit2NamingTheFlag) {
  if (!std::filesystem::exists(kDeepSeek)) GTEST_SKIP() << "real traces absent: " << kDeepSeek;
  const std::string base = "simulate --trace " + kDeepSeek + " --model deepseek-v2-lite ";
  for (const auto& [args, flag] : std::vector<std::pair<std::string, std::string>>{
           {"--layers 99", "--layers"},          {"--layers 1,x", "--layers"},     {"--layers 3-1", "--layers"},
           {"--layers 1 --phase sideways", "--phase"}, {"--layers 1 --batch 4", "--batch"},
           {"--layers 1 --phase decode --context 4 --kv-cache-gb 1", "--kv-cache-gb"},
           {"--layers 1 --timeline t.json", "--timeline"}, {"--phase decode", "--phase"},
           {"--layers 1,1", "--layers: layer 1 is listed twice"}, {"--layers 1,0-3", "--layers: layer 1 is listed twice"},
           {"--layers 0-2000000000", "--layers: '0-2000000000' names more than 4096 layers"},
           {"--layers 1 --phase decode --batch 2000000000", "--batch: 2000000000 tokens per GPU on 16 GPUs at top-6 make more"},
           // --batch set the tokens per GPU and --size-mb beside it was ignored.
           {"--layers 1 --phase decode --batch 4 --size-mb 5",
            "zepp: invalid argument: --size-mb: and --batch both set the tokens per GPU (decode: one per sequence); give one"}}) {
    const auto r = run_zepp(base + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(flag), std::string::npos) << args << ": " << r.err;
  }
}

// The step's shape is checked before any layer is simulated (no "MoE layers" progress), and a
// prefill prompt longer than a GPU's batch is refused, not timed as a prompt of the batch's length.
TEST(ModelCli, StepShapeRefusedBeforeTheLayersRun) {
  if (!std::filesystem::exists(kDeepSeek)) GTEST_SKIP() << "real traces absent: " << kDeepSeek;
  const std::string base = "simulate --trace " + kDeepSeek + " --model deepseek-v2-lite --nodes 2 --gpus-per-node 2 ";
  auto r = run_zepp(base + "--size-mb 0.1 --layers 1-2 --phase decode --kv-cache-gb 1e-9");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--kv-cache-gb: 1e-09 GB holds less than one token per sequence"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("MoE layers"), std::string::npos) << "the layers ran first: " << r.err;
  // 1 MiB of 2048-dimensional BF16 rows: 256 tokens per GPU.
  r = run_zepp(base + "--size-mb 1 --layers 1 --strategies a2av --context 257");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--context: a prefill prompt of 257 tokens does not fit in the 256 tokens per GPU"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("MoE layers"), std::string::npos) << r.err;
  r = run_zepp(base + "--size-mb 1 --layers 1 --strategies a2av --context 256 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"], 256);
  // The default prompt is 1024 tokens, or the whole batch when it holds fewer (reported as such).
  r = run_zepp(base + "--size-mb 1 --layers 1 --strategies a2av --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"], 256);
}

// Decode's KV cache had no bound: --kv-cache-gb 1000 or --context 1000000 on 40 GB A100s were
// timed. A cache larger than the GPU memory of the topology (compute.memory) is refused before the
// trace is read, naming the flag, the bytes and the memory; a topology file without
// compute.memory sets no bound.
TEST(ModelCli, DecodeKvCacheLargerThanTheGpuMemoryIsRefused) {
  if (!std::filesystem::exists(kDeepSeek)) GTEST_SKIP() << "real traces absent: " << kDeepSeek;
  const std::string base = "simulate --trace " + kDeepSeek + " --model deepseek-v2-lite --layers 1 --phase decode "
                           "--strategies a2av --executor estimate ";
  struct Case {
    std::string args, says;
  };
  // DeepSeek-V2-Lite caches 27 layers x (512 + 64) BF16 values = 31104 bytes per token.
  for (const Case& c :
       {Case{"--kv-cache-gb 41", "--kv-cache-gb: 41 GB = 41000000000 bytes of KV cache per GPU exceeds the GPU memory of "
                                 "a100, 40000000000 bytes (40 GB)"},
        Case{"--batch 256 --context 6000",
             "--context: a KV cache of 256 sequences x 6000 tokens x 31104 bytes per token (27 layers) = 47775744000 bytes "
             "(47.7757 GB) per GPU exceeds the GPU memory of a100, 40000000000 bytes (40 GB); give a smaller --context or --batch"},
        Case{"--batch 2000", "--batch: a KV cache of 2000 sequences x 1024 tokens (--context's default) x 31104 bytes per "
                             "token (27 layers) = 63700992000 bytes (63.701 GB) per GPU exceeds the GPU memory of a100"},
        Case{"--topology dgx-h200 --nodes 2 --kv-cache-gb 142", "--kv-cache-gb: 142 GB = 142000000000 bytes of KV cache per GPU "
                                                                "exceeds the GPU memory of dgx-h200, 141000000000 bytes (141 GB)"}}) {
    const auto r = run_zepp(base + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find("zepp: invalid argument: " + c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_LT(r.cpu_seconds, testing::kQuick) << "the trace was read or the layers ran first: " << c.args;
  }
  // At the bound: 40 GB holds 5023 tokens for each of 256 sequences.
  auto r = run_zepp(base + "--batch 256 --kv-cache-gb 40 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["context"], 5023);
  // A topology file's compute.memory bounds it; without it, nothing does.
  testing::TempDir dir;
  const std::string cluster = "gpus_per_node: 4\nnvlink: {model: per-pair, bandwidth: 100 GB/s, latency: 2 us}\n"
                              "nic: {per_node: 4, bandwidth: 25 GB/s, latency: 3 us}\n"
                              "compute: {model: roofline, peak: 312 TFLOP/s, hbm: 1.5 TB/s, kernel_launch: 5 us";
  const std::string small = dir.write("small.yaml", cluster + ", memory: 16 GiB}\n");
  r = run_zepp(base + "--topology " + small + " --kv-cache-gb 20");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--kv-cache-gb: 20 GB = 20000000000 bytes of KV cache per GPU exceeds the GPU memory of small, "
                       "17179869184 bytes (17.1799 GB)"),
            std::string::npos) << r.err;
  const std::string unknown = dir.write("unknown.yaml", cluster + "}\n");
  r = run_zepp(base + "--topology " + unknown + " --kv-cache-gb 1000 --format json");
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string unitless = dir.write("unitless.yaml", cluster + ", memory: 80}\n");
  r = run_zepp(base + "--topology " + unitless + " --kv-cache-gb 1");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(unitless + ":4: compute.memory: expected a unit after the number (one of B, KB, MB, GB, TB, KiB, MiB, "
                       "GiB, TiB), like '80 GB', got '80'"),
            std::string::npos) << r.err;
  // Prefill is not bounded so (its cache is the batch's own tokens), and `zepp presets` lists each cluster's memory.
  const auto presets = nlohmann::json::parse(run_zepp("presets --format json").out);
  std::map<std::string, double> memory;
  for (const auto& c : presets["clusters"]) memory[c["name"]] = c["memory_gb"];
  EXPECT_EQ(memory, (std::map<std::string, double>{{"a100", 40}, {"h100", 96}, {"dgx-a100", 80}, {"dgx-h100", 80},
                                                   {"dgx-h200", 141}, {"dgx-b200", 180}, {"gb200-nvl72", 186}}));
}

// A routing log whose later requests lack layer 1 (problems 0-1 log layers 0-2, problems 2-3 only
// 0 and 2): with the default history fraction layer 1's tokens are all history.
std::string trace_lacking_layer_1_late() {
  std::string text;
  for (int p = 0; p < 4; ++p)
    for (int t = 0; t < 20; ++t)
      for (int layer : {0, 1, 2})
        if (layer != 1 || p < 2)
          text += "{\"problem_id\": " + std::to_string(p) + ", \"layer\": " + std::to_string(layer) + ", \"experts\": [" +
                  std::to_string(t % 8) + ", " + std::to_string((t + 3) % 8) + "], \"token_idx\": " + std::to_string(t) + "}\n";
  return text;
}

// `--layers` failed part-way (after simulating layer 0) on a layer without evaluation tokens,
// its message glued to the progress line. It is refused before any layer runs, naming the layer
// and the list that can run; the message starts a line of its own.
TEST(ModelCli, LayerWithoutEvaluationTokensIsRefusedBeforeAnyLayerRuns) {
  const std::string trace = testing::write_file("late_layer.jsonl", trace_lacking_layer_1_late());
  const auto r = run_zepp("simulate --trace " + trace + " --model mixtral-8x7b --nodes 2 --layers 0-2 --strategies a2av,zepp");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.find("MoE layers:"), std::string::npos) << r.err;  // nothing ran
  EXPECT_EQ(r.err.rfind("zepp: error: " + trace + ": layer 1 has 40 tokens, all in the history (the first 2 of 4 requests), none to serve", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("leave it out (--layers 0,2)"), std::string::npos) << r.err;
  // The list it suggests runs.
  const auto ok = run_zepp("simulate --trace " + trace + " --model mixtral-8x7b --nodes 2 --layers 0,2 --strategies a2av --format json");
  ASSERT_EQ(ok.status, 0) << ok.err;
  std::vector<int> moe;
  const auto j = nlohmann::json::parse(ok.out);
  for (const auto& st : j["systems"][0]["steps"][0]["stages"])
    if (st["kind"] == "moe") moe.push_back(st["layer"].get<int>());
  EXPECT_EQ(moe, (std::vector<int>{0, 2}));
}

// With --iterations the drift workload splits by tokens a dataset whose requests are too few to
// split by requests (serving/drift.cpp), as for a dataset of one request, but only the first
// layer's description said so: here each problem is a dataset of one request in layers 0 and 2,
// and layer 1 (absent from the later problems) is split as one dataset. Every layer split so is
// named now, with its datasets.
TEST(ModelCli, IterationsNameEveryLayerSplitByTokens) {
  const std::string trace = testing::write_file("late_layer_iterations.jsonl", trace_lacking_layer_1_late());
  const auto r = run_zepp("simulate --trace " + trace + " --model mixtral-8x7b --nodes 2 --layers 0-2 --strategies a2av "
                          "--iterations 2 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string workload = nlohmann::json::parse(r.out)["workload"].get<std::string>();
  const std::string split = "too few requests, history/evaluation split by tokens in ";
  EXPECT_EQ(workload.rfind(trace + " layer 0, drift none, datasets all, ", 0), 0u) << workload;
  EXPECT_NE(workload.find(", 128 tokens/GPU per iteration; " + split + "group1, group2, group3, group4; "), std::string::npos)
      << workload;
  EXPECT_NE(workload.find("; layer 1: " + split + "all"), std::string::npos) << workload;
  EXPECT_NE(workload.find("; layer 2: " + split + "group1, group2, group3, group4"), std::string::npos) << workload;
}

// `--layers all` on a trace lacking layers of a model that has no dense layers failed after
// simulating every layer ("model: 'mixtral-8x7b' has no dense layers"): refused up front.
TEST(ModelCli, AllLayersOfAModelWithoutDenseLayersNeedsEveryLayerInTheTrace) {
  const std::string trace = testing::write_file("three_layers.jsonl", trace_lacking_layer_1_late());
  const auto r = run_zepp("simulate --trace " + trace + " --model mixtral-8x7b --nodes 2 --layers all --strategies a2av");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.find("MoE layers:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("zepp: invalid argument: --layers: all: every one of mixtral-8x7b's 32 layers is an MoE layer", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("lacks 29 of them"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(--layers 0-2)"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace zepp
