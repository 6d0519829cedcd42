// File access shared by the format readers and writers: every read failure is an InputError
// naming the file (and, for JSON syntax errors, the line); writes follow core/output_file.hpp
// (ArgumentError "output file: ...": a folder, a device or a name ending in '/' refused, a missing
// folder created, the file replaced atomically).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zepp::formats_detail {

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
nlohmann::json load_json(const std::string& path);

// The member `key` of the JSON object `doc`; InputError "FILE: expected ..." when `doc` is not an
// object or lacks it.
const nlohmann::json& member(const nlohmann::json& doc, const std::string& key, const std::string& path);

// A rectangular JSON array of numbers (a nested list such as [[1, 2], [3, 4]]), flattened in
// row-major order. `field` names it in errors ("FILE: field[2][5]: expected ...").
struct NumberArray {
  std::vector<size_t> shape;
  std::vector<double> values;
};
// integers: every number must be integral (a JSON integer); otherwise the numbers are loads, at
// most kMaxLoad (core/input_bounds.hpp). InputError on a ragged array, a non-number, a negative
// value, a non-finite one, or a load above the bound.
NumberArray number_array(const nlohmann::json& v, bool integers, const std::string& path, const std::string& field);

}  // namespace zepp::formats_detail
