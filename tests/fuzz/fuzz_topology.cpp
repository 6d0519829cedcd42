// libFuzzer harness for topology files (docs/topology.md): the input is the file's content.
// Only InputError may escape read_topology_file; anything else (another exception, a crash, a
// sanitizer report) is a bug.
//
// Build and run with clang (not part of the CMake build, which uses the default compiler):
//   clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -DZEPP_LIBFUZZER_TOPOLOGY -Isrc \
//     tests/fuzz/fuzz_topology.cpp src/core/*.cpp -lyaml-cpp -lfmt -o build-fuzz/fuzz_topology
//   build-fuzz/fuzz_topology -max_total_time=60 -max_len=2048
// Without ZEPP_LIBFUZZER_TOPOLOGY this file is part of the test program test_fuzz: it feeds
// every prefix of valid files, and every single-byte change of them, through the same harness.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/topology_file.hpp"

namespace {

int fuzz_topology_one(const uint8_t* data, size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("zepp_fuzz_topology_" + std::to_string(getpid()) + ".yaml")).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  try {
    zepp::read_topology_file(path, 2);
  } catch (const zepp::InputError&) {
  }
  return 0;
}

}  // namespace

#ifdef ZEPP_LIBFUZZER_TOPOLOGY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return fuzz_topology_one(data, size); }
#else
#include <gtest/gtest.h>

TEST(FuzzTopology, PrefixesAndByteChangesOfValidFilesParseOrThrowInputError) {
  const std::string seeds[] = {
      "name: x\ngpus_per_node: 8\nnvlink:\n  model: switch\n  bandwidth: 450 GB/s\n  latency: 2 us\nnic:\n"
      "  per_node: 8\n  bandwidth: 400 Gb/s\n  latency: 3 us\ncompute:\n  model: roofline\n  peak: 989 TFLOP/s\n"
      "  hbm: 3.35 TB/s\n  kernel_launch: 5 us\n",
      "{\"gpus_per_node\": 4, \"nvlink\": {\"model\": \"per-pair\", \"bandwidth\": \"1e2 GB/s\", \"latency\": \"2us\"}, "
      "\"nic\": {\"per_node\": 4, \"bandwidth\": \"25 GB/s\", \"latency\": \"3 us\"}, \"compute\": {\"model\": "
      "\"roofline\", \"peak\": \"312 TFLOP/s\", \"hbm\": \"1.5 TB/s\", \"kernel_launch\": \"5 us\"}}",
      "base: dgx-h100\nnic: {bandwidth: 200 Gb/s}\n",
      std::string(200, '[') + std::string(200, '{'),  // deep nesting must not exhaust the stack
  };
  const char replacements[] = {'\0', '\n', ' ', ':', '-', '[', '{', '"', '\'', '9', 'e', '&', '*', '!', '\t'};
  for (const std::string& seed : seeds) {
    for (size_t n = 0; n <= seed.size(); ++n)
      EXPECT_NO_THROW(fuzz_topology_one(reinterpret_cast<const uint8_t*>(seed.data()), n)) << seed.substr(0, n);
    for (size_t i = 0; i < seed.size(); ++i)
      for (char c : replacements) {
        std::string s = seed;
        s[i] = c;
        EXPECT_NO_THROW(fuzz_topology_one(reinterpret_cast<const uint8_t*>(s.data()), s.size())) << s;
      }
  }
}
#endif
