#include "cli/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli/float_flags.hpp"
#include "core/error.hpp"
#include "core/flag_ranges.hpp"
#include "core/presets.hpp"
#include "pipeline/cost.hpp"
#include "pipeline/strategy.hpp"
#include "pipeline/variants.hpp"
#include "workload/size.hpp"
#include "core/topology_file.hpp"
#include "trace/layer_check.hpp"
#include "trace/oddities.hpp"

namespace zepp::cli {

void WorkloadFlags::add_to(CLI::App* cmd) {
  cmd->add_option("--trace", trace_path, "Trace file or folder (shared/data/traces/...); synthetic power-law workload without it");
  cmd->add_flag("--skip-invalid", skip_invalid, "Skip malformed trace files (each listed with its error) instead of stopping");
  cmd->add_option("--history", history_path,
                  "Placement history from this trace file or folder; --trace is then all evaluation (no --history-fraction split)");
  std::string models;
  for (const auto& n : model_preset_names()) models += (models.empty() ? "" : ", ") + n;
  cmd->add_option("--model", model, "Model preset: " + models + " (default kimi-k2 without --trace; `zepp presets`)");
  cmd->add_option("--topology", topology, "Cluster preset (a100, h100, dgx-a100, dgx-h100, dgx-h200, dgx-b200, gb200-nvl72; `zepp presets`) or topology file, YAML or JSON (docs/topology.md)")->capture_default_str();
  cmd->add_option("--nodes", nodes, "Number of nodes N")->capture_default_str();
  cmd->add_option("--gpus-per-node", gpus_per_node, "GPUs (and NICs) per node G (default: the topology's)");
  cmd->add_option("--experts", num_experts, "Override the model's routed expert count E");
  cmd->add_option("--top-k", top_k, "Override the model's top-k");
  cmd->add_option("--hidden", hidden, "Override the model's hidden (token) dimension");
  cmd->add_option("--ffn", ffn, "Override the model's expert FFN dimension");
  cmd->add_option("--nvlink-gbps", nvlink_gbps, "Override NVLink GB/s per direction (per GPU pair, or per GPU switch port on NVSwitch topologies)");
  cmd->add_option("--nic-gbps", nic_gbps, "Override NIC GB/s per direction");
  cmd->add_option("--nvlink-latency-us", nvlink_latency_us, "Override NVLink per-message latency (us)");
  cmd->add_option("--nic-latency-us", nic_latency_us, "Override NIC per-message latency (us)");
  cmd->add_option("--peak-tflops", peak_tflops, "Override GPU BF16 peak TFLOP/s");
  cmd->add_option("--hbm-tbps", hbm_tbps, "Override GPU HBM TB/s");
  cmd->add_option("--kernel-launch-us", kernel_launch_us, "Override per-GEMM launch cost (us)");
  cmd->add_option("--link-sharing", link_sharing,
                  "sim executor: fair (concurrent flows share links max-min), serial (one transfer at a time per NIC/NVLink, the pre-issue-10 model) or pair (one transfer in flight per sender-receiver GPU pair, others queued; pairs share links max-min; faster on large clusters, docs/scaling.md)")
      ->capture_default_str();
  cmd->add_option("--layer", workload.layer, "Trace layer to use (default: first MoE layer present)")->check(non_negative);
  cmd->add_option("--size-mb", workload.size_mb, "BF16 input activations per GPU, MiB, before top-k (paper §6.1)")->capture_default_str();
  cmd->add_option("--seed", workload.seed, "Sampling seed")->capture_default_str()->check(non_negative);
  cmd->add_option("--history-fraction", workload.history_fraction, "Share of requests used as placement history")
      ->capture_default_str()
      ->each([this](const std::string&) { history_fraction_given = true; });
  cmd->add_option("--zipf", workload.zipf, "Synthetic workload: popularity of the r-th expert ~ r^-zipf")->capture_default_str();
  cmd->add_option("--dataset", workload.dataset, "Load-only traces: table(s) to use, e.g. arc (its every table) or arc/Hebrew; with --iterations and --drift only or rotating, the one dataset served, named whole");
  cmd->add_option("--max-memory", max_memory_mib,
                  "MiB this run may use; a larger estimate stops it before building (default: the machine's memory)");
  cmd->add_option("--max-minutes", max_minutes, "CPU minutes this run may take (zepp run: also the wait of its --nic-gbps paced sends); a longer estimate stops it before building")
      ->capture_default_str();
}

void require_in_range(double value, const std::string& flag, double lo, double hi, const std::string& unit) {
  auto num = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return std::string(b);
  };
  require(std::isfinite(value) && value >= lo && value <= hi, flag,
          "expected a number in [" + num(lo) + ", " + num(hi) + "]" + unit + ", got " + num(value));
}

