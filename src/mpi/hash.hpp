// FNV-1a 64-bit over raw bytes: checksums of outputs and of bytes on the wire, compared between
// runs to show they are bit-identical.
#pragma once
#include <cstddef>
#include <cstdint>

namespace zepp::mpi {

inline constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

inline uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = kFnvBasis) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

}  // namespace zepp::mpi
