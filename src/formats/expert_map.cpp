#include "formats/expert_map.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/input_bounds.hpp"

namespace zepp {

int ExpertMap::num_experts() const {
  int32_t most = -1;
  for (int32_t e : phy2log) most = std::max(most, e);
  return most + 1;
}

std::string ExpertMap::problem(int expected_experts) const {
  const int L = num_layers();
  if (num_slots <= 0) return "expected at least one slot per layer, got " + std::to_string(num_slots);
  if (phy2log.size() != size_t(L) * num_slots)
    return "expected " + std::to_string(L) + " rows of " + std::to_string(num_slots) + " slots, got " +
           std::to_string(phy2log.size()) + " entries";
  std::vector<int> ids = layer_ids;
  std::sort(ids.begin(), ids.end());
  if (!ids.empty() && (ids.front() < 0 || ids.back() >= kMaxLayerId))  // what the readers accept
    return "layer " + std::to_string(ids.front() < 0 ? ids.front() : ids.back()) + ": expected layer ids in [0, " +
           std::to_string(kMaxLayerId) + ")";
  if (auto dup = std::adjacent_find(ids.begin(), ids.end()); dup != ids.end())
    return "layer " + std::to_string(*dup) + " appears twice, expected distinct layer ids";
  // Every expert of [0, E) needs a slot in every row, so ids beyond the row length cannot work.
  for (size_t i = 0; i < phy2log.size(); ++i)
    if (phy2log[i] < 0 || phy2log[i] >= num_slots)
      return "row " + std::to_string(i / num_slots) + " slot " + std::to_string(i % num_slots) +
             ": expected an expert id in [0, " + std::to_string(num_slots) + "), got " + std::to_string(phy2log[i]);
  // An id at or beyond the experts expected is named as such, not as a gap below it.
  if (expected_experts > 0)
    for (size_t i = 0; i < phy2log.size(); ++i)
      if (phy2log[i] >= expected_experts)
        return "row " + std::to_string(i / num_slots) + " (layer " + std::to_string(layer_ids[i / num_slots]) +
               ") slot " + std::to_string(i % num_slots) + ": expert " + std::to_string(phy2log[i]) +
               " is beyond the " + std::to_string(expected_experts) + " experts of the loads (ids 0.." +
               std::to_string(expected_experts - 1) + ")";
  const int E = expected_experts > 0 ? expected_experts : num_experts();
  for (int l = 0; l < L; ++l) {
    std::vector<bool> held(E, false);
    for (int p = 0; p < num_slots; ++p) held[phy2log[size_t(l) * num_slots + p]] = true;
    auto missing = std::find(held.begin(), held.end(), false);
    if (missing != held.end())
      return "row " + std::to_string(l) + " (layer " + std::to_string(layer_ids[l]) + "): expert " +
             std::to_string(missing - held.begin()) + " has no slot, expected every expert of [0, " +
             std::to_string(E) + ") in every row";
  }
  return "";
}

void ExpertMap::validate(const std::string& what) const {
  std::string p = problem();
  require(p.empty(), what, p);
}

Placement ExpertMap::layer(int row, int num_gpus) const {
  require(row >= 0 && row < num_layers(), "row", "expected [0, " + std::to_string(num_layers()) + "), got " + std::to_string(row));
  require(num_gpus > 0 && num_slots % num_gpus == 0, "num_gpus",
          "expected a positive divisor of the slot count " + std::to_string(num_slots) + ", got " + std::to_string(num_gpus));
  Placement pl;
  pl.num_gpus = num_gpus;
  pl.num_experts = num_experts();
  pl.slots_per_gpu = num_slots / num_gpus;
  pl.phy2log.assign(phy2log.begin() + size_t(row) * num_slots, phy2log.begin() + size_t(row + 1) * num_slots);
  return pl;
}

void ExpertMap::logical_maps(std::vector<int64_t>& log2phy, int& max_replicas, std::vector<int64_t>& logcnt) const {
  const int L = num_layers(), E = num_experts();
  logcnt.assign(size_t(L) * E, 0);
  for (size_t i = 0; i < phy2log.size(); ++i) ++logcnt[(i / num_slots) * E + phy2log[i]];
  max_replicas = logcnt.empty() ? 0 : int(*std::max_element(logcnt.begin(), logcnt.end()));
  log2phy.assign(size_t(L) * E * max_replicas, -1);
  std::vector<int> filled(size_t(L) * E, 0);
  for (int l = 0; l < L; ++l)
    for (int p = 0; p < num_slots; ++p) {
      size_t le = size_t(l) * E + phy2log[size_t(l) * num_slots + p];
      log2phy[le * max_replicas + filled[le]++] = p;
    }
  if (phyrank.size() != phy2log.size()) return;
  for (size_t le = 0; le < logcnt.size(); ++le) {  // replica order: by phyrank, ties by slot
    const size_t l = le / std::max(E, 1);
    auto first = log2phy.begin() + long(le * max_replicas);
    std::stable_sort(first, first + logcnt[le], [&](int64_t a, int64_t b) {
      return phyrank[l * num_slots + size_t(a)] < phyrank[l * num_slots + size_t(b)];
    });
  }
}

ExpertMap expert_map_of(const std::vector<Placement>& placements, std::vector<int> layer_ids) {
  require(!placements.empty(), "placements", "expected at least one layer");
  if (layer_ids.empty())
    for (size_t l = 0; l < placements.size(); ++l) layer_ids.push_back(int(l));
  require(layer_ids.size() == placements.size(), "layer_ids",
          "expected one id per placement (" + std::to_string(placements.size()) + "), got " + std::to_string(layer_ids.size()));
  ExpertMap map;
  map.layer_ids = std::move(layer_ids);
  map.num_slots = placements[0].num_slots();
  for (size_t l = 0; l < placements.size(); ++l) {
    placements[l].validate("placements[" + std::to_string(l) + "]");
    require(placements[l].num_slots() == map.num_slots, "placements",
            "layer " + std::to_string(l) + " has " + std::to_string(placements[l].num_slots()) + " slots, expected " +
                std::to_string(map.num_slots) + " like layer 0");
    map.phy2log.insert(map.phy2log.end(), placements[l].phy2log.begin(), placements[l].phy2log.end());
  }
  map.validate("placements");
  return map;
}

}  // namespace zepp
