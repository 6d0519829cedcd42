// `zepp presets`: every model and cluster preset with its numbers and where they come from.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"

namespace zepp::cli {
namespace {

nlohmann::json presets_json() {
  nlohmann::json j;
  for (const ModelPreset& p : model_presets()) {
    const ModelShape& m = p.shape;
    j["models"].push_back({{"name", m.name}, {"num_experts", m.num_experts}, {"top_k", m.top_k},
                           {"hidden", m.hidden}, {"ffn", m.ffn}, {"layers", m.layers}, {"moe_layers", m.moe_layers},
                           {"shared_experts", m.shared_experts}, {"source", p.source}});
  }
  for (const TopologyPreset& p : topology_presets()) {
    const Topology& t = p.topo;
    j["clusters"].push_back({{"name", t.name},
                             {"gpus_per_node", t.gpus_per_node},
                             {"nvlink_model", t.nvlink_model == NvlinkModel::Switch ? "switch" : "per-pair"},
                             {"nvlink_gbps", t.nvlink_bw / 1e9},
                             {"nvlink_latency_us", t.nvlink_latency * 1e6},
                             {"nic_gbps", t.nic_bw / 1e9},
                             {"nic_latency_us", t.nic_latency * 1e6},
                             {"peak_tflops", t.compute.peak_flops / 1e12},
                             {"hbm_tbps", t.compute.hbm_bw / 1e12},
                             {"memory_gb", t.compute.memory / 1e9},
                             {"source", p.source}});
  }
  return j;
}

std::string presets_table(const nlohmann::json& j) {
  std::string out = fmt::format("models (--model)\n{:<18} {:>4} {:>5} {:>6} {:>6} {:>6} {:>4} {:>6}  {}\n", "name", "E",
                                "top-k", "hidden", "ffn", "layers", "moe", "shared", "source");
  for (const auto& m : j["models"])
    out += fmt::format("{:<18} {:>4} {:>5} {:>6} {:>6} {:>6} {:>4} {:>6}  {}\n", m["name"].get<std::string>(),
                       m["num_experts"].get<int>(), m["top_k"].get<int>(), m["hidden"].get<int>(), m["ffn"].get<int>(),
                       m["layers"].get<int>(), m["moe_layers"].get<int>(), m["shared_experts"].get<int>(),
                       m["source"].get<std::string>());
  out += fmt::format(
      "\nclusters (--topology; per direction; a topology file works too: docs/topology.md)\n"
      "{:<12} {:>4} {:<8} {:>7} {:>8} {:>7} {:>8} {:>6}  {}\n",
      "name", "GPUs", "NVLink", "GB/s", "NIC GB/s", "TFLOP/s", "HBM TB/s", "mem GB", "source");
  for (const auto& c : j["clusters"])
    out += fmt::format("{:<12} {:>4} {:<8} {:>7g} {:>8g} {:>7g} {:>8g} {:>6g}  {}\n", c["name"].get<std::string>(),
                       c["gpus_per_node"].get<int>(), c["nvlink_model"].get<std::string>(),
                       c["nvlink_gbps"].get<double>(), c["nic_gbps"].get<double>(), c["peak_tflops"].get<double>(),
                       c["hbm_tbps"].get<double>(), c["memory_gb"].get<double>(), c["source"].get<std::string>());
  return out;
}

}  // namespace

void add_presets(CLI::App& app) {
  auto format = std::make_shared<std::string>("table");
  CLI::App* cmd = app.add_subcommand("presets", "List model and cluster presets with their numbers and sources");
  cmd->add_option("--format", *format, "Output: table or json")->capture_default_str();
  cmd->callback([format] {
    require(*format == "table" || *format == "json", "--format", "expected table or json, got '" + *format + "'");
    const nlohmann::json j = presets_json();
    const std::string text = *format == "json" ? j.dump(2) + "\n" : presets_table(j);
    std::fputs(text.c_str(), stdout);
  });
}

}  // namespace zepp::cli
