// Placements in EPLB's output form, so every policy prints and compares alike.
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
  r.max_replicas = r.replicas - r.experts + 1;
  r.phy2log.reserve(size_t(r.layers) * r.replicas);
  r.log2phy.assign(size_t(r.layers) * r.experts * r.max_replicas, -1);
  r.logcnt.assign(size_t(r.layers) * r.experts, 0);
  for (int l = 0; l < r.layers; ++l)
    for (int p = 0; p < r.replicas; ++p) {
      const int e = layers[l].phy2log[p];
      r.phy2log.push_back(e);
      int64_t& rank = r.logcnt[size_t(l) * r.experts + e];  // replicas ranked by slot, ascending
      r.log2phy[(size_t(l) * r.experts + e) * r.max_replicas + rank++] = p;
    }
  return r;
}

}  // namespace zepp
