// `zepp experiment validate` (issue 16): does the simulator predict real runs? Calibrates this
// machine under mpirun (`zepp calibrate`), runs a2av, eplb and zepp for real on the real traces
// (`zepp run --predict`), each executed plan also simulated on the calibrated cluster, and writes
// docs/validation.md: measured against predicted wall time, phases and the a2av/zepp ratio,
// with the machine's load as measured.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "core/provenance.hpp"
#include "core/version.hpp"
#include "formats/json_text.hpp"

namespace zepp::cli {
namespace {

namespace fs = std::filesystem;

struct ValidateFlags {
  std::string traces = "../shared/data/traces";
  std::string out = "docs/validation.md";
  std::string results = "docs/results/validation";  // folder: calibration files and runs.json
  std::vector<std::string> workloads = {"deepseek", "llama4", "mixtral"};
  std::vector<int> ranks = {4, 8};
  double nic_gbps = 0.02;
  int hidden = 512, ffn = 352, repeat = 3;
  double size_mb = 0.25;
  std::string mpirun = "mpirun --allow-run-as-root --oversubscribe";
  bool from_results = false;
};

struct WorkloadSpec {
  const char* key;
  const char* folder;
  const char* model;
  const char* label;  // the report's Setup
};
// The three traces with MPI-run tests (tests/mpi/run_test.cpp), by short name.
constexpr WorkloadSpec kWorkloads[] = {{"deepseek", "deepseek-v2-lite-puffin", "deepseek-v2-lite", "DeepSeek-V2-Lite (puffin)"},
                                       {"llama4", "llama4-maverick-mmlu", "llama4-maverick", "Llama-4 Maverick (MMLU)"},
                                       {"mixtral", "mixtral-8x7b-gsm8k", "mixtral-8x7b", "Mixtral-8x7B (GSM8K)"}};

const WorkloadSpec* workload_spec(const std::string& key) {
  for (const auto& s : kWorkloads)
    if (key == s.key) return &s;
  return nullptr;
}
// The acceptance case of issue 16: the paced 8-rank DeepSeek run, a2av/zepp within 15%.
constexpr double kGoal = 0.15;

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  require(!ec, "zepp", "cannot find its own program (/proc/self/exe)");
  return p.string();
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<double> load_average() {
  std::ifstream in("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(in >> a >> b >> c)) return {};
  return {a, b, c};
}

// Runs `cmd` with a shell, stdout captured; throws std::runtime_error with stderr's file on failure.
std::string run_command(const std::string& cmd, const std::string& err_file) {
  FILE* p = popen((cmd + " 2>" + shell_quoted(err_file)).c_str(), "r");
  if (!p) throw std::runtime_error("cannot start: " + cmd);
  std::string out;
  std::array<char, 4096> buf;
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int st = pclose(p);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::ifstream e(err_file);
    std::string err((std::istreambuf_iterator<char>(e)), {});
    throw std::runtime_error("failed (status " + std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + "): " + cmd + "\n" + err);
  }
  return out;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string machine_line() {
  std::ifstream cpu("/proc/cpuinfo");
  std::string model;
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return std::to_string(std::thread::hardware_concurrency()) + " CPU cores" + (model.empty() ? "" : " (" + model + ")");
}

// FLAGS.results/runs.json, stamped with the time of writing.
void save(nlohmann::json& doc, const ValidateFlags& f) {
  doc["finished"] = std::time(nullptr);
  doc["made_by"] = {{"version", version()}, {"commit", git_commit()}, {"command", command_line()}};  // core/provenance.hpp
  write_file_atomically((fs::path(f.results) / "runs.json").string(), json_text(doc, 1) + "\n", "--results");
}

// Measures everything; returns the results document (also written to FLAGS.results/runs.json).
nlohmann::json measure(const ValidateFlags& f) {
  const std::string zepp = self_exe();
  fs::create_directories(f.results);
  const std::string err_file = (fs::temp_directory_path() / ("zepp-validate-stderr-" + std::to_string(getpid()) + ".txt")).string();
  const std::string env = "OPENBLAS_NUM_THREADS=1 ";
  // The sweep asked for (workloads, ranks) beside the runs done: --from-results lists what was not measured.
  nlohmann::json doc = {{"machine", machine_line()}, {"started", std::time(nullptr)}, {"nic_gbps", f.nic_gbps},
                        {"hidden", f.hidden}, {"ffn", f.ffn}, {"size_mb", f.size_mb}, {"repeat", f.repeat},
                        {"workloads", f.workloads}, {"ranks", f.ranks},
                        {"calibrations", nlohmann::json::object()}, {"runs", nlohmann::json::array()}};
  const std::string shape = " --hidden " + std::to_string(f.hidden) + " --ffn " + std::to_string(f.ffn);
  const std::string pace = " --nic-gbps " + fmt("%g", f.nic_gbps);
  for (int r : f.ranks) {
    const std::string calib = (fs::path(f.results) / ("calibration-" + std::to_string(r) + "-ranks.json")).string();
    std::fprintf(stderr, "[validate] calibrating %d ranks -> %s\n", r, calib.c_str());
    const std::vector<double> before = load_average();
    run_command(env + f.mpirun + " -np " + std::to_string(r) + " " + shell_quoted(zepp) + " calibrate --gpus-per-node " +
                    std::to_string(r / 2) + shape + pace + " --output " + shell_quoted(calib) + " --format json",
                err_file);
    std::ifstream in(calib);
    doc["calibrations"][std::to_string(r)] = {{"file", calib}, {"load_before", before}, {"load_after", load_average()},
                                              {"topology", nlohmann::json::parse(in)}};
  }
  const size_t total = f.workloads.size() * f.ranks.size() * 2;
  size_t done = 0;
  for (const auto& key : f.workloads) {
    const WorkloadSpec* w = workload_spec(key);
    const std::string trace = (fs::path(f.traces) / w->folder).string();
    for (int r : f.ranks)
      for (bool paced : {true, false}) {
        ++done;
        std::fprintf(stderr, "[validate] %zu/%zu: %s, %d ranks, %s\n", done, total, w->key, r, paced ? "paced" : "unpaced");
        const std::string calib = doc["calibrations"][std::to_string(r)]["file"];
        const std::vector<double> before = load_average();
        const std::string out = run_command(
            env + f.mpirun + " -np " + std::to_string(r) + " " + shell_quoted(zepp) + " run --trace " + shell_quoted(trace) +
                " --model " + w->model + " --gpus-per-node " + std::to_string(r / 2) + shape + " --size-mb " +
                fmt("%g", f.size_mb) + " --strategy a2av,eplb,zepp --repeat " + std::to_string(f.repeat) + " --predict " +
                shell_quoted(calib) + " --format json" + (paced ? pace : std::string()),
            err_file);
        doc["runs"].push_back({{"workload", w->key}, {"model", w->model}, {"ranks", r}, {"paced", paced},
                               {"load_before", before}, {"load_after", load_average()}, {"run", nlohmann::json::parse(out)}});
        save(doc, f);  // after every run: an interrupted sweep keeps what it measured
      }
  }
  return doc;
}

double max_over_ranks(const nlohmann::json& s, const char* key) {
  double m = 0;
  for (const auto& r : s["ranks"]) m = std::max(m, r[key].get<double>());
  return m;
}

std::string pct(double ratio) { return fmt("%+.0f%%", (ratio - 1) * 100); }

std::string markdown(const nlohmann::json& doc, const ValidateFlags& f) {
  std::ostringstream md;
  auto when = [](const nlohmann::json& t) {
    const std::time_t v = t.get<std::time_t>();
    char b[64];
    std::strftime(b, sizeof b, "%Y-%m-%d %H:%M UTC", std::gmtime(&v));
    return std::string(b);
  };
  md << "# Does the simulator predict real runs?\n\n"
     << "Generated by `zepp experiment validate` (src/cli/validate.cpp) from `" << f.results
     << "/runs.json`; rerun it to measure again, or `--from-results` to rewrite this page from the same measurements.\n\n"
     << "`zepp run` executes a strategy's communication plan for real: MPI ranks move fp32 token rows and run SwiGLU "
     << "experts (OpenBLAS, one thread per rank). `zepp calibrate` measured this machine as those runs use it (expert "
     << "FFN time against tokens, the reductions' bandwidth, point-to-point bandwidth and latency between ranks of one "
     << "\"node\" and of two, unpaced and through the NIC pacer) and wrote a topology file with that compute model. "
     << "Each executed plan was then simulated on the calibrated cluster (`sim` executor, SimGrid) and the two compared: "
     << "\"predicted\" below is the simulator's layer time for the very plan that ran.\n\n";
  // What was run, as runs.json records it (f: its settings, recorded_settings), not the defaults.
  auto listed = [](const std::vector<std::string>& items, const char* last) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + items[i];
    return out;
  };
  std::vector<std::string> traces, ranks;
  for (const auto& key : f.workloads) traces.push_back(workload_spec(key)->label);
  for (const int r : f.ranks) ranks.push_back(std::to_string(r) + " (2 nodes x " + std::to_string(r / 2) + ")");
  md << "## Setup\n\n"
     << "- Machine: " << doc["machine"].get<std::string>() << "; measured " << when(doc["started"]) << " to "
     << when(doc["finished"]) << ".\n";
  if (doc.contains("made_by") && doc["made_by"].contains("command"))
    md << "- Command: `" << doc["made_by"]["command"].get<std::string>() << "`.\n";
  md << "- Traces: " << listed(traces, ", ") << ", each model's experts, "
     << "top-k and routing, with the expert shape reduced to hidden " << doc["hidden"] << ", ffn " << doc["ffn"]
     << " (the real shapes take minutes per run on two cores); " << fmt("%g", doc["size_mb"].get<double>())
     << " MiB of BF16 activations per rank (paper §6.1 sizing), moved as fp32.\n"
     << "- Ranks: " << listed(ranks, " and ") << "; \"paced\": inter-node sends through a token bucket at "
     << fmt("%g", doc["nic_gbps"].get<double>()) << " GB/s per rank (`--nic-gbps`), so the NIC is the bottleneck as on a "
     << "cluster; \"unpaced\": every message goes through shared memory at the machine's speed.\n"
     << "- Wall time: slowest rank, fastest of " << doc["repeat"] << " repeats; phases: the slowest rank's dispatch end, "
     << "compute busy time and combine span, from the executor's own timestamps, beside the same quantities on the "
     << "simulated timeline.\n\n";

  const int most = f.ranks.empty() ? 0 : *std::max_element(f.ranks.begin(), f.ranks.end());
  const int cores = int(std::thread::hardware_concurrency());
  md << "## Load on the machine\n\n"
     << "This machine has few cores and may be shared with other jobs (other engineers' builds and tests) while "
     << "measuring; the load averages below say how busy it was. Every rank is a process; " << most << " ranks on "
     << cores << " cores " << (most > cores ? "are oversubscribed before anything else runs" : "leave few cores to anything else")
     << ". Load averages (1 / 5 / 15 min) as read from "
     << "`/proc/loadavg` before and after each step:\n\n| step | before | after |\n|---|---|---|\n";
  auto load = [](const nlohmann::json& l) {
    if (l.empty()) return std::string("n/a");
    return fmt("%.2f", l[0].get<double>()) + " / " + fmt("%.2f", l[1].get<double>()) + " / " + fmt("%.2f", l[2].get<double>());
  };
  for (const auto& [r, c] : doc["calibrations"].items())
    md << "| calibrate " << r << " ranks | " << load(c["load_before"]) << " | " << load(c["load_after"]) << " |\n";
  for (const auto& run : doc["runs"])
    md << "| " << run["workload"].get<std::string>() << ", " << run["ranks"] << " ranks, " << (run["paced"].get<bool>() ? "paced" : "unpaced")
       << " | " << load(run["load_before"]) << " | " << load(run["load_after"]) << " |\n";
  md << "\nTimes on a loaded, oversubscribed machine vary from run to run by tens of percent; read every figure below "
     << "with that in mind.\n\n";

  md << "## Calibration\n\n";
  for (const auto& [r, c] : doc["calibrations"].items()) {
    const auto& t = c["topology"];
    const auto& rec = t["calibration"];
    md << "**" << r << " ranks** (`" << fs::path(c["file"].get<std::string>()).filename().string() << "`): expert FFN";
    for (const auto& p : t["compute"]["gemm"][0]["points"]) md << " " << p[0] << " tok " << p[1].get<std::string>() << ";";
    md << " reductions " << t["compute"]["hbm"].get<std::string>() << "; same node " << t["nvlink"]["bandwidth"].get<std::string>()
       << ", " << t["nvlink"]["latency"].get<std::string>() << "; other node unpaced "
       << fmt("%.3g GB/s", rec["nic_unpaced"]["bandwidth_bytes_per_s"].get<double>() / 1e9) << ", "
       << fmt("%.3g us", rec["nic_unpaced"]["latency_s"].get<double>() * 1e6) << "; paced " << t["nic"]["bandwidth"].get<std::string>()
       << ", " << t["nic"]["latency"].get<std::string>() << "; took " << fmt("%.1f s", rec["wall_s"].get<double>()) << ".\n\n";
  }

  md << "## Measured against predicted\n\n"
     << "| trace | ranks | NIC | strategy | measured ms | predicted ms | measured / predicted | dispatch ms m / p | compute ms m / p | combine ms m / p |\n"
     << "|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<double> errs_paced, errs_unpaced;
  for (const auto& run : doc["runs"])
    for (const auto& s : run["run"]["strategies"]) {
      const auto& p = s["predicted"];
      const double ratio = s["measured_over_predicted"].get<double>();
      (run["paced"].get<bool>() ? errs_paced : errs_unpaced).push_back(std::fabs(ratio - 1));
      auto phase = [&](const char* key) {
        return fmt("%.1f", max_over_ranks(s, key) * 1e3) + " / " + fmt("%.1f", p[key].get<double>() * 1e3);
      };
      md << "| " << run["workload"].get<std::string>() << " | " << run["ranks"] << " | " << (run["paced"].get<bool>() ? "paced" : "unpaced")
         << " | " << s["strategy"].get<std::string>() << " | " << fmt("%.1f", s["wall_s"].get<double>() * 1e3) << " | "
         << fmt("%.1f", p["wall_s"].get<double>() * 1e3) << " | " << fmt("%.2f", ratio) << " | " << phase("dispatch_s") << " | "
         << phase("compute_s") << " | " << phase("combine_s") << " |\n";
    }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::string missing;
  for (const auto& key : f.workloads)
    for (int r : f.ranks)
      for (bool paced : {true, false}) {
        bool found = false;
        for (const auto& run : doc["runs"])
          found = found || (run["workload"] == key && run["ranks"] == r && run["paced"].get<bool>() == paced);
        if (!found) missing += std::string(missing.empty() ? "" : ", ") + key + " " + std::to_string(r) + " ranks " + (paced ? "paced" : "unpaced");
      }
  if (!missing.empty()) md << "\nNot measured (the sweep was cut short): " << missing << ".\n";
  auto median_pct = [&](const std::vector<double>& v) { return v.empty() ? std::string("none measured") : fmt("%.0f%%", median(v) * 100); };
  md << "\nMedian |measured / predicted - 1| over strategies and traces: " << median_pct(errs_paced) << " paced, "
     << median_pct(errs_unpaced) << " unpaced.\n\n";

  md << "## a2av / zepp: measured against predicted\n\n"
     << "| trace | ranks | NIC | a2av / zepp measured | predicted | predicted / measured |\n|---|---|---|---|---|---|\n";
  const bool goal_asked = std::find(f.workloads.begin(), f.workloads.end(), "deepseek") != f.workloads.end() &&
                          std::find(f.ranks.begin(), f.ranks.end(), 8) != f.ranks.end();
  std::string goal = goal_asked ? "The paced 8-rank DeepSeek case was not measured."
                                : "The goal's case, paced 8-rank DeepSeek, was not part of this sweep.";
  for (const auto& run : doc["runs"]) {
    const auto& r = run["run"];
    if (!r.contains("a2av_over_zepp")) continue;
    const double m = r["a2av_over_zepp"]["wall"].get<double>(), p = r["a2av_over_zepp"]["predicted_wall"].get<double>();
    md << "| " << run["workload"].get<std::string>() << " | " << run["ranks"] << " | " << (run["paced"].get<bool>() ? "paced" : "unpaced")
       << " | " << fmt("%.2fx", m) << " | " << fmt("%.2fx", p) << " | " << fmt("%.2f", p / m) << " (" << pct(p / m) << ") |\n";
    if (run["workload"] == "deepseek" && run["ranks"] == 8 && run["paced"].get<bool>()) {
      const bool met = std::fabs(p / m - 1) <= kGoal;
      goal = std::string("**Goal ") + (met ? "met" : "not met") + ".** On the paced 8-rank DeepSeek-V2-Lite case the " +
             "simulator predicts a2av / zepp = " + fmt("%.2fx", p) + " where the run measured " + fmt("%.2fx", m) + ": " +
             pct(p / m) + ", against the goal of agreement within " + fmt("%.0f%%", kGoal * 100) + ".";
    }
  }
  md << "\n" << goal << "\n\n";
  return md.str();
}

// The launcher's program (the first word of --mpirun) as the shell would find it: a path with a
// '/' that is an executable file, or an executable file in a folder of $PATH.
bool launcher_found(const std::string& mpirun) {
  const std::string prog = mpirun.substr(0, mpirun.find_first_of(" \t"));
  auto runnable = [](const fs::path& p) { return fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0; };
  if (prog.find('/') != std::string::npos) return runnable(prog);
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t at = 0; at <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', at), dirs.size());
    if (end > at && runnable(fs::path(dirs.substr(at, end - at)) / prog)) return true;
    at = end + 1;
  }
  return false;
}

// Every flag, before the first calibration: a bad one found after minutes of MPI runs wastes
// them (and a failed launch would surface as the runs' internal error).
void check_flags(const ValidateFlags& f) {
  require(f.repeat >= 1 && f.repeat <= 1000, "--repeat", "expected [1, 1000], got " + std::to_string(f.repeat));
  require(!f.ranks.empty() && !f.workloads.empty(), "--ranks/--workloads", "name at least one");
  require_distinct(f.ranks, "--ranks");
  require_distinct(f.workloads, "--workloads");
  for (const int r : f.ranks)
    require(r >= 2 && r <= 1024 && r % 2 == 0, "--ranks",
            "expected even rank counts in [2, 1024] (2 nodes of ranks/2 GPUs), got " + std::to_string(r));
  require(f.hidden >= 1 && f.hidden <= 65536, "--hidden", "expected [1, 65536], got " + std::to_string(f.hidden));
  require(f.ffn >= 1 && f.ffn <= 65536, "--ffn", "expected [1, 65536], got " + std::to_string(f.ffn));
  for (const std::string& key : f.workloads) {
    const WorkloadSpec* w = workload_spec(key);
    require(w != nullptr, "--workloads", "unknown workload '" + key + "', expected deepseek, llama4 or mixtral");
    if (f.from_results) continue;
    const std::string trace = (fs::path(f.traces) / w->folder).string();
    require(fs::exists(trace), "--traces", "trace " + trace + " is absent");
  }
  if (!f.from_results)
    require(launcher_found(f.mpirun), "--mpirun",
            "cannot find the program '" + f.mpirun.substr(0, f.mpirun.find_first_of(" \t")) +
                "' (a path to an executable, or a program on $PATH)");
}

// runs.json as markdown() and recorded_settings() read it: every field they read, present and of
// the type they read it as. A file edited by hand, cut short or written by another program is
// refused naming the file and the field ("FILE: runs[3].run.strategies[0].wall_s: expected a
// number, got \"fast\""), where it ended in an internal error (or read past a missing field).
class ResultsFields {
 public:
  enum Kind { Number, Whole, String, Bool, Object, List };
  explicit ResultsFields(std::string file) : file_(std::move(file)) {}

