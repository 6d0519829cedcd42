// read_topology_file (docs/topology.md) and read_measured_compute (its compute.model measured
// curves, which `zepp simulate` and `zepp run --predict` read back): the input is the file's
// content, YAML or JSON.
#include "../harness.hpp"
#include "core/error.hpp"
#include "core/measured_compute.hpp"
#include "core/topology_file.hpp"

ZEPP_FUZZ_TARGET(topology)(const uint8_t* data, size_t size) {
  const std::string path = zepp::fuzz::scratch_file("cluster.yaml", data, size);
  try {
    zepp::read_topology_file(path, 2);
    zepp::read_measured_compute(path);
  } catch (const zepp::InputError&) {
  }
  return 0;
}
