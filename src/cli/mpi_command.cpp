#include "cli/mpi_command.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <new>
#include <string>

#include "core/error.hpp"
#include "mpi/ffn.hpp"

namespace zepp::cli {

void run_under_mpi(const char* name, const std::function<void()>& prepare, const std::function<int()>& body) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  mpi::use_single_blas_thread();
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string error;  // as main.cpp words the same errors
  try {
    prepare();
  } catch (const InputError& e) {
    error = std::string("error: ") + e.what();
  } catch (const ArgumentError& e) {
    error = std::string("invalid argument: ") + e.what();
  } catch (const std::filesystem::filesystem_error& e) {
    error = std::string("error: ") + e.what();
  }
  int reporter = error.empty() ? size : me;
  MPI_Allreduce(MPI_IN_PLACE, &reporter, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (reporter < size) {
    if (me == reporter) std::fprintf(stderr, "zepp: %s\n", error.c_str());
    std::fflush(stderr);
    MPI_Finalize();
    std::exit(2);
  }
  int status = 0;
  try {
    status = body();
  } catch (const std::exception& e) {
    const bool oom = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    const bool user = oom || dynamic_cast<const InputError*>(&e) || dynamic_cast<const ArgumentError*>(&e);
    std::fprintf(stderr, "zepp %s (rank %d): %s: %s\n", name, me, user ? "error" : "internal error",
                 oom ? "out of memory (try smaller --hidden, --ffn or --size-mb)" : e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, user ? 2 : 1);  // ends every rank: none is left waiting in a collective
  }
  MPI_Finalize();
  if (status != 0) std::exit(status);
}

}  // namespace zepp::cli
