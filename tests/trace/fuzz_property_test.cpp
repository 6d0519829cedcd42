// Random truncations and byte mutations of small valid files of each format either parse or
// throw InputError: never a crash, a hang or another exception. Where simdjson's DOM parser
// rejects a mutated JSON file, the reader must reject it too (no lax acceptance).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <simdjson.h>

#include "core/error.hpp"
#include "../common/temp_dir.hpp"
#include "trace/trace.hpp"

namespace zepp {
namespace {

using testing::TempDir;

struct Seed {
  const char* file;
  std::string content;
};

const std::vector<Seed>& seeds() {
  static const std::vector<Seed> s = {
      {"s.json", R"([{"0":null,"1":[[3,1],[0,2]],"3":[[5,4]]},{"0":null,"1":[[2,3]],"3":[[1,0]]}])"},
      {"d.csv",
       "Layer ID,Batch Number,Token,Activated Expert IDs\n1,0,\"He said \"\"hi, \xc3\xa9\"\"\",\"[8, 26, 3]\"\n"
       "1,0,x,\"[1, 2, 3]\"\n2,0,y,\"[4, 5, 6]\"\n"},
      {"m.jsonl",
       "{\"dataset\": \"g\", \"problem_id\": 0, \"layer\": 0, \"experts\": [7, 0], \"gating_probs\": [0.8, 0.2], "
       "\"token_idx\": 0}\n"
       "{\"dataset\": \"g\", \"problem_id\": 1, \"layer\": 0, \"experts\": [1, 2], \"gating_probs\": [0.5, 0.5], "
       "\"token_idx\": 0}\n"},
      {"arc_x.csv", "Layer,Language,Expert_0,Expert_1,Expert_2\n0,English,0.5,1.25,0.25\n0,Hebrew,1,0.5,0.5\n"},
  };
  return s;
}

// Edits: truncate, then overwrite / insert / delete bytes, drawing bytes that matter to the
// formats more often than arbitrary ones.
std::string mutate(const std::string& base) {
  std::string s = base.substr(0, *rc::gen::inRange<size_t>(0, base.size() + 1));
  const auto byte = rc::gen::oneOf(rc::gen::elementOf(std::string("[]{},:\"\n\r-.0123456789e \\nul")),
                                   rc::gen::arbitrary<char>());
  const int edits = *rc::gen::inRange(0, 4);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    const size_t pos = *rc::gen::inRange<size_t>(0, s.size());
    switch (*rc::gen::inRange(0, 3)) {
      case 0: s[pos] = *byte; break;
      case 1: s.insert(pos, 1, *byte); break;
      default: s.erase(pos, 1);
    }
  }
  return s;
}

bool dom_accepts(const std::string& text) {
  simdjson::dom::parser parser;
  return parser.parse(simdjson::padded_string(text)).error() == simdjson::SUCCESS;
}

void check_invariants(const Trace& t) {
  for (const auto& [layer, lt] : t.layers) {
    RC_ASSERT(lt.top_k >= 1);
    RC_ASSERT(lt.num_tokens() >= 1);
    RC_ASSERT(lt.expert_ids.size() == size_t(lt.num_tokens() * lt.top_k));
    RC_ASSERT(lt.step.size() == size_t(lt.num_tokens()));
    RC_ASSERT(lt.gate_weights.empty() || lt.gate_weights.size() == lt.expert_ids.size());
    for (int32_t id : lt.expert_ids) RC_ASSERT(id >= 0 && id < t.num_experts);
    for (int32_t r : lt.request) RC_ASSERT(r >= 0 && size_t(r) < t.requests.size());
  }
  for (const LoadTable& table : t.loads)
    for (const auto& [layer, row] : table.per_layer) RC_ASSERT(int(row.size()) == t.num_experts);
}

TEST(FuzzSeeds, SeedsAreValid) {
  TempDir dir;
  for (const Seed& s : seeds()) EXPECT_NO_THROW(read_trace(dir.write(s.file, s.content))) << s.file;
}

RC_GTEST_PROP(Fuzz, MutatedFilesParseOrThrowInputError, ()) {
  const Seed& seed = *rc::gen::elementOf(seeds());
  const std::string text = mutate(seed.content);
  TempDir dir;
  const std::string path = dir.write(seed.file, text);
  bool accepted = false;
  try {
    check_invariants(read_trace(path));
    accepted = true;
  } catch (const InputError& e) {
    RC_ASSERT(std::string(e.what()).find(path) == 0);  // names the file first
  }
  if (accepted && std::string(seed.file).ends_with(".json")) RC_ASSERT(dom_accepts(text));
  if (accepted && std::string(seed.file).ends_with(".jsonl")) {
    for (size_t pos = 0; pos < text.size();) {
      size_t nl = std::min(text.find('\n', pos), text.size());
      std::string line = text.substr(pos, nl - pos);
      if (line.find_first_not_of(" \t\r") != std::string::npos) RC_ASSERT(dom_accepts(line));
      pos = nl + 1;
    }
  }
}

}  // namespace
}  // namespace zepp
