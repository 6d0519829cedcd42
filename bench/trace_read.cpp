// Reading each real trace folder (shared/data/traces) with read_trace; bytes/s is the folder's
// size on disk. Folders absent here are reported as skipped. Baseline in the same run: reading
// the folder's files into memory without parsing them (x_raw_read = read_trace / raw read).
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "trace/trace.hpp"

namespace {

void read_folder(benchmark::State& state, const std::string& name) {
  const std::string dir = std::string(ZEPP_SHARED_DIR) + "/data/traces/" + name;
  if (!std::filesystem::is_directory(dir)) {
    state.SkipWithError(("no trace folder " + dir).c_str());
    return;
  }
  int64_t bytes = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir))
    if (f.is_regular_file()) bytes += int64_t(f.file_size());
  int64_t tokens = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    zepp::Trace t = zepp::read_trace(dir);
    tokens = 0;
    for (const auto& [layer, lt] : t.layers) tokens += lt.num_tokens();
    benchmark::DoNotOptimize(t);
  }
  const double ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto r0 = std::chrono::steady_clock::now();
  for (int64_t x = 0; x < state.iterations(); ++x)
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir))
      if (f.is_regular_file()) {
        std::ifstream in(f.path(), std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        benchmark::DoNotOptimize(text.data());
      }
  const double raw = std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
  state.counters["x_raw_read"] = raw > 0 ? ours / raw : 0.0;
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["token_layer_rows"] = double(tokens);
}

BENCHMARK_CAPTURE(read_folder, llama4_maverick_mmlu, "llama4-maverick-mmlu")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_folder, deepseek_v2_lite_puffin, "deepseek-v2-lite-puffin")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_folder, mixtral_8x7b_gsm8k, "mixtral-8x7b-gsm8k")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(read_folder, qwen3_30b_a3b_load, "qwen3-30b-a3b-load")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
