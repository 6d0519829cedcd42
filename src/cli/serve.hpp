// Multi-iteration serving from the command line: `zepp simulate --iterations N` (a hook in
// simulate.cpp) and the drift experiments `zepp experiment fig12` / `zepp experiment replay`.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "pipeline/strategy.hpp"

namespace zepp::cli {

struct ServeFlags {
  int iterations = 0;  // 0: one invocation (plain `zepp simulate`)
  std::string drift = "none";
  int period = 4, groups = 4;
  void add_to(CLI::App* cmd);
};

// Serves the systems over the iterations and prints a per-iteration report and totals
// (table, csv or json). executor: "sim" or "none" (decisions only: imbalance, bytes, planning).
void run_serve(const WorkloadFlags& w, const std::vector<std::string>& systems, const std::string& executor,
               const std::string& format, const StrategyOptions& opt, const ServeFlags& s);

// Registers `fig12` and `replay` under `zepp experiment`.
void add_drift_experiments(CLI::App* experiment);

}  // namespace zepp::cli