  // parent[key], `path` naming parent ("" at the top).
  const nlohmann::json& get(const nlohmann::json& parent, const std::string& path, const std::string& key, Kind k) const {
    const std::string where = path.empty() ? key : path + "." + key;
    if (!parent.contains(key)) fail(where, k, "nothing (the field is missing)");
    return check(parent[key], where, k);
  }
  // Every element of the list `list` (at `path`), of kind `k`.
  void each(const nlohmann::json& list, const std::string& path, Kind k) const {
    for (size_t i = 0; i < list.size(); ++i) check(list[i], path + "[" + std::to_string(i) + "]", k);
  }
  // A load average as load_average() records it: [] (unreadable) or [1 min, 5 min, 15 min].
  void load(const nlohmann::json& parent, const std::string& path, const std::string& key) const {
    const nlohmann::json& l = get(parent, path, key, List);
    if (!l.empty() && l.size() != 3)
      throw InputError(file_ + ": " + path + "." + key + ": expected [] or three load averages (1, 5 and 15 min), got " +
                       std::to_string(l.size()) + " numbers");
    each(l, path + "." + key, Number);
  }
  const nlohmann::json& check(const nlohmann::json& v, const std::string& where, Kind k) const {
    const bool ok = k == Number   ? v.is_number()
                    : k == Whole  ? v.is_number_integer()
                    : k == String ? v.is_string()
                    : k == Bool   ? v.is_boolean()
                    : k == Object ? v.is_object()
                                  : v.is_array();
    if (!ok) fail(where, k, v.is_object() ? "an object" : v.is_array() ? "a list" : excerpt(json_text(v)));
    return v;
  }
  [[noreturn]] void fail(const std::string& where, Kind k, const std::string& got) const {
    static const char* const names[] = {"a number", "a whole number", "a string", "true or false", "an object", "a list"};
    throw InputError(file_ + ": " + where + ": expected " + names[k] + ", got " + got);
  }

