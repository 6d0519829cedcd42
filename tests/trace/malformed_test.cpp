// Every malformed input gives an InputError naming the file, the line (CSV, JSONL) or byte
// offset (JSON), and what was expected.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>

#include "core/error.hpp"
#include "../common/temp_dir.hpp"
#include "trace/layer_check.hpp"
#include "trace/trace.hpp"

namespace zepp {
namespace {

using testing::TempDir;

struct Case {
  const char* label;
  const char* file;     // written into a fresh folder, then read alone
  std::string content;
  std::string message;  // expected fragment after the folder prefix, e.g. "t.json: byte 5: expected ..."
};

const std::string kDeepSeekHeader = "Layer ID,Batch Number,Token,Activated Expert IDs\n";
const std::string kLoadHeader = "Layer,Language,Expert_0,Expert_1\n";
const std::string kRecord = R"({"dataset":"g","problem_id":0,"layer":0,"experts":[1,2],"gating_probs":[0.6,0.4],"token_idx":0})";

std::vector<Case> cases() {
  return {
      // selection JSON: byte offsets
      {"json truncated", "t.json", R"([{"1":[[3],[4])", "t.json: byte 14: expected ',' or ']' after a token"},
      {"json trailing comma", "t.json", R"([{"1":[[3]],}])", "t.json: byte 12: expected ',' and another layer key, or '}', after a layer"},
      {"json top-k varies", "t.json", R"([{"1":[[3],[4,5]]}])", "t.json: byte 11: expected top-k 1 for layer 1 (as at "},
      {"json negative id", "t.json", R"([{"1":[[2],[-3]]}])", "t.json: byte 11: expected a non-negative expert id"},
      {"json float id", "t.json", R"([{"1":[[1.5]]}])", "t.json: byte 8: expected an expert id (an integer), got \"1.5\""},
      {"json string id", "t.json", R"([{"1":[["7"]]}])", "t.json: byte 8: expected an expert id (an integer), got \"\"7\"\""},
      {"json repeated id", "t.json", R"([{"1":[[4,4]]}])", "t.json: byte 7: expected distinct expert ids"},
      {"json layer without tokens", "t.json", R"([{"1":[],"3":[[1]]},{"1":[]}])",
       "t.json: byte 2: expected tokens for layer 1 somewhere in the trace, got none"},
      {"json bad layer key", "t.json", R"([{"one":null}])", "t.json: byte 2: expected a layer index key"},
      {"json layer twice", "t.json", R"([{"1":[[1]],"1":[[2]]}])", "t.json: byte 12: expected each layer once per step"},
      {"json no steps", "t.json", "[]", "t.json: byte 0: expected at least one step"},
      {"json step not object", "t.json", "[[1]]", "t.json: byte 1: expected a step: an object keyed by layer index"},
      // Text after the closed list was called a truncation, at the text's last byte.
      {"json trailing text", "t.json", R"([{"1":[[1]]}] x)", "t.json: byte 14: expected the end of the document after the list of steps, got more text"},
      {"json trailing words", "t.json", "[{\"1\":[[1]]}]\n garbage", "t.json: byte 15: expected the end of the document after the list of steps, got more text"},
      {"json trailing comma", "t.json", "[{\"1\":[[1]]}],", "t.json: byte 13: expected the end of the document after the list of steps, got more text"},
      {"json truncated after a string with a bracket", "t.json", "[{\"1\":[[1]]}, \"]\\\"]\", {",
       "t.json: byte 22: expected ']' closing the list of steps at the end of the file, got \"{\" (truncated file?)"},
      {"json two documents", "t.json", R"([{"1":[[1]]}] [])", "t.json: byte 14: expected the end of the document"},
      {"json truncated inside", "t.json", R"([{"1":[[3],[4]])", "t.json: byte 15: expected"},
      {"json all dense", "t.json", R"([{"0":null}])", "t.json: expected tokens of at least one MoE layer"},
      {"json truncated in a key", "t.json", R"([{"1)", "t.json: byte 3: expected ']' closing the list of steps at the end of the file"},
      {"json unclosed string", "t.json", R"([{"1:[[1]]}])", "t.json: byte 2: expected a JSON document (simdjson: A string is opened, but never closed"},
      {"json bad utf-8", "t.json", "[{\"1\":[[1]],\"x\xff\":null}]", "t.json: byte 14: expected a JSON document (simdjson: The input is not valid UTF-8"},
      {"json control char", "t.json", "[{\"1\":[[1]],\"x\ty\":null}]", "t.json: byte 14: expected a JSON document (simdjson: Within strings, some characters must be escaped"},
      {"empty file", "t.json", "", "t.json: expected trace data, got an empty file"},
      {"blank file", "t.csv", " \n\n", "t.csv: expected trace data, got an empty file"},
      {"unknown format", "t.csv", "a,b\n1,2\n", "t.csv:1: expected a trace"},
      // DeepSeek CSV: lines
      {"csv too few fields", "d.csv", kDeepSeekHeader + "1,0,tok\n", "d.csv:2: expected 4 fields"},
      {"csv unquoted comma", "d.csv", kDeepSeekHeader + "1,0,a,b,\"[1, 2]\"\n", "d.csv:2: expected 4 fields"},
      {"csv id not integer", "d.csv", kDeepSeekHeader + "1,0,x,\"[1, a]\"\n", "d.csv:2: expected an expert id (an integer)"},
      {"csv negative id", "d.csv", kDeepSeekHeader + "1,0,x,\"[1, -2]\"\n", "d.csv:2: expected a non-negative expert id"},
      {"csv not a list", "d.csv", kDeepSeekHeader + "1,0,x,1 2\n", "d.csv:2: expected the expert ids as a list"},
      {"csv top-k varies", "d.csv", kDeepSeekHeader + "1,0,x,\"[1, 2]\"\n1,0,y,\"[1, 2, 3]\"\n",
       "d.csv:3: expected top-k 2 for layer 1 (as at "},
      {"csv layer not numeric", "d.csv", kDeepSeekHeader + "L1,0,x,\"[1]\"\n", "d.csv:2: expected a Layer ID (an integer)"},
      {"csv batch not numeric", "d.csv", kDeepSeekHeader + "1,zero,x,\"[1]\"\n", "d.csv:2: expected a Batch Number"},
      {"csv stray quote", "d.csv", kDeepSeekHeader + "1,0,a\"b,\"[1]\"\n", "d.csv:2: expected well-formed CSV"},
      {"csv unterminated quote", "d.csv", kDeepSeekHeader + "1,0,\"abc,\"[1]\n", "d.csv:2: expected "},
      {"csv header only", "d.csv", kDeepSeekHeader, "d.csv: expected a header and at least one row, got only the header"},
      {"csv bad row after multi-line token", "d.csv", kDeepSeekHeader + "1,0,\"a\nb, \"\"c\"\"\",\"[1]\"\n1,0,x,\"[2\"\n",
       "d.csv:4: expected the expert ids as a list"},
      // Mixtral JSONL: lines
      {"jsonl invalid line", "m.jsonl", kRecord + "\n{\"problem_id\":0,\n", "m.jsonl:2: expected a JSON object"},
      {"jsonl missing experts", "m.jsonl", R"({"problem_id":0,"layer":0,"token_idx":0})", "m.jsonl:1: expected field \"experts\""},
      {"jsonl layer is a string", "m.jsonl", R"({"problem_id":0,"layer":"0","experts":[1],"token_idx":0})",
       "m.jsonl:1: expected \"layer\" (an integer), got \"\"0\"\""},
      {"jsonl negative gate", "m.jsonl", R"({"problem_id":0,"layer":0,"experts":[1,2],"gating_probs":[-0.1,1.1],"token_idx":0})",
       "m.jsonl:1: expected a gate weight in [0, 1], got -0.1"},
      // Issue 15: gate weights are probabilities; a routing log with 1.5 or 1e20 was accepted.
      {"jsonl gate above 1", "m.jsonl", R"({"problem_id":0,"layer":0,"experts":[1,2],"gating_probs":[1.5,0.1],"token_idx":0})",
       "m.jsonl:1: expected a gate weight in [0, 1], got 1.5"},
      {"jsonl gate 1e20", "m.jsonl", kRecord + "\n" + R"({"problem_id":0,"layer":0,"experts":[1,2],"gating_probs":[1e20,0],"token_idx":1})",
       "m.jsonl:2: expected a gate weight in [0, 1], got 1e+20"},
      {"jsonl gates sum past 1", "m.jsonl", R"({"problem_id":0,"layer":0,"experts":[1,2],"gating_probs":[0.7,0.4],"token_idx":0})",
       "m.jsonl:1: expected the token's gate weights to sum to at most 1, got 1.1"},
      {"jsonl gate count", "m.jsonl", R"({"problem_id":0,"layer":0,"experts":[1,2],"gating_probs":[1.0],"token_idx":0})",
       "m.jsonl:1: expected 2 gate weights"},
      {"jsonl alias twice", "m.jsonl", R"({"problem_id":0,"layer":0,"layer_idx":0,"experts":[1],"token_idx":0})",
       "m.jsonl:1: expected each field once per record, got \"layer\" and its alias \"layer_idx\""},
      {"jsonl missing token position", "m.jsonl", R"({"problem_id":0,"layer":0,"experts":[1]})",
       "m.jsonl:1: expected field \"token_idx\" (or token_pos, token_position, position, pos) in every record"},
      {"jsonl sniffing said", "m.jsonl", R"({"problem_id":0,"layer":0,"experts":[-1],"token_idx":0})",
       "m.jsonl:1: expected a non-negative expert id below 2147483646, got -1 [read as routing-jsonl: the file starts "
       "with '{' and its first record has no \"type\" field]"},
      // vLLM route log: lines
      {"vllm bad type", "v.jsonl", R"({"type":"routes","req_id":"r1","token_idx":0,"layer":0,"topk_ids":[1]})",
       "v.jsonl:1: expected \"type\": \"meta\" or \"route\", got \"routes\""},
      {"vllm top-k disagrees with meta", "v.jsonl",
       "{\"type\":\"meta\",\"top_k\":2}\n{\"type\":\"route\",\"req_id\":\"r1\",\"token_idx\":0,\"layer\":0,\"topk_ids\":[1]}\n",
       "v.jsonl:2: expected top_k = 2 expert ids as the meta record says, got 1"},
      {"vllm top-k twice in meta", "v.jsonl",  // the second was kept, the first lost
       "{\"type\":\"meta\",\"top_k\":2,\"top_k\":1}\n{\"type\":\"route\",\"req_id\":\"r1\",\"token_idx\":0,\"layer\":0,\"topk_ids\":[1]}\n",
       "v.jsonl:1: expected each field once per record, got \"top_k\" twice"},
      {"vllm missing request", "v.jsonl", R"({"type":"route","token_idx":0,"layer":0,"topk_ids":[1]})",
       "v.jsonl:1: expected field \"req_id\" (or request_id) in every record [read as vllm-route-jsonl: the first record has a \"type\" field]"},
      {"vllm request id not a string", "v.jsonl", R"({"type":"route","req_id":[1],"token_idx":0,"layer":0,"topk_ids":[1]})",
       "v.jsonl:1: expected \"req_id\" (a string or integer) (an integer)"},
      // expert-count JSON: byte offsets
      {"counts expert out of range", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {"1": {"0": 5, "4": 1}}})",
       "c.json: byte 59: expected an expert id below 4, got 4"},
      {"counts negative", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {"1": {"0": -5}}})",
       "c.json: byte 51: expected a count in [0, 1e15] for expert 0, got -5"},
      // A load beyond 1e15 (1e300 overflowed EPLB's float32 weights to inf while Zepp's rule took it).
      {"counts huge", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {"1": {"0": 1e300}}})",
       "c.json: byte 51: expected a count in [0, 1e15] for expert 0, got 1e300"},
      // SGLang statistics: the field's position in the list (the messages said "byte 0").
      {"sglang huge", "s.json", R"({"logical_count": [[1, 2], [3, 1e300]]})",
       "s.json: expected a count in [0, 1e15] in \"logical_count\"[1][1], got "},
      {"sglang steps sum past the bound", "s.json", R"({"logical_count": [[[1, 9e14]], [[1, 9e14]]]})",
       "s.json: expected the counts of \"logical_count\"[1][0][1] summed over steps to stay within 1e15"},
      {"sglang negative", "s.json", R"({"logical_count": [[1, -2]]})",
       "s.json: expected a count in [0, 1e15] in \"logical_count\"[0][1], got -2"},
      {"counts layer twice", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {"1": {}, "1": {"0": 1}}})",
       "c.json: byte 54: expected each layer once, got layer 1 twice"},
      // A repeated member was read on top of the first (or the first alone, SGLang's lookup).
      {"counts usage twice", "c.json",
       R"({"num_experts": 4, "expert_usage_by_layer": {"1": {"0": 1}}, "expert_usage_by_layer": {"1": {"2": 1}}})",
       "c.json: byte 61: expected each member once, got \"expert_usage_by_layer\" twice"},
      {"counts num_experts twice", "c.json", R"({"num_experts": 4, "num_experts": 8, "expert_usage_by_layer": {"1": {}}})",
       "c.json: byte 19: expected each member once, got \"num_experts\" twice"},
      {"sglang counts twice", "s.json", R"({"logical_count": [[1, 2]], "logical_count": [[5, 5]]})",
       "s.json: expected each member once, got \"logical_count\" twice"},
      {"counts no num_experts", "c.json", R"({"expert_usage_by_layer": {"1": {"0": 1}}})",
       "c.json: byte 1: expected \"num_experts\" before \"expert_usage_by_layer\""},
      {"counts not a number", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {"1": {"0": "many"}}})",
       "c.json: byte 56: expected a count (a number)"},
      {"counts layer not an object", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {"1": [1, 2]}})",
       "c.json: byte 50: expected a layer's counts: an object {\"<expert>\": count} (simdjson: The JSON element does "
       "not have the requested type.) [read as expert-count-json: the file starts with '{' and names "
       "\"expert_usage_by_layer\"]"},
      {"counts no layers", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {}})",
       "c.json: byte 0: expected \"expert_usage_by_layer\" with at least one layer of counts"},
      {"counts truncated", "c.json", R"({"num_experts": 4, "expert_usage_by_layer": {"1": {"0": 1)", "c.json: "},
      {"jsonl top-k varies", "m.jsonl",
       kRecord + "\n" + R"({"problem_id":0,"layer":0,"experts":[1],"gating_probs":[1.0],"token_idx":1})",
       "m.jsonl:2: expected top-k 2 for layer 0 (as at "},
      {"jsonl two objects", "m.jsonl", kRecord + kRecord, "m.jsonl:1: expected one JSON object per line"},
      // Qwen load CSV: lines
      {"load negative", "arc_x.csv", kLoadHeader + "0,English,0.5,-0.1\n", "arc_x.csv:2: expected a load in [0, 1e15] for Expert_1, got \"-0.1\""},
      {"load huge", "arc_x.csv", kLoadHeader + "0,English,1e300,1\n", "arc_x.csv:2: expected a load in [0, 1e15] for Expert_0, got \"1e300\""},
      {"load nan", "arc_x.csv", kLoadHeader + "0,English,nan,1\n", "arc_x.csv:2: expected a load in [0, 1e15] for Expert_0, got \"nan\""},
      {"load not numeric", "arc_x.csv", kLoadHeader + "0,English,abc,1\n", "arc_x.csv:2: expected the load of Expert_0 (a number)"},
      {"load field count", "arc_x.csv", kLoadHeader + "0,English,1\n", "arc_x.csv:2: expected 4 fields"},
      {"load bad header", "arc_x.csv", "Layer,Language,Expert_1\n0,English,1\n", "arc_x.csv:1: expected the header"},
      {"load row twice", "arc_x.csv", kLoadHeader + "0,English,1,1\n0,English,1,1\n", "arc_x.csv:3: expected one row per (layer, language)"},
      {"load no language", "arc_x.csv", kLoadHeader + "0,,1,1\n", "arc_x.csv:2: expected a Language name"},
  };
}

