// `zepp run --layers ...`: consecutive MoE layers for real under MPI (src/mpi/stack.hpp), a hook
// in run.cpp. Called on every rank after MPI is initialised.
#pragma once
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "mpi/session.hpp"

namespace zepp::cli {

// The stack's inputs, resolved from the flags and the trace before any layer runs.
struct LayerStack {
  ModelShape model;
  Topology topo;
  std::vector<int> ids;  // the trace's layers, in order
  std::vector<Workload> workloads;  // one per layer of `ids`
};

// Reads the trace and builds each layer's workload; throws ArgumentError / InputError for bad
// flags or input. Called in run_under_mpi's prepare step, so a bad trace or flag is one message
// and exit status 2, not an MPI_Abort from every rank.
LayerStack prepare_layers(const WorkloadFlags& w, const std::string& layers);

// Returns the exit status: 0, or 3 when the stack's output is off the reference by more than
// `tolerance`. Rank 0 prints the table or JSON.
int run_layers(const WorkloadFlags& w, const LayerStack& stack, const std::vector<std::string>& strategies,
               const std::string& format, const mpi::SessionOptions& opt, double tolerance);

}  // namespace zepp::cli
