// The figures `zepp simulate` reports (issue 2 item 9), built once as JSON and rendered as a
// table or CSV from that JSON so the three formats never disagree.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.hpp"
#include "pipeline/strategy.hpp"
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
//   "best_refused_weight_us", "best_refused_dispatch_us"}}], "workload": {...}, "cluster": {..., "link_sharing",
//   "planning" ("model" or "free")}}
nlohmann::json summary_json(const Workload& w, const ModelShape& m, const Topology& t, const std::string& executor,
                            const std::vector<StrategyOutcome>& outcomes, PlanningMode planning);

// The line that says what zepp+swaps' swap rule did over `invocations` batches (paper §4.3):
// "<name> swaps: A accepted, R refused as not paying, triggered in T of N iterations (horizon H
// iterations)", and when none was accepted, why: the trigger never fired, no swap lowered the
// busiest GPU, or the best refused swap's saving x horizon against its unhidden weight transfer
// (`best`, the refusal with the largest saving; null when none was refused). Ends in a newline.
std::string swap_line(const std::string& name, int accepted, int refused, int triggered, int invocations, int horizon,
                      const SwapPlan::Refusal* best);

// A human-readable table (one row per strategy) preceded by a workload line.
std::string summary_table(const nlohmann::json& summary);

// CSV with a header row; one row per strategy, workload fields repeated on every row.
std::string summary_csv(const nlohmann::json& summary);

}  // namespace zepp
