// Helpers shared by the two JSON readers (simdjson On-Demand): byte offsets of values and
// integer parsing with the expected-what in the error.
#pragma once
#include <simdjson.h>

#include <string>

#include "trace/source_pos.hpp"
#include "trace/text_parse.hpp"

namespace zepp::trace_detail {

// The integer value `v`; anything else (a float, a string, 1e3, out of int64 range) is an
// InputError at `at` saying `what` was expected.
inline int64_t json_int(simdjson::ondemand::value v, const SourcePos& at, const std::string& what) {
  int64_t x = 0;
  if (v.get_int64().get(x) != simdjson::SUCCESS) fail(at, "expected " + what + " (an integer), got " + shown(trim(v.raw_json_token())));
  return x;
}

inline double json_number(simdjson::ondemand::value v, const SourcePos& at, const std::string& what) {
  double x = 0;
  if (v.get_double().get(x) != simdjson::SUCCESS) fail(at, "expected " + what + " (a number), got " + shown(trim(v.raw_json_token())));
  return x;
}

}  // namespace zepp::trace_detail
