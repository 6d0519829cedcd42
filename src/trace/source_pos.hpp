// Where in a trace file something was read, for InputError messages ("FILE:LINE: ..." for
// line-based formats, "FILE: byte OFFSET: ..." for JSON documents). Cheap to copy; formatted
// only when an error is thrown.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace zepp::trace_detail {

struct SourcePos {
  const std::string* file = nullptr;
  int64_t line = -1;  // 1-based, or -1
  int64_t byte = -1;  // 0-based offset, or -1

  std::string str() const {
    if (line >= 0) return *file + ":" + std::to_string(line);
    if (byte >= 0) return *file + ": byte " + std::to_string(byte);
    return *file;
  }
};

[[noreturn]] inline void fail(const SourcePos& at, const std::string& what) {
  throw InputError(at.str() + ": " + what);
}

}  // namespace zepp::trace_detail
