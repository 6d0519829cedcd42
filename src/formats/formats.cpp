#include "formats/formats.hpp"

#include "core/error.hpp"

namespace zepp {

std::vector<std::string> placement_format_names() { return {"sglang", "trtllm", "eplb-json"}; }

namespace {
[[noreturn]] void unknown(const std::string& format) {
  throw ArgumentError("format: unknown placement format '" + format + "', expected sglang, trtllm or eplb-json");
}
}  // namespace

void write_expert_map(const std::string& path, const ExpertMap& map, const std::string& format) {
  if (format == "sglang") return write_sglang_placement(path, map);
  if (format == "trtllm") return write_trtllm_config(path, map);
  if (format == "eplb-json") return write_eplb_json(path, map);
  unknown(format);
}

ExpertMap read_expert_map(const std::string& path, const std::string& format, int num_experts) {
  if (format == "sglang") return read_sglang_placement(path, num_experts);
  if (format == "trtllm") return read_trtllm_config(path, num_experts);
  if (format == "eplb-json") return read_eplb_json(path, num_experts);
  unknown(format);
}

}  // namespace zepp
