// `zepp run --layers ...`: consecutive MoE layers for real under MPI (src/mpi/stack.hpp), a hook
// in run.cpp. Called on every rank after MPI is initialised.
#pragma once
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "mpi/session.hpp"

namespace zepp::cli {

// Returns the exit status: 0, or 3 when the stack's output is off the reference by more than
// `tolerance`. Rank 0 prints the table or JSON.
int run_layers(const WorkloadFlags& w, const std::string& layers, const std::vector<std::string>& strategies,
               const std::string& format, const mpi::SessionOptions& opt, double tolerance);

}  // namespace zepp::cli
