#include "core/presets.hpp"

#include "core/error.hpp"

namespace zepp {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Shapes from the public model configurations (Hugging Face config.json of the named
// repository; the first seven as tabulated in shared/data/traces/README.md, Qwen3-235B and
// Kimi-K2 also in the paper's Table 2). ffn is the routed expert's intermediate size; shared =
// shared experts per MoE layer. Every number was checked on 2026-11-30 against a public copy of
// the named config.json or a framework's config for the model; model/shape.cpp names each.
std::vector<ModelPreset> models() {
  // Filled one by one: a nested braced list of these makes GCC 12 report a false
  // -Wmaybe-uninitialized on the strings.
  std::vector<ModelPreset> all;
  auto add = [&all](const char* name, int experts, int top_k, int hidden, int ffn, int layers, int moe, int shared,
                    const char* source) {
    ModelPreset p;
    p.shape.name = name;
    p.shape.num_experts = experts;
    p.shape.top_k = top_k;
    p.shape.hidden = hidden;
    p.shape.ffn = ffn;
    p.shape.layers = layers;
    p.shape.moe_layers = moe;
    p.shape.shared_experts = shared;
    p.source = source;
    all.push_back(std::move(p));
  };
  //  name                 E    k  hidden   ffn  layers moe shared
  add("deepseek-v2-lite", 64, 6, 2048, 1408, 27, 26, 2,
      "deepseek-ai/DeepSeek-V2-Lite config.json");
  add("llama4-maverick", 128, 1, 5120, 8192, 48, 24, 1,
      "meta-llama/Llama-4-Maverick-17B-128E config.json");
  add("llama4-scout", 16, 1, 5120, 8192, 48, 48, 1,
      "meta-llama/Llama-4-Scout-17B-16E config.json (every layer MoE)");
  add("mixtral-8x7b", 8, 2, 4096, 14336, 32, 32, 0,
      "mistralai/Mixtral-8x7B-v0.1 config.json");
  add("mixtral-8x22b", 8, 2, 6144, 16384, 56, 56, 0,
      "mistralai/Mixtral-8x22B-v0.1 config.json");
  add("qwen1.5-moe-a2.7b", 60, 4, 2048, 1408, 24, 24, 4,
      "Qwen/Qwen1.5-MoE-A2.7B config.json (shared expert of 5632 = 4 x 1408: counted as 4)");
  add("qwen3-30b-a3b", 128, 8, 2048, 768, 48, 48, 0,
      "Qwen/Qwen3-30B-A3B config.json");
  add("qwen3-235b-a22b", 128, 8, 4096, 1536, 94, 94, 0,
      "Qwen/Qwen3-235B-A22B config.json; paper Table 2");
  add("gpt-oss-20b", 32, 4, 2880, 2880, 24, 24, 0,
      "openai/gpt-oss-20b config.json (weights MXFP4; BF16 here)");
  add("gpt-oss-120b", 128, 4, 2880, 2880, 36, 36, 0,
      "openai/gpt-oss-120b config.json (weights MXFP4; BF16 here)");
  add("dbrx", 16, 4, 6144, 10752, 40, 40, 0,
      "databricks/dbrx-base config.json (ffn_config)");
  add("olmoe-1b-7b", 64, 8, 2048, 1024, 16, 16, 0,
      "allenai/OLMoE-1B-7B-0924 config.json");
  add("glm-4.5", 160, 8, 5120, 1536, 92, 89, 1,
      "zai-org/GLM-4.5 config.json (first 3 layers dense)");
  add("kimi-k2", 384, 8, 7168, 2048, 61, 60, 1,
      "moonshotai/Kimi-K2-Instruct config.json; paper Table 2");
  add("deepseek-v3", 256, 8, 7168, 2048, 61, 58, 1,
      "deepseek-ai/DeepSeek-V3 config.json (first 3 layers dense)");
  add("deepseek-r1", 256, 8, 7168, 2048, 61, 58, 1,
      "deepseek-ai/DeepSeek-R1 config.json (DeepSeek-V3's shape)");
  return all;
}

// The paper's clusters (§6.1): four GPUs per node, NVLink between every GPU pair.
Topology a100() {
  Topology t;
  t.name = "a100";
  t.gpus_per_node = 4;           // paper §6.1: four A100 per node
  t.nvlink_model = NvlinkModel::PerPair;
  t.nvlink_bw = 100e9;           // paper §6.1: third-generation NVLink, 100 GB/s per direction per pair
  t.nvlink_latency = 2e-6;       // assumed: order of a CUDA peer copy's start-up cost; not measured here
  t.nic_bw = 25e9;               // paper §6.1: one HPE Slingshot 11 NIC (200 Gb/s) per GPU
  t.nic_latency = 3e-6;          // assumed: order of a Slingshot 11 RDMA put (HPE quotes ~2 us MPI latency)
  t.compute.peak_flops = 312e12; // DESIGN.md §3: A100 BF16 dense tensor-core peak
  t.compute.hbm_bw = 1.555e12;   // DESIGN.md §3: A100 40 GB HBM2
  t.compute.kernel_launch = 5e-6;  // assumed: typical CUDA kernel launch plus GEMM tail; not measured here
  t.compute.memory = 40e9;       // paper §6.1: "four 40 GB memory NVIDIA A100 GPUs" (the part whose HBM is 1.555 TB/s)
  return t;
}

Topology h100() {
  Topology t = a100();           // paper §6.1: same GPU/NIC topology
  t.name = "h100";
  t.nvlink_bw = 150e9;           // paper §6.1: fourth-generation NVLink, 150 GB/s per direction per pair
  t.compute.peak_flops = 989e12; // DESIGN.md §3: H100 SXM BF16 dense peak
  t.compute.hbm_bw = 3.35e12;    // DESIGN.md §3: H100 SXM HBM3
  t.compute.memory = 96e9;       // paper §6.1: "four 96 GB NVIDIA H100 GPUs per node"
  return t;
}

// Vendor systems: 8 GPUs (72 for NVL72) behind NVSwitch, one NVLink port per GPU per direction
// shared by all its peers (half the datasheet's bidirectional figure), one compute NIC per GPU.
// Latencies and the launch cost are the paper clusters' assumptions (not in any datasheet).
// In-switch multicast (NVLink SHARP): the only measurement we have is iser-moe.txt §3.3, a CE
// writer's total replicated output of 2.0-2.1 TB/s from one GB200 port (NVLink 5); we take
// 2.1 TB/s for NVLink 5 switches. Third-generation NVSwitch (Hopper) also multicasts (NVLS) but
// was not measured there: we assume the same output per unit of port bandwidth, 2.1 TB/s x
// 450 / 900 = 1.05 TB/s. Second-generation NVSwitch (A100) has no SHARP: 0.
constexpr double kNvls5PortOutput = 2.1e12, kNvls4PortOutput = 1.05e12;
Topology switched(const char* name, int gpus, double nvlink_bw, double nic_bw, double peak_flops, double hbm_bw,
                  double multicast_port_output, double memory) {
  Topology t = a100();
  t.name = name;
  t.gpus_per_node = gpus;
  t.nvlink_model = NvlinkModel::Switch;
  t.nvlink_bw = nvlink_bw;
  t.nic_bw = nic_bw;
  t.compute.peak_flops = peak_flops;
  t.compute.hbm_bw = hbm_bw;
  t.multicast_port_output = multicast_port_output;
  t.compute.memory = memory;
  return t;
}

std::vector<TopologyPreset> topologies() {
  return {
      {a100(), "paper §6.1 (4 x A100, NVLink 3 per GPU pair, Slingshot 11 200 Gb/s per GPU); DESIGN.md §3"},
      {h100(), "paper §6.1 (4 x H100, NVLink 4 per GPU pair, Slingshot 11 200 Gb/s per GPU); DESIGN.md §3"},
      // NVIDIA DGX A100 datasheet / user guide: 8 x A100 SXM4 80 GB (BF16 312 TFLOP/s dense, HBM2e
      // 2,039 GB/s), 6 NVSwitches, NVLink 3 at 600 GB/s bidirectional per GPU, 8 x ConnectX-6
      // 200 Gb/s HDR InfiniBand for the compute fabric.
      {switched("dgx-a100", 8, 300e9, 25e9, 312e12, 2.039e12, 0, 80e9),
       "NVIDIA DGX A100 datasheet: 8 x A100 80GB, NVSwitch 600 GB/s bidir per GPU, 8 x ConnectX-6 200 Gb/s"},
      // NVIDIA DGX H100 datasheet / DGX BasePOD reference architecture: 8 x H100 SXM5 80 GB (BF16
      // 989 TFLOP/s dense, HBM3 3.35 TB/s), 4 NVSwitch chips, NVLink 4 at 900 GB/s bidirectional
      // per GPU, 8 single-port ConnectX-7 400 Gb/s.
      {switched("dgx-h100", 8, 450e9, 50e9, 989e12, 3.35e12, kNvls4PortOutput, 80e9),
       "NVIDIA DGX H100 datasheet: 8 x H100 SXM5, NVSwitch 900 GB/s bidir per GPU, 8 x ConnectX-7 400 Gb/s"},
      // NVIDIA H200 datasheet and DGX H200 (BasePOD reference architecture): H200 SXM 141 GB,
      // HBM3e 4.8 TB/s, BF16 989 TFLOP/s dense (same Hopper tensor cores), NVLink 900 GB/s
      // bidirectional, 8 single-port ConnectX-7 400 Gb/s.
      {switched("dgx-h200", 8, 450e9, 50e9, 989e12, 4.8e12, kNvls4PortOutput, 141e9),
       "NVIDIA H200 datasheet, DGX H200: 8 x H200 SXM, HBM3e 4.8 TB/s, NVSwitch 900 GB/s bidir, 8 x ConnectX-7 400 Gb/s"},
      // NVIDIA DGX B200 datasheet / HGX B200: 8 x B200, BF16 4.5 PFLOP/s with sparsity = 2.25 dense
      // per GPU, HBM3e 8 TB/s per GPU (64 TB/s per system), NVLink 5 at 1.8 TB/s bidirectional per
      // GPU, 8 single-port ConnectX-7 400 Gb/s; 1,440 GB of GPU memory = 180 GB per GPU.
      {switched("dgx-b200", 8, 900e9, 50e9, 2.25e15, 8e12, kNvls5PortOutput, 180e9),
       "NVIDIA DGX B200 datasheet: 8 x B200, 2.25 PFLOP/s BF16 dense, HBM3e 8 TB/s, NVLink 5 1.8 TB/s bidir, 8 x ConnectX-7 400 Gb/s"},
      // NVIDIA GB200 NVL72 product page / DGX GB200 user guide: 72 Blackwell GPUs in one NVLink 5
      // domain (130 TB/s = 1.8 TB/s bidirectional per GPU through 9 NVSwitch trays), BF16 360
      // PFLOP/s with sparsity = 2.5 PFLOP/s dense per GPU, HBM3e 576 TB/s = 8 TB/s per GPU, one
      // ConnectX-7 400 Gb/s InfiniBand per GPU (4 per compute tray) to other racks; up to 13.4 TB
      // of HBM3e = 186 GB per GPU.
      {switched("gb200-nvl72", 72, 900e9, 50e9, 2.5e15, 8e12, kNvls5PortOutput, 186e9),
       "NVIDIA GB200 NVL72 spec, DGX GB200 user guide: 72 GPUs per NVLink domain, 1.8 TB/s bidir per GPU, "
       "2.5 PFLOP/s BF16 dense, HBM3e 8 TB/s, ConnectX-7 400 Gb/s per GPU"},
  };
}

}  // namespace

ModelShape model_preset(const std::string& name, const std::string& arg) {
  for (const auto& m : models())
    if (m.shape.name == name) return m.shape;
  throw ArgumentError(arg + ": unknown preset '" + name + "', expected one of " + joined(model_preset_names()));
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& m : models()) names.push_back(m.shape.name);
  return names;
}

std::vector<ModelPreset> model_presets() { return models(); }

Topology topology_preset(const std::string& name, int nodes) {
  require(nodes >= 1, "nodes", "must be at least 1, got " + std::to_string(nodes));
  for (auto& p : topologies())
    if (p.topo.name == name) {
      p.topo.nodes = nodes;
      return p.topo;
    }
  throw ArgumentError("topology: unknown preset '" + name + "', expected one of " + joined(topology_preset_names()));
}

std::vector<std::string> topology_preset_names() {
  std::vector<std::string> names;
  for (const auto& p : topologies()) names.push_back(p.topo.name);
  return names;
}

std::vector<TopologyPreset> topology_presets() { return topologies(); }

}  // namespace zepp
