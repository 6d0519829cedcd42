#include "core/input_bounds.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/output_file.hpp"

namespace zepp {

double memory_budget_bytes() {
  const double page = double(sysconf(_SC_PAGESIZE));
  double budget = double(sysconf(_SC_PHYS_PAGES)) * page;
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    double used = 0;  // current address space: the first field of /proc/self/statm, in pages
    std::ifstream("/proc/self/statm") >> used;
    budget = std::min(budget, std::max(0.0, double(as.rlim_cur) - used * page));
  }
  return budget;
}

uint64_t check_file_size(const std::string& path) {
  // A FIFO would block the open until some writer came; a directory or device is no file of data.
  if (const std::string kind = not_regular_kind(path); !kind.empty())
    throw InputError(path + ": expected a regular file to read, got " + kind +
                     (kind == "a FIFO" ? " (a pipe, whose open waits for a writer: save its contents to a file)" : ""));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return 0;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return 0;
  if (size > kMaxFileBytes)
    throw InputError(path + ": expected a file of at most " + std::to_string(kMaxFileBytes >> 30) + " GiB (it is read whole), got " +
                     std::to_string(size) + " bytes");
  return size;
}

void check_nesting(std::string_view text, const std::string& path, bool yaml) {
  int depth = 0;
  char quote = 0;  // the quote character of the string being skipped, or 0
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == '\\' && quote == '"') ++i;  // an escaped character (YAML single quotes escape by doubling)
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || (yaml && c == '\'')) {
      quote = c;
    } else if (yaml && c == '#') {
      const size_t nl = text.find('\n', i);
      if (nl == std::string_view::npos) break;
      i = nl;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        throw InputError(path + ": byte " + std::to_string(i) + ": expected lists or objects nested at most " +
                         std::to_string(kMaxNesting) + " deep, got deeper");
    } else if (c == ']' || c == '}') {
      depth = depth > 0 ? depth - 1 : 0;  // unbalanced closers are the parser's to report
    }
  }
}

void check_line_length(std::string_view text, const std::string& path) {
  size_t start = 0;
  for (int64_t line = 1; start <= text.size(); ++line) {
    size_t nl = text.find('\n', start);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    if (end - start > kMaxLineBytes)
      throw InputError(path + ":" + std::to_string(line) + ": expected lines of at most " +
                       std::to_string(kMaxLineBytes >> 20) + " MiB, got one of " + std::to_string(end - start) + " bytes");
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

void check_unique_keys(const YAML::Node& node, const std::string& path) {
  if (node.IsSequence()) {
    for (const auto& item : node) check_unique_keys(item, path);
  } else if (node.IsMap()) {
    std::set<std::string> keys;
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : YAML::Dump(kv.first);
      if (!keys.insert(key).second)
        throw InputError(path + ":" + std::to_string(kv.first.Mark().line + 1) + ": expected each key once per mapping, got '" +
                         key + "' twice");
      check_unique_keys(kv.second, path);
    }
  }
}

YAML::Node load_one_yaml_document(const std::string& text, const std::string& path, const std::string& what) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ": expected " + what + " (" + e.msg + ")");
  }
  if (docs.size() > 1)
    throw InputError(path + ":" + std::to_string(docs[1].Mark().line + 1) + ": expected one YAML document, got " +
                     std::to_string(docs.size()) + " (the second starts here)");
  return docs.empty() ? YAML::Node() : docs.front();
}

}  // namespace zepp
