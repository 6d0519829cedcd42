// `zepp place` end to end: the EPLB README example, Zepp and contiguous policies on a load
// file, a real trace, and malformed load files (exit status 2 with a message naming the field).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../common/loads.hpp"
#include "../common/run_zepp.hpp"
#include "../common/temp_dir.hpp"

namespace zepp {
namespace {

using nlohmann::json;
using testing::run_zepp;
using testing::write_file;
using testing::shared_dir;

const std::string kReadme = shared_dir() + "/data/eplb/readme-example.json";

TEST(PlaceCli, EplbReadmeExamplePrintsPublishedPhy2log) {
  if (!std::filesystem::exists(kReadme)) GTEST_SKIP() << "shared EPLB data absent: " << kReadme;
  const auto r = run_zepp("place --policy eplb --load " + kReadme);
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = json::parse(r.out);
  const json expected = json::parse(std::ifstream(kReadme))["expected_phy2log"];
  EXPECT_EQ(out["policy"], "eplb");
  EXPECT_EQ(out["phy2log"], expected);
  ASSERT_EQ(out["logcnt"].size(), 2u);
  EXPECT_EQ(out["logcnt"][0], json({1, 2, 1, 1, 2, 2, 1, 1, 1, 1, 2, 1}));
  EXPECT_EQ(out["log2phy"][0][5], json({0, 2}));  // X = the largest replica count, as zepp.rebalance_experts
}

// The hand case of tests/placement: 2 nodes x 2 GPUs, 8 slots -> S = 2, R = 1.
TEST(PlaceCli, ZeppAndContiguousOnLoadFile) {
  const std::string f = write_file("place_zepp.json",
      R"({"weight": [[100, 10, 10, 10]], "num_replicas": 8, "num_groups": 1, "num_nodes": 2, "num_gpus": 4})");
  const auto z = run_zepp("place --policy zepp --load " + f);
  ASSERT_EQ(z.status, 0) << z.err;
  EXPECT_EQ(json::parse(z.out)["phy2log"], json({{0, 1, 0, 3, 0, 2, 0, 1}}));
  EXPECT_EQ(json::parse(z.out)["logcnt"], json({{4, 2, 1, 1}}));
  const auto c = run_zepp("place --policy contiguous --load " + f);
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(json::parse(c.out)["phy2log"], json({{0, 1, 2, 3}}));
}

// A placement made with --failed-gpus lists only the survivors' slots (with their GPUs in
// "ranks"); given back as --previous under the same loss it is read so ("has 6 slots per layer,
// expected num_replicas = 8" before), and refused under another loss.
TEST(PlaceCli, PlacementOnSurvivorsIsThePreviousOfTheSameLoss) {
  const std::string f = write_file("place_lost.json",
      R"({"weight": [[100, 10, 10, 10], [5, 50, 20, 1]], "num_replicas": 8, "num_groups": 1, "num_nodes": 2, "num_gpus": 4})");
  for (const std::string format : {"eplb-json", "sglang"}) {
    const std::string placed = (testing::process_dir() / ("place_lost_" + format + ".json")).string();
    const std::string lost = "place --policy zepp --load " + f + " --failed-gpus 1 --previous " + placed +
                             " --previous-format " + format;
    const auto first = run_zepp("place --policy zepp --load " + f + " --failed-gpus 1 --output-format " + format +
                                " --output " + placed);
    ASSERT_EQ(first.status, 0) << first.err;
    const auto again = run_zepp(lost);
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(json::parse(again.out)["ranks"], json({0, 2, 3}));
    for (const json& m : json::parse(again.out)["moves"]) EXPECT_EQ(m["slots"], 0);
    const auto whole = run_zepp("place --policy zepp --load " + f + " --previous " + placed + " --previous-format " + format);
    EXPECT_EQ(whole.status, 2);
    EXPECT_NE(whole.err.find("--previous: " + placed + " has 6 slots per layer, expected " + f + "'s num_replicas = 8"),
              std::string::npos) << whole.err;
  }
  // The stdout JSON and (it had no "ranks": taken under another loss, "moved 0 slots") the eplb-json file.
  const std::string file = (testing::process_dir() / "place_lost_file.json").string();
  ASSERT_EQ(run_zepp("place --policy zepp --load " + f + " --failed-gpus 1 --output-format eplb-json --output " + file).status, 0);
  const std::string printed = write_file("place_lost_stdout.json",
                                         run_zepp("place --policy zepp --load " + f + " --failed-gpus 1").out);
  for (const std::string& placed : {printed, file}) {
    const auto other = run_zepp("place --policy zepp --load " + f + " --failed-gpus 2 --previous " + placed);
    EXPECT_EQ(other.status, 2);
    EXPECT_NE(other.err.find("--previous: " + placed +
                             " was placed on GPUs 0,2,3 (its \"ranks\"), not on the GPUs --failed-gpus/--failed-nodes "
                             "leave: 0,1,3"), std::string::npos) << other.err;
    EXPECT_EQ(run_zepp("place --policy zepp --load " + f + " --failed-gpus 1 --previous " + placed).status, 0);
  }
}

// A TensorRT-LLM --previous was matched to the load rows by its keys' file order: the same
// placement with its layers listed 1, 0 "moved 17 slots" (0 in ascending order), and keys 0 and 5
// were taken for the 2 rows and written back as layers 0 and 5. A load file's rows are layers
// 0..L-1: rows match by layer id, and a layer the loads do not have is refused, naming it.
TEST(PlaceCli, TrtllmPreviousRowsMatchTheLoadRowsByLayerId) {
  if (!std::filesystem::exists(kReadme)) GTEST_SKIP() << "shared EPLB data absent: " << kReadme;
  const std::string placed = (testing::process_dir() / "place_ids_placed.yaml").string();
  const auto first = run_zepp("place --policy zepp --load " + kReadme + " --output-format trtllm --output " + placed);
  ASSERT_EQ(first.status, 0) << first.err;
  const std::string yaml = testing::slurp(placed);
  const size_t row0 = yaml.find("\n  0: ["), row1 = yaml.find("\n  1: ["), end = yaml.find('\n', row1 + 1);
  ASSERT_TRUE(row0 != std::string::npos && row1 != std::string::npos && end != std::string::npos) << yaml;
  const std::string swapped = write_file("place_ids_swapped.yaml", yaml.substr(0, row0) + yaml.substr(row1, end - row1) +
                                                                        yaml.substr(row0, row1 - row0) + yaml.substr(end));
  ASSERT_LT(testing::slurp(swapped).find("\n  1: ["), testing::slurp(swapped).find("\n  0: [")) << testing::slurp(swapped);
  const std::string out = (testing::process_dir() / "place_ids_out.yaml").string();
  for (const std::string& prev : {placed, swapped}) {
    const std::string args = "place --policy zepp --load " + kReadme + " --previous " + prev + " --previous-format trtllm";
    const auto r = run_zepp(args);
    ASSERT_EQ(r.status, 0) << prev << "\n" << r.err;
    for (const json& m : json::parse(r.out)["moves"]) EXPECT_EQ(m["slots"], 0) << prev;
    EXPECT_NE(r.err.find("moved 0 slots over 2 layers"), std::string::npos) << prev << "\n" << r.err;
    ASSERT_EQ(run_zepp(args + " --output-format trtllm --output " + out).status, 0);
    EXPECT_EQ(testing::slurp(out), yaml) << prev;  // layers 0 and 1, as placed
  }
  const std::string five = write_file("place_ids_five.yaml", yaml.substr(0, row1) + "\n  5: [" + yaml.substr(row1 + 7));
  const auto r = run_zepp("place --policy zepp --load " + kReadme + " --previous " + five + " --previous-format trtllm");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: invalid argument: --previous: " + five + " places layer 5, which the loads do not have: "
                   "expected layers 0..1 (the rows of " + kReadme + ", in order)\n");
}

// A placement file in `format` with `rows` (phy2log rows) for layers `ids` (sglang: rows 0..; the
// ids are their indices).
std::string placement_file(const std::string& name, const std::string& format, const json& rows,
                           const std::vector<int>& ids, const std::string& extra = "") {
  if (format == "trtllm") {
    std::string yaml = "num_slots: " + std::to_string(rows[0].size()) + "\ninitial_global_assignments:\n";
    for (size_t l = 0; l < rows.size(); ++l) yaml += "  " + std::to_string(ids[l]) + ": " + rows[l].dump() + "\n";
    return write_file(name, yaml);
  }
  return write_file(name, "{\"" + std::string(format == "sglang" ? "physical_to_logical_map" : "phy2log") +
                              "\": " + rows.dump() + extra + "}");
}

// A routing JSONL trace of layers 1 and 2 (8 experts, top-2, 8 tokens each) for Mixtral-8x7B.
std::string two_layer_trace(const std::string& name) {
  std::string log;
  for (int layer : {1, 2})
    for (int e = 0; e < 8; ++e)
      log += R"({"dataset":"g","problem_id":0,"layer":)" + std::to_string(layer) + R"(,"experts":[)" +
             std::to_string(e) + "," + std::to_string((e + layer) % 8) + R"(],"gating_probs":[0.6,0.4],"token_idx":)" +
             std::to_string(e) + "}\n";
  return write_file(name, log);
}

// Layers a --previous has beyond the loads were dropped without a word (3 rows for the 2-layer
// example), where too few said "has 1 layers, the loads 2": a count that differs is refused both
// ways (eplb-json), a layer the loads do not have is refused naming it (sglang, trtllm). SGLang's
// trivial row (slot p -> expert p mod E), what it and --output-format sglang give dense layers, is
// no placement and stays accepted.
TEST(PlaceCli, PreviousWithLayersTheLoadsDoNotHaveIsRefused) {
  if (!std::filesystem::exists(kReadme)) GTEST_SKIP() << "shared EPLB data absent: " << kReadme;
  const auto first = run_zepp("place --policy zepp --load " + kReadme);
  ASSERT_EQ(first.status, 0) << first.err;
  const json rows = json::parse(first.out)["phy2log"];
  const json three = {rows[0], rows[1], rows[0]}, one = {rows[0]};
  const std::string base = "place --policy zepp --load " + kReadme + " --previous ";
  for (const auto& [rows_given, count] : {std::pair{three, 3}, std::pair{one, 1}}) {
    const std::string f = placement_file("place_rows_" + std::to_string(count) + ".json", "eplb-json", rows_given, {});
    const auto r = run_zepp(base + f);
    EXPECT_EQ(r.status, 2) << count;
    EXPECT_EQ(r.err, "zepp: invalid argument: --previous: " + f + " has " + std::to_string(count) +
                         " layers (rows of phy2log), the loads 2: expected one row per layer of the loads, in their order\n");
  }
  for (const std::string format : {"sglang", "trtllm"}) {
    const std::string f = placement_file("place_rows_3." + format, format, three, {0, 1, 2});
    const auto r = run_zepp(base + f + " --previous-format " + format);
    EXPECT_EQ(r.status, 2) << format;
    EXPECT_EQ(r.err, "zepp: invalid argument: --previous: " + f + " places layer 2, which the loads do not have: "
                     "expected layers 0..1 (the rows of " + kReadme + ", in order)\n");
  }
  json trivial = rows;
  trivial.push_back(json::array());
  for (int p = 0; p < 16; ++p) trivial[2].push_back(p % 12);
  const std::string dense = placement_file("place_rows_trivial.json", "sglang", trivial, {});
  const auto r = run_zepp(base + dense + " --previous-format sglang");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["phy2log"], rows);
  EXPECT_NE(r.err.find("moved 0 slots over 2 layers"), std::string::npos) << r.err;

