#include "trace/json_scan.hpp"

namespace zepp::trace_detail {
namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// at most U+10FFFF), or 0.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? uint8_t(s[i + k]) : uint8_t(0); };
  const auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const uint8_t lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const uint8_t lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return b(1) >= lo && b(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

int64_t locate_index_error(std::string_view text, simdjson::error_code error) {
  if (error == simdjson::UTF8_ERROR) {
    for (size_t i = 0; i < text.size();) {
      const size_t n = utf8_length(text, i);
      if (n == 0) return int64_t(i);
      i += n;
    }
    return -1;
  }
  // Walk strings: an unclosed one is reported at its opening quote, a raw control character
  // inside one at the character.
  int64_t open = -1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (open < 0) {
      if (c == '"') open = int64_t(i);
    } else if (c == '\\') {
      ++i;
    } else if (c == '"') {
      open = -1;
    } else if (uint8_t(c) < 0x20 && error == simdjson::UNESCAPED_CHARS) {
      return int64_t(i);
    }
  }
  return error == simdjson::UNCLOSED_STRING ? open : -1;
}

}  // namespace zepp::trace_detail
