#include "formats/results_csv.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/input_bounds.hpp"
#include "core/output_file.hpp"
#include "trace/csv_rows.hpp"

namespace zepp::experiments {
namespace {

constexpr const char* kColumns[] = {"experiment", "workload", "model", "trace", "synthetic", "layer",
                                    "topology", "nodes", "gpus", "size_mb", "tokens_per_gpu", "strategy",
                                    "latency_us", "speedup_vs_a2av", "inter_node_bytes", "nvlink_bytes",
                                    "max_nic_bytes", "imbalance", "comm_hidden_fraction", "max_compute_us",
                                    "routing_wall_us", "metadata_us", "planning_us", "planning"};
constexpr size_t kNumColumns = sizeof(kColumns) / sizeof(kColumns[0]);
// Files written before the planning columns (issue 20) end at routing_wall_us; they are read
// with planning "free", which is what they measured.
constexpr size_t kBeforePlanning = 21;

double number(const std::string& file, int64_t line, const std::string& column, const std::string& s) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno != 0 || !std::isfinite(v))
    throw InputError(file + ":" + std::to_string(line) + ": expected a number in column " + column + ", got '" + s + "'");
  return v;
}

}  // namespace

std::string csv_header() {
  std::string h;
  for (size_t i = 0; i < kNumColumns; ++i) {  // appended piecewise: GCC 12 misfires -Wrestrict on "x" + string&&
    if (i) h += ',';
    h += kColumns[i];
  }
  return h + "\n";
}

std::string csv_line(const ResultRow& r) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.experiment),
                     csv_field(r.workload), csv_field(r.model), csv_field(r.trace), r.synthetic ? 1 : 0, r.layer,
                     csv_field(r.topology), r.nodes, r.gpus, r.size_mb, r.tokens_per_gpu, csv_field(r.strategy), r.latency_us, r.speedup_vs_a2av, r.inter_node_bytes, r.nvlink_bytes, r.max_nic_bytes,
                     r.imbalance, r.comm_hidden_fraction, r.max_compute_us, r.routing_wall_us, r.metadata_us,
                     r.planning_us, csv_field(r.planning));
}

std::string config_key(const std::string& workload, const std::string& topology, int nodes, double size_mb) {
  return fmt::format("{}/{}/{}/{}", workload, topology, nodes, size_mb);
}

std::string config_key(const ResultRow& r) { return config_key(r.workload, r.topology, r.nodes, r.size_mb); }

std::vector<ResultRow> read_results(const std::string& path, std::optional<Provenance>* made_by) {
  check_file_size(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  check_line_length(text, path);
  const auto prov = take_provenance(text);
  if (made_by) *made_by = prov;
  std::vector<ResultRow> rows;
  std::map<std::string, int64_t> first_line;  // experiment/configuration/strategy -> its row's line
  // A configuration runs each strategy once: a second row of it (an edit, two files joined) was
  // reported as whichever the reader met first or last.
  auto keep = [&](ResultRow&& r) {
    const auto [at, fresh] = first_line.emplace(r.experiment + "/" + config_key(r) + "/" + r.strategy, r.line);
    if (!fresh)
      throw InputError(fmt::format("{}:{}: a second row of {} configuration {} strategy {} (the first is line {}): a "
                                   "sweep writes each (configuration, strategy) once; delete one of them",
                                   path, r.line, r.experiment, config_key(r), r.strategy, at->second));
    rows.push_back(std::move(r));
  };
  bool header = true;
  size_t columns = kNumColumns;  // kBeforePlanning for files written before issue 20's columns
  trace_detail::for_each_csv_row(path, text, [&](int64_t line, std::span<const std::string> f) {
    if (header) {
      std::string got, before;
      for (size_t i = 0; i < f.size(); ++i) got += (i ? "," : "") + f[i];
      for (size_t i = 0; i < kBeforePlanning; ++i) before += (i ? "," : "") + std::string(kColumns[i]);
      if (got == before) columns = kBeforePlanning;
      else if (got + "\n" != csv_header())
        throw InputError(path + ":" + std::to_string(line) + ": expected the header " + csv_header().substr(0, csv_header().size() - 1) +
                         ", got " + got);
      header = false;
      return;
    }
    if (f.size() != columns)
      throw InputError(path + ":" + std::to_string(line) + ": expected " + std::to_string(columns) + " fields, got " +
                       std::to_string(f.size()) + " (an interrupted write? delete this line and rerun with --resume)");
    auto num = [&](size_t i) { return number(path, line, kColumns[i], f[i]); };
    // What was measured is never negative, and a latency or speedup of 0 divides to inf.
    auto at_least = [&](size_t i, bool positive) {
      const double v = num(i);
      if (v < 0 || (positive && v == 0))
        throw InputError(path + ":" + std::to_string(line) + ": expected a " + (positive ? "positive" : "non-negative") +
                         " number in column " + kColumns[i] + ", got '" + f[i] + "'");
      return v;
    };
    ResultRow r;
    r.line = line;
    r.experiment = f[0];
    r.workload = f[1];
    r.model = f[2];
    r.trace = f[3];
    r.synthetic = num(4) != 0;
    r.layer = int(num(5));
    r.topology = f[6];
    r.nodes = int(num(7));
    r.gpus = int(num(8));
    r.size_mb = num(9);
    r.tokens_per_gpu = int64_t(num(10));
    r.strategy = f[11];
    r.latency_us = at_least(12, true);
    r.speedup_vs_a2av = at_least(13, true);
    r.inter_node_bytes = at_least(14, false);
    r.nvlink_bytes = at_least(15, false);
    r.max_nic_bytes = at_least(16, false);
    r.imbalance = at_least(17, false);
    r.comm_hidden_fraction = at_least(18, false);
    r.max_compute_us = at_least(19, false);
    r.routing_wall_us = at_least(20, false);
    if (columns == kBeforePlanning) {  // nothing was charged then
      r.planning = "free";
      keep(std::move(r));
      return;
    }
    r.metadata_us = at_least(21, false);
    r.planning_us = at_least(22, false);
    r.planning = f[23];
    if (r.planning != "model" && r.planning != "free")
      throw InputError(path + ":" + std::to_string(line) + ": expected model or free in column planning, got '" +
                       r.planning + "'");
    keep(std::move(r));
  });
  if (header) throw InputError(path + ":1: expected the header " + csv_header().substr(0, csv_header().size() - 1) + ", got an empty file");
  return rows;
}

void write_results_atomically(const std::string& path, const std::string& text) {
  static int calls = 0;
  const char* fault = std::getenv("ZEPP_FAULT_KILL_IN_WRITE");
  const bool kill_midway = fault && std::atoi(fault) == ++calls;
  const std::string tmp = path + ".tmp";
  check_output_file(path, "--csv");  // a device or folder is refused, never renamed over
  check_output_file(tmp, "--csv");
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw ArgumentError("--csv: cannot write " + tmp + ": " + std::strerror(errno));
  const size_t size = kill_midway ? text.size() / 2 : text.size();
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, text.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw ArgumentError("--csv: cannot write " + tmp + ": " + why);
    }
    done += size_t(n);
  }
  if (kill_midway) ::raise(SIGKILL);
  const bool synced = ::fsync(fd) == 0;
  const std::string why = std::strerror(errno);
  if (::close(fd) != 0 || !synced) {
    ::unlink(tmp.c_str());
    throw ArgumentError("--csv: cannot write " + tmp + ": " + why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why_rename = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw ArgumentError("--csv: cannot replace " + path + ": " + why_rename);
  }
}

}  // namespace zepp::experiments
