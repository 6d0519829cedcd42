// The message of the zepp::ArgumentError a call throws, for tests that assert on it.
#pragma once
#include <string>

#include "core/error.hpp"

namespace zepp::testing {

// what() of the ArgumentError `call()` throws; "no error" when it returns.
inline std::string argument_error(auto call) {
  try {
    call();
  } catch (const zepp::ArgumentError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace zepp::testing
