#include "cli/mpi_command.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include "core/error.hpp"
#include "mpi/ffn.hpp"

namespace zepp::cli {

void run_under_mpi(const char* name, const std::function<int()>& body) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  mpi::use_single_blas_thread();
  int status = 0;
  try {
    status = body();
  } catch (const std::exception& e) {
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const bool oom = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
    const bool user = oom || dynamic_cast<const InputError*>(&e) || dynamic_cast<const ArgumentError*>(&e);
    std::fprintf(stderr, "zepp %s (rank %d): %s: %s\n", name, me, user ? "error" : "internal error",
                 oom ? "out of memory (try smaller --hidden, --ffn or --size-mb)" : e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, user ? 2 : 1);
  }
  MPI_Finalize();
  if (status != 0) std::exit(status);
}

}  // namespace zepp::cli
