// Serving-engine placement and statistics files: hand-written files read to known values, exact
// text for written files, round trips on random maps, and InputError naming file and field.
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "../common/temp_dir.hpp"
#include "core/error.hpp"
#include "core/input_bounds.hpp"
#include "formats/formats.hpp"

using namespace zepp;

namespace {

// Files private to this test process (ctest runs tests in parallel processes).
std::string temp_path(const std::string& name) { return (zepp::testing::process_dir() / name).string(); }
using zepp::testing::slurp;
using zepp::testing::write_file;

// The InputError message `f` throws; fails the test when it throws nothing.
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return "";
}

// Two layers (model layers 3 and 5), 6 slots on 2 ranks, 4 experts.
ExpertMap small_map() {
  ExpertMap m;
  m.layer_ids = {3, 5};
  m.num_slots = 6;
  m.phy2log = {0, 1, 2, 3, 0, 1,   //
               3, 2, 1, 0, 2, 2};
  return m;
}

bool same(const ExpertMap& a, const ExpertMap& b) {
  return a.layer_ids == b.layer_ids && a.num_slots == b.num_slots && a.phy2log == b.phy2log;
}

}  // namespace

TEST(ExpertMap, LayerAsPlacementAndLogicalMaps) {
  ExpertMap m = small_map();
  EXPECT_EQ(m.num_experts(), 4);
  Placement p = m.layer(1, 2);
  EXPECT_EQ(p.slots_per_gpu, 3);
  EXPECT_EQ(p.num_experts, 4);
  EXPECT_EQ(p.phy2log, (std::vector<int32_t>{3, 2, 1, 0, 2, 2}));
  EXPECT_THROW(m.layer(0, 4), ArgumentError);  // 4 ranks do not divide 6 slots
  EXPECT_THROW(m.layer(2, 2), ArgumentError);

  std::vector<int64_t> log2phy, logcnt;
  int X = 0;
  m.logical_maps(log2phy, X, logcnt);
  EXPECT_EQ(X, 3);  // expert 2 of layer 5 has three slots
  EXPECT_EQ(logcnt, (std::vector<int64_t>{2, 2, 1, 1, 1, 1, 3, 1}));
  EXPECT_EQ(log2phy, (std::vector<int64_t>{0, 4, -1, 1, 5, -1, 2, -1, -1, 3, -1, -1,  //
                                           3, -1, -1, 2, -1, -1, 1, 4, 5, 0, -1, -1}));
}

TEST(ExpertMap, ProblemsNameRowAndSlot) {
  ExpertMap m = small_map();
  m.phy2log[7] = 9;
  EXPECT_NE(m.problem().find("row 1 slot 1"), std::string::npos) << m.problem();
  m = small_map();
  m.phy2log[6] = 2;  // layer 5 loses expert 3
  EXPECT_NE(m.problem().find("expert 3 has no slot"), std::string::npos) << m.problem();
  m = small_map();
  m.layer_ids = {4, 4};
  EXPECT_NE(m.problem().find("layer 4 appears twice"), std::string::npos) << m.problem();
  EXPECT_THROW(m.validate("map"), ArgumentError);
  // Every writer validates: a layer id the readers refuse (TensorRT-LLM keys, 2^30) is not written.
  m.layer_ids = {3, kMaxLayerId};
  EXPECT_EQ(m.problem(), "layer 1073741824: expected layer ids in [0, 1073741824)");
  EXPECT_THROW(write_expert_map(temp_path("big_layer.yaml"), m, "trtllm"), ArgumentError);
  m.layer_ids = {3, kMaxLayerId - 1};
  write_expert_map(temp_path("big_layer.yaml"), m, "trtllm");
  EXPECT_TRUE(same(read_expert_map(temp_path("big_layer.yaml"), "trtllm"), m));
}

TEST(ExpertMap, FromPlacements) {
  Placement a{2, 3, 2, {0, 1, 2, 0}}, b{2, 3, 2, {2, 2, 1, 0}};
  ExpertMap m = expert_map_of({a, b}, {1, 2});
  EXPECT_EQ(m.phy2log, (std::vector<int32_t>{0, 1, 2, 0, 2, 2, 1, 0}));
  EXPECT_EQ(m.num_slots, 4);
  EXPECT_EQ(expert_map_of({a, b}).layer_ids, (std::vector<int>{0, 1}));
  Placement c{1, 3, 3, {0, 1, 2}};
  EXPECT_THROW(expert_map_of({a, c}), ArgumentError);  // 3 slots vs 4
  EXPECT_THROW(expert_map_of({a, b}, {1}), ArgumentError);
}

