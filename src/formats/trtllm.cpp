#include "formats/trtllm.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "core/excerpt.hpp"
#include "core/input_bounds.hpp"
#include "formats/file_io.hpp"

namespace zepp {

namespace {

// "FILE:LINE: field: " for errors about `node` (yaml-cpp counts lines from 0).
std::string where(const std::string& path, const YAML::Node& node, const std::string& field) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return fmt::format("{}: {}: ", path, field);
  return fmt::format("{}:{}: {}: ", path, m.line + 1, field);
}

int integer(const YAML::Node& node, int lo, int hi, const std::string& path, const std::string& field) {
  int v = 0;
  if (!node.IsScalar() || !YAML::convert<int>::decode(node, v) || v < lo || v >= hi)
    throw InputError(where(path, node, field) + "expected an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "), got " + (node.IsScalar() ? "'" + excerpt(node.Scalar()) + "'" : "a non-scalar"));
  return v;
}

}  // namespace

ExpertMap read_trtllm_config(const std::string& path, int num_experts) {
  const std::string text = formats_detail::read_text(path);
  check_nesting(text, path, true);
  const YAML::Node doc = load_one_yaml_document(text, path, "valid YAML");
  if (!doc.IsMap()) throw InputError(path + ": expected a YAML mapping with num_slots and initial_global_assignments");
  // yaml-cpp keeps a duplicated key (doc[key] finds the first) and reads a truncated last line
  // ("layer_upd") as a key without a value: both are errors here, as is a key TensorRT-LLM's
  // MoeLoadBalancerConfig does not have.
  std::vector<std::string> keys;
  for (const auto& kv : doc) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      throw InputError(where(path, kv.first, key) + "key appears twice");
    if (key != "num_slots" && key != "initial_global_assignments" && key != "layer_updates_per_iter")
      throw InputError(where(path, kv.first, key.empty() ? "key" : key) +
                       "expected one of num_slots, initial_global_assignments, layer_updates_per_iter (a truncated file?)");
    if (!kv.second || kv.second.IsNull()) throw InputError(where(path, kv.first, key) + "expected a value, got none");
    keys.push_back(key);
  }
  if (doc["layer_updates_per_iter"]) integer(doc["layer_updates_per_iter"], 0, 1 << 30, path, "layer_updates_per_iter");
  for (const char* key : {"num_slots", "initial_global_assignments"})
    if (!doc[key]) throw InputError(path + ": expected a member '" + std::string(key) + "'");

  ExpertMap map;
  map.num_slots = integer(doc["num_slots"], 1, 1 << 30, path, "num_slots");
  const YAML::Node rows = doc["initial_global_assignments"];
  if (!rows.IsMap() || rows.size() == 0)
    throw InputError(where(path, rows, "initial_global_assignments") + "expected a non-empty mapping {layer: [expert per slot]}");
  for (const auto& kv : rows) {
    int layer = integer(kv.first, 0, kMaxLayerId, path, "initial_global_assignments key");
    std::string field = "initial_global_assignments[" + std::to_string(layer) + "]";
    if (std::find(map.layer_ids.begin(), map.layer_ids.end(), layer) != map.layer_ids.end())
      throw InputError(where(path, kv.first, field) + "layer appears twice");
    if (!kv.second.IsSequence() || int(kv.second.size()) != map.num_slots)
      throw InputError(where(path, kv.second, field) + "expected a list of num_slots = " + std::to_string(map.num_slots) +
                       " expert ids, got " + (kv.second.IsSequence() ? std::to_string(kv.second.size()) + " entries" : "no list"));
    map.layer_ids.push_back(layer);
    for (int p = 0; p < map.num_slots; ++p)
      map.phy2log.push_back(integer(kv.second[p], 0, map.num_slots, path, field + "[" + std::to_string(p) + "]"));
  }
  if (auto p = map.problem(num_experts); !p.empty()) throw InputError(path + ": initial_global_assignments: " + p);
  return map;
}

void write_trtllm_config(const std::string& path, const ExpertMap& map) {
  map.validate("map");
  std::vector<int> order(map.num_layers());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return map.layer_ids[a] < map.layer_ids[b]; });

  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "num_slots" << YAML::Value << map.num_slots;
  out << YAML::Key << "initial_global_assignments" << YAML::Value << YAML::BeginMap;
  for (int l : order) {
    auto row = map.phy2log.begin() + size_t(l) * map.num_slots;
    out << YAML::Key << map.layer_ids[l] << YAML::Value << YAML::Flow
        << std::vector<int32_t>(row, row + map.num_slots);
  }
  out << YAML::EndMap << YAML::Key << "layer_updates_per_iter" << YAML::Value << 0 << YAML::EndMap;
  formats_detail::write_text(path, std::string(out.c_str()) + "\n");
}

}  // namespace zepp
