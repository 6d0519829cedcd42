#include "formats/sglang.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/input_bounds.hpp"
#include "formats/file_io.hpp"

namespace zepp {

using formats_detail::load_json;
using formats_detail::member;
using formats_detail::number_array;
using formats_detail::write_text;

namespace {

// One JSON list per line: readable, and diffs of placement files stay per layer.
template <class Row>
std::string json_rows(const std::string& key, const std::vector<Row>& rows) {
  std::string text = "{\"" + key + "\": [\n";
  for (size_t l = 0; l < rows.size(); ++l)
    text += fmt::format("  [{}]{}\n", fmt::join(rows[l], ", "), l + 1 < rows.size() ? "," : "");
  return text + "]}\n";
}

}  // namespace

std::vector<std::vector<double>> read_sglang_stats(const std::string& path) {
  auto doc = load_json(path);
  auto a = number_array(member(doc, "logical_count", path), false, path, "logical_count");
  if (a.shape.size() != 2 && a.shape.size() != 3)
    throw InputError(path + ": logical_count: expected [steps, layers, experts] or [layers, experts], got " +
                     std::to_string(a.shape.size()) + " dimensions");
  size_t steps = a.shape.size() == 3 ? a.shape[0] : 1;
  size_t L = a.shape[a.shape.size() - 2], E = a.shape.back();
  if (steps == 0 || L == 0 || E == 0) throw InputError(path + ": logical_count: expected no empty dimension");
  std::vector<std::vector<double>> load(L, std::vector<double>(E, 0.0));
  for (size_t s = 0; s < steps; ++s)
    for (size_t l = 0; l < L; ++l)
      for (size_t e = 0; e < E; ++e) load[l][e] += a.values[(s * L + l) * E + e];
  // Each count is within kMaxLoad (number_array); their sum must be too, as every load reader
  // and the placement require.
  for (size_t l = 0; l < L; ++l)
    for (size_t e = 0; e < E; ++e)
      if (load[l][e] > kMaxLoad)
        throw InputError(fmt::format("{}: logical_count: [{}, {}] sums to {:g} over the steps, above the load bound 1e15",
                                     path, l, e, load[l][e]));
  return load;
}

void write_sglang_stats(const std::string& path, const std::vector<std::vector<double>>& load) {
  require(!load.empty() && !load[0].empty(), "load", "expected at least one layer and one expert");
  for (size_t l = 0; l < load.size(); ++l) {
    require(load[l].size() == load[0].size(), "load",
            fmt::format("layer {} has {} experts, expected {} like layer 0", l, load[l].size(), load[0].size()));
    for (size_t e = 0; e < load[l].size(); ++e)
      require(load[l][e] >= 0 && load[l][e] <= kMaxLoad, "load",  // what the reader takes; NaN fails too
              fmt::format("layer {} expert {}: expected a load in [0, 1e15], got {}", l, e, load[l][e]));
  }
  write_text(path, json_rows("logical_count", load));
}

ExpertMap read_sglang_placement(const std::string& path, int num_experts) {
  auto doc = load_json(path);
  auto a = number_array(member(doc, "physical_to_logical_map", path), true, path, "physical_to_logical_map");
  if (a.shape.size() != 2 || a.shape[0] == 0 || a.shape[1] == 0)
    throw InputError(path + ": physical_to_logical_map: expected a non-empty [layers, physical experts] list");
  ExpertMap map;
  map.num_slots = int(a.shape[1]);
  for (size_t l = 0; l < a.shape[0]; ++l) map.layer_ids.push_back(int(l));
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (a.values[i] >= map.num_slots)  // checked here so the cast below cannot overflow
      throw InputError(fmt::format("{}: physical_to_logical_map[{}][{}]: expected an expert id below the slot count {}, got {}",
                                   path, i / map.num_slots, i % map.num_slots, map.num_slots, a.values[i]));
    map.phy2log.push_back(int32_t(a.values[i]));
  }
  if (auto p = map.problem(num_experts); !p.empty()) throw InputError(path + ": physical_to_logical_map: " + p);
  return map;
}

void write_sglang_placement(const std::string& path, const ExpertMap& map) {
  map.validate("map");  // layer ids in [0, kMaxLayerId): SGLang's rows are model layers 0..max
  int rows = 0;
  for (int id : map.layer_ids) rows = std::max(rows, id + 1);
  const int P = map.num_slots, E = map.num_experts();
  std::vector<std::vector<int32_t>> table(rows, std::vector<int32_t>(P));
  for (auto& row : table)
    for (int p = 0; p < P; ++p) row[p] = p % E;
  for (int l = 0; l < map.num_layers(); ++l)
    std::copy_n(map.phy2log.begin() + size_t(l) * P, P, table[map.layer_ids[l]].begin());
  write_text(path, json_rows("physical_to_logical_map", table));
}

}  // namespace zepp