TEST(Malformed, EachCaseNamesFileWhereAndWhat) {
  for (const Case& c : cases()) {
    TempDir dir;
    const std::string path = dir.write(c.file, c.content);
    try {
      read_trace(path);
      ADD_FAILURE() << c.label << ": no error";
    } catch (const InputError& e) {
      const std::string expected = dir.path() + "/" + c.message;
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
          << c.label << ":\n  got      " << e.what() << "\n  expected " << expected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.label << ": wrong exception type: " << e.what();
    }
  }
}

TEST(Malformed, Folders) {
  TempDir empty;
  EXPECT_THROW(
      {
        try {
          read_trace(empty.path());
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find(empty.path() + ": expected trace files"), std::string::npos) << e.what();
          throw;
        }
      },
      InputError);
  EXPECT_THROW(read_trace(empty.path() + "/absent"), InputError);

  TempDir mixed;
  mixed.write("a.json", R"([{"1":[[1]]}])");
  mixed.write("b/c.jsonl", kRecord);
  try {
    read_trace(mixed.path());
    ADD_FAILURE() << "mixed formats accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("b/c.jsonl: expected selection-json like"), std::string::npos) << e.what();
  }

  TempDir columns;
  columns.write("arc_1.csv", kLoadHeader + "0,English,1,1\n");
  columns.write("gsm_1.csv", "Layer,Language,Expert_0\n0,English,1\n");
  try {
    read_trace(columns.path());
    ADD_FAILURE() << "differing column counts accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gsm_1.csv:1: expected 2 expert columns (as at "), std::string::npos) << e.what();
  }
}

