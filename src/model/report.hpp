// What `zepp simulate --layers ...` reports: built once as JSON and rendered as a table or CSV
// from that JSON, so the formats never disagree (as report/summary.hpp does for one layer).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/compose.hpp"

namespace zepp::model {

struct ReportContext {
  std::string workload;       // MoeRun::description
  std::string model, cluster; // one-line descriptions
  std::string phase;          // "prefill" or "decode"
  int64_t tokens_per_gpu = 0, context = 0;
  int gpus = 0;
  std::string executor;
};

// {"workload", "model", "cluster", "phase", "tokens_per_gpu", "context", "gpus", "executor",
//  "systems": [{"system", "mean_step_ms", "tokens_per_s", "tpot_ms" (decode) , "speedup"
//  (over the reference system: sglang when run, else the first; null for itself),
//  "steps": [{"iteration", "step_ms", "non_moe_ms", "moe_ms", "stages": [{"kind", "layer",
//  "non_moe_ms", "moe_ms", "host_us", "start_ms", "end_ms", "planning_ms", "imbalance",
//  "inter_node_mb", "nvlink_mb"}]}]}]}
nlohmann::json model_json(const ReportContext& c, const std::vector<SystemSteps>& systems);

// Per system: its stages (mean over iterations) and totals, then one summary line per system.
std::string model_table(const nlohmann::json& doc);

// One row per (system, iteration, stage) and one "total" row per (system, iteration).
std::string model_csv(const nlohmann::json& doc);

}  // namespace zepp::model
