// read_topology_file (docs/topology.md): the input is the file's content, YAML or JSON.
#include "../harness.hpp"
#include "core/error.hpp"
#include "core/topology_file.hpp"

ZEPP_FUZZ_TARGET(topology)(const uint8_t* data, size_t size) {
  const std::string path = zepp::fuzz::scratch_file("cluster.yaml", data, size);
  try {
    zepp::read_topology_file(path, 2);
  } catch (const zepp::InputError&) {
  }
  return 0;
}
