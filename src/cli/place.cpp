// `zepp place`: a placement policy on per-layer loads, printed in EPLB's map form (JSON) or written as a
// serving engine's file (--output-format sglang, trtllm, eplb-json; src/formats).
// Loads come from a load file (EPLB's README example form) or are counted from a trace.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/error.hpp"
#include "core/input_bounds.hpp"
#include "core/output_file.hpp"
#include "core/presets.hpp"
#include "core/topology_file.hpp"
#include "formats/file_io.hpp"
#include "formats/formats.hpp"
#include "formats/json_text.hpp"
#include "pipeline/cost.hpp"
#include "pipeline/strategy.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"
#include "trace/layer_check.hpp"
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
  std::optional<int> nodes, gpus_per_node;  // with --trace
  std::optional<int> extra_slots;  // R; not given: 2 (DESIGN.md §3 default, paper §6.1)
  std::optional<int> groups;       // EPLB expert groups; not given or 0: one per node when it divides E
  std::string output_format, output_path;  // a serving engine's file instead of the JSON on stdout
  // Rebalancing and elastic EP (policy zepp): the current placement and lost GPUs or nodes.
  std::string previous_path, previous_format = "eplb-json";
  bool previous_format_given = false;
  std::vector<int> failed_gpus, failed_nodes;
  double max_moved_mb = -1;  // per layer; < 0: no budget (not given: the flag refuses negatives)
};

// Per-layer loads and the EPLB problem size: what a load file holds.
struct LoadProblem {
  std::vector<std::vector<double>> weight;  // [L][E]
  int num_replicas = 0, num_groups = 1, num_nodes = 1, num_gpus = 1;
  std::vector<int> layer_ids;  // source layer indices (trace input only)
};

// The layer id of each load row: the trace's, else 0..L-1 (a load file's rows in order, the ids
// --output-format writes for them and an SGLang file's row index).
std::vector<int> load_layer_ids(const LoadProblem& p) {
  std::vector<int> ids = p.layer_ids;
  for (size_t l = ids.size(); l < p.weight.size(); ++l) ids.push_back(int(l));
  return ids;
}

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
  require(f.nodes.has_value(), "--nodes", "is required with --trace (the node count to place for)");
  const int nodes = *f.nodes;
  require(nodes >= 1, "--nodes", "must be >= 1 with --trace, got " + std::to_string(nodes));
  require(f.gpus_per_node || !f.topology.empty(), "--gpus-per-node",
          "is required with --trace unless --topology names the cluster (its GPUs per node)");
  const int gpn = f.gpus_per_node ? *f.gpus_per_node : cluster_topology(f.topology, nodes, "--topology").gpus_per_node;
  require(gpn >= 1, "--gpus-per-node", "must be >= 1 with --trace, got " + std::to_string(gpn));
  const int extra_slots = f.extra_slots.value_or(2), groups = f.groups.value_or(0);
  require_in_range(extra_slots, "--extra-slots", 0, 1 << 16);  // R slots per GPU
  require(groups >= 0, "--groups", "must be >= 0, got " + std::to_string(groups));
  const ModelShape model = model_preset(f.model, "--model");
  // GPU and slot counts are ints: 65536 x 65536 GPUs wrapped to 0 (a division by zero).
  const int64_t gpus = int64_t(nodes) * gpn, per_gpu = (model.num_experts + gpus - 1) / gpus + extra_slots;
  require(gpus <= INT32_MAX / per_gpu, "--gpus-per-node",
          fmt::format("--nodes {} x --gpus-per-node {} = {} GPUs with {} slots each: expected at most 2^31 - 1 slots "
                      "in all", nodes, gpn, gpus, per_gpu));
  const Trace trace = read_trace_warning(path, f.skip_invalid, &model);
  check_trace_matches_model(trace, model);
  const int E = model.num_experts;
  Topology topo;
  topo.nodes = nodes;
  topo.gpus_per_node = gpn;

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
  p.num_nodes = nodes;
  p.num_gpus = topo.num_gpus();
  p.num_replicas = (base_slots_per_gpu(model, topo) + extra_slots) * p.num_gpus;
  p.num_groups = eplb_groups_for(model, topo, groups);
  return p;
}

