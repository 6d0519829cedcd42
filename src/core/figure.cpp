#include "core/figure.hpp"

#include <cstdio>
#include <stdexcept>

#include "core/error.hpp"
#include "core/output_file.hpp"

namespace zepp {

void check_figure_files(const std::string& base, const std::vector<std::string>& data_suffixes, const std::string& flag) {
  require(base.find('\'') == std::string::npos, flag, base + " must not contain a single quote (gnuplot reads it quoted)");
  for (const auto& suffix : data_suffixes) check_output_file(base + suffix, flag);
  check_output_file(base + ".gp", flag);
  check_output_file(base + ".svg", flag);
}

void write_figure(const std::string& base, const std::vector<std::pair<std::string, std::string>>& data,
                  const std::string& script, const std::string& flag) {
  std::vector<std::string> suffixes;
  for (const auto& d : data) suffixes.push_back(d.first);
  check_figure_files(base, suffixes, flag);
  for (const auto& [suffix, text] : data) write_file_atomically(base + suffix, text, flag);
  write_file_atomically(base + ".gp", script, flag);
  FILE* p = ::popen(("gnuplot '" + base + ".gp' 2>&1").c_str(), "r");
  if (!p) throw std::runtime_error("cannot start gnuplot");
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  if (::pclose(p) != 0) throw std::runtime_error("gnuplot failed on " + base + ".gp: " + out);
}

}  // namespace zepp
