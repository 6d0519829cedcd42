// The drift experiments of issue 6: the paper's Figure 12 ablation (§6.5) and an
// iser-moe.txt §6.1-style replay of excess load removed and weight bytes moved, on our traces.
#pragma once
#include <string>
#include <vector>

#include "pipeline/strategy.hpp"
#include "serving/drift.hpp"

namespace zepp {

// One drifting workload: a trace folder under the traces directory, its model preset, the drift
// mode and the dataset it concerns (served for `only`, left out of history for `rotating`).
struct DriftCase {
  std::string workload;  // label, e.g. "llama4"
  std::string trace;     // folder under the traces directory
  std::string model;     // model preset
  DriftMode mode = DriftMode::Only;
  std::string dataset;
};

// Figure 12's cases on our traces: Llama-4 (anatomy), Qwen3-30B-A3B (mmlu/Hebrew: a language
// shift), DeepSeek-V2-Lite (prompt group 1 of 4), each `only` and `rotating`.
std::vector<DriftCase> fig12_cases();

struct DriftExperimentOptions {
  std::string traces_dir = "../shared/data/traces";
  std::string topology = "a100";
  LinkSharing link_sharing = LinkSharing::Fair;  // the sim executor's link model
  int nodes = 4;
  double size_mb = 64;                // per GPU (§6.5: 64 MB)
  int only_iterations = 4;            // `only`: iterations served
  int period = 4;                     // `rotating`: iterations per dataset; all datasets cycled once
  int groups = 4;
  uint64_t seed = 1;
  StrategyOptions strategy;
  std::vector<std::string> systems;   // serve() system names
  bool simulate = true;               // false: decisions only (replay)
};

struct DriftResult {
  std::string workload, scenario, dataset, system;
  int iterations = 0;
  double total_latency_s = 0;
  double speedup = 0;                 // over the first system's total latency (fig12: comet)
  double mean_imbalance = 0, mean_home_imbalance = 0, excess_removed = 0;
  double weight_nvlink_mb = 0, weight_nic_mb = 0;  // per iteration
  double token_nic_mb = 0;                         // per iteration
  int swaps = 0;
  // Summed over iterations, as shares of the simulated latency: the metadata exchange and per-rank
  // planning charged in it (plan/planning.hpp), and this machine's wall time of the whole global
  // decision (routing, the simulator's comm plan, swap planning), which no deployment runs.
  double charged_planning_share = 0, decision_wall_share = 0;
  int64_t wrapped = 0;                // evaluation stream restarts (tokens reused)
};

// Runs every case under every system (each system sees the same batches), printing progress to
// stderr. Throws what reading the traces and serving throw.
std::vector<DriftResult> run_drift_experiment(const std::vector<DriftCase>& cases, const DriftExperimentOptions& opt);

std::string drift_csv(const std::vector<DriftResult>& rows);
std::string drift_markdown(const std::vector<DriftResult>& rows, bool latency);

// Bar chart of speedups per (workload, scenario), one bar per system, via gnuplot: writes
// `base`.dat, `base`.gp and `base`.svg (write_figure, core/figure.hpp). Throws std::runtime_error
// when gnuplot fails, ArgumentError("base: ...") for a path that cannot be written.
void plot_drift_speedups(const std::vector<DriftResult>& rows, const std::string& base, const std::string& title);

}  // namespace zepp