  // A trace's layers 1 and 2: the SGLang file written for them has a trivial row 0 and is taken
  // back; a TensorRT-LLM file naming layer 0 is not.
  const std::string trace = two_layer_trace("place_rows_trace.jsonl");
  const std::string placed = (testing::process_dir() / "place_rows_trace_sglang.json").string();
  const std::string on_trace = "place --policy zepp --trace " + trace + " --model mixtral-8x7b --nodes 1 --gpus-per-node 2";
  ASSERT_EQ(run_zepp(on_trace + " --output-format sglang --output " + placed).status, 0);
  ASSERT_EQ(json::parse(testing::slurp(placed))["physical_to_logical_map"].size(), 3u);
  const auto again = run_zepp(on_trace + " --previous " + placed + " --previous-format sglang");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find("moved 0 slots over 2 layers"), std::string::npos) << again.err;
  const json placed_rows = json::parse(testing::slurp(placed))["physical_to_logical_map"];
  const std::string yaml = placement_file("place_rows_trace.yaml", "trtllm", placed_rows, {0, 1, 2});
  const auto refused = run_zepp(on_trace + " --previous " + yaml + " --previous-format trtllm");
  EXPECT_EQ(refused.status, 2);
  EXPECT_EQ(refused.err, "zepp: invalid argument: --previous: " + yaml + " places layer 0, which the loads do not "
                         "have: expected the trace's layers 1,2\n");
}

