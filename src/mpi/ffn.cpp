#include "mpi/ffn.hpp"

#include <cblas.h>

#include <cmath>

#include "core/error.hpp"

// OpenBLAS's own entry point; the generic cblas.h may be another vendor's and not declare it.
extern "C" void openblas_set_num_threads(int num_threads);

namespace zepp::mpi {

void swiglu(const ExpertWeights& w, const float* x, int64_t rows, float* y) {
  require(rows >= 0, "rows", "must be >= 0");
  if (rows == 0) return;
  const int n = int(rows), h = w.hidden, f = w.ffn;
  std::vector<float> g(size_t(rows) * f), u(size_t(rows) * f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, f, h, 1.0f, x, h, w.gate.data(), f, 0.0f, g.data(), f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, f, h, 1.0f, x, h, w.up.data(), f, 0.0f, u.data(), f);
  for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, h, f, 1.0f, g.data(), f, w.down.data(), h, 0.0f, y, h);
}

void use_single_blas_thread() { openblas_set_num_threads(1); }

}  // namespace zepp::mpi
