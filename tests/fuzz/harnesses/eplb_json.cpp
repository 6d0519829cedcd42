// EPLB's JSON files: the first input byte picks the reader, the placement maps {"phy2log",
// "log2phy", "logcnt"} (read_eplb_json) or the load file of `zepp place --load`
// (read_eplb_load); the rest is the file.
#include "../harness.hpp"
#include "core/error.hpp"
#include "formats/eplb_json.hpp"

ZEPP_FUZZ_TARGET(eplb_json)(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = zepp::fuzz::scratch_file("eplb.json", data + 1, size - 1);
  try {
    if (data[0] % 2) zepp::read_eplb_load(path);
    else zepp::read_eplb_json(path);
  } catch (const zepp::InputError&) {
  }
  return 0;
}
