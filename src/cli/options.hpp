// Command-line options shared by the subcommands that build a workload on a cluster:
// trace, model and topology presets with per-field overrides, workload sampling.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/types.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"

namespace zepp::cli {

struct WorkloadFlags {
  std::string trace_path;
  std::string model = "";          // default: kimi-k2 without a trace; required with one
  std::string topology = "a100";
  int nodes = 4;
  std::optional<int> gpus_per_node, num_experts, top_k, hidden, ffn;
  std::optional<double> nvlink_gbps, nic_gbps, nvlink_latency_us, nic_latency_us, peak_tflops, hbm_tbps,
      kernel_launch_us;
  WorkloadOptions workload;

  // Registers the flags on `cmd`.
  void add_to(CLI::App* cmd);
  // Preset plus overrides; ArgumentError naming the flag on bad values.
  ModelShape model_shape() const;
  Topology cluster() const;
};

// What the flags resolve to: the model, the cluster, the trace (if any) and the workload.
struct ResolvedWorkload {
  ModelShape model;
  Topology topo;
  std::unique_ptr<Trace> trace;
  Workload workload;
};
ResolvedWorkload resolve(const WorkloadFlags& flags);

}  // namespace zepp::cli
