// The figures `zepp simulate` reports (issue 2 item 9), built once as JSON and rendered as a
// table or CSV from that JSON so the three formats never disagree.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.hpp"
#include "pipeline/strategy.hpp"
#include "pipeline/swap_line.hpp"
#include "workload/workload.hpp"

namespace zepp {

// {"strategies": [{"name", "latency_us", "speedup_vs_a2av" (null without a2av), "imbalance",
//   "inter_node_bytes", "nvlink_bytes", "max_nic_bytes", "comm_hidden_fraction",
//   "routing_cost_us", "routing_cost_optimal_us" (null when not solved or when the
//   strategy's routing ignores equation (1)'s balance bound), "routing_gap" (cost / optimum − 1,
//   null with it), "routing_wall_us", "metadata_us" and "planning_us" (the per-batch metadata
//   exchange and per-rank planning charged, included in latency_us; 0 with --planning free or
//   for a strategy with nothing per batch), zepp+swaps only: "swaps" {"accepted", "refused",
//   "triggered", "horizon", "best_refused_saved_us_per_iteration", "best_refused_unhidden_us",
//   "best_refused_weight_us", "best_refused_dispatch_us", "best_refused_after_dispatch_us",
//   "best_refused_combine_us"}}], "workload": {...}, "cluster": {..., "link_sharing",
//   "planning" ("model" or "free")}}
nlohmann::json summary_json(const Workload& w, const ModelShape& m, const Topology& t, const std::string& executor,
                            const std::vector<StrategyOutcome>& outcomes, PlanningMode planning);

// A human-readable table (one row per strategy) preceded by a workload line; each column is as
// wide as its widest cell, so it stays aligned whatever the values.
std::string summary_table(const nlohmann::json& summary);

// CSV with a header row; one row per strategy, workload fields repeated on every row.
std::string summary_csv(const nlohmann::json& summary);

}  // namespace zepp
