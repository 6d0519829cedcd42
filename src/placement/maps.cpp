// Placements in EPLB's output form, so every policy prints and compares alike.
#include <algorithm>

#include "core/error.hpp"
#include "placement/placement.hpp"

namespace zepp {

EplbResult eplb_maps(const std::vector<Placement>& layers) {
  require(!layers.empty(), "layers", "is empty, expected at least one placement");
  EplbResult r;
  r.layers = int(layers.size());
  r.experts = layers[0].num_experts;
  r.replicas = layers[0].num_slots();
  for (size_t l = 0; l < layers.size(); ++l) {
    layers[l].validate("layers[" + std::to_string(l) + "]");
    require(layers[l].num_experts == r.experts && layers[l].num_slots() == r.replicas, "layers",
            "layer " + std::to_string(l) + " has a different expert or slot count than layer 0");
  }
  r.phy2log.reserve(size_t(r.layers) * r.replicas);
  r.logcnt.assign(size_t(r.layers) * r.experts, 0);
  for (int l = 0; l < r.layers; ++l)
    for (int p = 0; p < r.replicas; ++p) {
      r.phy2log.push_back(layers[l].phy2log[p]);
      ++r.logcnt[size_t(l) * r.experts + layers[l].phy2log[p]];
    }
  r.max_replicas = int(*std::max_element(r.logcnt.begin(), r.logcnt.end()));
  r.log2phy.assign(size_t(r.layers) * r.experts * r.max_replicas, -1);
  std::vector<int> rank(r.experts);
  for (int l = 0; l < r.layers; ++l) {
    std::fill(rank.begin(), rank.end(), 0);
    for (int p = 0; p < r.replicas; ++p) {  // replicas ranked by slot, ascending
      const int e = layers[l].phy2log[p];
      r.log2phy[(size_t(l) * r.experts + e) * r.max_replicas + rank[e]++] = p;
    }
  }
  return r;
}

}  // namespace zepp
