// What a message quotes of a value read from outside (a trace field, a topology file's value).
#pragma once
#include <string>
#include <string_view>

namespace zepp {

// The first 40 bytes of `text`, then "..." when cut, so that a file given in the wrong place (a
// trace as --topology, whose whole text reads as one YAML scalar) cannot flood the message.
inline std::string excerpt(std::string_view text) {
  std::string out(text.substr(0, 40));
  if (text.size() > 40) out += "...";
  return out;
}

}  // namespace zepp
