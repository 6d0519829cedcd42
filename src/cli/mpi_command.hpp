// The frame of a subcommand run under mpirun (`zepp run`, `zepp calibrate`): MPI is initialised
// here, only for these subcommands, so the others run without mpirun.
#pragma once
#include <functional>

namespace zepp::cli {

// Initialises MPI (once), limits OpenBLAS to one thread per rank, runs `body` on every rank and
// finalises MPI; exits with body's status when it is not 0. An exception on any rank prints
// "zepp <name> (rank R): error: ..." (bad input, exit 2) or "internal error" (exit 1) and ends
// every rank with MPI_Abort, so none is left waiting in a collective.
void run_under_mpi(const char* name, const std::function<int()>& body);

}  // namespace zepp::cli
