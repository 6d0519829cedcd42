// JSON documents the program prints or writes (`--format json`, result files), whatever bytes
// their strings hold.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace zepp {

// doc.dump(indent), except that strings and keys holding bytes that are not UTF-8 (a trace or
// output path whose name is not, as Linux allows) get those bytes as \xNN escapes
// (core/utf8.hpp) instead of making nlohmann's dump throw (type_error 316).
std::string json_text(const nlohmann::json& doc, int indent = -1);

}  // namespace zepp
