// simdjson's first pass rejects a whole document (bad UTF-8, an unclosed string, a raw control
// character inside a string) without saying where; this finds the byte offset itself.
#pragma once
#include <simdjson.h>

#include <cstdint>
#include <string_view>

namespace zepp::trace_detail {

// Offset of the problem simdjson reported as `error` for `text`, or -1 when not found.
int64_t locate_index_error(std::string_view text, simdjson::error_code error);

}  // namespace zepp::trace_detail
