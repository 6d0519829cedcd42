// Trace folders as users bring them (issue 12): empty files, --skip-invalid, duplicated runs,
// JSONL field aliases, vLLM's route log, per-layer expert-count JSON, load CSV dataset names.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "../common/temp_dir.hpp"
#include "trace/trace.hpp"

namespace zepp {
namespace {

using testing::TempDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Folders, EmptyFilesAreSkippedAndListed) {
  TempDir dir;
  dir.write("prompt_1.json", R"([{"1":[[0],[1]]}])");
  const std::string empty = dir.write("prompt_2.json", "");
  const std::string blank = dir.write("prompt_3.json", " \n");
  dir.write("prompt_10.json", R"([{"1":[[2]]}])");
  const Trace t = read_trace(dir.path());
  EXPECT_EQ(t.requests, (std::vector<std::string>{"prompt_1.json", "prompt_10.json"}));
  EXPECT_EQ(t.skipped_empty, (std::vector<std::string>{empty, blank}));
  EXPECT_EQ(t.layers.at(1).num_tokens(), 3);
  EXPECT_EQ(t.reading_notes(), "2 empty files skipped");
  // Only empty files: nothing to read.
  TempDir none;
  none.write("a.json", "");
  none.write("b.json", "\n");
  EXPECT_THROW(read_trace(none.path()), InputError);
}

TEST(Folders, SkipInvalidDropsTheWholeFileAndListsItsError) {
  TempDir dir;
  dir.write("1.json", R"([{"1":[[0,1]]}])");
  // Valid tokens first, then a bad one: none of this file's tokens may stay.
  dir.write("2.json", R"([{"1":[[2,3]]},{"1":[[4,-1]]}])");
  dir.write("3.json", R"([{"1":[[5,6]]},{"2":[[1,2]]}])");
  EXPECT_THROW(read_trace(dir.path()), InputError);
  const Trace t = read_trace(dir.path(), ReadOptions{true});
  EXPECT_EQ(t.requests, (std::vector<std::string>{"1.json", "3.json"}));
  ASSERT_EQ(t.skipped_invalid.size(), 1u);
  EXPECT_TRUE(contains(t.skipped_invalid[0], "2.json: byte ")) << t.skipped_invalid[0];
  EXPECT_TRUE(contains(t.skipped_invalid[0], "expected a non-negative expert id")) << t.skipped_invalid[0];
  EXPECT_EQ(t.layers.at(1).expert_ids, (std::vector<int32_t>{0, 1, 5, 6}));
  EXPECT_EQ(t.layers.at(1).request, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(t.layers.at(2).request, (std::vector<int32_t>{1}));
  EXPECT_EQ(t.reading_notes(), "1 invalid file skipped (--skip-invalid)");

  // A file whose only layer was new is forgotten with it, and a file of another format too.
  TempDir other;
  other.write("1.json", R"([{"1":[[0]]}])");
  other.write("2.json", R"([{"7":[[1]]},{"7":[[1,2]]}])");
  other.write("3.csv", "Layer,Language,Expert_0\n0,English,1\n");
  const Trace u = read_trace(other.path(), ReadOptions{true});
  EXPECT_EQ(u.layer_ids(), (std::vector<int>{1}));
  EXPECT_EQ(u.skipped_invalid.size(), 2u);
  EXPECT_TRUE(u.loads.empty());
}

const char* const kRun0 = R"({"dataset":"g","problem_id":5,"layer":0,"experts":[1,2],"token_idx":0})";
const char* const kRun1 = R"({"dataset":"g","problem_id":5,"layer":0,"experts":[3,4],"token_idx":1})";

TEST(Jsonl, DuplicatedRunIsReadAsSeparateRequestsInFileOrder) {
  TempDir dir;
  const std::string log = std::string(kRun0) + "\n" + kRun1 + "\n" + kRun0 + "\n" + kRun1 + "\n";
  const Trace t = read_trace(dir.write("m.jsonl", log));
  EXPECT_EQ(t.requests, (std::vector<std::string>{"m.jsonl#g/5", "m.jsonl#g/5 (run 2)"}));
  EXPECT_EQ(t.repeated_runs, (std::vector<std::string>{"m.jsonl#g/5 (run 2)"}));
  EXPECT_EQ(t.layers.at(0).request, (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(t.reading_notes(), "1 request recorded more than once, each run read as a separate request");
}

TEST(Jsonl, EveryAliasReadsLikeTheCanonicalField) {
  const std::vector<std::pair<std::string, std::string>> aliases = {
      {"token_idx", "token_pos"},         {"token_idx", "token_position"}, {"token_idx", "position"},
      {"token_idx", "pos"},               {"layer", "layer_idx"},          {"layer", "layer_id"},
      {"layer", "layer_index"},           {"experts", "expert_ids"},       {"experts", "topk_ids"},
      {"experts", "selected_experts"},    {"gating_probs", "gate_weights"}, {"gating_probs", "topk_weights"},
      {"gating_probs", "routing_weights"}, {"problem_id", "req_id"},        {"problem_id", "request_id"}};
  const std::string canonical =
      R"({"dataset":"d","problem_id":3,"layer":2,"experts":[4,1],"gating_probs":[0.75,0.25],"token_idx":0})" "\n"
      R"({"dataset":"d","problem_id":3,"layer":2,"experts":[0,4],"gating_probs":[0.5,0.5],"token_idx":1})" "\n";
  TempDir dir;
  const Trace want = read_trace(dir.write("canonical.jsonl", canonical));
  for (const auto& [name, alias] : aliases) {
    std::string log = canonical;
    for (size_t at; (at = log.find("\"" + name + "\"")) != std::string::npos;) log.replace(at + 1, name.size(), alias);
    const Trace got = read_trace(dir.write(alias + ".jsonl", log));
    const LayerTrace& l = got.layers.at(2);
    EXPECT_EQ(l.expert_ids, want.layers.at(2).expert_ids) << alias;
    EXPECT_EQ(l.gate_weights, want.layers.at(2).gate_weights) << alias;
    EXPECT_EQ(got.requests, (std::vector<std::string>{alias + ".jsonl#d/3"})) << alias;
  }
}

TEST(Vllm, RouteLogReadsRequestsAndForwardPassesAsSteps) {
  TempDir dir;
  const std::string log =
      R"({"type": "meta", "model_id": "Qwen/Qwen1.5-MoE-A2.7B-Chat", "layers_logged": [0], "top_k": 2})" "\n"
      R"({"type": "route", "req_id": "r1", "token_idx": 0, "layer": 0, "topk_ids": [43, 5], "topk_weights": [0.6, 0.4]})" "\n"
      R"({"type": "route", "req_id": "r1", "token_idx": 1, "layer": 0, "topk_ids": [7, 5], "topk_weights": [0.5, 0.5]})" "\n"
      R"({"type": "route", "req_id": "r1", "token_idx": 0, "layer": 0, "topk_ids": [58, 7], "topk_weights": [0.9, 0.1]})" "\n"
      R"({"type": "route", "req_id": "r2", "token_idx": 0, "layer": 0, "topk_ids": [1, 2], "topk_weights": [0.7, 0.3]})" "\n";
  const Trace t = read_trace(dir.write("moe_layer0.jsonl", log));
  EXPECT_EQ(t.format, "vllm-route-jsonl");
  EXPECT_EQ(t.requests, (std::vector<std::string>{"moe_layer0.jsonl#r1", "moe_layer0.jsonl#r2"}));
  const LayerTrace& l = t.layers.at(0);
  EXPECT_EQ(l.expert_ids, (std::vector<int32_t>{43, 5, 7, 5, 58, 7, 1, 2}));
  EXPECT_EQ(l.request, (std::vector<int32_t>{0, 0, 0, 1}));
  EXPECT_EQ(l.step, (std::vector<int32_t>{0, 0, 1, 0}));  // r1's second forward pass is step 1
  EXPECT_FLOAT_EQ(l.gate_weights[4], 0.9f);
  EXPECT_TRUE(t.repeated_runs.empty());
  EXPECT_EQ(t.num_experts, 59);
}

TEST(ExpertCounts, PerLayerCountsAreALoadTableNamedByTheFile) {
  TempDir dir;
  const std::string json = R"({"model": "switch-base-8", "num_experts": 4,
    "expert_usage_by_layer": {"1": {"0": 747, "3": 12.5}, "3": {"1": 2, "2": 0}}})";
  const Trace t = read_trace(dir.write("switch_counts.json", json));
  EXPECT_EQ(t.format, "expert-count-json");
  EXPECT_FALSE(t.has_tokens());
  EXPECT_EQ(t.num_experts, 4);
  ASSERT_EQ(t.loads.size(), 1u);
  EXPECT_EQ(t.loads[0].name, "switch_counts");
  EXPECT_EQ(t.loads[0].per_layer.at(1), (std::vector<double>{747, 0, 0, 12.5}));
  EXPECT_EQ(t.loads[0].per_layer.at(3), (std::vector<double>{0, 2, 0, 0}));
  EXPECT_EQ(t.layer_ids(), (std::vector<int>{1, 3}));
}

TEST(LoadCsv, DatasetIsTheTokenWhereSharedPrefixesEnd) {
  const std::string csv = "Layer,Language,Expert_0,Expert_1\n0,English,0.5,0.5\n";
  TempDir dir;
  dir.write("moe_all_layers_analysis_copa_en_he_500_avg_activation.csv", csv);
  dir.write("moe_all_layers_analysis_arc_en_he_500_avg_activation.csv", csv);
  const Trace t = read_trace(dir.path());
  std::vector<std::string> names;
  for (const LoadTable& l : t.loads) names.push_back(l.name);
  EXPECT_EQ(names, (std::vector<std::string>{"arc/English", "copa/English"}));
  // No shared prefix: the first token, as for shared/data/traces/qwen3-30b-a3b-load.
  TempDir plain;
  plain.write("arc_en_he_500_avg_activation.csv", csv);
  plain.write("gsm_en_he_500_avg_activation.csv", csv);
  const Trace p = read_trace(plain.path());
  EXPECT_EQ(p.loads[0].name, "arc/English");
  EXPECT_EQ(p.loads[1].name, "gsm/English");
}

}  // namespace
}  // namespace zepp
