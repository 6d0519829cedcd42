#include "formats/file_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/input_bounds.hpp"
#include "core/output_file.hpp"

namespace zepp::formats_detail {

std::string read_text(const std::string& path) {
  check_file_size(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read failed (" + std::strerror(errno) + ")");
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  write_file_atomically(path, text, "output file");  // the rules of every output (core/output_file.hpp)
}

namespace {

// 1 + the newlines before byte `end` of `text`.
long line_at(const std::string& text, size_t end) {
  end = std::min(end, text.size());
  return 1 + long(std::count(text.begin(), text.begin() + long(end), '\n'));
}

// The line of the n-th (1-based) occurrence of "key" written as an object key (the quoted name
// followed by ':'), or 0 when a key written with escapes cannot be found as typed. nlohmann's
// parser callback reports keys in document order without positions, so counting occurrences
// finds the one the callback saw.
long key_line(const std::string& text, const std::string& key, int n) {
  const std::string quoted = "\"" + key + "\"";
  for (size_t at = text.find(quoted); at != std::string::npos; at = text.find(quoted, at + 1)) {
    size_t after = text.find_first_not_of(" \t\r\n", at + quoted.size());
    if (after == std::string::npos || text[after] != ':' || (at > 0 && text[at - 1] == '\\')) continue;
    if (--n == 0) return line_at(text, at);
  }
  return 0;
}

}  // namespace

nlohmann::json load_json(const std::string& path) {
  std::string text = read_text(path);
  // nlohmann stops at a NUL byte as at the end of input: what follows one was dropped silently.
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    throw InputError(path + ":" + std::to_string(line_at(text, nul)) + ": byte " + std::to_string(nul) +
                     ": expected JSON text, got a NUL byte (a binary or corrupted file)");
  check_nesting(text, path);  // nlohmann's DOM and the walks over it recurse once per level
  // JSON leaves duplicated keys to the reader; nlohmann keeps the last silently. Reject them:
  // one set of keys per open object, and every key's occurrence counted for its line.
  std::vector<std::vector<std::string>> open;
  std::map<std::string, int> seen;
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::object_start) open.emplace_back();
    else if (event == nlohmann::json::parse_event_t::object_end) open.pop_back();
    else if (event == nlohmann::json::parse_event_t::key) {
      const std::string key = parsed.get<std::string>();
      const int n = ++seen[key];
      auto& keys = open.back();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        const long line = key_line(text, key, n);
        throw InputError(path + (line ? ":" + std::to_string(line) : "") + ": expected each key once per object, got \"" +
                         key + "\" twice");
      }
      keys.push_back(key);
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports a byte offset; users look for a line.
    throw InputError(path + ":" + std::to_string(line_at(text, e.byte)) + ": expected valid JSON (" + e.what() + ")");
  } catch (const nlohmann::json::exception& e) {
    // A number out of range (1e999) is not a syntax error to nlohmann, but it is bad input.
    throw InputError(path + ": expected valid JSON with finite numbers (" + e.what() + ")");
  }
}

const nlohmann::json& member(const nlohmann::json& doc, const std::string& key, const std::string& path) {
  if (!doc.is_object()) throw InputError(path + ": expected a JSON object at top level, got " + doc.type_name());
  auto it = doc.find(key);
  if (it == doc.end()) throw InputError(path + ": expected a field \"" + key + "\"");
  return *it;
}

namespace {

// A JSON value for an error message, cut short so a misplaced object does not flood the terminal.
std::string brief(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

struct ArrayWalk {
  bool integers;
  const std::string& path;
  NumberArray out;

  void walk(const nlohmann::json& v, size_t depth, const std::string& name) {
    if (depth == out.shape.size()) {
      bool ok = integers ? v.is_number_integer() : v.is_number();
      if (!ok || (v.is_number_float() && !std::isfinite(v.get<double>())))
        throw InputError(path + ": " + name + ": expected " + (integers ? "an integer" : "a number") + ", got " +
                         brief(v));
      double x = v.get<double>();
      if (x < 0) throw InputError(path + ": " + name + ": expected a value >= 0, got " + brief(v));
      if (!integers && x > kMaxLoad)  // loads (weight, logical_count); ids are bounded by their readers
        throw InputError(path + ": " + name + ": expected a load in [0, 1e15], got " + brief(v));
      out.values.push_back(x);
      return;
    }
    if (!v.is_array() || v.size() != out.shape[depth])
      throw InputError(path + ": " + name + ": expected a list of " + std::to_string(out.shape[depth]) +
                       " entries like its first sibling, got " + (v.is_array() ? std::to_string(v.size()) + " entries" : brief(v)));
    for (size_t i = 0; i < v.size(); ++i) walk(v[i], depth + 1, name + "[" + std::to_string(i) + "]");
  }
};

}  // namespace

NumberArray number_array(const nlohmann::json& v, bool integers, const std::string& path, const std::string& field) {
  ArrayWalk w{integers, path, {}};
  // The first element at each depth fixes the shape; walk() then checks every sibling against it.
  for (const nlohmann::json* p = &v; p->is_array(); p = &(*p)[0]) {
    w.out.shape.push_back(p->size());
    if (p->empty()) break;
  }
  if (w.out.shape.empty()) throw InputError(path + ": " + field + ": expected a list, got " + brief(v));
  size_t values = 1;  // bounded before the walk copies them (the product cannot overflow past the cap)
  for (size_t n : w.out.shape)
    if ((values = n == 0 ? 0 : std::min(values * n, kMaxArrayValues + 1)) == 0) break;
  if (values > kMaxArrayValues)
    throw InputError(path + ": " + field + ": expected at most " + std::to_string(kMaxArrayValues) + " values, got more");
  w.walk(v, 0, field);
  return std::move(w.out);
}

}  // namespace zepp::formats_detail
