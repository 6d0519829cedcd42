// The paper's evaluation sweeps (§6.2 Figure 9, §6.3 Figure 10) on the `sim` executor: every
// configuration (workload x topology x nodes x size) runs every strategy on the same workload,
// one CSV row per (configuration, strategy), written as soon as the configuration finishes.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "core/provenance.hpp"
#include "pipeline/strategy.hpp"
#include "pipeline/variants.hpp"

namespace zepp::experiments {

// One workload of a sweep: a model preset on a trace (a folder under the traces directory) or,
// with trace empty, on the synthetic power-law workload.
struct WorkloadSpec {
  std::string name;        // CSV key, e.g. "qwen3-235b"
  std::string model;       // model preset (core/presets.hpp)
  std::string trace;       // subfolder of the traces directory; "" = synthetic
  int layer = 5;           // paper: layer-5 traces (Figure 9 caption)
  std::string paper_name;  // the paper's workload this one stands in for ("Qwen", "K2"), or ""
  std::string note;        // how it differs from the paper's (shown in docs/reproduction.md)
};

struct SweepSpec {
  std::string experiment;  // "fig9", "fig10"
  std::vector<WorkloadSpec> workloads;
  std::vector<std::string> topologies;
  std::vector<int> nodes;
  std::vector<double> sizes_mb;
  std::vector<std::string> strategies;  // must include "a2av" (speedups are over it)
};

// Figure 9 (§6.2): nodes {4, 8, 16} x {1, 4, 16} MB per GPU on a100, workloads DeepSeek-V2-Lite
// (real top-6), Llama-4-Maverick (real top-1), Qwen3-235B shape sampled from the real
// Qwen3-30B-A3B per-expert load, Kimi-K2 shape on the synthetic workload; every registered
// strategy of the paper's comparison that this build has, Zepp's four ablations and epic on Zepp's placement
// (is_variant).
SweepSpec fig9_spec();
// Figure 10 (§6.3): Kimi-K2 (synthetic), nodes {2, 4, 8, 16, 32} x {1, 64} MB, a100 and h100,
// strategies a2av and zepp.
SweepSpec fig10_spec();

// Sweeps take the variants of pipeline/variants.hpp (is_variant) beside registered strategies.

struct SweepOptions {
  std::string traces_dir = "../shared/data/traces";
  std::string csv_path;
  bool resume = false;      // keep the CSV and run only the (configuration, strategy) rows it lacks
  int jobs = 1;             // configurations simulated at once (forked workers)
  uint64_t seed = 1;
  StrategyOptions strategy; // R, C, ... (paper §6.1: R = 2)
  LinkSharing link_sharing = LinkSharing::Fair;  // the sim executor's link model
  std::FILE* progress = stderr;  // "done/total, elapsed, estimate" lines; nullptr = quiet
};

// The settings of a sweep that change its results but are none of its CSV's columns (--planning
// is one too, per row), in this order: --planning, --link-sharing, --seed, --extra-slots,
// --balance-slack, --nic-slack. run_sweep records them in the CSV's settings line
// (core/provenance.hpp); --resume and the report compare them.
Settings sweep_settings(const SweepOptions& opt);

// The settings a sweep CSV was made with: its settings line; for a file written before that line,
// read from the `zepp experiment fig9|fig10` command its provenance line records, each flag it
// leaves out at this program's default (`from_command` is then set). nullopt for a file without a
// provenance line, or whose command is no such sweep.
std::optional<Settings> sweep_settings_of(const std::optional<Provenance>& p, bool* from_command = nullptr);

// Throws ArgumentError naming the first configuration (workload, model, topology, nodes) on which
// a strategy's placement cannot hold the model's experts (check_strategy_fits, suggesting the
// sweep's flags): milliseconds, where the sweep found it only when that configuration ran.
void check_sweep(const SweepSpec& spec, const StrategyOptions& opt);

// Runs every configuration of `spec` in up to `jobs` forked workers, appending each finished
// configuration's rows at once; with resume only the strategies of a configuration that the CSV
// lacks (a2av's latency, which speedups divide, is simulated again when its row is there).
// Returns the number of configurations run. Throws ArgumentError naming the option (jobs < 1, no a2av, empty lists,
// an unknown strategy, a configuration that cannot be placed (check_sweep), a CSV from another
// sweep or with another header under resume),
// InputError for a malformed CSV, and std::runtime_error naming the configuration when one
// fails (after the other running workers have finished and been written).
int run_sweep(const SweepSpec& spec, const SweepOptions& opt);

}  // namespace zepp::experiments
