// Strict number parsing for trace fields: the whole field (after trimming ASCII spaces) must
// be the number, else InputError naming the position and the field.
#pragma once
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/excerpt.hpp"
#include "trace/source_pos.hpp"

namespace zepp::trace_detail {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Quotes a field for a message, cut (excerpt, core/excerpt.hpp) so a garbage line cannot flood it.
inline std::string shown(std::string_view s) {
  std::string out = "\"";  // appended piecewise: GCC 12's -Wrestrict misfires on "x" + string
  out.append(excerpt(s));
  out.append("\"");
  return out;
}

inline int64_t parse_int(std::string_view field, const SourcePos& at, const std::string& what) {
  std::string_view s = trim(field);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    fail(at, "expected " + what + " (an integer), got " + shown(field));
  return v;
}

inline double parse_double(std::string_view field, const SourcePos& at, const std::string& what) {
  std::string_view s = trim(field);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    fail(at, "expected " + what + " (a number), got " + shown(field));
  return v;
}

}  // namespace zepp::trace_detail