 private:
  static std::string excerpt(const std::string& s) { return s.size() <= 40 ? s : s.substr(0, 37) + "..."; }
  std::string file_;
};

void check_results(const nlohmann::json& doc, const std::string& file) {
  using F = ResultsFields;
  const F in(file);
  if (!doc.is_object())
    throw InputError(file + ": expected the object zepp experiment validate writes ({\"machine\": ..., \"runs\": [...]}), got " +
                     std::string(doc.is_array() ? "a list" : "a " + std::string(doc.type_name())));
  for (const char* key : {"started", "finished", "hidden", "ffn", "repeat"}) in.get(doc, "", key, F::Whole);
  for (const char* key : {"size_mb", "nic_gbps"}) in.get(doc, "", key, F::Number);
  in.get(doc, "", "machine", F::String);
  if (doc.contains("made_by") && in.get(doc, "", "made_by", F::Object).contains("command"))
    in.get(doc["made_by"], "made_by", "command", F::String);
  for (const char* key : {"workloads", "ranks"})  // the sweep asked for; absent from files before it was recorded
    if (doc.contains(key)) in.each(in.get(doc, "", key, F::List), key, std::string(key) == "ranks" ? F::Whole : F::String);
  for (const auto& [r, c] : in.get(doc, "", "calibrations", F::Object).items()) {
    const std::string at = "calibrations." + r;
    in.check(c, at, F::Object);
    in.get(c, at, "file", F::String);
    in.load(c, at, "load_before");
    in.load(c, at, "load_after");
    const auto& t = in.get(c, at, "topology", F::Object);
    const auto& rec = in.get(t, at + ".topology", "calibration", F::Object);
    in.get(rec, at + ".topology.calibration", "wall_s", F::Number);
    const auto& nic = in.get(rec, at + ".topology.calibration", "nic_unpaced", F::Object);
    for (const char* key : {"bandwidth_bytes_per_s", "latency_s"}) in.get(nic, at + ".topology.calibration.nic_unpaced", key, F::Number);
    const auto& compute = in.get(t, at + ".topology", "compute", F::Object);
    in.get(compute, at + ".topology.compute", "hbm", F::String);
    const auto& gemm = in.get(compute, at + ".topology.compute", "gemm", F::List);
    if (gemm.empty()) in.fail(at + ".topology.compute.gemm[0]", F::Object, "nothing (the list is empty)");
    const std::string curve = at + ".topology.compute.gemm[0]";
    const auto& points = in.get(in.check(gemm[0], curve, F::Object), curve, "points", F::List);
    for (size_t i = 0; i < points.size(); ++i) {
      const std::string p = curve + ".points[" + std::to_string(i) + "]";
      if (!points[i].is_array() || points[i].size() != 2)
        in.fail(p, F::List, "something else; expected [tokens, \"time\"]");
      in.check(points[i][0], p + "[0]", F::Number);
      in.check(points[i][1], p + "[1]", F::String);
    }
    for (const char* link : {"nvlink", "nic"})
      for (const char* key : {"bandwidth", "latency"})
        in.get(in.get(t, at + ".topology", link, F::Object), at + ".topology." + link, key, F::String);
  }
  const auto& runs = in.get(doc, "", "runs", F::List);
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string at = "runs[" + std::to_string(i) + "]";
    const auto& run = in.check(runs[i], at, F::Object);
    const std::string w = in.get(run, at, "workload", F::String);
    if (workload_spec(w) == nullptr)
      throw InputError(file + ": " + at + ".workload: expected deepseek, llama4 or mixtral, got '" + w + "'");
    in.get(run, at, "ranks", F::Whole);
    in.get(run, at, "paced", F::Bool);
    in.load(run, at, "load_before");
    in.load(run, at, "load_after");
    const auto& r = in.get(run, at, "run", F::Object);
    const auto& strategies = in.get(r, at + ".run", "strategies", F::List);
    for (size_t j = 0; j < strategies.size(); ++j) {
      const std::string sat = at + ".run.strategies[" + std::to_string(j) + "]";
      const auto& s = in.check(strategies[j], sat, F::Object);
      in.get(s, sat, "strategy", F::String);
      for (const char* key : {"wall_s", "measured_over_predicted"}) in.get(s, sat, key, F::Number);
      const auto& p = in.get(s, sat, "predicted", F::Object);
      const auto& ranks = in.get(s, sat, "ranks", F::List);
      for (const char* key : {"dispatch_s", "compute_s", "combine_s"}) {
        in.get(p, sat + ".predicted", key, F::Number);
        for (size_t k = 0; k < ranks.size(); ++k) {
          const std::string rat = sat + ".ranks[" + std::to_string(k) + "]";
          in.get(in.check(ranks[k], rat, F::Object), rat, key, F::Number);
        }
      }
      in.get(p, sat + ".predicted", "wall_s", F::Number);
    }
    if (r.contains("a2av_over_zepp")) {
      const auto& ratio = in.get(r, at + ".run", "a2av_over_zepp", F::Object);
      for (const char* key : {"wall", "predicted_wall"}) in.get(ratio, at + ".run.a2av_over_zepp", key, F::Number);
    }
  }
}

