#include "cli/float_flags.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "core/error.hpp"

namespace zepp::cli {
namespace {

struct Range {
  double lo, hi;
  bool lo_open, hi_open;  // (lo, ...] or [..., hi)
  const char* unit;
};

// One meaning per flag name across subcommands. Hardware figures span a millionth to a million
// times any real part: a typo such as 1e308 overflowed latencies to inf, 1e-300 GB/s broke the
// exact solver's integer link-cost ratio. Sizes stop at a TiB per GPU (the cost estimate refuses
// far less); shares and slacks are the paper's ranges (§4.1 equations (1) and (2)).
const std::map<std::string, Range> kRanges = {
    {"--nvlink-gbps", {1e-6, 1e6, false, false, " GB/s"}},
    {"--nic-gbps", {1e-6, 1e6, false, false, " GB/s"}},  // a link override, or the NIC pacing (run, calibrate, validate)
    {"--nvlink-latency-us", {0, 1e6, true, false, " us"}},
    {"--nic-latency-us", {0, 1e6, true, false, " us"}},
    {"--kernel-launch-us", {0, 1e6, true, false, " us"}},
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

std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

std::string expected(const Range* r) {
  if (!r) return "expected a finite number";  // a flag missing from kRanges
  return "expected a number in " + std::string(r->lo_open ? "(" : "[") + num(r->lo) + ", " + num(r->hi) + (r->hi_open ? ")" : "]") +
         r->unit;
}

bool in_range(double v, const Range* r) {
  return std::isfinite(v) && (!r || ((r->lo_open ? v > r->lo : v >= r->lo) && (r->hi_open ? v < r->hi : v <= r->hi)));
}

const Range* range_of(const std::string& flag) {
  const auto it = kRanges.find(flag);
  return it == kRanges.end() ? nullptr : &it->second;
}

// The check of one value as typed: "" when it is a number in `r`, else what was expected and what came.
std::string check(const std::string& text, const Range* r) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)  // 1e999 overflows, 1e-999 underflows
    return expected(r) + ", got '" + text + "'";
  return in_range(v, r) ? std::string() : expected(r) + ", got " + num(v);
}

// "" when `text` is a whole number of the flag's type (int, or with is_unsigned uint64_t), written
// in decimal; else what was expected and what came.
std::string check_whole(const std::string& text, bool is_unsigned) {
  errno = 0;
  char* end = nullptr;
  bool whole = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || (!is_unsigned && text[0] == '-'));
  bool fits = true;
  if (whole && is_unsigned) {
    std::strtoull(text.c_str(), &end, 10);
  } else if (whole) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    fits = v >= INT32_MIN && v <= INT32_MAX;
  }
  whole = whole && end == text.c_str() + text.size();
  fits = fits && errno != ERANGE;
  if (!whole) return "expected a whole number, got '" + text + "'";
  // The flag's own range is checked once the value is read (its message names it); here only
  // what the flag's type can hold.
  if (!fits)
    return "expected a whole number in " + std::string(is_unsigned ? "[0, 18446744073709551615]" : "[-2147483648, 2147483647]") +
           ", got '" + text + "'";
  return "";
}

}  // namespace

void check_float_flags(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() == 0 || opt->get_type_name().rfind("FLOAT", 0) != 0) continue;
    const Range* r = range_of(opt->get_name());
    // No description: --help would show it after every flag.
    opt->check(CLI::Validator([r](std::string& v) { return check(v, r); }, "", "range"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_float_flags(*sub);
}

void check_integer_flags(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() == 0) continue;
    const std::string type = opt->get_type_name();
    const bool is_unsigned = type.rfind("UINT", 0) == 0;
    if (!is_unsigned && type.rfind("INT", 0) != 0) continue;
    // Every INT option binds an int (the one unsigned, --seed, a uint64_t): CLI11's own refusal
    // ("Could not convert: --swap-horizon = 1e9") said neither what was expected nor the range.
    opt->check(CLI::Validator([is_unsigned](std::string& v) { return check_whole(v, is_unsigned); }, "", "whole"));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_integer_flags(*sub);
}

void require_flag_range(double value, const std::string& flag, const std::string& name) {
  const Range* r = range_of(flag);
  if (!in_range(value, r)) throw ArgumentError((name.empty() ? flag : name) + ": " + expected(r) + ", got " + num(value));
}

}  // namespace zepp::cli
