// An allocator for arrays of many MB that are written once, front to back (a comm plan's flat
// rows, its builder's per-pair arrays). It asks for transparent huge pages (madvise
// MADV_HUGEPAGE; Debian's default THP mode "madvise" grants them only on request), so each
// fresh 2 MiB costs one page fault instead of 512. Such arrays are freed with their plan and the
// next one is fresh memory again (glibc maps allocations above 32 MiB anew each time), and on
// the 2-core test VM those faults were a large part of a plan build: Zepp's plan for 32 x 4 GPUs
// at 64 MiB (BM_BuildPlan/nodes:32, three interleaved runs each, 2 Dec 2026, load 1.8-4.0) took
// 1.7 / 2.9 / 2.2 s of CPU with huge pages and 2.8 / 4.1 / 4.2 s without. Below 8 MiB it is
// operator new. Where THP is off the advice is ignored and nothing else changes.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace zepp {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t(2) << 20;
  static constexpr size_t kFrom = 4 * kHugePage;  // smaller: operator new

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kFrom) return static_cast<T*>(::operator new(bytes));
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advice: its failure leaves 4 KiB pages
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kFrom) ::operator delete(p);
    else std::free(p);
  }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

}  // namespace zepp
