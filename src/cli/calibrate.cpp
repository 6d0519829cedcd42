// `zepp calibrate` (issue 16): under mpirun, measures this machine as `zepp run` uses it
// (mpi/calibrate.hpp) and writes a topology file with the measured compute model, which
// `zepp simulate --topology FILE` and `zepp run --predict FILE` use instead of a GPU preset.
#include <mpi.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/mpi_command.hpp"
#include "cli/options.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "core/presets.hpp"
#include "formats/json_text.hpp"
#include "mpi/calibrate.hpp"

namespace zepp::cli {
namespace {

struct CalibrateFlags {
  mpi::CalibrateOptions opt;
  std::string model, output, format = "table", name;
  std::optional<int> hidden, ffn;
  std::optional<double> nic_gbps;
  std::string tokens = "1,4,16,64,256,1024", message_bytes = "64,16384,262144,1048576";
};

// A comma-separated list of at least two whole numbers in [1, hi], ascending: mpi::calibrate()'s
// bounds (mpi/calibrate.hpp), checked here before MPI starts. Left to calibrate(), `--tokens 1`
// failed on every rank, each printing the error, then MPI_Abort's banner.
template <class T>
std::vector<T> parse_list(const std::string& text, const char* flag, double hi, const char* what) {
  std::vector<T> out;
  std::stringstream ss(text);
  const std::string expected = "expected a comma-separated ascending list of at least " + std::to_string(mpi::kMinCalibratePoints) +
                               " whole numbers in [1, " + fmt::format("{:.0f}", hi) + "]";
  for (std::string item; std::getline(ss, item, ',');) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    require(used > 0 && used == item.size() && v >= 1 && v <= hi && v == std::floor(v), flag, expected + ", got '" + item + "'");
    require(out.empty() || T(v) > out.back(), flag, expected + ", got " + text);
    out.push_back(T(v));
  }
  require(text.empty() || text.back() != ',', flag, expected + ", got '" + text + "' (its last entry is empty)");
  require(out.size() >= mpi::kMinCalibratePoints, flag,
          expected + " (a line is fitted through the " + what + " timed), got '" + text + "'");
  return out;
}

std::string table(const mpi::Calibration& c) {
  std::string out;
  char line[256];
  auto load = [](const std::vector<double>& l) { return l.empty() ? std::string("n/a") : std::to_string(l[0]).substr(0, 5); };
  std::snprintf(line, sizeof line, "calibrated %d ranks (%d nodes x %d) in %.1f s; load average (1 min) %s before, %s after\n",
                c.ranks, c.ranks / c.gpus_per_node, c.gpus_per_node, c.wall_s, load(c.load_before).c_str(),
                load(c.load_after).c_str());
  out += line;
  std::snprintf(line, sizeof line, "expert FFN, hidden %d, ffn %d (all ranks at once; median over ranks):\n", c.gemm.hidden, c.gemm.ffn);
  out += line;
  out += "    tokens     time_us    us/token    GFLOP/s\n";
  for (size_t i = 0; i < c.gemm.tokens.size(); ++i) {
    const double s = c.gemm.seconds[i], t = double(c.gemm.tokens[i]);
    std::snprintf(line, sizeof line, "  %8lld %11.1f %11.2f %10.2f\n", static_cast<long long>(c.gemm.tokens[i]), s * 1e6,
                  s * 1e6 / t, 6.0 * t * c.gemm.hidden * c.gemm.ffn / s / 1e9);
    out += line;
  }
  std::snprintf(line, sizeof line, "reductions: %.3f GB/s of partial rows read\n", c.reduce_bytes_per_s / 1e9);
  out += line;
  out += "links (one-way time = latency + bytes / bandwidth):\n";
  out += "  kind                        pairs  latency_us       GB/s  note\n";
  auto link = [&](const char* kind, const mpi::LinkFit& f) {
    std::snprintf(line, sizeof line, "  %-27s %5d %11.2f %10.4f  %s\n", kind, f.pairs, f.latency_s * 1e6, f.bytes_per_s / 1e9,
                  f.note.c_str());
    out += line;
  };
  link("same node (NVLink)", c.nvlink);
  link("other node (NIC), unpaced", c.nic);
  if (c.nic_pacing_bytes_per_s > 0) {
    char kind[64];
    std::snprintf(kind, sizeof kind, "other node, paced %g GB/s", c.nic_pacing_bytes_per_s / 1e9);
    link(kind, c.nic_paced);
  }
  return out;
}

// The checks that need no rank: run before MPI starts, so that a bad flag is reported once and
// at once. Resolves --model / --hidden / --ffn / --nic-gbps into f.opt.
void check_flags(CalibrateFlags& f) {
  require(f.format == "table" || f.format == "json", "--format", "expected table or json");
  if (!f.model.empty()) {
    const ModelShape m = model_preset(f.model, "--model");
    f.opt.hidden = m.hidden, f.opt.ffn = m.ffn;
  }
  if (f.hidden) f.opt.hidden = *f.hidden;
  if (f.ffn) f.opt.ffn = *f.ffn;
  require(f.opt.hidden > 0 && f.opt.ffn > 0, "--hidden/--ffn", "give the expert shape to time (--model or --hidden and --ffn, positive)");
  f.opt.tokens = parse_list<int64_t>(f.tokens, "--tokens", double(mpi::kMaxCalibrateTokens), "token counts");
  f.opt.message_bytes = parse_list<double>(f.message_bytes, "--message-bytes", mpi::kMaxCalibrateMessageBytes, "message sizes");
  if (f.nic_gbps) f.opt.nic_bytes_per_s = *f.nic_gbps * 1e9;  // range: src/core/flag_ranges.cpp
  // Before MPI starts: main prints the error once (rank 0), where each rank printed it.
  require(f.opt.repeat >= 1 && f.opt.repeat <= 1000, "--repeat", "must be in [1, 1000]");
  if (!f.output.empty()) check_output_file(f.output, "--output");  // before measuring
}

// The checks that need the rank count: the same on every rank, so run_under_mpi prints them once.
void check_ranks(CalibrateFlags& f) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // One rank has no link to time: the file would carry a 0 GB/s NVLink that simulate refuses.
  require(size >= 2, "mpirun -np", "expected at least 2 MPI ranks (one pair to time a link), got " + std::to_string(size) +
                                        " (mpirun -np 2 zepp calibrate ...)");
  require(f.opt.gpus_per_node >= 1 && size % f.opt.gpus_per_node == 0, "--gpus-per-node",
          std::to_string(f.opt.gpus_per_node) + " does not divide the " + std::to_string(size) + " MPI ranks");
  if (f.name.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    f.name = std::string("calibrated-") + host;
  }
}

