// The readers on the real traces of shared/data/traces (README.md gives the counts).
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "trace/trace.hpp"

namespace zepp {
namespace {

std::string traces_dir() { return std::string(ZEPP_SHARED_DIR) + "/data/traces/"; }

#define SKIP_WITHOUT_TRACES()                                                                        \
  if (!std::filesystem::is_directory(traces_dir()))                                                  \
  GTEST_SKIP() << "real traces not found at " << traces_dir() << " (shared folder absent)"

TEST(RealTraces, LlamaSelectionJson) {
  SKIP_WITHOUT_TRACES();
  const Trace t = read_trace(traces_dir() + "llama4-maverick-mmlu");
  EXPECT_EQ(t.format, "selection-json");
  ASSERT_EQ(t.requests.size(), 235u);
  EXPECT_EQ(t.requests.front(), "abstract_algebra/0.json");
  EXPECT_EQ(t.requests.back(), "anatomy/234.json");
  EXPECT_EQ(t.num_experts, 128);
  std::vector<int> odd;
  for (int l = 1; l < 48; l += 2) odd.push_back(l);
  EXPECT_EQ(t.layer_ids(), odd);  // the 24 odd layers are MoE, the even ones null (dense)
  for (const auto& [layer, lt] : t.layers) {
    EXPECT_EQ(lt.top_k, 1);
    EXPECT_TRUE(lt.gate_weights.empty());
    int64_t prefill = std::count(lt.step.begin(), lt.step.end(), 0);
    EXPECT_EQ(prefill, 4833) << "layer " << layer;
    EXPECT_EQ(lt.num_tokens() - prefill, 29684) << "layer " << layer;
  }
  // First prompt: 25 prefill tokens; its first token chose expert 106 in layer 1.
  const LayerTrace& l1 = t.layers.at(1);
  EXPECT_EQ(l1.expert_ids[0], 106);
  EXPECT_EQ(l1.request[0], 0);
  EXPECT_EQ(std::count(l1.request.begin(), l1.request.end(), 0), 129 - 1 + 25);  // 129 steps
  EXPECT_EQ(l1.step[25], 1);
}

TEST(RealTraces, DeepSeekCsv) {
  SKIP_WITHOUT_TRACES();
  const Trace t = read_trace(traces_dir() + "deepseek-v2-lite-puffin");
  EXPECT_EQ(t.format, "deepseek-csv");
  ASSERT_EQ(t.requests.size(), 300u);
  EXPECT_EQ(t.requests.front(), "prompt_1_data.csv");  // natural order: prompt_1, prompt_2, ..., prompt_300
  EXPECT_EQ(t.requests.back(), "prompt_300_data.csv");
  EXPECT_EQ(t.num_experts, 64);
  std::vector<int> layers(26);
  std::iota(layers.begin(), layers.end(), 1);
  EXPECT_EQ(t.layer_ids(), layers);
  int64_t rows = 0;
  for (const auto& [layer, lt] : t.layers) {
    rows += lt.num_tokens();
    EXPECT_EQ(lt.top_k, 6);
    EXPECT_EQ(lt.num_tokens(), 22287);
    EXPECT_EQ(std::count(lt.step.begin(), lt.step.end(), 0), lt.num_tokens());
  }
  EXPECT_EQ(rows, 579462);
  const LayerTrace& l1 = t.layers.at(1);
  EXPECT_EQ(std::vector<int32_t>(l1.expert_ids.begin(), l1.expert_ids.begin() + 6),
            (std::vector<int32_t>{8, 26, 56, 57, 60, 43}));
  EXPECT_EQ(std::count(l1.request.begin(), l1.request.end(), 0), 33);  // prompt_1: 858 rows / 26 layers
}

TEST(RealTraces, MixtralJsonl) {
  SKIP_WITHOUT_TRACES();
  const Trace t = read_trace(traces_dir() + "mixtral-8x7b-gsm8k");
  EXPECT_EQ(t.format, "routing-jsonl");
  EXPECT_EQ(t.requests, (std::vector<std::string>{"gsm8k_2_routing.jsonl#gsm8k/0", "gsm8k_2_routing.jsonl#gsm8k/1"}));
  EXPECT_EQ(t.num_experts, 8);
  EXPECT_EQ(t.layer_ids().size(), 32u);
  int64_t records = 0;
  for (const auto& [layer, lt] : t.layers) {
    records += lt.num_tokens();
    EXPECT_EQ(lt.top_k, 2);
    ASSERT_EQ(lt.gate_weights.size(), lt.expert_ids.size());
  }
  EXPECT_EQ(records, 7889);
  const LayerTrace& l0 = t.layers.at(0);
  EXPECT_EQ(l0.num_tokens(), 167 + 79);
  EXPECT_EQ(l0.expert_ids[0], 7);
  EXPECT_EQ(l0.expert_ids[1], 0);
  EXPECT_FLOAT_EQ(l0.gate_weights[0], 0.8003801107406616f);
  EXPECT_FLOAT_EQ(l0.gate_weights[1], 0.19961987435817719f);
  EXPECT_EQ(std::count(l0.request.begin(), l0.request.end(), 1), 79);
}

TEST(RealTraces, QwenLoadCsv) {
  SKIP_WITHOUT_TRACES();
  const Trace t = read_trace(traces_dir() + "qwen3-30b-a3b-load");
  EXPECT_EQ(t.format, "load-csv");
  EXPECT_FALSE(t.has_tokens());
  EXPECT_EQ(t.num_experts, 128);
  std::vector<std::string> names;
  for (const LoadTable& lt : t.loads) names.push_back(lt.name);
  EXPECT_EQ(names, (std::vector<std::string>{"arc/English", "arc/Hebrew", "gsm/English", "gsm/Hebrew", "mmlu/English",
                                             "mmlu/Hebrew"}));
  EXPECT_EQ(t.layer_ids().size(), 48u);
  for (const LoadTable& lt : t.loads) {
    ASSERT_EQ(lt.per_layer.size(), 48u);
    for (const auto& [layer, row] : lt.per_layer) {
      ASSERT_EQ(row.size(), 128u);
      EXPECT_NEAR(std::accumulate(row.begin(), row.end(), 0.0), 8.0, 0.01) << lt.name << " layer " << layer;
    }
  }
}

TEST(RealTraces, SingleFileIsOneRequest) {
  SKIP_WITHOUT_TRACES();
  const Trace t = read_trace(traces_dir() + "llama4-maverick-mmlu/anatomy/100.json");
  ASSERT_EQ(t.requests, std::vector<std::string>{"100.json"});
  EXPECT_EQ(t.layers.size(), 24u);
}

}  // namespace
}  // namespace zepp
