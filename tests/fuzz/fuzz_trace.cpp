// libFuzzer harness for read_trace: the first input byte picks the file name (so the format
// detection and every reader are reached), the rest is the file's content. Only InputError may
// escape read_trace; anything else (another exception, a crash, a sanitizer report) is a bug.
//
// Build and run with clang (not part of the CMake build, which uses the default compiler):
//   clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -DZEPP_LIBFUZZER -Isrc \
//     tests/fuzz/fuzz_trace.cpp src/trace/*.cpp -lsimdjson -lcsv -o build-fuzz/fuzz_trace
//   build-fuzz/fuzz_trace -max_total_time=60 -max_len=4096
// Without ZEPP_LIBFUZZER this file is the test program test_fuzz: it feeds every prefix of
// small valid files of each format through the same harness.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "core/error.hpp"
#include "trace/trace.hpp"

namespace {

const char* const kNames[] = {"t.json", "t.jsonl", "d.csv", "arc_x.csv"};

const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("zepp_fuzz_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = (scratch_dir() / kNames[data[0] % 4]).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    zepp::read_trace(path);
  } catch (const zepp::InputError&) {
  }
  return 0;
}

#ifndef ZEPP_LIBFUZZER
#include <gtest/gtest.h>

TEST(FuzzHarness, EveryPrefixOfValidFilesParsesOrThrowsInputError) {
  const std::string seeds[] = {
      R"([{"0":null,"1":[[3,1],[0,2]],"3":[[5,4]]},{"0":null,"1":[[2,3]],"3":[[1,0]]}])",
      "{\"dataset\": \"g\", \"problem_id\": 0, \"layer\": 0, \"experts\": [7, 0], \"gating_probs\": [0.8, 0.2], "
      "\"token_idx\": 0}\n{\"problem_id\": 1, \"layer\": 0, \"experts\": [1, 2], \"token_idx\": 0}\n",
      "Layer ID,Batch Number,Token,Activated Expert IDs\n1,0,\"a \"\"b, c\"\"\",\"[8, 26, 3]\"\n1,0,x,\"[1, 2, 3]\"\n",
      "Layer,Language,Expert_0,Expert_1,Expert_2\n0,English,0.5,1.25,0.25\n0,Hebrew,1,0.5,0.5\n",
  };
  for (uint8_t format = 0; format < 4; ++format) {
    for (size_t n = 0; n <= seeds[format].size(); ++n) {
      std::string input = char(format) + seeds[format].substr(0, n);
      EXPECT_NO_THROW(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size()))
          << kNames[format] << " cut at " << n;
    }
  }
  std::filesystem::remove_all(scratch_dir());
}
#endif
