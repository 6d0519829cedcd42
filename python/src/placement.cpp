// Placement policies over all layers: DeepSeek EPLB and Zepp's §4.1 placement.
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"

namespace zepp::py {

// A cluster of `nodes` x `gpus_per_node` GPUs. Placement and routing read only this shape (routing
// ranks replicas by level: same GPU, same node, remote); the h100 preset fills the rest.
Topology cluster(int nodes, int gpus_per_node) {
  Topology topo = topology_preset("h100", nodes);
  topo.gpus_per_node = gpus_per_node;
  return topo;
}

namespace {

pb::tuple maps_to_numpy(EplbResult&& r) {
  const pb::ssize_t L = r.layers, E = r.experts;
  return pb::make_tuple(to_numpy(std::move(r.phy2log), {L, r.replicas}), to_numpy(std::move(r.log2phy), {L, E, r.max_replicas}),
                        to_numpy(std::move(r.logcnt), {L, E}));
}

}  // namespace

void bind_placement(pb::module_& m) {
  // weight [L, E] float32 -> (phy2log [L, P], log2phy [L, E, X = the most replicas], logcnt [L, E]), int64.
  m.def("eplb_rebalance", [](Array<float> weight, int num_replicas, int num_groups, int num_nodes, int num_gpus) {
    const int L = int(weight.shape(0)), E = int(weight.shape(1));
    std::vector<float> w(weight.data(), weight.data() + weight.size());
    EplbResult r;
    {
      pb::gil_scoped_release unlocked;
      r = eplb_rebalance(w, L, E, num_replicas, num_groups, num_nodes, num_gpus);
    }
    return maps_to_numpy(std::move(r));
  });
  // weight [L, E] float64 -> the same three maps, log2phy listing each expert's slots ascending.
  m.def("place_zepp_layers", [](Array<double> weight, int num_nodes, int gpus_per_node, int extra_slots) {
    const int L = int(weight.shape(0)), E = int(weight.shape(1));
    EplbResult r;
    {
      pb::gil_scoped_release unlocked;
      const Topology topo = cluster(num_nodes, gpus_per_node);
      std::vector<Placement> layers;
      for (int l = 0; l < L; ++l)
        layers.push_back(place_zepp({weight.data() + size_t(l) * E, weight.data() + size_t(l + 1) * E}, topo, extra_slots));
      r = eplb_maps(layers);
    }
    return maps_to_numpy(std::move(r));
  });
  // Rebalancing (paper §4.1 placement, src/placement/rebalance.cpp), layer by layer.
  // weight [L, E] float64; previous [L, G * S] int32 or shape [0, 0]; failed: GPU ids. Returns
  // (phy2log [L, G' * S] over the survivors, survivors [G'], moves [L, 6] float64 (slots changed,
  // local, nvlink, nic, nvlink_bytes, nic_bytes), imbalance [L, 2] (placed, from scratch)).
  m.def("rebalance_zepp_layers", [](Array<double> weight, int num_nodes, int gpus_per_node, int slots_per_gpu,
                                    Array<int32_t> previous, std::vector<int> failed, double expert_bytes,
                                    double max_moved_bytes) {
    const int L = int(weight.shape(0)), E = int(weight.shape(1));
    std::vector<int64_t> phy;
    std::vector<double> moves, imbalance;
    std::vector<int> survivors;
    {
      pb::gil_scoped_release unlocked;
      const Topology topo = cluster(num_nodes, gpus_per_node);
      RebalanceOptions opt;
      opt.failed_gpus = failed;
      opt.expert_bytes = expert_bytes;
      opt.max_moved_bytes = max_moved_bytes;
      for (int l = 0; l < L; ++l) {
        if (previous.size() > 0)
          opt.previous.assign(previous.data() + size_t(l) * previous.shape(1), previous.data() + size_t(l + 1) * previous.shape(1));
        Rebalanced r;
        try {
          r = rebalance_zepp({weight.data() + size_t(l) * E, weight.data() + size_t(l + 1) * E}, topo, slots_per_gpu, opt);
        } catch (const ArgumentError& e) {  // previous's errors name its row
          const std::string what = e.what();
          if (what.rfind("previous: ", 0) != 0) throw;
          throw ArgumentError("previous: row " + std::to_string(l) + ", " + what.substr(10));
        }
        phy.insert(phy.end(), r.placement.phy2log.begin(), r.placement.phy2log.end());
        const MoveReport& m = r.moves;
        moves.insert(moves.end(), {double(m.slots_changed), double(m.local), double(m.nvlink), double(m.nic), m.nvlink_bytes,
                                   m.nic_bytes});
        imbalance.insert(imbalance.end(), {r.imbalance, r.fresh_imbalance});
        survivors = r.survivors;
      }
    }
    const pb::ssize_t Gs = pb::ssize_t(survivors.size());
    std::vector<int64_t> ranks(survivors.begin(), survivors.end());
    return pb::make_tuple(to_numpy(std::move(phy), {L, Gs * slots_per_gpu}), to_numpy(std::move(ranks), {Gs}),
                          to_numpy(std::move(moves), {L, 6}), to_numpy(std::move(imbalance), {L, 2}));
  });
}

}  // namespace zepp::py
