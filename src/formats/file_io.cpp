#include "formats/file_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace zepp::formats_detail {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": read failed (" + std::strerror(errno) + ")");
  return text.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path + ": cannot open for writing (" + std::strerror(errno) + ")");
  out << text;
  out.close();
  if (!out) throw InputError(path + ": write failed (" + std::strerror(errno) + ")");
}

nlohmann::json load_json(const std::string& path) {
  std::string text = read_text(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann reports a byte offset; users look for a line.
    size_t end = std::min(e.byte, text.size());
    long line = 1 + std::count(text.begin(), text.begin() + long(end), '\n');
    throw InputError(path + ":" + std::to_string(line) + ": expected valid JSON (" + e.what() + ")");
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
  w.walk(v, 0, field);
  return std::move(w.out);
}

}  // namespace zepp::formats_detail
