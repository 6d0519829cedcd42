#include "core/flag_ranges.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace zepp {
namespace {

// Hardware figures span a millionth to a million times any real part: a typo such as 1e308
// overflowed latencies to inf, 1e-300 GB/s broke the exact solver's integer link-cost ratio, and
// a topology file's 1e5 s latency aborted SimGrid. Latencies and the launch cost may be 0: an
// ideal link, or a measured compute model whose curves include the launch (zepp calibrate writes
// kernel_launch "0 us"), but a link latency other than 0 must reach the simulator's timing
// precision (surf/precision, exec/sim_engine.cpp: 1e-12 s): SimGrid warns below it, and a NIC
// latency of 1e-12 us (1e-18 s) made it crash (signal 11). Sizes stop at a TiB per GPU (the cost estimate refuses far less);
// shares and slacks are the paper's ranges (§4.1 equations (1) and (2)).
constexpr double kSimPrecisionUs = 1e-6;  // 1e-12 s
const std::map<std::string, FlagRange> kRanges = {
    {"--nvlink-gbps", {1e-6, 1e6, false, false, " GB/s"}},
    {"--nic-gbps", {1e-6, 1e6, false, false, " GB/s"}},  // a link override, or the NIC pacing (run, calibrate, validate)
    {"--nvlink-latency-us", {0, 1e6, false, false, " us", kSimPrecisionUs}},
    {"--nic-latency-us", {0, 1e6, false, false, " us", kSimPrecisionUs}},
    {"--kernel-launch-us", {0, 1e6, false, false, " us"}},
    {"--peak-tflops", {1e-6, 1e6, false, false, " TFLOP/s"}},
    {"--hbm-tbps", {1e-6, 1e6, false, false, " TB/s"}},
    {"--size-mb", {0, 1e6, true, false, " MiB"}},
    {"--sizes", {0, 1e6, true, false, " MiB"}},
    {"--kv-cache-gb", {0, 1e6, true, false, " GB"}},
    {"--history-fraction", {0, 1, true, true, ""}},
    {"--zipf", {0, 1000, false, false, ""}},  // r^-1000 already leaves fewer experts than any top-k
    {"--balance-slack", {0, 1, false, true, ""}},
    {"--nic-slack", {0, 1e6, false, false, ""}},
    {"--tolerance", {0, 1e6, true, false, ""}},  // relative error
    {"--max-moved-mb", {0, 1e9, false, false, " MB per layer"}},
    {"--max-memory", {0, 1e9, true, false, " MiB"}},
    {"--max-minutes", {0, 1e6, true, false, " minutes"}},
};

}  // namespace

const FlagRange* flag_range(const std::string& flag) {
  const auto it = kRanges.find(flag);
  return it == kRanges.end() ? nullptr : &it->second;
}

bool in_flag_range(double v, const FlagRange* r) {
  return std::isfinite(v) && (!r || ((r->lo_open ? v > r->lo : v >= r->lo) && (r->hi_open ? v < r->hi : v <= r->hi) &&
                                     (v == r->lo || v >= r->nonzero_lo)));
}

std::string expected_in(const FlagRange* r) {
  if (!r) return "expected a finite number";
  if (r->nonzero_lo > 0)
    return "expected " + g_format(r->lo) + " or a number in [" + g_format(r->nonzero_lo) + ", " + g_format(r->hi) +
           (r->hi_open ? ")" : "]") + r->unit;
  return "expected a number in " + std::string(r->lo_open ? "(" : "[") + g_format(r->lo) + ", " + g_format(r->hi) +
         (r->hi_open ? ")" : "]") + r->unit;
}

std::string g_format(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

}  // namespace zepp
