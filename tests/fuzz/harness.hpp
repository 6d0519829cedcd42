// libFuzzer harnesses of the readers of outside data (tests/fuzz/harnesses/*.cpp). Each harness
// writes the input to a file and calls a reader; only InputError may escape a reader: any other
// exception, a crash or a sanitizer report is a bug.
//
// ZEPP_FUZZ_TARGET(name) opens the harness function: with ZEPP_LIBFUZZER (the fuzz_<name>
// programs of a -DZEPP_FUZZ=ON clang build, scripts/check.sh fuzz) it is libFuzzer's entry point;
// otherwise zepp_fuzz_<name>, which test_fuzz (tests/fuzz/replay_test.cpp) replays on seeds and
// on every crash found (tests/fuzz/crashes/<name>/).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#ifdef ZEPP_LIBFUZZER
#define ZEPP_FUZZ_TARGET(name) extern "C" int LLVMFuzzerTestOneInput
#else
#define ZEPP_FUZZ_TARGET(name) int zepp_fuzz_##name
#endif

namespace zepp::fuzz {

// A per-process scratch folder for the files the readers open.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("zepp_fuzz_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes bytes [data, data + size) to scratch_dir()/name and returns its path.
inline std::string scratch_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

}  // namespace zepp::fuzz
