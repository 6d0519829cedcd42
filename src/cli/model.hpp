// `zepp simulate --layers all|LIST`: a whole model (every MoE layer of the trace with its own
// placement and routing, plus the non-MoE work, pipelined over layers; src/model/), prefill or
// decode (issue 14 items 1-2). A hook in simulate.cpp, as serve.hpp is for --iterations.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "cli/serve.hpp"
#include "pipeline/strategy.hpp"

namespace zepp::cli {

struct ModelFlags {
  std::string layers;  // "" = one layer (plain simulate); "all" or "1,5,9" or "1-4"
  std::string phase;  // "" = prefill
  std::optional<int64_t> batch, context;
  std::optional<double> kv_cache_gb;
  void add_to(CLI::App* cmd);
  bool active() const { return !layers.empty(); }
  bool any_step_flag() const { return !phase.empty() || batch || context || kv_cache_gb; }
};

// Runs the model and prints the per-layer and total report (table, json or csv).
void run_model(const WorkloadFlags& w, const std::vector<std::string>& systems, const std::string& executor,
               const std::string& format, const StrategyOptions& opt, const ServeFlags& serve, const ModelFlags& m);

// "all" -> {} (every layer); "1,5,9" and ranges "1-4" -> sorted layer ids. ArgumentError("--layers").
std::vector<int> parse_layers(const std::string& s);

}  // namespace zepp::cli
