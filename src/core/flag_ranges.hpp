// The range of every floating-point command-line flag, by the flag's long name (one meaning per
// name across subcommands). One table for every place a figure arrives: the flags while the
// command line is parsed (cli/float_flags.cpp), zepp.simulate's keywords, and the topology file
// fields that set the same figures (core/topology_file.cpp), so a value refused on the command
// line is refused in a file too.
#pragma once
#include <string>

namespace zepp {

struct FlagRange {
  double lo, hi;
  bool lo_open, hi_open;  // (lo, ...] or [..., hi)
  const char* unit;       // " us", " GB/s", ... as the flag takes the value; "" for a ratio
  double nonzero_lo = 0;  // > 0: a value other than lo (0) must be at least this
};

// The range of `flag` ("--nic-latency-us"), or nullptr for a flag the table does not list.
const FlagRange* flag_range(const std::string& flag);

// Whether `value` is finite and, when `range` is not null, inside it.
bool in_flag_range(double value, const FlagRange* range);

// "expected a number in [LO, HI] UNIT" (with %g numbers; "expected 0 or a number in [NONZERO_LO,
// HI] UNIT" with nonzero_lo), or "expected a finite number" for null.
std::string expected_in(const FlagRange* range);

// `x` as printf's %g writes it.
std::string g_format(double x);

}  // namespace zepp
