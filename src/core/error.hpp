// Errors Zepp reports to users. Both kinds end the `zepp` program with exit status 2.
#pragma once
#include <stdexcept>
#include <string>

namespace zepp {

// Bad outside data (a trace, a load file, a plan file). The message names the file and the
// line or byte offset, and says what was expected: "FILE:LINE: expected ..., got ...".
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A public entry point called with arguments that cannot work together (a node count that
// does not divide, a negative slack, a preset whose expert count disagrees with the trace).
// The message names the argument.
struct ArgumentError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws ArgumentError("<name>: <what>") unless `ok`.
inline void require(bool ok, const std::string& name, const std::string& what) {
  if (!ok) throw ArgumentError(name + ": " + what);
}

}  // namespace zepp
