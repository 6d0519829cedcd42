// One MoE layer of a model preset on a cluster preset with the synthetic power-law workload
// (workload/workload.hpp, as `zepp simulate` builds it without a trace), for strategy tests.
#pragma once
#include <string>

#include "core/presets.hpp"
#include "workload/workload.hpp"

namespace zepp::test {

struct SyntheticLayer {
  ModelShape model;
  Topology topo;
  Workload workload;
};

// size_mb: MiB of activations per GPU. Throws what the presets and build_workload throw.
inline SyntheticLayer synthetic_layer(const std::string& model, const std::string& topology, int nodes, double size_mb) {
  SyntheticLayer l{model_preset(model), topology_preset(topology, nodes), {}};
  WorkloadOptions wo;
  wo.size_mb = size_mb;
  l.workload = build_workload(nullptr, l.model, l.topo, wo);
  return l;
}

}  // namespace zepp::test
