#include "exec/estimate.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/roofline.hpp"

namespace zepp {
namespace {

// Bytes between every ordered GPU pair, shape [G * G], from the count-level plan.
std::vector<double> pair_bytes(const Routing& routing, const Placement& placement, int gpus, double token_bytes) {
  std::vector<double> bytes(size_t(gpus) * gpus, 0.0);
  for (const RouteCount& c : routing.counts)
    bytes[size_t(c.src_gpu) * gpus + placement.gpu_of_slot(c.slot)] += double(c.tokens) * token_bytes;
  return bytes;
}

// Time for one all-to-allv phase given who sends what to whom (bytes[src * G + dst]).
double phase_time(const std::vector<double>& bytes, const Topology& t, std::vector<GpuStats>* stats) {
  const int G = t.num_gpus();
  std::vector<double> nic_out(G, 0), nic_in(G, 0), nvl_peer_max(G, 0), nvl_out(G, 0), nvl_in(G, 0);
  std::vector<int> nic_msgs(G, 0), nvl_msgs(G, 0);
  for (int s = 0; s < G; ++s)
    for (int d = 0; d < G; ++d) {
      const double b = bytes[size_t(s) * G + d];
      if (b <= 0 || s == d) continue;
      if (t.node_of(s) != t.node_of(d)) {
        nic_out[s] += b;
        nic_in[d] += b;
        ++nic_msgs[s];
      } else {
        nvl_peer_max[s] = std::max(nvl_peer_max[s], b);
        nvl_out[s] += b;
        nvl_in[d] += b;
        ++nvl_msgs[s];
        if (stats) (*stats)[s].nvlink_out_bytes += b;
      }
    }
  double worst = 0;
  for (int g = 0; g < G; ++g) {
    const double nic = std::max(nic_out[g], nic_in[g]) / t.nic_bw + nic_msgs[g] * t.nic_latency;
    // Per-pair links carry one peer each; an NVSwitch port carries all of the GPU's peers.
    const double nvl_bytes =
        t.nvlink_model == NvlinkModel::Switch ? std::max(nvl_out[g], nvl_in[g]) : nvl_peer_max[g];
    const double nvl = nvl_bytes / t.nvlink_bw + (nvl_msgs[g] ? t.nvlink_latency : 0.0);
    worst = std::max(worst, std::max(nic, nvl));
    if (stats) {
      (*stats)[g].nic_out_bytes += nic_out[g];
      (*stats)[g].nic_in_bytes += nic_in[g];
    }
  }
  return worst;
}

}  // namespace

LayerResult estimate_layer(const RoutingBatch& batch, const Placement& placement, const Routing& routing,
                           const Topology& topo, const ModelShape& model) {
  const int G = topo.num_gpus();
  require(batch.num_gpus == G, "batch", "has " + std::to_string(batch.num_gpus) + " GPUs, topology has " + std::to_string(G));
  require(placement.num_gpus == G, "placement", "has " + std::to_string(placement.num_gpus) + " GPUs, topology has " + std::to_string(G));
  std::vector<int64_t> slot_tokens(placement.num_slots(), 0);
  int64_t pairs = 0;
  for (const RouteCount& c : routing.counts) {
    require(c.slot >= 0 && c.slot < placement.num_slots() && c.src_gpu >= 0 && c.src_gpu < G, "routing",
            "count entry outside the placement's slots or GPUs");
    slot_tokens[c.slot] += c.tokens;
    pairs += c.tokens;
  }
  require(pairs == batch.num_tokens() * batch.top_k, "routing",
          "serves " + std::to_string(pairs) + " (token, k) pairs, batch has " + std::to_string(batch.num_tokens() * batch.top_k));

  LayerResult r;
  r.gpus.assign(G, GpuStats{});
  const auto dispatch = pair_bytes(routing, placement, G, model.token_bytes());
  std::vector<double> combine(dispatch.size());
  for (int s = 0; s < G; ++s)
    for (int d = 0; d < G; ++d) combine[size_t(d) * G + s] = dispatch[size_t(s) * G + d];

  const double t_dispatch = phase_time(dispatch, topo, &r.gpus);
  const double t_combine = phase_time(combine, topo, &r.gpus);
  double t_compute = 0;
  for (int p = 0; p < placement.num_slots(); ++p) {
    GpuStats& g = r.gpus[placement.gpu_of_slot(p)];
    g.tokens_computed += slot_tokens[p];
    g.compute_s += expert_compute_time(slot_tokens[p], model, topo);
  }
  for (const GpuStats& g : r.gpus) t_compute = std::max(t_compute, g.compute_s);

  r.latency_s = t_dispatch + t_compute + t_combine;
  for (int g = 0; g < G; ++g) {
    GpuStats& s = r.gpus[g];
    s.finish_s = r.latency_s;  // barrier-separated phases: everyone ends with the last GPU
    r.inter_node_bytes += s.nic_out_bytes;
    r.nvlink_bytes += s.nvlink_out_bytes;
    r.max_nic_bytes = std::max({r.max_nic_bytes, s.nic_out_bytes, s.nic_in_bytes});
  }
  return r;
}

}  // namespace zepp