// --nodes x --gpus-per-node was an int product: 65536 x 65536 wrapped to 0 GPUs and the program
// died of SIGFPE; 65536 x 32768 named "gpus_per_node -32768".
TEST(PlaceCli, GpuCountsBeyondIntAreRefused) {
  const std::string trace = two_layer_trace("place_huge_trace.jsonl");
  const std::string base = "place --policy zepp --trace " + trace + " --model mixtral-8x7b ";
  auto r = run_zepp(base + "--nodes 65536 --gpus-per-node 65536");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: invalid argument: --gpus-per-node: --nodes 65536 x --gpus-per-node 65536 = 4294967296 GPUs "
                   "with 3 slots each: expected at most 2^31 - 1 slots in all\n");
  r = run_zepp(base + "--nodes 2147483647 --gpus-per-node 2147483647");  // the product wrapped int64 too
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: invalid argument: --gpus-per-node: --nodes 2147483647 x --gpus-per-node 2147483647 = "
                   "4611686014132420609 GPUs with 3 slots each: expected at most 2^31 - 1 slots in all\n");
  // Fits an int, but Zepp's placement scans every GPU for each slot: minutes per layer, refused.
  r = run_zepp(base + "--nodes 4096 --gpus-per-node 8");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("zepp: invalid argument: --trace: this run needs about "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(32768 GPUs x 8 experts, 0 pairs, 0 tasks per strategy), more than the 60 s allowed"),
            std::string::npos) << r.err;
  r = run_zepp(base + "--nodes 1 --gpus-per-node 1000000000");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: invalid argument: --gpus-per-node: --nodes 1 x --gpus-per-node 1000000000 = 1000000000 GPUs "
                   "with 3 slots each: expected at most 2^31 - 1 slots in all\n");
}

