#include "formats/eplb_json.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/input_bounds.hpp"
#include "formats/file_io.hpp"

namespace zepp {

using formats_detail::number_array;

void write_eplb_json(const std::string& path, const ExpertMap& map, const std::vector<int>& ranks) {
  map.validate("map");
  std::vector<int64_t> log2phy, logcnt;
  int X = 0;
  map.logical_maps(log2phy, X, logcnt);
  const int L = map.num_layers(), P = map.num_slots, E = map.num_experts();
  std::string text = "{\n\"phy2log\": [\n";
  for (int l = 0; l < L; ++l)
    text += fmt::format("  [{}]{}\n", fmt::join(map.phy2log.begin() + size_t(l) * P, map.phy2log.begin() + size_t(l + 1) * P, ", "),
                        l + 1 < L ? "," : "");
  text += "],\n\"log2phy\": [\n";
  for (int l = 0; l < L; ++l) {
    text += "  [";
    for (int e = 0; e < E; ++e) {
      auto row = log2phy.begin() + (size_t(l) * E + e) * X;
      text += fmt::format("{}[{}]", e ? ", " : "", fmt::join(row, row + X, ", "));
    }
    text += l + 1 < L ? "],\n" : "]\n";
  }
  text += "],\n\"logcnt\": [\n";
  for (int l = 0; l < L; ++l)
    text += fmt::format("  [{}]{}\n", fmt::join(logcnt.begin() + size_t(l) * E, logcnt.begin() + size_t(l + 1) * E, ", "),
                        l + 1 < L ? "," : "");
  text += "]";
  bool positional = true;  // rows are layers 0..L-1, which the file says by position alone
  for (int l = 0; l < L; ++l) positional = positional && map.layer_ids[size_t(l)] == l;
  if (!positional) text += fmt::format(",\n\"layers\": [{}]", fmt::join(map.layer_ids, ", "));
  if (!ranks.empty()) text += fmt::format(",\n\"ranks\": [{}]", fmt::join(ranks, ", "));
  formats_detail::write_text(path, text + "\n}\n");
}

ExpertMap read_eplb_json(const std::string& path, int num_experts) {
  auto doc = formats_detail::load_json(path);
  auto a = number_array(formats_detail::member(doc, "phy2log", path), true, path, "phy2log");
  if (a.shape.size() != 2 || a.shape[0] == 0 || a.shape[1] == 0)
    throw InputError(path + ": phy2log: expected a non-empty [layers, physical experts] list");
  ExpertMap map;
  map.num_slots = int(a.shape[1]);
  for (size_t l = 0; l < a.shape[0]; ++l) map.layer_ids.push_back(int(l));
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (a.values[i] >= map.num_slots)
      throw InputError(fmt::format("{}: phy2log[{}][{}]: expected an expert id below the slot count {}, got {}", path,
                                   i / map.num_slots, i % map.num_slots, map.num_slots, a.values[i]));
    map.phy2log.push_back(int32_t(a.values[i]));
  }
  if (auto p = map.problem(num_experts); !p.empty()) throw InputError(path + ": phy2log: " + p);
  if (doc.contains("layers")) {  // the model layer of each row, as `zepp place --trace` writes them
    const nlohmann::json& list = doc["layers"];
    std::vector<int> ids;
    if (list.is_array())
      for (const nlohmann::json& l : list) {
        if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= kMaxLayerId) break;
        ids.push_back(int(l.get<int64_t>()));
      }
    if (!list.is_array() || ids.size() != list.size())
      throw InputError(path + ": layers: expected a list of layer ids in [0, 2^30), got " + list.dump().substr(0, 40));
    if (ids.size() != a.shape[0])
      throw InputError(fmt::format("{}: layers: expected {} layer ids, one per row of phy2log, got {}", path, a.shape[0],
                                   ids.size()));
    for (size_t l = 0; l < ids.size(); ++l)
      if (std::find(ids.begin(), ids.begin() + long(l), ids[l]) != ids.begin() + long(l))
        throw InputError(fmt::format("{}: layers[{}]: expected distinct layer ids, got {} twice", path, l, ids[l]));
    map.layer_ids = ids;
  }
  std::vector<int64_t> log2phy, logcnt;
  int X = 0;
  map.logical_maps(log2phy, X, logcnt);
  const size_t L = map.num_layers(), E = map.num_experts();
  if (doc.contains("logcnt")) {
    auto c = number_array(doc["logcnt"], true, path, "logcnt");
    if (c.shape != std::vector<size_t>{L, E}) throw InputError(fmt::format("{}: logcnt: expected shape [{}, {}]", path, L, E));
    for (size_t i = 0; i < c.values.size(); ++i)
      if (c.values[i] != double(logcnt[i]))
        throw InputError(fmt::format("{}: logcnt[{}][{}]: expected {} (the replicas phy2log gives), got {}", path, i / E, i % E,
                                     logcnt[i], c.values[i]));
  }
  if (doc.contains("log2phy")) {
    map.phyrank.assign(map.phy2log.size(), 0);  // the file's replica order, kept for writing back
    // Entries are -1 padding, so read them as signed numbers without number_array's >= 0 check.
    const auto& v = doc["log2phy"];
    if (!v.is_array() || v.size() != L) throw InputError(fmt::format("{}: log2phy: expected a list of {} layers", path, L));
    for (size_t l = 0; l < L; ++l) {
      if (!v[l].is_array() || v[l].size() != E)
        throw InputError(fmt::format("{}: log2phy[{}]: expected a list of {} experts", path, l, E));
      for (size_t e = 0; e < E; ++e) {
        const auto& row = v[l][e];
        std::vector<int64_t> got;
        for (size_t r = 0; row.is_array() && r < row.size(); ++r) {
          if (!row[r].is_number_integer())
            throw InputError(fmt::format("{}: log2phy[{}][{}][{}]: expected an integer slot or -1", path, l, e, r));
          // Column r is replica rank r (EPLB's log2phy[l, e, :logcnt]): -1 pads only after the slots.
          if (row[r].get<int64_t>() != -1 && got.size() < r)
            throw InputError(fmt::format("{}: log2phy[{}][{}][{}]: expected -1 padding only after the expert's slots, "
                                         "got slot {} after -1", path, l, e, r, row[r].get<int64_t>()));
          if (row[r].get<int64_t>() != -1) got.push_back(row[r].get<int64_t>());
        }
        auto want = std::vector<int64_t>(log2phy.begin() + (l * E + e) * X, log2phy.begin() + (l * E + e) * X + logcnt[l * E + e]);
        for (size_t r = 0; r < got.size(); ++r)
          if (got[r] >= 0 && got[r] < map.num_slots) map.phyrank[l * size_t(map.num_slots) + size_t(got[r])] = int32_t(r);
        std::sort(got.begin(), got.end());
        if (!row.is_array() || got != want)
          throw InputError(fmt::format("{}: log2phy[{}][{}]: expected the slots [{}] that phy2log gives expert {}", path, l, e,
                                       fmt::join(want, ", "), e));
      }
    }
  }
  return map;
}