// Sizes are checked before any file is read (issue 23): a file is read whole, so one beyond 4 GiB
// (simdjson's largest document) is refused by its size. The file is sparse: no disk is used.
TEST(Malformed, FileBeyondFourGiBIsRefusedBeforeReading) {
  TempDir dir;
  const std::string small = dir.write("a.json", R"([{"1":[[1]]}])");
  const std::string big = dir.write("b.json", "");
  std::filesystem::resize_file(big, (uint64_t(4) << 30) + 1);
  try {
    read_trace(dir.path());
    ADD_FAILURE() << "a 4 GiB + 1 file accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), big + ": expected a file of at most 4 GiB (it is read whole), got 4294967297 bytes");
  }
  EXPECT_EQ(read_trace(small).layers.size(), 1u);
}

TEST(Malformed, FolderSkipsOtherFilesAndSortsNaturally) {
  TempDir dir;
  dir.write("README.md", "not a trace");
  dir.write("b/2.json", R"([{"1":[[2]]}])");
  dir.write("b/10.json", R"([{"1":[[1]]}])");
  dir.write("a.json", R"([{"1":[[0],[5]]},{"1":[[3]]}])");
  const Trace t = read_trace(dir.path());
  // Natural order: numbers compare as numbers, so 2 comes before 10.
  EXPECT_EQ(t.requests, (std::vector<std::string>{"a.json", "b/2.json", "b/10.json"}));
  const LayerTrace& l = t.layers.at(1);
  EXPECT_EQ(l.expert_ids, (std::vector<int32_t>{0, 5, 3, 2, 1}));
  EXPECT_EQ(l.request, (std::vector<int32_t>{0, 0, 0, 1, 2}));
  EXPECT_EQ(l.step, (std::vector<int32_t>{0, 0, 1, 0, 0}));
  EXPECT_EQ(t.num_experts, 6);
}