void require_mode(const CLI::App& cmd, const std::vector<std::string>& flags, bool mode_on, const std::string& mode) {
  if (mode_on) return;
  for (const auto& flag : flags)
    require(cmd.count(flag) == 0, flag, "only acts with " + mode + "; leave it out or add that");
}

void check_workload_modes(const CLI::App& cmd, const WorkloadFlags& w) {
  // A user's --zipf beside --trace changed nothing; --layer 5 on the synthetic workload only
  // relabelled its output "layer 5".
  require_mode(cmd, {"--zipf"}, w.trace_path.empty(), "the synthetic workload (no --trace)");
  require_mode(cmd, {"--layer", "--skip-invalid"}, !w.trace_path.empty(),
               "--trace (the synthetic workload has no layers and reads no files)");
  require_mode(cmd, {"--history-fraction"}, !w.trace_path.empty() && w.history_path.empty(),
               "--trace and no --history (it splits the trace's requests into history and evaluation)");
}

std::vector<std::string> strategy_list(const std::string& text, const std::string& flag, bool variants) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    require(!item.empty(), flag, "entry " + std::to_string(out.size() + 1) + " of '" + text + "' is empty");
    require(std::find(out.begin(), out.end(), item) == out.end(), flag, "names '" + item + "' twice");
    try {
      if (!variants || !is_variant(item)) find_strategy(item);
    } catch (const ArgumentError& e) {  // the registry's message, under the flag's name
      const std::string m = e.what();
      std::string listed;
      for (const auto& v : variant_names()) listed += (listed.empty() ? "" : ", ") + v;
      throw ArgumentError(flag + m.substr(m.find(':')) +
                          (variants ? "; or a variant: " + listed + " (switches combine: zepp/no-split/no-waves)" : ""));
    }
    out.push_back(item);
  }
  require(!out.empty(), flag, "names no strategy");
  require(text.back() != ',', flag, "entry " + std::to_string(out.size() + 1) + " of '" + text + "' is empty");
  return out;
}

namespace {
template <class T>
void distinct(const std::vector<T>& values, const std::string& flag, std::string (*show)(const T&)) {
  for (size_t i = 0; i < values.size(); ++i)
    require(std::find(values.begin(), values.begin() + long(i), values[i]) == values.begin() + long(i), flag,
            "names " + show(values[i]) + " twice");
}
}  // namespace

void require_distinct(const std::vector<std::string>& values, const std::string& flag) {
  distinct<std::string>(values, flag, [](const std::string& v) { return "'" + v + "'"; });
}
void require_distinct(const std::vector<int>& values, const std::string& flag) {
  distinct<int>(values, flag, [](const int& v) { return std::to_string(v); });
}
void require_distinct(const std::vector<double>& values, const std::string& flag) {
  distinct<double>(values, flag, [](const double& v) { return g_format(v); });
}

bool takes_zepp_ablations(const std::string& name) { return name.rfind("zepp", 0) == 0; }

bool takes_extra_slots(const std::string& name) {
  const std::string base = name.substr(0, name.find('/'));  // a variant places as its base
  for (const char* fixed : {"a2av", "fast", "comet", "sglang", "zepp-overlap"})  // one home per expert
    if (base == fixed) return false;
  return true;
}

std::string strategy_label(const std::string& name, const StrategyOptions& o) { return variant_label(name, o); }

std::vector<StrategyRun> strategy_runs(const std::vector<std::string>& names, const StrategyOptions& opt,
                                       const std::string& flag) {
  std::vector<StrategyRun> runs;
  for (const auto& name : names) {
    StrategyRun run{name, "", "", opt};
    run.strategy = strategy_variant(name, run.opt);
    run.label = strategy_label(run.strategy, run.opt);
    for (const StrategyRun& other : runs)
      require(other.label != run.label, flag,
              "'" + name + "' runs " + run.label + ", which '" + other.name + "' with these flags runs too");
    runs.push_back(std::move(run));
  }
  return runs;
}

bool packs_with_zepp(const std::vector<std::string>& strategies) {
  for (const auto& s : strategies)
    if (s.find("zepp") != std::string::npos || s.find("epic") != std::string::npos) return true;
  return false;
}

std::string non_negative(const std::string& value) {
  return !value.empty() && value[0] == '-' ? "expected a value >= 0, got '" + value + "'" : "";
}

namespace {
template <typename T>
void set_positive(const std::optional<T>& v, const char* flag, T& field, double scale = 1.0) {
  if (!v) return;
  require(*v > 0, flag, "must be positive, got " + std::to_string(*v));
  field = static_cast<T>(*v * scale);
}
}  // namespace

