// read_results: the sweep's results CSV that `zepp experiment fig9/fig10 --resume` and
// `zepp experiment report` read back (a provenance line, the header, a row per configuration and
// strategy); the input is the file's content.
#include <optional>

#include "../harness.hpp"
#include "core/error.hpp"
#include "formats/results_csv.hpp"

ZEPP_FUZZ_TARGET(results_csv)(const uint8_t* data, size_t size) {
  const std::string path = zepp::fuzz::scratch_file("results.csv", data, size);
  try {
    std::optional<zepp::Provenance> made_by;
    zepp::experiments::read_results(path, &made_by);
  } catch (const zepp::InputError&) {
  }
  return 0;
}