namespace {

int count_field(const nlohmann::json& doc, const std::string& path, const std::string& field) {
  const nlohmann::json& v = formats_detail::member(doc, field, path);
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1'000'000'000)
    throw InputError(path + ": " + field + ": expected an integer in [1, 10^9], got " + v.dump().substr(0, 40));
  return int(v.get<int64_t>());
}

}  // namespace

EplbLoad read_eplb_load(const std::string& path) {
  const auto doc = formats_detail::load_json(path);
  const auto a = number_array(formats_detail::member(doc, "weight", path), false, path, "weight");
  if (a.shape.size() != 2 || a.shape[0] == 0 || a.shape[1] == 0)
    throw InputError(path + ": weight: expected a non-empty [layers, experts] list of lists");
  EplbLoad load;
  for (size_t l = 0; l < a.shape[0]; ++l)
    load.weight.emplace_back(a.values.begin() + long(l * a.shape[1]), a.values.begin() + long((l + 1) * a.shape[1]));
  load.num_replicas = count_field(doc, path, "num_replicas");
  load.num_groups = count_field(doc, path, "num_groups");
  load.num_nodes = count_field(doc, path, "num_nodes");
  load.num_gpus = count_field(doc, path, "num_gpus");
  return load;
}

}  // namespace zepp
