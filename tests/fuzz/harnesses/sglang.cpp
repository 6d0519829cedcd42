// SGLang's JSON files: the first input byte picks the reader, expert-distribution statistics
// (read_sglang_stats) or --init-expert-location placement (read_sglang_placement).
#include "../harness.hpp"
#include "core/error.hpp"
#include "formats/sglang.hpp"

ZEPP_FUZZ_TARGET(sglang)(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = zepp::fuzz::scratch_file("sglang.json", data + 1, size - 1);
  try {
    if (data[0] % 2) zepp::read_sglang_stats(path);
    else zepp::read_sglang_placement(path);
  } catch (const zepp::InputError&) {
  }
  return 0;
}