// --from-results: the report describes the runs recorded, so it takes their settings from the file.
// A measurement flag the user gave that disagrees with them is refused (it would describe runs
// that were not made); --traces and --mpirun, which only act when measuring, are refused outright.
// Files written before the sweep's workloads and ranks were recorded: those of the runs in them.
ValidateFlags recorded_settings(const nlohmann::json& doc, const ValidateFlags& given, const CLI::App& cmd,
                                const std::string& file) {
  for (const char* flag : {"--traces", "--mpirun"})
    require(cmd.count(flag) == 0, flag, "only acts when measuring, and --from-results runs nothing; leave it out");
  ValidateFlags f = given;
  f.hidden = doc["hidden"].get<int>();
  f.ffn = doc["ffn"].get<int>();
  f.repeat = doc["repeat"].get<int>();
  f.size_mb = doc["size_mb"].get<double>();
  f.nic_gbps = doc["nic_gbps"].get<double>();
  f.workloads.clear(), f.ranks.clear();
  if (doc.contains("workloads")) {
    f.workloads = doc["workloads"].get<std::vector<std::string>>();
  } else {
    for (const auto& run : doc["runs"])
      if (std::find(f.workloads.begin(), f.workloads.end(), run["workload"]) == f.workloads.end())
        f.workloads.push_back(run["workload"]);
  }
  if (doc.contains("ranks")) {
    f.ranks = doc["ranks"].get<std::vector<int>>();
  } else {
    for (const auto& run : doc["runs"])
      if (std::find(f.ranks.begin(), f.ranks.end(), run["ranks"].get<int>()) == f.ranks.end()) f.ranks.push_back(run["ranks"]);
    std::sort(f.ranks.begin(), f.ranks.end());
  }
  for (const auto& key : f.workloads)
    if (workload_spec(key) == nullptr) throw InputError(file + ": workloads: expected deepseek, llama4 or mixtral, got '" + key + "'");
  auto join = [](const auto& items) {
    std::string out;
    for (const auto& v : items) {
      std::ostringstream one;
      one << v;
      out += (out.empty() ? "" : ",") + one.str();
    }
    return out;
  };
  auto same = [&](const char* flag, bool equal, const std::string& value, const std::string& recorded) {
    require(cmd.count(flag) == 0 || equal, flag,
            value + " disagrees with the runs recorded in " + file + " (" + recorded +
                "); --from-results describes those runs: leave the flag out, or measure again without --from-results");
  };
  same("--workloads", given.workloads == f.workloads, join(given.workloads), join(f.workloads));
  same("--ranks", given.ranks == f.ranks, join(given.ranks), join(f.ranks));
  same("--hidden", given.hidden == f.hidden, std::to_string(given.hidden), std::to_string(f.hidden));
  same("--ffn", given.ffn == f.ffn, std::to_string(given.ffn), std::to_string(f.ffn));
  same("--repeat", given.repeat == f.repeat, std::to_string(given.repeat), std::to_string(f.repeat));
  same("--size-mb", given.size_mb == f.size_mb, fmt("%g", given.size_mb), fmt("%g", f.size_mb));
  same("--nic-gbps", given.nic_gbps == f.nic_gbps, fmt("%g", given.nic_gbps), fmt("%g", f.nic_gbps));
  return f;
}

