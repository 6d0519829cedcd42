#include "core/presets.hpp"

#include "core/error.hpp"

namespace zepp {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Shapes from the public model configurations, as tabulated in shared/data/traces/README.md
// (Qwen3-235B and Kimi-K2 also in the paper's Table 2).
std::vector<ModelShape> models() {
  //        name               E    k  hidden   ffn  layers moe shared
  return {
      {"deepseek-v2-lite", 64, 6, 2048, 1408, 27, 26, 2},
      {"llama4-maverick", 128, 1, 5120, 8192, 48, 24, 1},
      {"mixtral-8x7b", 8, 2, 4096, 14336, 32, 32, 0},
      {"qwen3-30b-a3b", 128, 8, 2048, 768, 48, 48, 0},
      {"qwen3-235b-a22b", 128, 8, 4096, 1536, 94, 94, 0},
      {"kimi-k2", 384, 8, 7168, 2048, 61, 60, 1},
      {"deepseek-v3", 256, 8, 7168, 2048, 61, 58, 1},
  };
}

Topology a100(int nodes) {
  Topology t;
  t.name = "a100";
  t.nodes = nodes;
  t.gpus_per_node = 4;           // paper §6.1: four A100 per node
  t.nvlink_bw = 100e9;           // paper §6.1: third-generation NVLink, 100 GB/s per direction per pair
  t.nvlink_latency = 2e-6;       // assumed: order of a CUDA peer copy's start-up cost; not measured here
  t.nic_bw = 25e9;               // paper §6.1: one HPE Slingshot 11 NIC (200 Gb/s) per GPU
  t.nic_latency = 3e-6;          // assumed: order of a Slingshot 11 RDMA put (HPE quotes ~2 us MPI latency)
  t.peak_flops = 312e12;         // DESIGN.md §3: A100 BF16 dense tensor-core peak
  t.hbm_bw = 1.555e12;           // DESIGN.md §3: A100 40 GB HBM2
  t.kernel_launch = 5e-6;        // assumed: typical CUDA kernel launch plus GEMM tail; not measured here
  return t;
}

Topology h100(int nodes) {
  Topology t = a100(nodes);      // paper §6.1: same GPU/NIC topology
  t.name = "h100";
  t.nvlink_bw = 150e9;           // paper §6.1: fourth-generation NVLink, 150 GB/s per direction per pair
  t.peak_flops = 989e12;         // DESIGN.md §3: H100 SXM BF16 dense peak
  t.hbm_bw = 3.35e12;            // DESIGN.md §3: H100 SXM HBM3
  return t;
}

}  // namespace

ModelShape model_preset(const std::string& name) {
  for (const auto& m : models())
    if (m.name == name) return m;
  throw ArgumentError("model: unknown preset '" + name + "', expected one of " + joined(model_preset_names()));
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& m : models()) names.push_back(m.name);
  return names;
}

Topology topology_preset(const std::string& name, int nodes) {
  require(nodes >= 1, "nodes", "must be at least 1, got " + std::to_string(nodes));
  if (name == "a100") return a100(nodes);
  if (name == "h100") return h100(nodes);
  throw ArgumentError("topology: unknown preset '" + name + "', expected one of " + joined(topology_preset_names()));
}

std::vector<std::string> topology_preset_names() { return {"a100", "h100"}; }

}  // namespace zepp