ModelShape WorkloadFlags::model_shape() const {
  require(!(model.empty() && !trace_path.empty()), "--model", "is required with --trace (the trace's model preset)");
  ModelShape m = model_preset(model.empty() ? "kimi-k2" : model, "--model");
  set_positive(num_experts, "--experts", m.num_experts);
  set_positive(top_k, "--top-k", m.top_k);
  set_positive(hidden, "--hidden", m.hidden);
  set_positive(ffn, "--ffn", m.ffn);
  require(m.top_k <= m.num_experts, "--top-k",
          std::to_string(m.top_k) + " exceeds the expert count " + std::to_string(m.num_experts) +
              " (--experts or the model's); expected at most that many");
  return m;
}

void WorkloadFlags::check_experts(const Trace& trace) const {
  if (!num_experts || !trace.has_tokens()) return;
  int32_t top = -1;
  for (const auto& [layer, lt] : trace.layers)
    for (int32_t e : lt.expert_ids) top = std::max(top, e);
  const int preset = model_preset(model).num_experts;
  require(*num_experts <= top + 1, "--experts",
          std::to_string(*num_experts) + " experts, but " + trace.path + " selects experts 0-" + std::to_string(top) +
              " only: the other " + std::to_string(*num_experts - top - 1) +
              " would be experts no token selects. Leave --experts out (" + model + " has " + std::to_string(preset) +
              ") or give " + std::to_string(top + 1));
}

Topology WorkloadFlags::cluster() const {
  require(nodes >= 1, "--nodes", "must be at least 1, got " + std::to_string(nodes));
  Topology t = cluster_topology(topology, nodes, "--topology");
  set_positive(gpus_per_node, "--gpus-per-node", t.gpus_per_node);
  // Ranges: src/core/flag_ranges.cpp (the command line checks them while parsing; zepp.simulate here).
  auto set = [](const std::optional<double>& v, const char* flag, double& field, double scale) {
    if (!v) return;
    require_flag_range(*v, flag);
    field = *v * scale;
  };
  set(nvlink_gbps, "--nvlink-gbps", t.nvlink_bw, 1e9);
  set(nic_gbps, "--nic-gbps", t.nic_bw, 1e9);
  set(nvlink_latency_us, "--nvlink-latency-us", t.nvlink_latency, 1e-6);
  set(nic_latency_us, "--nic-latency-us", t.nic_latency, 1e-6);
  set(peak_tflops, "--peak-tflops", t.compute.peak_flops, 1e12);
  set(hbm_tbps, "--hbm-tbps", t.compute.hbm_bw, 1e12);
  set(kernel_launch_us, "--kernel-launch-us", t.compute.kernel_launch, 1e-6);
  t.link_sharing = parse_link_sharing(link_sharing, "--link-sharing");
  return t;
}

namespace {
bool trace_warnings = true;
}

void silence_trace_warnings() { trace_warnings = false; }

Trace read_trace_warning(const std::string& path, bool skip_invalid, const ModelShape* model, std::vector<int> layers) {
  std::map<int, std::string> layer_source;
  Trace t = read_trace_located(path, layer_source, ReadOptions{skip_invalid});
  if (model) check_trace_layers(t, layer_source, *model);
  if (!trace_warnings) return t;
  if (!t.skipped_empty.empty()) {
    std::fprintf(stderr, "zepp: warning: %s: skipped %zu empty file(s) (no tokens in them, nothing lost):\n", path.c_str(),
                 t.skipped_empty.size());
    for (const auto& f : t.skipped_empty) std::fprintf(stderr, "  %s\n", f.c_str());
  }
  if (!t.skipped_invalid.empty()) {
    std::fprintf(stderr, "zepp: warning: %s: skipped %zu invalid file(s) (--skip-invalid):\n", path.c_str(),
                 t.skipped_invalid.size());
    for (const auto& e : t.skipped_invalid) std::fprintf(stderr, "  %s\n", e.c_str());
  }
  const std::vector<int> present = t.layer_ids();
  for (int& l : layers)
    if (l < 0 && !present.empty()) l = present.front();
  for (const std::string& w : trace_oddities(t, 0.5, layers)) std::fprintf(stderr, "zepp: warning: %s\n", w.c_str());
  if (!t.repeated_runs.empty()) {
    std::fprintf(stderr, "zepp: note: %s: %zu request(s) recorded more than once; each run is read as its own request:\n",
                 path.c_str(), t.repeated_runs.size());
    for (const auto& r : t.repeated_runs) std::fprintf(stderr, "  %s\n", r.c_str());
  }
  return t;
}

