// `zepp place`: a placement policy on per-layer loads, printed in EPLB's map form (JSON) or written as a
// serving engine's file (--output-format sglang, trtllm, eplb-json; src/formats).
// Loads come from a load file (EPLB's README example form) or are counted from a trace.
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"
#include "core/topology_file.hpp"
#include "formats/formats.hpp"
#include "pipeline/strategy.hpp"
#include "placement/placement.hpp"
#include "trace/trace.hpp"

namespace zepp::cli {
namespace {

using nlohmann::json;

struct PlaceFlags {
  std::string policy = "zepp";
  std::string load_path;
  std::string trace_path, model;
  std::string history_path;  // placement input; --trace then only evaluates the placement
  std::string topology;  // preset or file: GPUs per node unless --gpus-per-node
  bool skip_invalid = false;
  int nodes = 0, gpus_per_node = 0;
  int extra_slots = 2;  // R (DESIGN.md §3 default, paper §6.1)
  int groups = 0;       // EPLB expert groups; 0: one per node when it divides E
  std::string output_format, output_path;  // a serving engine's file instead of the JSON on stdout
};

// Per-layer loads and the EPLB problem size: what a load file holds.
struct LoadProblem {
  std::vector<std::vector<double>> weight;  // [L][E]
  int num_replicas = 0, num_groups = 1, num_nodes = 1, num_gpus = 1;
  std::vector<int> layer_ids;  // source layer indices (trace input only)
};

LoadProblem read_load_file(const std::string& path) {
  EplbLoad load = read_eplb_load(path);  // src/formats/eplb_json.cpp
  LoadProblem p;
  p.weight = std::move(load.weight);
  p.num_replicas = load.num_replicas;
  p.num_groups = load.num_groups;
  p.num_nodes = load.num_nodes;
  p.num_gpus = load.num_gpus;
  return p;
}

// Loads counted from a trace: per layer, selections per expert (token traces) or the load
// tables' values summed over tables (load-only traces).
LoadProblem problem_from_trace(PlaceFlags f, const std::string& path) {
  require(!f.model.empty(), "--model", "is required with --trace");
  require(f.nodes >= 1, "--nodes", "must be >= 1 with --trace");
  if (!f.topology.empty() && f.gpus_per_node == 0) f.gpus_per_node = cluster_topology(f.topology, f.nodes).gpus_per_node;
  require(f.gpus_per_node >= 1, "--gpus-per-node", "must be >= 1 with --trace");
  require(f.extra_slots >= 0 && f.extra_slots <= 1 << 16, "--extra-slots", "must be in [0, 65536]");
  require(f.groups >= 0, "--groups", "must be >= 0");
  const ModelShape model = model_preset(f.model);
  const Trace trace = read_trace_warning(path, f.skip_invalid);
  check_trace_matches_model(trace, model);
  const int E = model.num_experts;
  Topology topo;
  topo.nodes = f.nodes;
  topo.gpus_per_node = f.gpus_per_node;

  LoadProblem p;
  p.layer_ids = trace.layer_ids();
  for (int layer : p.layer_ids) {
    std::vector<double> w(E, 0.0);
    if (auto it = trace.layers.find(layer); it != trace.layers.end())
      for (int32_t e : it->second.expert_ids) w[e] += 1;
    for (const LoadTable& t : trace.loads)
      if (auto it = t.per_layer.find(layer); it != t.per_layer.end())
        for (int e = 0; e < E; ++e) w[e] += it->second[e];
    p.weight.push_back(std::move(w));
  }
  p.num_nodes = f.nodes;
  p.num_gpus = topo.num_gpus();
  p.num_replicas = (base_slots_per_gpu(model, topo) + f.extra_slots) * p.num_gpus;
  p.num_groups = eplb_groups_for(model, topo, f.groups);
  return p;
}

EplbResult place_layers(const std::string& policy, const LoadProblem& p) {
  const int L = int(p.weight.size()), E = int(p.weight[0].size());
  if (policy == "eplb") {
    std::vector<float> w;  // EPLB reads loads as float32
    for (const auto& row : p.weight) w.insert(w.end(), row.begin(), row.end());
    return eplb_rebalance(w, L, E, p.num_replicas, p.num_groups, p.num_nodes, p.num_gpus);
  }
  require(p.num_gpus % p.num_nodes == 0, "num_gpus",
          std::to_string(p.num_gpus) + " is not a multiple of num_nodes = " + std::to_string(p.num_nodes));
  Topology topo;
  topo.nodes = p.num_nodes;
  topo.gpus_per_node = p.num_gpus / p.num_nodes;
  std::vector<Placement> layers;
  for (const auto& w : p.weight) {
    if (policy == "contiguous") {
      layers.push_back(place_contiguous(E, topo));
      continue;
    }
    const int base = (E + p.num_gpus - 1) / p.num_gpus;
    require(p.num_replicas % p.num_gpus == 0 && p.num_replicas / p.num_gpus >= base, "num_replicas",
            std::to_string(p.num_replicas) + " is not a multiple of num_gpus = " + std::to_string(p.num_gpus) +
                " with at least ceil(E / num_gpus) = " + std::to_string(base) + " slots per GPU");
    layers.push_back(place_zepp(w, topo, p.num_replicas / p.num_gpus - base));
  }
  return eplb_maps(layers);
}

// Row-major [rows * cols] array as nested JSON lists.
json nested(const std::vector<int64_t>& v, int rows, int cols) {
  json out = json::array();
  for (int r = 0; r < rows; ++r) out.push_back(std::vector<int64_t>(v.begin() + size_t(r) * cols, v.begin() + size_t(r + 1) * cols));
  return out;
}

// The placement (from --history) under the loads of --trace: per layer, the busiest GPU's load
// over the mean, each expert's load split evenly over its replicas (null: layer not in --trace).
json evaluate(const EplbResult& r, const LoadProblem& placed, const LoadProblem& eval, const std::string& path) {
  json imbalance = json::array();
  const int slots_per_gpu = r.replicas / placed.num_gpus;
  for (int l = 0; l < r.layers; ++l) {
    const auto at = std::find(eval.layer_ids.begin(), eval.layer_ids.end(), placed.layer_ids[l]);
    if (at == eval.layer_ids.end()) {
      imbalance.push_back(nullptr);
      continue;
    }
    const std::vector<double>& w = eval.weight[size_t(at - eval.layer_ids.begin())];
    std::vector<double> gpu(size_t(placed.num_gpus), 0.0);
    for (int slot = 0; slot < r.replicas; ++slot) {
      const int64_t e = r.phy2log[size_t(l) * r.replicas + slot];
      gpu[size_t(slot / slots_per_gpu)] += w[size_t(e)] / double(r.logcnt[size_t(l) * r.experts + e]);
    }
    const double mean = std::accumulate(gpu.begin(), gpu.end(), 0.0) / double(gpu.size());
    imbalance.push_back(mean > 0 ? *std::max_element(gpu.begin(), gpu.end()) / mean : 1.0);
  }
  return {{"trace", path}, {"imbalance", imbalance}};
}

void run(const PlaceFlags& f) {
  require(f.policy == "eplb" || f.policy == "zepp" || f.policy == "contiguous", "--policy",
          "expected eplb, zepp or contiguous, got '" + f.policy + "'");
  const std::string source = f.history_path.empty() ? f.trace_path : f.history_path;
  require(f.load_path.empty() != source.empty(), "--load", "give exactly one of --load FILE or --trace/--history PATH");
  const LoadProblem p = f.load_path.empty() ? problem_from_trace(f, source) : read_load_file(f.load_path);
  require(f.output_format.empty() == f.output_path.empty(), "--output", "--output-format and --output go together");
  EplbResult r;
  try {
    r = place_layers(f.policy, p);
  } catch (const ArgumentError& e) {
    if (f.load_path.empty()) throw;
    throw InputError(f.load_path + ": " + e.what());  // the argument is a field of the file
  }
  if (!f.output_format.empty()) {
    ExpertMap map;
    map.layer_ids = p.layer_ids;
    for (int l = int(map.layer_ids.size()); l < r.layers; ++l) map.layer_ids.push_back(l);
    map.num_slots = r.replicas;
    map.phy2log.assign(r.phy2log.begin(), r.phy2log.end());
    write_expert_map(f.output_path, map, f.output_format);
    return;
  }
  json log2phy = json::array();
  for (int l = 0; l < r.layers; ++l) {
    std::vector<int64_t> layer(r.log2phy.begin() + size_t(l) * r.experts * r.max_replicas,
                               r.log2phy.begin() + size_t(l + 1) * r.experts * r.max_replicas);
    log2phy.push_back(nested(layer, r.experts, r.max_replicas));
  }
  json out = {{"policy", f.policy},
              {"phy2log", nested(r.phy2log, r.layers, r.replicas)},
              {"log2phy", std::move(log2phy)},
              {"logcnt", nested(r.logcnt, r.layers, r.experts)}};
  if (!p.layer_ids.empty()) out["layers"] = p.layer_ids;
  if (!f.history_path.empty() && !f.trace_path.empty()) out["evaluation"] = evaluate(r, p, problem_from_trace(f, f.trace_path), f.trace_path);
  std::fputs((out.dump() + "\n").c_str(), stdout);
}

}  // namespace

void add_place(CLI::App& app) {
  auto f = std::make_shared<PlaceFlags>();
  CLI::App* cmd = app.add_subcommand(
      "place", "Place expert replicas per layer and print EPLB's maps (phy2log, log2phy, logcnt) as JSON");
  cmd->add_option("--policy", f->policy,
                  "eplb (DeepSeek EPLB rule), zepp (paper §4.1) or contiguous (E / G experts per GPU, no replicas; "
                  "ignores num_replicas)")
      ->capture_default_str();
  cmd->add_option("--load", f->load_path,
                  "JSON load file {\"weight\": [[...] per layer], \"num_replicas\", \"num_groups\", \"num_nodes\", "
                  "\"num_gpus\"} (EPLB README form); zepp uses num_replicas / num_gpus slots per GPU");
  cmd->add_option("--trace", f->trace_path, "Trace file or folder: loads counted per layer (instead of --load)");
  cmd->add_option("--history", f->history_path,
                  "Place from this trace instead; --trace then evaluates the placement (\"evaluation\": per-layer "
                  "imbalance = busiest GPU's load / mean)");
  cmd->add_option("--model", f->model, "Model preset of the trace (with --trace)");
  cmd->add_flag("--skip-invalid", f->skip_invalid, "Skip malformed trace files (each listed with its error) instead of stopping");
  cmd->add_option("--nodes", f->nodes, "Nodes (with --trace)");
  cmd->add_option("--gpus-per-node", f->gpus_per_node, "GPUs per node (with --trace; default: the --topology's)");
  cmd->add_option("--topology", f->topology, "Cluster preset or topology file (docs/topology.md): its GPUs per node (with --trace)");
  cmd->add_option("--extra-slots", f->extra_slots, "R: extra slots per GPU beyond ceil(E / G) (with --trace)")
      ->capture_default_str();
  cmd->add_option("--groups", f->groups, "EPLB expert groups (with --trace; 0: one per node when it divides E)")
      ->capture_default_str();
  cmd->add_option("--output-format", f->output_format,
                  "Write a serving engine's file instead: sglang (--init-expert-location JSON), trtllm (load-balancer "
                  "YAML) or eplb-json")
      ->check(CLI::IsMember(placement_format_names()));
  cmd->add_option("--output", f->output_path, "File written with --output-format");
  cmd->callback([f] { run(*f); });
}

}  // namespace zepp::cli
