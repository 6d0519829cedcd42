#include "cli/float_flags.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "core/flag_ranges.hpp"

namespace zepp::cli {
namespace {

// The check of one value as typed: "" when it is a number in `r`, else what was expected and what came.
std::string check(const std::string& text, const FlagRange* r) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE)  // 1e999 overflows, 1e-999 underflows
    return expected_in(r) + ", got '" + text + "'";
  return in_flag_range(v, r) ? std::string() : expected_in(r) + ", got " + g_format(v);
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
  // The bound the value passed, not the type's whole range: no count flag takes negatives, and
  // "--nodes: expected ... [-2147483648, ..." suggested it did.
  if (!fits)
    return "expected a whole number " +
           std::string(is_unsigned ? "<= 18446744073709551615" : text[0] == '-' ? ">= -2147483648" : "<= 2147483647") +
           ", got '" + text + "'";
  return "";
}

}  // namespace

void check_float_flags(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() == 0 || opt->get_type_name().rfind("FLOAT", 0) != 0) continue;
    const FlagRange* r = flag_range(opt->get_name());
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
  const FlagRange* r = flag_range(flag);
  if (!in_flag_range(value, r)) throw ArgumentError((name.empty() ? flag : name) + ": " + expected_in(r) + ", got " + g_format(value));
}

}  // namespace zepp::cli
