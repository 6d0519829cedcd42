// The frame of a subcommand run under mpirun (`zepp run`, `zepp calibrate`): MPI is initialised
// here, only for these subcommands, so the others run without mpirun.
#pragma once
#include <functional>

namespace zepp::cli {

// Initialises MPI (once), limits OpenBLAS to one thread per rank, runs `prepare` and then `body`
// on every rank and finalises MPI; exits with body's status when it is not 0.
// `prepare` holds the checks that need MPI (the rank count) and the reading of inputs: an
// argument or input error it throws is the same on every rank, so the lowest rank that has one
// prints "zepp: error: ..." once and every rank exits with status 2, without MPI_Abort and its
// banner. An exception from `body` on any rank prints "zepp <name> (rank R): error: ..." (bad
// input, exit 2) or "internal error" (exit 1) and ends every rank with MPI_Abort, so none is left
// waiting in a collective.
void run_under_mpi(const char* name, const std::function<void()>& prepare, const std::function<int()>& body);

}  // namespace zepp::cli