[[noreturn]] void rethrow_as_flag(const ArgumentError& e) {
  const std::string what = e.what();
  for (const char* field : {"size_mb", "history_fraction", "zipf", "layer", "dataset", "seed", "history"}) {
    const std::string prefix = std::string(field) + ":";
    if (what.rfind(prefix, 0) == 0) {
      std::string flag = "--" + std::string(field);
      std::replace(flag.begin(), flag.end(), '_', '-');
      throw ArgumentError(flag + what.substr(prefix.size() - 1));
    }
  }
  throw e;
}

namespace {
// What check_cost weighs: `strategies` strategies on `size_mb` MiB per GPU (tokens bounded as the
// workload builder bounds them), `runs` times each (the time, not the memory: the workload is
// built once).
CostEstimate size_cost(const ModelShape& model, const Topology& topo, double size_mb, int strategies, bool zepp_placement,
                       double runs) {
  const double tokens = std::min(tokens_per_gpu(model, size_mb), 1e15);
  CostEstimate e = estimate_cost(model, topo, int64_t(tokens), strategies, zepp_placement);
  e.seconds *= runs;  // an upper bound
  return e;
}
}  // namespace

void check_cost(const WorkloadFlags& f, const ModelShape& model, const Topology& topo) {
  require(!f.max_memory_mib || (std::isfinite(*f.max_memory_mib) && *f.max_memory_mib > 0), "--max-memory",
          "expected a positive number of MiB");
  const double budget = f.max_memory_mib ? *f.max_memory_mib * 1048576.0 : memory_budget_bytes();
  require(std::isfinite(f.max_minutes) && f.max_minutes > 0, "--max-minutes",
          "expected a positive number of minutes, got " + std::to_string(f.max_minutes));
  require(f.runs_per_strategy >= 1, "--repeat", "must be >= 1");
  const CostEstimate e =
      size_cost(model, topo, f.workload.size_mb, f.strategies, f.zepp_placement, double(f.runs_per_strategy));
  check_budget(e, budget, "--max-memory", f.max_minutes * 60, "--max-minutes",
               std::string("use a smaller --size-mb, fewer --nodes, --gpus-per-node or --experts, or fewer strategies") +
                   (f.runs_per_strategy > 1 ? ", or a smaller --repeat" : ""));
}

void check_experiment_size(const std::string& flag, double size_mb, const std::string& configuration,
                           const ModelShape& model, const Topology& topo, int strategies, bool zepp_placement,
                           double runs) {
  const std::string what = flag + ": " + g_format(size_mb) + " MiB per GPU in " + configuration;
  // The defaults of check_cost: no --max-memory (what this process may allocate), --max-minutes 60.
  const WorkloadFlags defaults;
  const CostEstimate e = size_cost(model, topo, size_mb, strategies, zepp_placement, runs);
  check_budget(e, memory_budget_bytes(), what, defaults.max_minutes * 60, what,
               "use a smaller " + flag + " (the bound zepp simulate applies by default)");
  try {  // then the batch's bounds, as simulate's workload builder holds them (found in a worker before)
    check_batch_size(model, topo, size_mb);
  } catch (const ArgumentError& err) {
    const std::string why = err.what();
    throw ArgumentError(what + ": " + why.substr(why.find(": ") + 2));
  }
}

ResolvedWorkload resolve(const WorkloadFlags& f) {
  ResolvedWorkload r;
  r.model = f.model_shape();
  r.topo = f.cluster();
  check_cost(f, r.model, r.topo);
  if (!f.trace_path.empty()) {
    r.trace = std::make_unique<Trace>(read_trace_warning(f.trace_path, f.skip_invalid, &r.model, {f.workload.layer}));
    f.check_experts(*r.trace);
    check_trace_matches_model(*r.trace, r.model);
    // A load-only trace's tables are history and evaluation alike: the share changed nothing.
    require(!f.history_fraction_given || r.trace->has_tokens(), "--history-fraction",
            "only acts with a trace of per-token selections (it splits its requests); " + f.trace_path +
                " holds per-expert loads only; leave it out");
  }
  if (!f.history_path.empty()) {
    require(!f.trace_path.empty(), "--history", "needs --trace (the evaluation trace) beside it");
    r.history = std::make_unique<Trace>(read_trace_warning(f.history_path, f.skip_invalid, &r.model, {f.workload.layer}));
    f.check_experts(*r.history);
    check_trace_matches_model(*r.history, r.model);
  }
  try {
    r.workload = build_workload(r.trace.get(), r.model, r.topo, f.workload, r.history.get());
  } catch (const ArgumentError& e) {
    rethrow_as_flag(e);
  }
  return r;
}

}  // namespace zepp::cli
