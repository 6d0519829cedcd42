// RFC 4180 CSV records through libcsv (strict mode: a stray quote or an unterminated quoted
// field is an error), with the line number where each record starts.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace zepp::trace_detail {

// Calls on_row(line, fields) for every record of `text` (a UTF-8 BOM and blank lines are
// skipped). Throws InputError "FILE:LINE: expected well-formed CSV ..." on malformed quoting.
void for_each_csv_row(const std::string& file, std::string_view text,
                      const std::function<void(int64_t line, std::span<const std::string> fields)>& on_row);

}  // namespace zepp::trace_detail

namespace zepp {

// `text` as one field of a CSV record the program writes: as it is, or, when it holds a comma, a
// quote or a line break (a topology name, a trace folder, a dataset named by a file), quoted by
// libcsv's csv_write with inner quotes doubled (RFC 4180), so that for_each_csv_row reads it back
// as one field.
std::string csv_field(std::string_view text);

}  // namespace zepp