// With --load, --model only sizes the moves from --previous: without one it was ignored, exit 0,
// even for a name that is no preset.
TEST(PlaceCli, ModelWithLoadNeedsPrevious) {
  const std::string f = write_file("place_model.json",
      R"({"weight": [[100, 10, 10, 10]], "num_replicas": 8, "num_groups": 1, "num_nodes": 2, "num_gpus": 4})");
  for (const std::string& policy : {"zepp", "eplb"}) {
    const auto r = run_zepp("place --policy " + policy + " --load " + f + " --model deepseek-v2-lite");
    EXPECT_EQ(r.status, 2) << policy;
    EXPECT_EQ(r.err, "zepp: invalid argument: --model: with --load it only gives an expert's size for the weight moves "
                     "from --previous FILE; give that or leave this out\n") << policy;
  }
  const auto unknown = run_zepp("place --policy zepp --load " + f + " --model nope");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("zepp: invalid argument: --model: unknown preset 'nope', expected one of"), std::string::npos)
      << unknown.err;
  const std::string placed = write_file("place_model_prev.json", run_zepp("place --policy zepp --load " + f).out);
  const auto sized = run_zepp("place --policy zepp --load " + f + " --model deepseek-v2-lite --previous " + placed);
  ASSERT_EQ(sized.status, 0) << sized.err;
  EXPECT_NE(sized.err.find("moved 0 slots over 1 layers: 0.0 MB over NVLink, 0.0 MB over NICs"), std::string::npos)
      << sized.err;
}

// An eplb-json --previous made from a trace names its layers ("layers"); rows pair by position,
// so the placement of other layers (ids 5, 6 here) was taken for layers 1, 2 without a word.
TEST(PlaceCli, EplbJsonPreviousLayersMustBeTheTraces) {
  const std::string trace = two_layer_trace("place_layers_trace.jsonl");
  const std::string on_trace = "place --policy zepp --trace " + trace + " --model mixtral-8x7b --nodes 1 --gpus-per-node 2";
  const auto placed = run_zepp(on_trace);
  ASSERT_EQ(placed.status, 0) << placed.err;
  json doc = json::parse(placed.out);
  EXPECT_EQ(doc["layers"], json({1, 2}));
  const std::string same = write_file("place_layers_same.json", doc.dump());
  const auto again = run_zepp(on_trace + " --previous " + same);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find("moved 0 slots over 2 layers"), std::string::npos) << again.err;
  doc["layers"] = {5, 6};
  const std::string other = write_file("place_layers_other.json", doc.dump());
  const auto r = run_zepp(on_trace + " --previous " + other);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "zepp: invalid argument: --previous: " + other + " holds layers 5,6 (its \"layers\"), the trace's "
                   "loads are layers 1,2: expected the same layers in the same order\n");
  // The eplb-json file of the same run names them too (it had none: read back as layers 0, 1).
  const std::string file = (testing::process_dir() / "place_layers_file.json").string();
  ASSERT_EQ(run_zepp(on_trace + " --output-format eplb-json --output " + file).status, 0);
  EXPECT_EQ(json::parse(testing::slurp(file))["layers"], json({1, 2}));
  const auto from_file = run_zepp(on_trace + " --previous " + file);
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_NE(from_file.err.find("moved 0 slots over 2 layers"), std::string::npos) << from_file.err;
  doc["layers"] = "1,2";
  const std::string bad = write_file("place_layers_bad.json", doc.dump());
  const auto m = run_zepp(on_trace + " --previous " + bad);
  EXPECT_EQ(m.status, 2);
  EXPECT_NE(m.err.find(bad + ": layers: expected a list of layer ids in [0, 2^30), got \"1,2\""), std::string::npos) << m.err;
}

// An eplb-json --previous's "ranks" were read only for a placement on survivors: [0, 1, 2] beside
// a phy2log on all 8 GPUs was taken. They are checked against the GPUs its slots fill.
TEST(PlaceCli, PreviousRanksAreCheckedWithoutLostGpus) {
  if (!std::filesystem::exists(kReadme)) GTEST_SKIP() << "shared EPLB data absent: " << kReadme;
  const auto first = run_zepp("place --policy zepp --load " + kReadme);
  ASSERT_EQ(first.status, 0) << first.err;
  const json rows = json::parse(first.out)["phy2log"];
  const std::string bad = placement_file("place_ranks_bad.json", "eplb-json", rows, {}, ", \"ranks\": [0, 1, 2]");
  for (const std::string lost : {"", " --failed-gpus 3"}) {
    const auto r = run_zepp("place --policy zepp --load " + kReadme + " --previous " + bad + lost);
    EXPECT_EQ(r.status, 2) << lost;
    EXPECT_EQ(r.err, "zepp: invalid argument: --previous: " + bad + " was placed on GPUs 0,1,2 (its \"ranks\"), but its "
                     "16 slots per layer are 2 on each of the 8 GPUs: expected ranks 0,1,2,3,4,5,6,7\n") << lost;
  }
  const std::string good = placement_file("place_ranks_good.json", "eplb-json", rows, {}, ", \"ranks\": [0, 1, 2, 3, 4, 5, 6, 7]");
  const auto r = run_zepp("place --policy zepp --load " + kReadme + " --previous " + good);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("moved 0 slots over 2 layers"), std::string::npos) << r.err;
}