Topology topology_of(const LoadProblem& p) {
  require(p.num_gpus % p.num_nodes == 0, "num_gpus",
          std::to_string(p.num_gpus) + " is not a multiple of num_nodes = " + std::to_string(p.num_nodes));
  Topology topo = topology_preset("h100", p.num_nodes);  // NVLink / NIC ratio weighs moves
  topo.gpus_per_node = p.num_gpus / p.num_nodes;
  return topo;
}

int extra_slots_of(const LoadProblem& p, int E) {
  const int base = (E + p.num_gpus - 1) / p.num_gpus;
  require(p.num_replicas % p.num_gpus == 0, "num_replicas",
          std::to_string(p.num_replicas) + " is not a multiple of num_gpus = " + std::to_string(p.num_gpus));
  require(p.num_replicas / p.num_gpus >= base, "num_replicas",
          "expected at least ceil(E / num_gpus) = " + std::to_string(base) + " slots per GPU (" +
              std::to_string(int64_t(base) * p.num_gpus) + " in all for " + std::to_string(E) + " experts on " +
              std::to_string(p.num_gpus) + " GPUs), got " + std::to_string(p.num_replicas) + " (" +
              std::to_string(p.num_replicas / p.num_gpus) + " per GPU)");
  return p.num_replicas / p.num_gpus - base;
}

EplbResult place_layers(const std::string& policy, const LoadProblem& p) {
  const int L = int(p.weight.size()), E = int(p.weight[0].size());
  if (policy == "eplb") {
    std::vector<float> w;  // EPLB reads loads as float32
    for (const auto& row : p.weight) w.insert(w.end(), row.begin(), row.end());
    return eplb_rebalance(w, L, E, p.num_replicas, p.num_groups, p.num_nodes, p.num_gpus);
  }
  std::vector<Placement> layers;
  for (const auto& w : p.weight)
    layers.push_back(policy == "contiguous" ? place_contiguous(E, topology_of(p)) : place_zepp(w, topology_of(p), extra_slots_of(p, E)));
  return eplb_maps(layers);
}

// --previous in its format. A file in another format than the default eplb-json (the SGLang file
// `zepp place --output-format sglang` wrote, found by a fresh-user check) read "expected a field
// \"phy2log\"" and no more: when another format reads it, the message names that flag value.
ExpertMap read_previous(const PlaceFlags& f, int num_experts) {
  try {
    return read_expert_map(f.previous_path, f.previous_format, num_experts);  // ids beyond the loads' named
  } catch (const InputError& e) {
    if (f.previous_format_given) throw;
    for (const char* other : {"sglang", "trtllm"}) {
      try {
        read_expert_map(f.previous_path, other);
      } catch (const InputError&) {
        continue;
      }
      throw InputError(std::string(e.what()) + " (read as eplb-json, the default); it is a " + other +
                       " placement file: add --previous-format " + other);
    }
    throw;
  }
}

// The "ranks" of a `zepp place` JSON output made on surviving GPUs (the original GPU of each rank
// of its phy2log); empty when the file has none (another format, or no GPU was lost).
std::vector<int> previous_ranks(const PlaceFlags& f) {
  if (f.previous_format != "eplb-json") return {};
  const json doc = formats_detail::load_json(f.previous_path);
  if (!doc.is_object() || !doc.contains("ranks")) return {};
  const json& list = doc["ranks"];
  const auto bad = [&] {
    return InputError(f.previous_path + ": ranks: expected a list of GPU ids, got " + list.dump().substr(0, 40));
  };
  if (!list.is_array()) throw bad();
  std::vector<int> ranks;
  for (const json& r : list) {
    if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() > INT32_MAX) throw bad();
    ranks.push_back(int(r.get<int64_t>()));
  }
  return ranks;
}

