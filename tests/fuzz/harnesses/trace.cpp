// read_trace: the first input byte picks the file name (so the format detection and each of the
// six readers, vLLM's route log and the expert-count JSON included, are reached), the rest is the
// file's content.
#include "../harness.hpp"
#include "core/error.hpp"
#include "trace/trace.hpp"

ZEPP_FUZZ_TARGET(trace)(const uint8_t* data, size_t size) {
  static const char* const kNames[] = {"t.json", "t.jsonl", "d.csv", "arc_x.csv", "v.jsonl", "c.json"};
  if (size == 0) return 0;
  const std::string path = zepp::fuzz::scratch_file(kNames[data[0] % 6], data + 1, size - 1);
  try {
    zepp::read_trace(path);
  } catch (const zepp::InputError&) {
  }
  return 0;
}
