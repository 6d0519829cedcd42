#include "core/provenance.hpp"

#include <algorithm>

#include "core/version.hpp"

namespace zepp {
namespace {

std::string g_command;
constexpr const char* kPrefix = "# made by zepp ";
constexpr const char* kSettings = "# settings:";

// The settings of a settings line's text after kSettings (" --a=1 --b=x"), nullopt when malformed.
std::optional<Settings> parse_settings(const std::string& text) {
  Settings out;
  size_t at = 0;
  while (at < text.size()) {
    if (text[at] != ' ') return std::nullopt;
    const size_t end = std::min(text.find(' ', at + 1), text.size());
    const std::string word = text.substr(at + 1, end - at - 1);
    const size_t eq = word.find('=');
    if (!word.starts_with("--") || eq == std::string::npos || eq == 2) return std::nullopt;
    out.emplace_back(word.substr(0, eq), word.substr(eq + 1));
    at = end;
  }
  return out;
}

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

std::string provenance_line(const Settings& settings) {
  std::string cmd = command_line();
  for (char& c : cmd)
    if (c == '\n' || c == '\r') c = ' ';  // one line, whatever the arguments hold
  std::string out = "# made by " + version_line() + " with: " + cmd + "\n";
  if (settings.empty()) return out;
  out += kSettings;
  for (const auto& [flag, value] : settings) {
    std::string v = value;
    for (char& c : v)
      if (c == ' ' || c == '\n' || c == '\r') c = '_';  // one word each, on one line
    out += ' ';
    out += flag;
    out += '=';
    out += v;
  }
  return out + "\n";
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
  size_t blank_end = end;
  if (end < text.size() && text.compare(end + 1, std::char_traits<char>::length(kSettings), kSettings) == 0) {
    const size_t s0 = end + 1 + std::char_traits<char>::length(kSettings);
    const size_t s1 = std::min(text.find('\n', s0), text.size());
    std::string line = text.substr(s0, s1 - s0);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A malformed settings line stays: the reader then names it as what its header should be.
    if ((p.settings = parse_settings(line))) blank_end = s1;
  }
  if (blank_it)
    for (size_t i = start; i < blank_end; ++i)
      if (text[i] != '\n') text[i] = ' ';
  return p;
}

std::vector<std::string> command_words(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else if (c == '\'') {  // 'text', where shell_word wrote ' as '\''
      in_word = true;
      const size_t close = command.find('\'', i + 1);
      word += command.substr(i + 1, (close == std::string::npos ? command.size() : close) - i - 1);
      i = close == std::string::npos ? command.size() : close;
    } else if (c == '\\' && i + 1 < command.size()) {
      in_word = true;
      word += command[++i];
    } else {
      in_word = true;
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::string describe(const std::optional<Provenance>& p) {
  if (!p) return "unknown commit (no provenance line: written before zepp recorded it)";
  return "commit " + p->commit + " (zepp " + p->version + ")";
}

}  // namespace zepp
