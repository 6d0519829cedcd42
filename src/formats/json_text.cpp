#include "formats/json_text.hpp"

#include "core/utf8.hpp"

namespace zepp {

namespace {

nlohmann::json escaped(const nlohmann::json& v) {
  if (v.is_string()) return escape_invalid_utf8(v.get_ref<const std::string&>());
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : v) out.push_back(escaped(x));
    return out;
  }
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, x] : v.items()) out[escape_invalid_utf8(key)] = escaped(x);
    return out;
  }
  return v;
}

}  // namespace

std::string json_text(const nlohmann::json& doc, int indent) {
  try {
    return doc.dump(indent);
  } catch (const nlohmann::json::type_error& e) {
    if (e.id != 316) throw;  // 316: invalid UTF-8; anything else is a bug to report as it is
    return escaped(doc).dump(indent);
  }
}

}  // namespace zepp