// Expert 13 in a --previous for 12-expert loads read "expert 12 has no slot, expected every expert
// of [0, 14)" (E taken from the file): the id beyond the loads' experts is named, with its place.
TEST(PlaceCli, PreviousExpertBeyondTheLoadsIsNamed) {
  if (!std::filesystem::exists(kReadme)) GTEST_SKIP() << "shared EPLB data absent: " << kReadme;
  const auto first = run_zepp("place --policy zepp --load " + kReadme);
  ASSERT_EQ(first.status, 0) << first.err;
  json rows = json::parse(first.out)["phy2log"];
  rows[1][5] = 13;
  for (const auto& [format, field] : {std::pair<std::string, std::string>{"sglang", "physical_to_logical_map"},
                                      {"trtllm", "initial_global_assignments"}, {"eplb-json", "phy2log"}}) {
    const std::string f = placement_file("place_expert13." + format, format, rows, {0, 1});
    const auto r = run_zepp("place --policy zepp --load " + kReadme + " --previous " + f + " --previous-format " + format);
    EXPECT_EQ(r.status, 2) << format;
    EXPECT_EQ(r.err, "zepp: error: " + f + ": " + field + ": row 1 (layer 1) slot 5: expert 13 is beyond the 12 experts "
                     "of the loads (ids 0..11)\n");
  }
}

TEST(PlaceCli, MalformedLoadFilesExitTwoNamingTheField) {
  const std::string missing = write_file("place_missing.json",
      R"({"weight": [[1, 2]], "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  auto r = run_zepp("place --policy eplb --load " + missing);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(missing + ": expected a field \"num_replicas\""), std::string::npos) << r.err;

  const std::string typed = write_file("place_typed.json",
      R"({"weight": [[1, "x"]], "num_replicas": 2, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  r = run_zepp("place --policy zepp --load " + typed);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(typed + ": weight[0][1]: expected a number, got \"x\""), std::string::npos) << r.err;

  const std::string broken = write_file("place_broken.json", R"({"weight": [[1, 2]], )");
  r = run_zepp("place --policy eplb --load " + broken);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(broken + ":1: expected valid JSON"), std::string::npos) << r.err;

  // One rule for every policy: a load above 1e15 is refused naming the field (eplb said "is inf",
  // its float32 overflowing, and zepp took it).
  const std::string huge = write_file("place_huge.json",
      R"({"weight": [[1e300, 2, 3, 4]], "num_replicas": 6, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  for (const char* policy : {"eplb", "zepp", "contiguous"}) {
    r = run_zepp(std::string("place --policy ") + policy + " --load " + huge);
    EXPECT_EQ(r.status, 2) << policy;
    EXPECT_NE(r.err.find(huge + ": weight[0][0]: expected a load in [0, 1e15], got 1e+300"), std::string::npos) << r.err;
  }

  const std::string indivisible = write_file("place_indivisible.json",
      R"({"weight": [[1, 2, 3]], "num_replicas": 5, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  r = run_zepp("place --policy eplb --load " + indivisible);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(indivisible + ": num_replicas: 5 is not a multiple of num_gpus = 2"), std::string::npos)
      << r.err;
}