TEST(SglangStats, SumsStepsIntoPerLayerLoad) {
  auto two_d = write_file("stats2.json", R"({"rank": 0, "logical_count": [[1, 2, 3], [4, 5, 6]]})");
  EXPECT_EQ(read_sglang_stats(two_d), (std::vector<std::vector<double>>{{1, 2, 3}, {4, 5, 6}}));
  auto three_d = write_file("stats3.json", R"({"logical_count": [[[1, 2, 3], [4, 5, 6]], [[10, 0, 1], [0, 0, 2.5]]]})");
  EXPECT_EQ(read_sglang_stats(three_d), (std::vector<std::vector<double>>{{11, 2, 4}, {4, 5, 8.5}}));
  // Each step within the bound, their sum above it: refused as the writer and the placement would.
  auto over = write_file("stats_over.json", R"({"logical_count": [[[1, 6e14]], [[2, 6e14]]]})");
  EXPECT_EQ(input_error([&] { read_sglang_stats(over); }),
            over + ": logical_count: [0, 1] sums to 1.2e+15 over the steps, above the load bound 1e15");
}

TEST(SglangStats, WriteReadIsExact) {
  std::vector<std::vector<double>> load{{1, 0.1, 1e-7}, {123456789, 2.5, 1.0 / 3}};
  auto path = temp_path("stats_rt.json");
  write_sglang_stats(path, load);
  EXPECT_EQ(read_sglang_stats(path), load);
  EXPECT_EQ(slurp(path).substr(0, 33), "{\"logical_count\": [\n  [1, 0.1, 1e");
  EXPECT_THROW(write_sglang_stats(path, {{1, -2}}), ArgumentError);
  EXPECT_THROW(write_sglang_stats(path, {{1, 2e15}}), ArgumentError);
  EXPECT_THROW(write_sglang_stats(path, {{1, 2}, {3}}), ArgumentError);
}

TEST(SglangStats, MalformedFilesNameFileAndField) {
  auto p = write_file("bad1.json", "{\"logical_count\": [[1, 2],\n [3, \"x\"]]}");
  auto msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find(p + ": logical_count[1][1]: expected a number"), std::string::npos) << msg;
  p = write_file("bad2.json", "{\"logical_count\": [[1, 2], [3]]}");
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find("logical_count[1]: expected a list of 2 entries"), std::string::npos) << msg;
  p = write_file("bad3.json", "{\"counts\": [[1]]}");
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find("expected a field \"logical_count\""), std::string::npos) << msg;
  p = write_file("bad4.json", "{\n\"logical_count\":\n [[1, 2]\n");
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find(p + ":4: expected valid JSON"), std::string::npos) << msg;
  p = write_file("bad5.json", "{\"logical_count\": [1, 2]}");
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find("expected [steps, layers, experts] or [layers, experts]"), std::string::npos) << msg;
  p = write_file("bad6.json", "{\"logical_count\": [[1, -2]]}");
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find("logical_count[0][1]: expected a value >= 0, got -2"), std::string::npos) << msg;
  msg = input_error([&] { read_sglang_stats(temp_path("missing.json")); });
  EXPECT_NE(msg.find("cannot open for reading"), std::string::npos) << msg;
}