// The "layers" of a `zepp place --trace` JSON output (the trace's layer id of each phy2log row);
// empty when the file has none (made from --load, or another format).
std::vector<int> previous_layers(const PlaceFlags& f) {
  if (f.previous_format != "eplb-json") return {};
  const json doc = formats_detail::load_json(f.previous_path);
  if (!doc.is_object() || !doc.contains("layers")) return {};
  const json& list = doc["layers"];
  std::vector<int> ids;
  if (list.is_array())
    for (const json& l : list) {
      if (!l.is_number_integer() || l.get<int64_t>() < 0 || l.get<int64_t>() >= kMaxLayerId) break;
      ids.push_back(int(l.get<int64_t>()));
    }
  if (!list.is_array() || ids.size() != list.size())
    throw InputError(f.previous_path + ": layers: expected a list of layer ids in [0, 2^30), got " +
                     list.dump().substr(0, 40));
  return ids;
}

// Zepp placements rebalanced from `previous` and/or on the survivors of lost GPUs, per layer.
struct Rebalancing {
  EplbResult maps;
  std::vector<int> ranks;                  // original GPU of each surviving rank
  std::vector<Rebalanced> layers;
};

Rebalancing rebalance_layers(const PlaceFlags& f, const LoadProblem& p, const ExpertMap* previous, double expert_bytes) {
  const Topology topo = topology_of(p);
  const int E = int(p.weight[0].size()), S = p.num_replicas / p.num_gpus;
  extra_slots_of(p, E);  // validates num_replicas
  RebalanceOptions opt;
  opt.failed_gpus = f.failed_gpus;
  for (int n : f.failed_nodes) {
    require(n >= 0 && n < topo.nodes, "--failed-nodes",
            "node " + std::to_string(n) + " is outside [0, " + std::to_string(topo.nodes) + ")");
    for (int g = 0; g < topo.gpus_per_node; ++g) opt.failed_gpus.push_back(n * topo.gpus_per_node + g);
  }
  std::sort(opt.failed_gpus.begin(), opt.failed_gpus.end());
  if (auto d = std::adjacent_find(opt.failed_gpus.begin(), opt.failed_gpus.end()); d != opt.failed_gpus.end())
    throw ArgumentError("--failed-gpus: GPU " + std::to_string(*d) + " is lost twice (listed, or on a --failed-nodes node)");
  opt.expert_bytes = expert_bytes;
  opt.max_moved_bytes = f.max_moved_mb < 0 ? -1 : f.max_moved_mb * 1e6;
  // A --previous with only the surviving GPUs' slots is a placement made under the same loss (zepp
  // place --failed-gpus prints phy2log so): its rank i is survivor i. It is widened back to every
  // GPU with -1 in the lost GPUs' slots, which rebalance_zepp skips.
  std::vector<int> survivors;
  for (int g = 0; g < topo.num_gpus(); ++g)
    if (!std::binary_search(opt.failed_gpus.begin(), opt.failed_gpus.end(), g)) survivors.push_back(g);
  const int64_t survivor_slots = int64_t(survivors.size()) * S;
  const bool on_survivors = previous && previous->num_slots != p.num_replicas && previous->num_slots == survivor_slots;
  // Its "ranks", when it has them, are the GPUs its phy2log is on: the survivors, or every GPU for
  // a placement on all of them (a slot count that is neither is refused below, naming the counts).
  if (on_survivors || (previous && previous->num_slots == p.num_replicas)) {
    const std::vector<int> ranks = previous_ranks(f);
    std::vector<int> all(size_t(topo.num_gpus()));
    std::iota(all.begin(), all.end(), 0);
    require(ranks.empty() || ranks == (on_survivors ? survivors : all), "--previous",
            f.previous_path + " was placed on GPUs " + fmt::format("{}", fmt::join(ranks, ",")) + " (its \"ranks\"), " +
                (on_survivors ? "not on the GPUs --failed-gpus/--failed-nodes leave: " +
                                    fmt::format("{}", fmt::join(survivors, ","))
                              : fmt::format("but its {} slots per layer are {} on each of the {} GPUs: expected ranks {}",
                                            previous->num_slots, S, topo.num_gpus(), fmt::join(all, ","))));
  }
  // The --previous row of each load row: by position for eplb-json (whose "layers", when given,
  // must be the trace's), by layer id for sglang and trtllm files, whose every layer must be one of
  // the loads' (an SGLang file may add SGLang's trivial row, slot p -> expert p mod E, for a layer
  // without loads: the row it and --output-format sglang give dense layers).
  std::vector<int> rows(p.weight.size(), -1);
  if (previous && f.previous_format == "eplb-json") {
    require(previous->num_layers() == int(p.weight.size()), "--previous",
            fmt::format("{} has {} layers (rows of phy2log), the loads {}: expected one row per layer of the loads, "
                        "in their order", f.previous_path, previous->num_layers(), p.weight.size()));
    // Rows pair by position; a file made from a trace names its layers, and those of another
    // trace with as many layers (a different model stage, or other ids) were paired silently.
    const std::vector<int> named = previous_layers(f);
    require(named.empty() || p.layer_ids.empty() || named == load_layer_ids(p), "--previous",
            fmt::format("{} holds layers {} (its \"layers\"), the trace's loads are layers {}: expected the same "
                        "layers in the same order",
                        f.previous_path, fmt::join(named, ","), fmt::join(load_layer_ids(p), ",")));
    std::iota(rows.begin(), rows.end(), 0);
  } else if (previous) {
    const std::vector<int> ids = load_layer_ids(p);
    const std::string loads = p.layer_ids.empty() ? fmt::format("layers 0..{} (the rows of {}, in order)",
                                                                ids.size() - 1, f.load_path)
                                                  : fmt::format("the trace's layers {}", fmt::join(ids, ","));
    std::vector<int> unmatched;
    for (int r = 0; r < previous->num_layers(); ++r) {
      if (auto it = std::find(ids.begin(), ids.end(), previous->layer_ids[size_t(r)]); it != ids.end()) {
        rows[size_t(it - ids.begin())] = r;
        continue;
      }
      bool trivial = f.previous_format == "sglang";
      for (int s = 0; trivial && s < previous->num_slots; ++s)
        trivial = previous->phy2log[size_t(r) * previous->num_slots + s] == s % E;
      if (!trivial) unmatched.push_back(previous->layer_ids[size_t(r)]);
    }
    require(unmatched.empty(), "--previous",
            fmt::format("{} places layer{} {}, which the loads do not have: expected {}", f.previous_path,
                        unmatched.size() > 1 ? "s" : "", fmt::join(unmatched, ","), loads));
    for (size_t l = 0; l < rows.size(); ++l)
      require(rows[l] >= 0, "--previous",
              fmt::format("{} has no row for layer {} of the loads ({})", f.previous_path, ids[l], loads));
  }
  Rebalancing out;
  std::vector<Placement> placed;
  for (size_t l = 0; l < p.weight.size(); ++l) {
    if (previous) {
      const int row = rows[l];
      // The count the user set: the load file's num_replicas, or --trace's cluster and --extra-slots.
      require(previous->num_slots == p.num_replicas || on_survivors, "--previous",
              f.previous_path + " has " + std::to_string(previous->num_slots) + " slots per layer, expected " +
                  (f.load_path.empty() ? "(ceil(E / G) + --extra-slots) x G" : f.load_path + "'s num_replicas") +
                  " = " + std::to_string(p.num_replicas) + ": " + std::to_string(S) + " slots on each of the " +
                  std::to_string(p.num_gpus) + " GPUs, lost ones included" +
                  (survivor_slots < p.num_replicas
                       ? " (or " + std::to_string(survivor_slots) + ", a placement on the surviving GPUs)"
                       : ""));
      const auto slots = previous->phy2log.begin() + size_t(row) * previous->num_slots;
      if (on_survivors) {
        opt.previous.assign(size_t(p.num_replicas), -1);
        for (size_t i = 0; i < survivors.size(); ++i)
          std::copy_n(slots + i * S, S, opt.previous.begin() + size_t(survivors[i]) * S);
      } else {
        opt.previous.assign(slots, slots + previous->num_slots);
      }
      for (int32_t e : opt.previous)
        require(e < E, "--previous", f.previous_path + " places expert " + std::to_string(e) + ", the loads have " +
                                         std::to_string(E) + " experts");
    }
    try {
      out.layers.push_back(rebalance_zepp(p.weight[l], topo, S, opt));
    } catch (const ArgumentError& e) {  // name the flags, not the library's arguments
      const std::string what = e.what();
      if (what.rfind("failed_gpus:", 0) == 0) throw ArgumentError("--failed-gpus/--failed-nodes:" + what.substr(12));
      throw;
    }
    placed.push_back(out.layers.back().placement);
  }
  out.ranks = out.layers[0].survivors;
  out.maps = eplb_maps(placed);
  return out;
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
  // Flags that only act with another policy or input are refused, not ignored.
  require(!f.previous_format_given || !f.previous_path.empty(), "--previous-format",
          "describes --previous FILE; give that or leave this out");
  require(!f.groups || f.policy == "eplb", "--groups", "only acts with --policy eplb (EPLB's expert groups)");
  require(!f.extra_slots || f.policy != "contiguous", "--extra-slots",
          "does not act with --policy contiguous (E / G experts per GPU, no replicas)");
  if (!f.load_path.empty()) {  // the load file sets the problem: a trace-only flag would be ignored
    const std::pair<bool, const char*> trace_only[] = {
        {f.nodes.has_value(), "--nodes"},         {f.gpus_per_node.has_value(), "--gpus-per-node"},
        {!f.topology.empty(), "--topology"},      {f.extra_slots.has_value(), "--extra-slots"},
        {f.groups.has_value(), "--groups"},       {f.skip_invalid, "--skip-invalid"}};
    for (const auto& [given, flag] : trace_only)
      require(!given, flag,
              "applies to --trace only: with --load the file's num_replicas, num_groups, num_nodes and num_gpus set "
              "the problem");
    // With a load file a model only sizes the weight moves from --previous: otherwise it was
    // ignored, an unknown name included.
    if (!f.model.empty()) model_preset(f.model, "--model");
    require(f.model.empty() || !f.previous_path.empty(), "--model",
            "with --load it only gives an expert's size for the weight moves from --previous FILE; give that or "
            "leave this out");
  }
  const bool rebalancing = !f.previous_path.empty() || !f.failed_gpus.empty() || !f.failed_nodes.empty();
  require(!rebalancing || f.policy == "zepp",
          !f.previous_path.empty() ? "--previous" : !f.failed_gpus.empty() ? "--failed-gpus" : "--failed-nodes",
          "rebalancing (--previous, --failed-gpus, --failed-nodes) needs --policy zepp (got '" + f.policy + "')");
  require(f.max_moved_mb < 0 || !f.previous_path.empty(), "--max-moved-mb", "needs --previous FILE");
  require(f.max_moved_mb < 0 || !f.model.empty(), "--max-moved-mb",
          "needs --model (the preset gives an expert's size in bytes)");
  const LoadProblem p = f.load_path.empty() ? problem_from_trace(f, source) : read_load_file(f.load_path);
  // Limits before work: the placement's memory and time from the sizes (pipeline/cost.hpp).
  const double layers = double(p.weight.size()), experts = p.weight.empty() ? 0.0 : double(p.weight[0].size());
  CostEstimate cost = estimate_placement_cost(layers, experts, p.num_replicas, p.num_gpus, f.policy == "zepp");
  cost.bytes += placement_json_bytes(layers, experts, p.num_replicas);  // the maps it prints
  check_budget(cost, memory_budget_bytes(), f.load_path.empty() ? "--trace" : "--load", call_seconds_budget(),
               f.load_path.empty() ? "--trace" : "--load",
               "place fewer layers, experts or replicas (the load file's weight and num_replicas; time budget: "
               "ZEPP_MAX_SECONDS)");
  require(f.output_format.empty() == f.output_path.empty(), "--output", "--output-format and --output go together");
  if (!f.output_path.empty()) check_output_file(f.output_path, "--output");
  EplbResult r;
  Rebalancing reb;
  try {
    if (rebalancing) {
      const ExpertMap previous = f.previous_path.empty() ? ExpertMap{} : read_previous(f, int(p.weight[0].size()));
      const double expert_bytes = f.model.empty() ? 0.0 : model_preset(f.model, "--model").expert_weight_bytes();
      reb = rebalance_layers(f, p, f.previous_path.empty() ? nullptr : &previous, expert_bytes);
      r = reb.maps;
    } else {
      r = place_layers(f.policy, p);
    }
  } catch (const ArgumentError& e) {
    const std::string what = e.what();
    if (f.load_path.empty() || what.rfind("--", 0) == 0) throw;
    throw InputError(f.load_path + ": " + what);  // the argument is a field of the file
  }
  if (!f.output_format.empty()) {
    ExpertMap map;
    map.layer_ids = load_layer_ids(p);  // the trace's, else 0..L-1 (--previous rows match these)
    map.num_slots = r.replicas;
    map.phy2log.assign(r.phy2log.begin(), r.phy2log.end());
    map.phyrank.assign(map.phy2log.size(), 0);  // log2phy's replica order, as printed below
    for (int l = 0; l < r.layers; ++l)
      for (int e = 0; e < r.experts; ++e)
        for (int k = 0; k < r.max_replicas; ++k)
          if (const int64_t s = r.log2phy[(size_t(l) * r.experts + e) * r.max_replicas + k]; s >= 0)
            map.phyrank[size_t(l) * r.replicas + size_t(s)] = k;
    if (f.output_format == "eplb-json" && rebalancing)  // which GPUs its slots are on, as printed below
      write_eplb_json(f.output_path, map, reb.ranks);
    else
      write_expert_map(f.output_path, map, f.output_format);
    if (f.output_format == "sglang")  // the file alone does not start SGLang: its slot count is a flag
      std::fprintf(stderr, "zepp place: start SGLang with --init-expert-location %s --ep-num-redundant-experts %d\n",
                   f.output_path.c_str(), r.replicas - r.experts);
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
  if (rebalancing) {
    out["ranks"] = reb.ranks;  // original GPU of each rank of phy2log (survivors only)
    json moves = json::array(), imbalance = json::array();
    MoveReport total;
    // Bytes need an expert's size, which only --model gives: without it they are unknown (null), not 0.
    const bool sized = !f.model.empty();
    const auto bytes = [sized](double b) { return sized ? json(b) : json(nullptr); };
    for (const Rebalanced& l : reb.layers) {
      moves.push_back({{"slots", l.moves.slots_changed}, {"local", l.moves.local}, {"nvlink", l.moves.nvlink},
                       {"nic", l.moves.nic}, {"nvlink_bytes", bytes(l.moves.nvlink_bytes)},
                       {"nic_bytes", bytes(l.moves.nic_bytes)}});
      imbalance.push_back({{"placed", l.imbalance}, {"from_scratch", l.fresh_imbalance}});
      total.slots_changed += l.moves.slots_changed;
      total.nvlink_bytes += l.moves.nvlink_bytes;
      total.nic_bytes += l.moves.nic_bytes;
    }
    if (!f.previous_path.empty()) out["moves"] = std::move(moves);
    out["imbalance"] = std::move(imbalance);
    char moved[256];
    if (f.previous_path.empty())
      std::snprintf(moved, sizeof moved, "no --previous placement, so no moves counted");
    else if (sized)
      std::snprintf(moved, sizeof moved, "moved %d slots over %d layers: %.1f MB over NVLink, %.1f MB over NICs",
                    total.slots_changed, r.layers, total.nvlink_bytes / 1e6, total.nic_bytes / 1e6);
    else
      std::snprintf(moved, sizeof moved, "moved %d slots over %d layers (bytes unknown: --model gives an expert's size)",
                    total.slots_changed, r.layers);
    std::fprintf(stderr, "zepp place: %d of %d GPUs serve; %s\n", int(reb.ranks.size()), p.num_gpus, moved);
  }
  if (!f.history_path.empty() && !f.trace_path.empty()) out["evaluation"] = evaluate(r, p, problem_from_trace(f, f.trace_path), f.trace_path);
  if (f.output_format.empty()) std::fputs((json_text(out) + "\n").c_str(), stdout);
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
                  "\"num_gpus\"} (EPLB README form), rows are layers 0..L-1; zepp uses num_replicas / num_gpus slots per GPU");
  cmd->add_option("--trace", f->trace_path, "Trace file or folder: loads counted per layer (instead of --load)");
  cmd->add_option("--history", f->history_path,
                  "Place from this trace instead; --trace then evaluates the placement (\"evaluation\": per-layer "
                  "imbalance = busiest GPU's load / mean)");
  cmd->add_option("--model", f->model,
                  "Model preset: of the trace (with --trace), and the expert size for move bytes (with --previous)");
  cmd->add_flag("--skip-invalid", f->skip_invalid, "Skip malformed trace files (each listed with its error) instead of stopping");
  cmd->add_option("--nodes", f->nodes, "Nodes (with --trace)");
  cmd->add_option("--gpus-per-node", f->gpus_per_node, "GPUs per node (with --trace; default: the --topology's)");
  cmd->add_option("--topology", f->topology, "Cluster preset or topology file (docs/topology.md): its GPUs per node (with --trace)");
  cmd->add_option("--extra-slots", f->extra_slots, "R: extra slots per GPU beyond ceil(E / G) (with --trace; default 2)");
  cmd->add_option("--groups", f->groups, "EPLB expert groups (with --trace; default 0: one per node when it divides E)");
  cmd->add_option("--output-format", f->output_format,
                  "Write a serving engine's file instead: sglang (--init-expert-location JSON), trtllm (load-balancer "
                  "YAML) or eplb-json")
      ->check(CLI::IsMember(placement_format_names()));
  cmd->add_option("--output", f->output_path, "File written with --output-format");
  cmd->add_option("--previous", f->previous_path,
                  "Current placement (policy zepp): rebalance from it with the fewest weight moves that reach within "
                  "1% of a from-scratch placement's balance; rows matched by position (eplb-json) or by layer id "
                  "(sglang, trtllm: --load's rows are layers 0..L-1, a trace's its own; every layer of the file must "
                  "be one of the loads'). JSON output adds per-layer moves (slots, bytes over NVLink and NICs) and "
                  "imbalance");
  cmd->add_option("--previous-format", f->previous_format, "Format of --previous: eplb-json (also zepp place's JSON), "
                  "sglang or trtllm")
      ->check(CLI::IsMember(placement_format_names()))
      ->capture_default_str();
  cmd->add_option("--failed-gpus", f->failed_gpus,
                  "Lost GPUs (comma-separated ids): place on the survivors, each keeping its slots; phy2log then has "
                  "one row segment per surviving rank, listed in the output's \"ranks\"")
      ->delimiter(',');
  cmd->add_option("--failed-nodes", f->failed_nodes, "Lost nodes (comma-separated ids): all their GPUs are lost")
      ->delimiter(',');
  cmd->add_option("--max-moved-mb", f->max_moved_mb,
                  "Per-layer budget for weight moves in MB (with --previous and --model): trades balance for churn; "
                  "restoring experts of lost GPUs may exceed it");
  cmd->callback([f, cmd] {
    f->previous_format_given = cmd->count("--previous-format") > 0;
    run(*f);
  });
}

}  // namespace zepp::cli
