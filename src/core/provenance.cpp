#include "core/provenance.hpp"

#include <algorithm>

#include "core/version.hpp"

namespace zepp {
namespace {

std::string g_command;
constexpr const char* kPrefix = "# made by zepp ";

std::string shell_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%") ==
                        std::string::npos)
    return w;
  std::string q = "'";
  for (char c : w) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

void set_command_line(int argc, const char* const* argv) {
  g_command = "zepp";
  for (int i = 1; i < argc; ++i) {  // appended piecewise: GCC 12 misfires -Wrestrict on " " + string&&
    g_command += ' ';
    g_command += shell_word(argv[i]);
  }
}

const std::string& command_line() { return g_command; }

std::string provenance_line() {
  std::string cmd = command_line();
  for (char& c : cmd)
    if (c == '\n' || c == '\r') c = ' ';  // one line, whatever the arguments hold
  return "# made by " + version_line() + " with: " + cmd + "\n";
}

std::optional<Provenance> take_provenance(std::string& text, bool blank_it) {
  size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  if (text.compare(start, std::char_traits<char>::length(kPrefix), kPrefix) != 0) return std::nullopt;
  const size_t end = std::min(text.find('\n', start), text.size());
  const std::string line = text.substr(start, end - start);
  Provenance p;
  const size_t v0 = std::char_traits<char>::length(kPrefix);
  const size_t c0 = line.find(" (commit ", v0);
  const size_t c1 = c0 == std::string::npos ? c0 : line.find(") with: ", c0);
  if (c1 == std::string::npos) return std::nullopt;
  p.version = line.substr(v0, c0 - v0);
  p.commit = line.substr(c0 + 9, c1 - c0 - 9);
  p.command = line.substr(c1 + 8);
  if (!p.command.empty() && p.command.back() == '\r') p.command.pop_back();
  if (blank_it)
    for (size_t i = start; i < end; ++i) text[i] = ' ';
  return p;
}

std::string describe(const std::optional<Provenance>& p) {
  if (!p) return "unknown commit (no provenance line: written before zepp recorded it)";
  return "commit " + p->commit + " (zepp " + p->version + ")";
}

}  // namespace zepp
