// TensorRT-LLM's load-balancer YAML (read_trtllm_config); the input is the file.
#include "../harness.hpp"
#include "core/error.hpp"
#include "formats/trtllm.hpp"

ZEPP_FUZZ_TARGET(trtllm)(const uint8_t* data, size_t size) {
  const std::string path = zepp::fuzz::scratch_file("trtllm.yaml", data, size);
  try {
    zepp::read_trtllm_config(path);
  } catch (const zepp::InputError&) {
  }
  return 0;
}