// With --load the file sets the problem: a flag that applies to --trace only is refused, not ignored.
TEST(PlaceCli, TraceOnlyFlagsAreRefusedWithLoad) {
  const std::string f = write_file("place_trace_only.json",
      R"({"weight": [[1, 2, 3, 4]], "num_replicas": 6, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  for (const std::string flag : {"--extra-slots 4", "--nodes 2", "--gpus-per-node 2", "--groups 1", "--topology a100"}) {
    const auto r = run_zepp("place --policy eplb --load " + f + " " + flag);  // eplb: --groups would act with --trace
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_NE(r.err.find(flag.substr(0, flag.find(' ')) + ": applies to --trace only: with --load the file's num_replicas"),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(run_zepp("place --policy eplb --load " + f).status, 0);
}

// Flags of another policy or input are refused, not ignored.
TEST(PlaceCli, FlagsOfAnotherPolicyAreRefused) {
  const std::string f = write_file("place_policy_flags.json",
      R"({"weight": [[1, 2, 3, 4]], "num_replicas": 6, "num_groups": 1, "num_nodes": 1, "num_gpus": 2})");
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"--policy eplb --previous-format sglang", "--previous-format: describes --previous FILE"},
                        // The flag given is named (it said --previous for --failed-nodes).
                        Case{"--policy eplb --failed-nodes 1", "--failed-nodes: rebalancing (--previous, --failed-gpus, "
                                                                "--failed-nodes) needs --policy zepp (got 'eplb')"},
                        Case{"--policy contiguous --failed-gpus 1", "--failed-gpus: rebalancing"},
                        Case{"--policy zepp --groups 1", "--groups: only acts with --policy eplb"},
                        Case{"--policy contiguous --extra-slots 2", "--extra-slots: does not act with --policy contiguous"}}) {
    const auto r = run_zepp("place --load " + f + " " + c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
}

// A real trace: Mixtral-8x7B GSM8K (32 layers, 8 experts, top-2) on 2 nodes x 2 GPUs, R = 2.
TEST(PlaceCli, TraceLoadsEveryLayer) {
  const std::string trace = shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "trace absent: " << trace;
  const auto r = run_zepp("place --policy zepp --trace " + trace + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = json::parse(r.out);
  ASSERT_EQ(out["layers"].size(), 32u);
  ASSERT_EQ(out["phy2log"].size(), 32u);
  for (const auto& row : out["logcnt"]) {
    int total = 0;
    for (const auto& c : row) total += c.get<int>();
    EXPECT_EQ(total, 4 * (2 + 2));  // S = ceil(8 / 4) + 2 slots on each of 4 GPUs
  }
  const auto e = run_zepp("place --policy eplb --trace " + trace + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2");
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(json::parse(e.out)["phy2log"][0].size(), 16u);
}

// --nodes 0 was taken for "not given" ("--nodes: is required"); --gpus-per-node left out without
// --topology said "must be >= 1" although its help names the topology's as the default.
TEST(PlaceCli, TraceNodeAndGpuCountErrorsSayWhatIsWrong) {
  const std::string trace = shared_dir() + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "trace absent: " << trace;
  const std::string base = "place --policy zepp --trace " + trace + " --model mixtral-8x7b ";
  const auto zero = run_zepp(base + "--nodes 0 --gpus-per-node 2");
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.err.find("--nodes: must be >= 1 with --trace, got 0"), std::string::npos) << zero.err;
  const auto none = run_zepp(base + "--gpus-per-node 2");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("--nodes: is required with --trace"), std::string::npos) << none.err;
  const auto gpn = run_zepp(base + "--nodes 2");
  EXPECT_EQ(gpn.status, 2);
  EXPECT_NE(gpn.err.find("--gpus-per-node: is required with --trace unless --topology names the cluster"),
            std::string::npos) << gpn.err;
  const auto topo = run_zepp(base + "--nodes 2 --topology a100");  // 4 GPUs per node: 8 GPUs
  ASSERT_EQ(topo.status, 0) << topo.err;
  EXPECT_EQ(json::parse(topo.out)["phy2log"][0].size(), 8u * (1 + 2));  // S = ceil(8 / 8) + 2
}

// eplb.py's global policy (num_groups % num_nodes != 0) accepts 6 GPUs on 4 nodes; num_nodes plays
// no part in it.
TEST(PlaceCli, EplbGlobalPolicyAnyGpuCount) {
  const std::string four = write_file("place_global4.json",
      R"({"weight": [[8, 4, 2, 1, 2, 4]], "num_replicas": 12, "num_groups": 1, "num_nodes": 4, "num_gpus": 6})");
  const std::string one = write_file("place_global1.json",
      R"({"weight": [[8, 4, 2, 1, 2, 4]], "num_replicas": 12, "num_groups": 1, "num_nodes": 1, "num_gpus": 6})");
  const auto a = run_zepp("place --policy eplb --load " + four), b = run_zepp("place --policy eplb --load " + one);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(json::parse(a.out), json::parse(b.out));
  EXPECT_EQ(json::parse(a.out)["logcnt"], json({{5, 2, 1, 1, 1, 2}}));
  EXPECT_EQ(json::parse(a.out)["log2phy"][0][0].size(), 5u);
}

// Power-law loads, 2 layers x 64 experts on 4 nodes x 4 GPUs, 96 slots. Rebalancing after a small
// drift moves nothing across nodes; losing node 3 keeps every expert on the 12 surviving ranks.
TEST(PlaceCli, PreviousPlacementAndLostNode) {
  std::string w1 = "[", w2 = "[";
  for (int l = 0; l < 2; ++l) {
    w1 += l ? ",[" : "[";
    w2 += l ? ",[" : "[";
    for (int e = 0; e < 64; ++e) {
      const double load = 1e6 / ((e * 37 + l * 11) % 64 + 1.0);
      w1 += (e ? "," : "") + std::to_string(load);
      w2 += (e ? "," : "") + std::to_string(load * (1 + 0.02 * ((e * 7 % 5) - 2) / 2));  // within +-2%
    }
    w1 += "]";
    w2 += "]";
  }
  const std::string tail = R"(], "num_replicas": 96, "num_groups": 1, "num_nodes": 4, "num_gpus": 16})";
  const std::string before = write_file("place_before.json", R"({"weight": )" + w1 + tail);
  const std::string after = write_file("place_after.json", R"({"weight": )" + w2 + tail);
  const auto first = run_zepp("place --policy zepp --load " + before);
  ASSERT_EQ(first.status, 0) << first.err;
  const std::string current = write_file("place_current.json", first.out);
  const auto again = run_zepp("place --policy zepp --load " + after + " --previous " + current + " --model deepseek-v2-lite");
  ASSERT_EQ(again.status, 0) << again.err;
  const json out = json::parse(again.out);
  ASSERT_EQ(out["moves"].size(), 2u);
  for (const json& m : out["moves"]) {
    EXPECT_EQ(m["nic"], 0);
    // Not the issue's 5% (asserted on the issue's input in SmallDriftOnTheIssuesLayer): here 4 of the
    // 16 GPUs end above the 1% target after the drift (layer 0: 1.020, 1.014, 1.014, 1.013 x mean
    // against 1.0107), and a count-preserving swap lowers only one of them, so swaps change >= 8
    // slots (8.3%); the 3-slot fixes that change replica counts all fetch over NICs. Seen: 8 and 2.
    EXPECT_LE(m["slots"].get<int>(), 96 / 10);
    EXPECT_DOUBLE_EQ(m["nvlink_bytes"].get<double>(), m["nvlink"].get<int>() * 3.0 * 2048 * 1408 * 2);
  }
  EXPECT_NE(again.err.find("16 of 16 GPUs serve"), std::string::npos) << again.err;
  // The SGLang file place writes, given back as --previous without --previous-format, is named as
  // such (it read "expected a field \"phy2log\"" and no more); with the flag it is read.
  const std::string sglang = (testing::process_dir() / "place_current_sglang.json").string();
  ASSERT_EQ(run_zepp("place --policy zepp --load " + before + " --output-format sglang --output " + sglang).status, 0);
  const auto unnamed = run_zepp("place --policy zepp --load " + after + " --previous " + sglang);
  EXPECT_EQ(unnamed.status, 2);
  EXPECT_EQ(unnamed.err, "zepp: error: " + sglang + ": expected a field \"phy2log\" (read as eplb-json, the default); it is a "
                         "sglang placement file: add --previous-format sglang\n");
  EXPECT_EQ(run_zepp("place --policy zepp --load " + after + " --previous " + sglang + " --previous-format sglang").status, 0);
  // Without --model an expert's size is unknown: the bytes are null and the line says so (they
  // read 0 MB, though slots moved).
  const auto unsized = run_zepp("place --policy zepp --load " + after + " --previous " + current);
  ASSERT_EQ(unsized.status, 0) << unsized.err;
  for (const json& m : json::parse(unsized.out)["moves"]) {
    EXPECT_TRUE(m["nvlink_bytes"].is_null());
    EXPECT_TRUE(m["nic_bytes"].is_null());
  }
  EXPECT_NE(unsized.err.find("(bytes unknown: --model gives an expert's size)"), std::string::npos) << unsized.err;

  const auto budget = run_zepp("place --policy zepp --load " + after + " --previous " + current +
                               " --model deepseek-v2-lite --max-moved-mb 0");
  ASSERT_EQ(budget.status, 0) << budget.err;
  EXPECT_EQ(json::parse(budget.out)["phy2log"], json::parse(first.out)["phy2log"]);

  const auto lost = run_zepp("place --policy zepp --load " + before + " --previous " + current + " --failed-nodes 3");
  ASSERT_EQ(lost.status, 0) << lost.err;
  const json l = json::parse(lost.out);
  EXPECT_EQ(l["ranks"], json({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  for (const json& row : l["phy2log"]) {
    ASSERT_EQ(row.size(), 72u);  // 12 ranks x 6 slots
    std::vector<int> seen(64, 0);
    for (const json& e : row) ++seen[e.get<int>()];
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 0);
  }
  const auto both = run_zepp("place --policy zepp --load " + before + " --failed-nodes 3 --failed-gpus 13");
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--failed-gpus: GPU 13 is lost twice"), std::string::npos) << both.err;
  const auto eplb = run_zepp("place --policy eplb --load " + before + " --failed-gpus 1");
  EXPECT_EQ(eplb.status, 2);
  EXPECT_NE(eplb.err.find("--failed-gpus: rebalancing (--previous, --failed-gpus, --failed-nodes) needs --policy zepp"), std::string::npos) << eplb.err;
}

// The issue's churn case through the CLI: 256 experts, 288 slots on 32 GPUs of 4 nodes, every load
// moved by at most +-2% (power law 1.0, seeded). Rebalancing with --previous moves nothing across
// nodes and at most 5% of the slots, where a from-scratch placement reshuffles most of them.
TEST(PlaceCli, SmallDriftOnTheIssuesLayer) {
  json before = {{"num_replicas", 288}, {"num_groups", 1}, {"num_nodes", 4}, {"num_gpus", 32}};
  json after = before;
  for (unsigned layer = 0; layer < 2; ++layer) {
    const std::vector<double> load = test::power_law(256, 1.0, 10 + layer);
    before["weight"].push_back(load);
    after["weight"].push_back(test::drift(load, 0.02, 20 + layer));
  }
  const std::string b = write_file("drift_before.json", before.dump()), a = write_file("drift_after.json", after.dump());
  const auto first = run_zepp("place --policy zepp --load " + b);
  ASSERT_EQ(first.status, 0) << first.err;
  const std::string current = write_file("drift_current.json", first.out);
  const auto again = run_zepp("place --policy zepp --load " + a + " --previous " + current + " --model deepseek-v2-lite");
  ASSERT_EQ(again.status, 0) << again.err;
  const auto scratch = run_zepp("place --policy zepp --load " + a);
  ASSERT_EQ(scratch.status, 0) << scratch.err;
  const json out = json::parse(again.out), prev = json::parse(first.out), fresh = json::parse(scratch.out);
  ASSERT_EQ(out["moves"].size(), 2u);
  for (int l = 0; l < 2; ++l) {
    const json& m = out["moves"][l];
    EXPECT_EQ(m["nic"], 0) << "layer " << l;
    EXPECT_LE(m["slots"].get<int>(), 288 * 5 / 100) << "layer " << l;
    int changed = 0, fresh_changed = 0;
    for (int p = 0; p < 288; ++p) {
      changed += out["phy2log"][l][p] != prev["phy2log"][l][p];
      fresh_changed += fresh["phy2log"][l][p] != prev["phy2log"][l][p];
    }
    EXPECT_EQ(changed, m["slots"].get<int>()) << "layer " << l;
    EXPECT_GT(fresh_changed, 288 / 2) << "layer " << l;
    EXPECT_LE(out["imbalance"][l]["placed"].get<double>(), out["imbalance"][l]["from_scratch"].get<double>() * 1.01 + 1e-12);
  }
}

// A Mixtral routing log whose layer field ran past the model's 32 layers (issue 11) is rejected,
// naming the file, the line of the first bad record and the preset.
TEST(PlaceCli, LayerIdsBeyondThePresetExitTwo) {
  std::string log;
  for (int i = 0; i < 40; ++i)
    log += R"({"dataset":"g","problem_id":0,"layer":)" + std::to_string(i) +
           R"(,"experts":[1,2],"gating_probs":[0.6,0.4],"token_idx":0})" + "\n";
  const std::string path = write_file("place_layers.jsonl", log);
  const auto r = run_zepp("place --policy zepp --trace " + path + " --model mixtral-8x7b --nodes 2 --gpus-per-node 2");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(path + ":33: layer 32 is beyond the 32 layers (ids 0..31) of model preset mixtral-8x7b"),
            std::string::npos)
      << r.err;
}

// EPLB with num_replicas 4e8 took memory without end (8.9 GB after 40 s) where Python refused it:
// `zepp place` has Python's 60 s budget (pipeline/cost.hpp call_seconds_budget), ZEPP_MAX_SECONDS too.
// 1e8 replicas: over 60 s while the estimate's 1.6 GB fits most machines, so time is what refuses.
TEST(PlaceCli, ReplicasBeyondTheCallBudgetAreRefusedAsPythonRefusesThem) {
  const std::string big = write_file("place_big.json",
      R"({"weight": [[1, 2, 3, 4]], "num_replicas": 100000000, "num_groups": 1, "num_nodes": 1, "num_gpus": 4})");
  auto r = run_zepp("place --policy eplb --load " + big);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--load: this run needs about"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("70.8 s (4 GPUs x 4 experts"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the 60 s allowed; place fewer layers, experts or replicas"), std::string::npos) << r.err;
  EXPECT_LT(r.cpu_seconds, testing::kQuick) << r.err;
  r = testing::run_command("ZEPP_MAX_SECONDS=10 ", "place --policy eplb --load " + big);
  EXPECT_NE(r.err.find("more than the 10 s allowed"), std::string::npos) << r.err;
  r = testing::run_command("ZEPP_MAX_SECONDS=soon ", "place --policy eplb --load " + big);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ZEPP_MAX_SECONDS: expected a positive number of seconds, got 'soon'"), std::string::npos) << r.err;
}

TEST(PlaceCli, BadArgumentsExitTwo) {
  auto r = run_zepp("place --policy nope --load x.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--policy"), std::string::npos) << r.err;
  r = run_zepp("place --policy zepp");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--load"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace zepp