TEST(SglangPlacement, ReadsWritesAndFillsDenseLayers) {
  auto p = write_file("loc.json", R"({"physical_to_logical_map": [[0, 1, 2, 0], [2, 1, 0, 1]]})");
  ExpertMap m = read_sglang_placement(p);
  EXPECT_EQ(m.layer_ids, (std::vector<int>{0, 1}));
  EXPECT_EQ(m.num_slots, 4);
  EXPECT_EQ(m.phy2log, (std::vector<int32_t>{0, 1, 2, 0, 2, 1, 0, 1}));

  auto out = temp_path("loc_out.json");
  write_sglang_placement(out, m);
  EXPECT_EQ(slurp(out), "{\"physical_to_logical_map\": [\n  [0, 1, 2, 0],\n  [2, 1, 0, 1]\n]}\n");
  // Layers 0..2 of small_map() are absent (dense): SGLang's trivial row p mod E.
  write_sglang_placement(out, small_map());
  ExpertMap back = read_sglang_placement(out);
  ASSERT_EQ(back.num_layers(), 6);
  EXPECT_EQ(std::vector<int32_t>(back.phy2log.begin(), back.phy2log.begin() + 6), (std::vector<int32_t>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(std::vector<int32_t>(back.phy2log.begin() + 30, back.phy2log.end()), (std::vector<int32_t>{3, 2, 1, 0, 2, 2}));
}

TEST(SglangPlacement, MalformedFilesNameFileAndField) {
  auto p = write_file("locbad1.json", R"({"physical_to_logical_map": [[0, 1, 2], [0, 1.5, 2]]})");
  auto msg = input_error([&] { read_sglang_placement(p); });
  EXPECT_NE(msg.find("physical_to_logical_map[1][1]: expected an integer"), std::string::npos) << msg;
  p = write_file("locbad2.json", R"({"physical_to_logical_map": [[0, 1, 2], [0, 1, 7]]})");
  msg = input_error([&] { read_sglang_placement(p); });
  EXPECT_NE(msg.find("physical_to_logical_map[1][2]: expected an expert id below the slot count 3, got 7"), std::string::npos) << msg;
  p = write_file("locbad3.json", R"({"physical_to_logical_map": [[0, 1, 2], [0, 1, 1]]})");
  msg = input_error([&] { read_sglang_placement(p); });
  EXPECT_NE(msg.find("row 1 (layer 1): expert 2 has no slot"), std::string::npos) << msg;
  p = write_file("locbad4.json", R"([[0, 1]])");
  msg = input_error([&] { read_sglang_placement(p); });
  EXPECT_NE(msg.find("expected a JSON object at top level"), std::string::npos) << msg;
}

TEST(TrtllmConfig, ReadsBlockAndFlowStyles) {
  auto p = write_file("lb.yaml",
                      "num_slots: 4\n"
                      "initial_global_assignments:\n"
                      "  7:\n    - 2\n    - 1\n    - 0\n    - 0\n"
                      "  3: [0, 1, 2, 2]\n"
                      "layer_updates_per_iter: 0\n");
  ExpertMap m = read_trtllm_config(p);
  EXPECT_EQ(m.layer_ids, (std::vector<int>{7, 3}));
  EXPECT_EQ(m.phy2log, (std::vector<int32_t>{2, 1, 0, 0, 0, 1, 2, 2}));
  auto out = temp_path("lb_out.yaml");
  write_trtllm_config(out, m);
  EXPECT_EQ(slurp(out),
            "num_slots: 4\ninitial_global_assignments:\n  3: [0, 1, 2, 2]\n  7: [2, 1, 0, 0]\nlayer_updates_per_iter: 0\n");
}

TEST(TrtllmConfig, MalformedFilesNameFileLineAndField) {
  auto p = write_file("lbbad1.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\n  2: [0, 1]\n");
  auto msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":4: initial_global_assignments[2]: expected a list of num_slots = 3"), std::string::npos) << msg;
  p = write_file("lbbad2.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, x, 2]\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":3: initial_global_assignments[1][1]: expected an integer in [0, 3), got 'x'"), std::string::npos) << msg;
  p = write_file("lbbad3.yaml", "initial_global_assignments:\n  1: [0, 1, 2]\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ": expected a member 'num_slots'"), std::string::npos) << msg;
  p = write_file("lbbad4.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\n  1: [2, 1, 0]\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":4: initial_global_assignments[1]: layer appears twice"), std::string::npos) << msg;
  p = write_file("lbbad5.yaml", "num_slots: 3\ninitial_global_assignments: [1, 2\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find("expected valid YAML"), std::string::npos) << msg;
  // A second document was dropped silently (YAML::Load reads the first).
  p = write_file("lbbad7.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\n---\nnum_slots: 4\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":5: expected one YAML document, got 2 (the second starts here)"), std::string::npos) << msg;
  p = write_file("lbbad6.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\n  2: [0, 1, 1]\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find("row 1 (layer 2): expert 2 has no slot"), std::string::npos) << msg;
}

// Issue 15: duplicated or truncated keys were accepted (yaml-cpp keeps the first, nlohmann the
// last); a number beyond double's range escaped as a bare error without the file name.
TEST(TrtllmConfig, DuplicatedAndTruncatedKeysNameTheLine) {
  auto p = write_file("lbdup.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\nnum_slots: 6\n");
  auto msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":4: num_slots: key appears twice"), std::string::npos) << msg;
  p = write_file("lbtrunc.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\nlayer_upd");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":4: layer_upd: expected one of num_slots, initial_global_assignments, layer_updates_per_iter"),
            std::string::npos)
      << msg;
  p = write_file("lbnull.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\nlayer_updates_per_iter:\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":4: layer_updates_per_iter: expected a value, got none"), std::string::npos) << msg;
  p = write_file("lbneg.yaml", "num_slots: 3\ninitial_global_assignments:\n  1: [0, 1, 2]\nlayer_updates_per_iter: -1\n");
  msg = input_error([&] { read_trtllm_config(p); });
  EXPECT_NE(msg.find(p + ":4: layer_updates_per_iter: expected an integer in [0,"), std::string::npos) << msg;
}

TEST(JsonFiles, DuplicatedKeysAndHugeNumbersNameFileAndLine) {
  auto p = write_file("dup.json", "{\"physical_to_logical_map\": [[0, 1]],\n\"physical_to_logical_map\": [[1, 0]]}\n");
  auto msg = input_error([&] { read_sglang_placement(p); });
  EXPECT_NE(msg.find(p + ":2: expected each key once per object, got \"physical_to_logical_map\" twice"), std::string::npos)
      << msg;
  // The same key in different objects is fine; in one nested object it is not.
  p = write_file("nested.json", "{\"a\": {\"x\": 1}, \"b\": {\"x\": 2},\n \"logical_count\": [[1, 2]],\n \"c\": {\"y\": 1,\n \"y\": 2}}");
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find(p + ":4: expected each key once per object, got \"y\" twice"), std::string::npos) << msg;
  p = write_file("huge.json", "{\"logical_count\": [[1, 1e999]]}");
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_NE(msg.find(p + ": expected valid JSON with finite numbers"), std::string::npos) << msg;
  p = write_file("huge2.json", "{\"phy2log\": [[0, 1e999]]}");
  msg = input_error([&] { read_eplb_json(p); });
  EXPECT_NE(msg.find(p + ": expected valid JSON with finite numbers"), std::string::npos) << msg;
}

// nlohmann ends its input at a NUL byte: a file's text after one was ignored, and the part before
// it read as the whole file.
TEST(JsonFiles, NulByteNamesFileLineAndByte) {
  auto p = write_file("nul.json", std::string("{\"physical_to_logical_map\": [[0, 1]]}\n\0{\"x\": 1}", 47));
  auto msg = input_error([&] { read_sglang_placement(p); });
  EXPECT_EQ(msg, p + ":2: byte 38: expected JSON text, got a NUL byte (a binary or corrupted file)");
  p = write_file("nul2.json", std::string("{\"logical_count\": [[1, 2]]}\0\0", 29));
  msg = input_error([&] { read_sglang_stats(p); });
  EXPECT_EQ(msg, p + ":1: byte 27: expected JSON text, got a NUL byte (a binary or corrupted file)");
}

TEST(EplbLoad, ReadsTheReadmeFormAndNamesBadFields) {
  auto p = write_file("load.json", "{\"weight\": [[1, 2.5], [0, 4]], \"num_replicas\": 4, \"num_groups\": 1,"
                                   " \"num_nodes\": 1, \"num_gpus\": 2, \"source\": \"ignored\"}");
  const EplbLoad load = read_eplb_load(p);
  EXPECT_EQ(load.weight, (std::vector<std::vector<double>>{{1, 2.5}, {0, 4}}));
  EXPECT_EQ(load.num_replicas, 4);
  EXPECT_EQ(load.num_gpus, 2);
  p = write_file("load2.json", "{\"weight\": [[1, -2]], \"num_replicas\": 4, \"num_groups\": 1, \"num_nodes\": 1, \"num_gpus\": 2}");
  EXPECT_NE(input_error([&] { read_eplb_load(p); }).find(p + ": weight[0][1]: expected a value >= 0"), std::string::npos);
  p = write_file("load3.json", "{\"weight\": [[1, 2]], \"num_replicas\": 0, \"num_groups\": 1, \"num_nodes\": 1, \"num_gpus\": 2}");
  EXPECT_NE(input_error([&] { read_eplb_load(p); }).find(p + ": num_replicas: expected an integer in [1, 10^9], got 0"),
            std::string::npos);
  p = write_file("load4.json", "{\"weight\": [[1, 2]], \"num_groups\": 1, \"num_nodes\": 1, \"num_gpus\": 2}");
  EXPECT_NE(input_error([&] { read_eplb_load(p); }).find(p + ": expected a field \"num_replicas\""), std::string::npos);
}

TEST(EplbJson, WritesEplbReturnValues) {
  ExpertMap m;
  m.layer_ids = {0};
  m.num_slots = 4;
  m.phy2log = {1, 0, 1, 2};
  auto out = temp_path("eplb.json");
  write_eplb_json(out, m);
  EXPECT_EQ(slurp(out),
            "{\n\"phy2log\": [\n  [1, 0, 1, 2]\n],\n\"log2phy\": [\n  [[1, -1], [0, 2], [3, -1]]\n],\n"
            "\"logcnt\": [\n  [1, 2, 1]\n]\n}\n");
  EXPECT_TRUE(same(read_eplb_json(out), m));
  // EPLB's own log2phy may list replicas in rank order, not slot order.
  auto p = write_file("eplb2.json", R"({"phy2log": [[1, 0, 1, 2]], "log2phy": [[[1, -1], [2, 0], [3, -1]]], "logcnt": [[1, 2, 1]]})");
  EXPECT_TRUE(same(read_eplb_json(p), m));
  p = write_file("eplb3.json", R"({"phy2log": [[1, 0, 1, 2]], "logcnt": [[1, 1, 1]]})");
  auto msg = input_error([&] { read_eplb_json(p); });
  EXPECT_NE(msg.find("logcnt[0][1]: expected 2"), std::string::npos) << msg;
  p = write_file("eplb4.json", R"({"phy2log": [[1, 0, 1, 2]], "log2phy": [[[1, -1], [0, 3], [2, -1]]]})");
  msg = input_error([&] { read_eplb_json(p); });
  EXPECT_NE(msg.find("log2phy[0][1]: expected the slots [0, 2]"), std::string::npos) << msg;
  // A -1 before a slot leaves a replica rank without a slot: EPLB's consumers read log2phy[l, e, :logcnt].
  p = write_file("eplb5.json", R"({"phy2log": [[1, 0, 1, 2]], "log2phy": [[[1, -1, -1], [0, -1, 2], [3, -1, -1]]]})");
  EXPECT_EQ(input_error([&] { read_eplb_json(p); }),
            p + ": log2phy[0][1][2]: expected -1 padding only after the expert's slots, got slot 2 after -1");
}

// eplb-json wrote no layer ids: a trace's layers 3, 5 (zepp place --trace --output-format
// eplb-json) read back as layers 0, 1, and a placement on surviving GPUs lost which GPUs they were.
TEST(EplbJson, KeepsLayerIdsAndRanks) {
  auto out = temp_path("eplb_ids.json");
  write_eplb_json(out, small_map(), {0, 2});
  const std::string text = slurp(out);
  EXPECT_NE(text.find("\"logcnt\": [\n  [2, 2, 1, 1],\n  [1, 1, 3, 1]\n],\n\"layers\": [3, 5],\n\"ranks\": [0, 2]\n}\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(same(read_eplb_json(out), small_map()));
  auto p = write_file("eplb_ids2.json", R"({"phy2log": [[0, 1], [1, 0]], "layers": [4]})");
  EXPECT_EQ(input_error([&] { read_eplb_json(p); }), p + ": layers: expected 2 layer ids, one per row of phy2log, got 1");
  p = write_file("eplb_ids3.json", R"({"phy2log": [[0, 1], [1, 0]], "layers": [4, 4]})");
  EXPECT_EQ(input_error([&] { read_eplb_json(p); }), p + ": layers[1]: expected distinct layer ids, got 4 twice");
  p = write_file("eplb_ids4.json", R"({"phy2log": [[0, 1], [1, 0]], "layers": [4, -1]})");
  EXPECT_EQ(input_error([&] { read_eplb_json(p); }), p + ": layers: expected a list of layer ids in [0, 2^30), got [4,-1]");
}

TEST(Formats, ByNameAndUnknownName) {
  auto out = temp_path("byname.yaml");
  write_expert_map(out, small_map(), "trtllm");
  EXPECT_TRUE(same(read_expert_map(out, "trtllm"), small_map()));
  EXPECT_THROW(write_expert_map(out, small_map(), "vllm"), ArgumentError);
  EXPECT_THROW(read_expert_map(out, "yaml"), ArgumentError);
}

// Any valid map survives every format unchanged (SGLang and EPLB rows are layers 0..L-1).
RC_GTEST_PROP(Formats, RoundTripIsExact, ()) {
  const int L = *rc::gen::inRange(1, 4), E = *rc::gen::inRange(1, 12), P = E + *rc::gen::inRange(0, 8);
  ExpertMap m;
  m.num_slots = P;
  for (int l = 0; l < L; ++l) {
    m.layer_ids.push_back(l);
    auto row = *rc::gen::container<std::vector<int32_t>>(P - E, rc::gen::inRange(0, E));
    for (int e = 0; e < E; ++e) row.insert(row.begin() + *rc::gen::inRange(0, int(row.size()) + 1), e);
    m.phy2log.insert(m.phy2log.end(), row.begin(), row.end());
  }
  for (const auto& format : placement_format_names()) {
    auto path = temp_path("prop." + format);
    write_expert_map(path, m, format);
    std::string text = slurp(path);
    ExpertMap back = read_expert_map(path, format);
    RC_ASSERT(same(back, m));
    write_expert_map(path, back, format);
    RC_ASSERT(slurp(path) == text);
  }
}