int calibrate_ranks(const CalibrateFlags& f) {
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const mpi::Calibration c = mpi::calibrate(f.opt, MPI_COMM_WORLD);
  if (me != 0) return 0;
  const nlohmann::json doc = mpi::calibrated_topology(c, f.name);
  if (!f.output.empty()) {
    write_file_atomically(f.output, json_text(doc, 2) + "\n", "--output");
  }
  std::string text = f.format == "json" ? json_text(doc, 2) + "\n" : table(c);
  if (!f.output.empty() && f.format == "table") text += "wrote " + f.output + " (zepp simulate --topology " + f.output + ")\n";
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

void add_calibrate(CLI::App& app) {
  auto f = std::make_shared<CalibrateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure this machine as `zepp run` uses it (mpirun -np <GPUs> zepp calibrate ...): expert FFN time vs "
                   "tokens, reduction bandwidth, point-to-point bandwidth and latency; write a topology file");
  cmd->add_option("--gpus-per-node", f->opt.gpus_per_node, "Consecutive ranks per node, as for zepp run")->capture_default_str();
  cmd->add_option("--model", f->model, "Model preset whose expert shape (hidden, ffn) is timed");
  cmd->add_option("--hidden", f->hidden, "Expert hidden (token) dimension to time (overrides --model)");
  cmd->add_option("--ffn", f->ffn, "Expert FFN dimension to time (overrides --model)");
  cmd->add_option("--nic-gbps", f->nic_gbps, "Also measure inter-node sends paced to this rate (as zepp run --nic-gbps); "
                                             "the file's NIC is then the paced one");
  cmd->add_option("--tokens", f->tokens, "Rows per expert GEMM to time, comma-separated ascending, at least two, in [1, 65536]")
      ->capture_default_str();
  cmd->add_option("--message-bytes", f->message_bytes,
                  "Ping-pong message sizes in bytes, comma-separated ascending, at least two, in [1, 268435456]")
      ->capture_default_str();
  cmd->add_option("--repeat", f->opt.repeat, "Timed repetitions per point (the median is kept)")->capture_default_str();
  cmd->add_option("--data-seed", f->opt.data_seed, "Seed of the timed activations and weights")->capture_default_str()->check(non_negative);
  cmd->add_option("--output,-o", f->output, "Write the topology file (JSON, docs/topology.md) here");
  cmd->add_option("--name", f->name, "Cluster name in the file (default calibrated-<host>)");
  cmd->add_option("--format", f->format, "Output: table or json (the file's content)")->capture_default_str();
  cmd->callback([f] {
    check_flags(*f);
    run_under_mpi("calibrate", [f] { check_ranks(*f); }, [f] { return calibrate_ranks(*f); });
  });
}

}  // namespace zepp::cli
