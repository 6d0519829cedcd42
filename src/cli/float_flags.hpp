// The range of every floating-point flag of every subcommand, checked while the command line is
// parsed, before any work (issue 23): NaN, infinities, negative sizes and values whose products
// would overflow a time to inf or a rate to 0 exit with status 2 and
// "--FLAG: expected a number in [LO, HI] UNIT, got VALUE"; integer flags get a whole number of
// their type.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace zepp::cli {

// Attaches the range check to every option of `app` and its subcommands, at any depth, whose
// values are floating-point (CLI11 type FLOAT), by the flag's long name (src/core/flag_ranges.cpp
// lists them). A FLOAT option missing from that list still refuses NaN and infinities; the CLI
// test (tests/cli/float_flags_cli_test.cpp) walks every subcommand's --help and fails until it is
// listed with its range. Call after every subcommand is registered.
void check_float_flags(CLI::App& app);

// Attaches to every integer option of `app` and its subcommands (CLI11 type INT: an int; UINT:
// --seed's uint64_t) a check that the value is a whole decimal number of that type: "1e9" or "2.5"
// exit with status 2 and "--FLAG: expected a whole number, got 'VALUE'", "99999999999" with
// "--FLAG: expected a whole number <= 2147483647, got 'VALUE'" (what the type holds). Each flag's
// own range is checked after parsing, naming it (e.g. --swap-horizon in [1, 1000000]).
void check_integer_flags(CLI::App& app);

// For values that reach the program another way (zepp.simulate's keywords): throws ArgumentError
// "NAME: expected a number in [LO, HI] UNIT, got VALUE" unless `value` is in the range of `flag`
// (a flag of src/core/flag_ranges.cpp). NAME: `name`, or the flag itself when empty.
void require_flag_range(double value, const std::string& flag, const std::string& name = "");

}  // namespace zepp::cli