void run_validate(const ValidateFlags& given, const CLI::App& cmd) {
  check_output_file(given.out, "--out");  // before measuring
  check_output_dir(given.results, "--results");
  check_flags(given);
  ValidateFlags f = given;
  nlohmann::json doc;
  if (f.from_results) {
    const std::string file = (fs::path(f.results) / "runs.json").string();
    std::ifstream in(file);
    require(bool(in), "--results", "no runs.json in " + f.results + " (run without --from-results first)");
    try {
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(file + ": " + e.what());
    }
    check_results(doc, file);
    f = recorded_settings(doc, given, cmd, file);
  } else {
    doc = measure(f);
  }
  std::string text = markdown(doc, f);
  const fs::path reading = fs::path(f.results) / "reading.md";  // hand-written reading, kept beside the data
  if (std::ifstream r(reading); r) text += std::string((std::istreambuf_iterator<char>(r)), {});
  write_file_atomically(f.out, text, "--out");
  std::printf("report: %s\n", f.out.c_str());
}

}  // namespace

void add_validate(CLI::App* experiment) {
  auto f = std::make_shared<ValidateFlags>();
  CLI::App* cmd = experiment->add_subcommand(
      "validate", "Calibrate this machine, run a2av/eplb/zepp for real under mpirun on the real traces, simulate each "
                  "executed plan on the calibrated cluster and write docs/validation.md (measured vs predicted)");
  cmd->add_option("--traces", f->traces, "Folder of the real traces (shared/data/traces)")->capture_default_str();
  cmd->add_option("--out", f->out, "Markdown report to write")->capture_default_str();
  cmd->add_option("--results", f->results, "Folder for the calibration files and runs.json")->capture_default_str();
  cmd->add_option("--workloads", f->workloads, "deepseek, llama4, mixtral (comma-separated)")->delimiter(',')->capture_default_str();
  cmd->add_option("--ranks", f->ranks, "Rank counts, each run as 2 nodes (comma-separated)")->delimiter(',')->capture_default_str();
  cmd->add_option("--nic-gbps", f->nic_gbps, "NIC pacing of the paced runs, GB/s per rank")->capture_default_str();
  cmd->add_option("--hidden", f->hidden, "Expert hidden dimension of every run")->capture_default_str();
  cmd->add_option("--ffn", f->ffn, "Expert FFN dimension of every run")->capture_default_str();
  cmd->add_option("--size-mb", f->size_mb, "MiB of BF16 activations per rank")->capture_default_str();
  cmd->add_option("--repeat", f->repeat, "Runs per strategy (fastest kept)")->capture_default_str();
  cmd->add_option("--mpirun", f->mpirun, "The MPI launcher and its flags")->capture_default_str();
  cmd->add_flag("--from-results", f->from_results,
                "Rewrite the report from RESULTS/runs.json without measuring, with the settings recorded there (a "
                "measurement flag that disagrees with them is refused)");
  cmd->callback([f, cmd] { run_validate(*f, *cmd); });
}

}  // namespace zepp::cli
