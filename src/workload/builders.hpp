// The three workload sources behind build_workload, each given validated options and
// tokens_per_gpu; they fill description, synthetic, layer, history_load and batch.
#pragma once
#include <random>
#include <string>

#include "workload/workload.hpp"

namespace zepp::workload_detail {

struct Target {
  int num_gpus = 0;
  int64_t tokens_per_gpu = 0;
  int num_experts = 0;
  int top_k = 0;
};

// An empty batch of the target's shape, token_offset filled, ids and weights sized.
RoutingBatch empty_batch(const Target& target);

// "a, b, c" of the given items.
std::string joined(const std::vector<int>& items);

// `history`: a separate placement input (nullptr: split `trace` itself).
Workload from_tokens(const Trace& trace, int layer, const Target& target, const WorkloadOptions& opt,
                     const Trace* history);
Workload from_load(const Trace& trace, const Target& target, const WorkloadOptions& opt);
// history_load from a separate history trace for `layer` (every token of it, or its load
// tables' mean scaled to the target's (token, expert) pairs), and a description of it.
std::vector<double> history_from(const Trace& history, int layer, const Target& target, const WorkloadOptions& opt,
                                 std::string& description);
// Load tables of `trace` picked by `dataset` ("" all, "arc" every "arc/...", "arc/Hebrew").
std::vector<const LoadTable*> pick_tables(const Trace& trace, const std::string& dataset);
Workload synthetic(const Target& target, int layer, const WorkloadOptions& opt);

}  // namespace zepp::workload_detail
