// Trace inputs a user should be told about (issue 26 item 6): symbolic links in trace folders
// followed, loops and folders reached twice refused; one dominant top-k selection and token
// positions that restart within a request warned about (trace/oddities.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "../common/temp_dir.hpp"
#include "trace/oddities.hpp"
#include "trace/trace.hpp"

namespace zepp {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

// A vLLM route log of one request: `prompt` tokens, then `decode` more whose positions restart
// at 0 (decode steps); `same` of all tokens select experts {3, 5}, the others {i % 8, 8 + i % 8}.
std::string vllm_log(int prompt, int decode, int same) {
  std::string s = R"({"type": "meta", "top_k": 2})" "\n";
  for (int i = 0; i < prompt + decode; ++i) {
    const int pos = i < prompt ? i : i - prompt;
    const std::string ids = i < same ? "[5, 3]" : "[" + std::to_string(i % 8) + ", " + std::to_string(8 + i % 8) + "]";
    s += R"({"type": "route", "req_id": "r1", "token_idx": )" + std::to_string(pos) + R"(, "layer": 0, "topk_ids": )" + ids + "}\n";
  }
  return s;
}

TEST(TraceOddities, DominantSelectionAndRestartedPositionsAreNamedWithTheirFigures) {
  TempDir dir;
  const Trace t = read_trace(dir.write("route.jsonl", vllm_log(100, 100, 174)));
  const auto w = trace_oddities(t);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("experts (3, 5)"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("87% of the 200 tokens of layer 0"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("read as logged"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("restart within 1 of 1 requests (100 of 200 tokens"), std::string::npos) << w[1];
  EXPECT_NE(w[1].find("read as decode steps"), std::string::npos) << w[1];
}

TEST(TraceOddities, OrdinaryTraceHasNone) {
  TempDir dir;
  EXPECT_TRUE(trace_oddities(read_trace(dir.write("route.jsonl", vllm_log(200, 0, 10)))).empty());
}

TEST(TraceFolders, SymbolicLinksToFoldersAndFilesAreFollowed) {
  TempDir data, view;
  data.write("a/1.jsonl", vllm_log(120, 0, 0));
  data.write("b/2.jsonl", vllm_log(130, 0, 0));
  fs::create_directory_symlink(fs::path(data.path()) / "a", fs::path(view.path()) / "a");
  fs::create_symlink(fs::path(data.path()) / "b" / "2.jsonl", fs::path(view.path()) / "2.jsonl");
  const Trace t = read_trace(view.path());
  EXPECT_EQ(t.layers.at(0).num_tokens(), 250);
  EXPECT_EQ(t.requests.size(), 2u);
}

// A broken link was an error even with skip_invalid: it is a file that cannot be read, skipped
// and listed like a malformed one.
TEST(TraceFolders, BrokenLinksAreSkippedWithSkipInvalidAndRefusedWithout) {
  TempDir dir;
  dir.write("1.jsonl", vllm_log(120, 0, 0));
  const fs::path link = fs::path(dir.path()) / "2.jsonl";
  fs::create_symlink(fs::path(dir.path()) / "gone.jsonl", link);
  try {
    read_trace(dir.path());
    ADD_FAILURE() << "a broken link was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(link.string() + ": expected a trace file, got a broken symbolic link"), std::string::npos) << e.what();
  }
  const Trace t = read_trace(dir.path(), ReadOptions{true});
  EXPECT_EQ(t.layers.at(0).num_tokens(), 120);
  ASSERT_EQ(t.skipped_invalid.size(), 1u);
  EXPECT_EQ(t.skipped_invalid[0].rfind(link.string() + ": expected a trace file, got a broken symbolic link (to ", 0), 0u)
      << t.skipped_invalid[0];
}

// A folder whose only trace is a hidden file said "found none", leaving the user to guess why.
TEST(TraceFolders, AFolderOfHiddenFilesOnlySaysTheyAreSkipped) {
  TempDir dir;
  dir.write(".1.jsonl", vllm_log(120, 0, 0));
  try {
    read_trace(dir.path());
    ADD_FAILURE() << "a hidden file was read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + ": expected trace files (*.json, *.jsonl, *.csv) in the folder, found "
                                                  "none (names starting with '.' are skipped: .1.jsonl)");
  }
  TempDir empty;
  try {
    read_trace(empty.path());
    ADD_FAILURE() << "an empty folder was read";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), empty.path() + ": expected trace files (*.json, *.jsonl, *.csv) in the folder, found none");
  }
}

// The trace path itself a broken link, or one of a loop of links: "got nothing at that path",
// though ls shows the link; now said as a file in a folder says it.
TEST(TraceFolders, ABrokenLinkGivenAsTheTraceIsNamedSo) {
  TempDir dir;
  const fs::path gone = fs::path(dir.path()) / "gone.jsonl", a = fs::path(dir.path()) / "a.jsonl",
                 b = fs::path(dir.path()) / "b.jsonl";
  fs::create_symlink(fs::path(dir.path()) / "nothing.jsonl", gone);
  fs::create_symlink(b, a);
  fs::create_symlink(a, b);
  const auto message = [](const fs::path& p) {
    try {
      read_trace(p.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_EQ(message(gone), gone.string() + ": expected a trace file or a folder of trace files, got a broken symbolic link (to " +
                               (fs::path(dir.path()) / "nothing.jsonl").string() + ")");
  EXPECT_EQ(message(a), a.string() + ": expected a trace file or a folder of trace files, got a broken symbolic link (to " +
                            b.string() + ")");
  EXPECT_EQ(message(fs::path(dir.path()) / "absent.jsonl"),
            (fs::path(dir.path()) / "absent.jsonl").string() +
                ": expected a trace file or a folder of trace files, got nothing at that path");
}

TEST(TraceFolders, LinkLoopsAndFoldersReachedTwiceAreErrors) {
  TempDir dir;
  dir.write("a/1.jsonl", vllm_log(120, 0, 0));
  fs::create_directory_symlink(dir.path(), fs::path(dir.path()) / "a" / "up");
  try {
    read_trace(dir.path());
    FAIL() << "a loop was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link loop"), std::string::npos) << e.what();
  }
  TempDir twice;
  twice.write("a/1.jsonl", vllm_log(120, 0, 0));
  fs::create_directory_symlink(fs::path(twice.path()) / "a", fs::path(twice.path()) / "again");
  try {
    read_trace(twice.path());
    FAIL() << "a folder was read twice";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("would count twice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zepp
