// Replays every fuzz harness (tests/fuzz/harnesses) on its committed seeds (tests/fuzz/seeds/
// <harness>/), on every crash a fuzzer found (tests/fuzz/crashes/<harness>/: each crash becomes a
// test here), and on the real files of ../shared/data, each cut at many points: truncated input
// is what readers of outside data see most. A harness throws only what is a bug (anything but
// InputError escaping a reader); a crash or sanitizer report ends the program.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

int zepp_fuzz_trace(const uint8_t*, size_t);
int zepp_fuzz_eplb_json(const uint8_t*, size_t);
int zepp_fuzz_sglang(const uint8_t*, size_t);
int zepp_fuzz_trtllm(const uint8_t*, size_t);
int zepp_fuzz_topology(const uint8_t*, size_t);
int zepp_fuzz_results_csv(const uint8_t*, size_t);

namespace {

namespace fs = std::filesystem;
using Harness = std::function<int(const uint8_t*, size_t)>;

const fs::path kFuzzDir = fs::path(ZEPP_SOURCE_DIR) / "tests" / "fuzz";
const fs::path kShared = ZEPP_SHARED_DIR;

std::string slurp(const fs::path& p, size_t limit = SIZE_MAX) {
  std::ifstream f(p, std::ios::binary);
  std::string s(std::istreambuf_iterator<char>(f), {});
  return s.substr(0, std::min(limit, s.size()));
}

// Runs the harness on `input` cut after n bytes, for every n when short, else at 97 points.
void replay_prefixes(const Harness& h, const std::string& input, const std::string& what) {
  const size_t step = std::max<size_t>(1, input.size() / 96);
  for (size_t n = 0; n <= input.size(); n = n < input.size() ? std::min(input.size(), n + step) : n + 1) {
    EXPECT_NO_THROW(h(reinterpret_cast<const uint8_t*>(input.data()), n)) << what << " cut at " << n;
  }
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The committed seeds and crashes of harness `name`, each cut at every length.
void replay_committed(const std::string& name, const Harness& h) {
  size_t n = 0;
  for (const char* kind : {"seeds", "crashes"})
    for (const auto& f : files_in(kFuzzDir / kind / name)) replay_prefixes(h, slurp(f), f.string()), ++n;
  EXPECT_GT(n, 0u) << "no seeds for " << name << " under " << kFuzzDir;
}

TEST(FuzzReplay, TraceSeedsAndCrashes) { replay_committed("trace", zepp_fuzz_trace); }
TEST(FuzzReplay, EplbJsonSeedsAndCrashes) { replay_committed("eplb_json", zepp_fuzz_eplb_json); }
TEST(FuzzReplay, SglangSeedsAndCrashes) { replay_committed("sglang", zepp_fuzz_sglang); }
TEST(FuzzReplay, TrtllmSeedsAndCrashes) { replay_committed("trtllm", zepp_fuzz_trtllm); }
TEST(FuzzReplay, TopologySeedsAndCrashes) { replay_committed("topology", zepp_fuzz_topology); }
TEST(FuzzReplay, ResultsCsvSeedsAndCrashes) { replay_committed("results_csv", zepp_fuzz_results_csv); }

TEST(FuzzReplay, RealTraceFilesCut) {
  const fs::path traces = kShared / "data" / "traces";
  if (!fs::exists(traces)) GTEST_SKIP() << "no real traces at " << traces;
  // The first file of each folder, its first 16 KiB, behind the byte that names it for the
  // harness (0 .json, 1 .jsonl, 2 DeepSeek .csv, 3 load .csv named like "arc_x.csv").
  for (const auto& dir : fs::directory_iterator(traces)) {
    if (!dir.is_directory()) continue;
    std::vector<fs::path> all;
    for (const auto& e : fs::recursive_directory_iterator(dir.path()))
      if (e.is_regular_file() && e.path().extension() != ".md") all.push_back(e.path());
    if (all.empty()) continue;
    const fs::path f = *std::min_element(all.begin(), all.end());
    const std::string ext = f.extension().string();
    const char which = ext == ".json" ? 0 : ext == ".jsonl" ? 1 : slurp(f, 6) == "Layer," ? 3 : 2;
    replay_prefixes(zepp_fuzz_trace, which + slurp(f, 16384), f.string());
  }
}

TEST(FuzzReplay, RealEplbFilesCut) {
  const fs::path f = kShared / "data" / "eplb" / "readme-example.json";
  if (!fs::exists(f)) GTEST_SKIP() << "no " << f;
  replay_prefixes(zepp_fuzz_eplb_json, char(1) + slurp(f), f.string());  // 1: the load-file reader
}

// The committed results of the repository (docs/results), cut: what --resume meets after a
// killed sweep.
TEST(FuzzReplay, RealResultsCsvCut) {
  const fs::path f = fs::path(ZEPP_SOURCE_DIR) / "docs" / "results" / "fig9.csv";
  ASSERT_TRUE(fs::exists(f)) << f;
  replay_prefixes(zepp_fuzz_results_csv, slurp(f, 16384), f.string());
}

}  // namespace