TEST(ModelCheck, NamesModelAndTrace) {
  TempDir dir;
  const Trace t = read_trace(dir.write("t.json", R"([{"1":[[0,7]]}])"));
  ModelShape m{"small", 8, 2, 16, 16, 2, 2, 0};
  EXPECT_NO_THROW(check_trace_matches_model(t, m));
  auto message = [&](ModelShape bad) {
    try {
      check_trace_matches_model(t, bad);
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  m.num_experts = 7;
  EXPECT_EQ(message(m), "trace: " + t.path + " and model small disagree: layer 1 selects expert 7 in request 't.json', the model has 7 experts");
  m.num_experts = 8;
  m.top_k = 1;
  EXPECT_EQ(message(m), "trace: " + t.path + " and model small disagree: layer 1 has top-k 2, the model 1");

  const Trace load = read_trace(dir.write("arc_x.csv", kLoadHeader + "0,English,1,1\n"));
  m.top_k = 1;
  EXPECT_NE(message(m).find("model"), std::string::npos);
  try {
    check_trace_matches_model(load, m);
    ADD_FAILURE() << "column count not checked";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "trace: " + load.path +
                                         " and model small disagree: load table arc/English layer 0 has 2 expert "
                                         "columns, the model 8 experts");
  }
}

// A routing log whose layer field was a record index mod 60 for a 32-layer model (issue 11): the
// first record with layer >= 32 is named by file and line, with the preset.
TEST(ModelCheck, LayerBeyondThePresetNamesFileLineAndPreset) {
  TempDir dir;
  std::string log;
  for (int i = 0; i < 40; ++i)
    log += R"({"dataset":"g","problem_id":0,"layer":)" + std::to_string(i) +
           R"(,"experts":[1,2],"gating_probs":[0.6,0.4],"token_idx":0})" + "\n";
  std::map<int, std::string> where;
  const Trace t = read_trace_located(dir.write("r.jsonl", log), where);
  EXPECT_EQ(where.at(0), t.path + ":1");
  ModelShape m{"mixtral-like", 8, 2, 16, 16, 32, 32, 0};
  EXPECT_NO_THROW(check_trace_matches_model(t, m));  // ids and top-k fit; only the labels lie
  try {
    check_trace_layers(t, where, m);
    ADD_FAILURE() << "layer 32 of a 32-layer model accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), t.path + ":33: layer 32 is beyond the 32 layers (ids 0..31) of model preset "
                                              "mixtral-like; the trace's layer labels do not belong to this model");
  }
  m.layers = 40;
  EXPECT_NO_THROW(check_trace_layers(t, where, m));
  const Trace load = read_trace_located(dir.write("arc_x.csv", kLoadHeader + "0,English,1,1\n5,English,1,1\n"), where);
  ModelShape two{"two-layer", 2, 1, 16, 16, 2, 2, 0};
  try {
    check_trace_layers(load, where, two);
    ADD_FAILURE() << "load row of layer 5 accepted for a 2-layer model";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("arc_x.csv:3: layer 5 is beyond the 2 layers"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zepp
