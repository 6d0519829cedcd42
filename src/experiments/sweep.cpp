// The sweep driver: configurations in forked workers (SimGrid runs one engine per process, and
// the CPUs are few), results appended to the CSV as each configuration finishes.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/child_process.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"
#include "core/provenance.hpp"
#include "core/topology_file.hpp"
#include "core/version.hpp"
#include "experiments/experiments.hpp"
#include "formats/results_csv.hpp"
#include "pipeline/cost.hpp"
#include "pipeline/variants.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"

namespace zepp::experiments {
namespace {

struct Config {
  const WorkloadSpec* workload;
  const Trace* trace;
  std::string topology;
  int nodes;
  double size_mb;
  std::vector<std::string> strategies;  // the rows to write: spec's strategies not yet in the CSV
  std::string key() const { return config_key(workload->name, topology, nodes, size_mb); }
  std::string label() const { return fmt::format("{} {} N={} {}MB", workload->name, topology, nodes, size_mb); }
};

// The configuration's strategies (and a2av, whose latency every speedup divides, when its row is
// already in the CSV); returns the CSV lines of c.strategies.
std::string run_config(const Config& c, const SweepSpec& spec, const SweepOptions& opt) {
  const ModelShape model = model_preset(c.workload->model);
  Topology topo = cluster_topology(c.topology, c.nodes);
  topo.link_sharing = opt.link_sharing;
  WorkloadOptions wo;
  wo.layer = c.trace ? c.workload->layer : -1;
  wo.size_mb = c.size_mb;
  wo.seed = opt.seed;
  const Workload w = build_workload(c.trace, model, topo, wo);
  StrategyOptions so = opt.strategy;
  so.optimal = false;  // the exact routing optimum is not part of these figures
  so.timeline = false;

  std::vector<std::string> names = c.strategies;
  const bool a2av_written = std::find(names.begin(), names.end(), "a2av") != names.end();
  if (!a2av_written) names.push_back("a2av");
  std::vector<StrategyOutcome> outs;
  for (const auto& name : names) {
    StrategyOptions variant = so;
    const std::string base = strategy_variant(name, variant);
    outs.push_back(run_strategy(base, w, model, topo, variant, ExecutorKind::Sim));
  }
  double a2av = 0;
  for (const auto& o : outs)
    if (o.name == "a2av") a2av = o.result.latency_s;

  std::string lines;
  for (size_t i = 0; i < c.strategies.size(); ++i) {
    const StrategyOutcome& o = outs[i];
    ResultRow r;
    r.experiment = spec.experiment;
    r.workload = c.workload->name;
    r.model = model.name;
    r.trace = c.workload->trace;
    r.synthetic = w.synthetic;
    r.layer = w.layer;
    r.topology = c.topology;
    r.nodes = c.nodes;
    r.gpus = topo.num_gpus();
    r.size_mb = c.size_mb;
    r.tokens_per_gpu = w.tokens_per_gpu;
    r.strategy = c.strategies[i];
    r.latency_us = o.result.latency_s * 1e6;
    r.speedup_vs_a2av = a2av / o.result.latency_s;
    r.inter_node_bytes = o.result.inter_node_bytes;
    r.nvlink_bytes = o.result.nvlink_bytes;
    r.max_nic_bytes = o.result.max_nic_bytes;
    r.imbalance = o.imbalance;
    r.comm_hidden_fraction = o.result.comm_hidden_fraction;
    for (const GpuStats& g : o.result.gpus) r.max_compute_us = std::max(r.max_compute_us, g.compute_s * 1e6);
    r.routing_wall_us = o.routing_wall_s * 1e6;
    r.metadata_us = o.metadata_s * 1e6;
    r.planning_us = o.planning_s * 1e6;
    r.planning = so.planning == PlanningMode::Model ? "model" : "free";
    lines += csv_line(r);
  }
  return lines;
}

void write_all(int fd, const std::string& s) {
  for (size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += size_t(n);
  }
}

std::string duration(double s) {
  const auto t = int64_t(std::llround(s));
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}

void validate(const SweepSpec& spec, const SweepOptions& opt) {
  require(opt.jobs >= 1, "--jobs", "must be >= 1, got " + std::to_string(opt.jobs));
  require(!opt.csv_path.empty(), "--csv", "must name a file");
  require(!spec.workloads.empty(), "--workloads", "names no workload");
  require(!spec.topologies.empty(), "--topologies", "names no topology");
  require(!spec.nodes.empty(), "--nodes", "names no node count");
  require(!spec.sizes_mb.empty(), "--sizes", "names no size");
  for (int n : spec.nodes) require(n >= 1, "--nodes", "must be >= 1, got " + std::to_string(n));
  for (double s : spec.sizes_mb) require(s > 0 && std::isfinite(s), "--sizes", "must be positive");
  require(std::find(spec.strategies.begin(), spec.strategies.end(), "a2av") != spec.strategies.end(), "--strategies",
          "must include a2av (speedups are over it)");
  const auto names = strategy_names();
  std::string variants;
  for (const auto& v : variant_names()) variants += (variants.empty() ? "" : ", ") + v;
  for (const auto& s : spec.strategies) {
    StrategyOptions unused;
    require(std::find(names.begin(), names.end(), strategy_variant(s, unused)) != names.end(), "--strategies",
            "unknown strategy '" + s + "' (registered ones, or " + variants + ")");
  }
  check_sweep(spec, opt.strategy);  // before the CSV is rewritten and the traces are read
}

const char* planning_name(PlanningMode m) { return m == PlanningMode::Model ? "model" : "free"; }

// `value` of a numeric setting as sweep_settings writes it, so that "0.10" and "0.1" compare equal;
// nullopt when it is no number (the command that gave it was refused, or edited).
std::optional<std::string> normalized(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  if (flag == "--seed") {
    const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || *end || errno || value[0] == '-') return std::nullopt;
    return fmt::format("{}", v);
  }
  if (flag == "--planning" || flag == "--link-sharing") return value;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || errno || !std::isfinite(v)) return std::nullopt;
  return fmt::format("{}", v);
}

}  // namespace

Settings sweep_settings(const SweepOptions& opt) {
  return {{"--planning", planning_name(opt.strategy.planning)},
          {"--link-sharing", to_string(opt.link_sharing)},
          {"--seed", fmt::format("{}", opt.seed)},
          {"--extra-slots", fmt::format("{}", opt.strategy.extra_slots)},
          {"--balance-slack", fmt::format("{}", opt.strategy.balance_slack)},
          {"--nic-slack", fmt::format("{}", opt.strategy.nic_slack)}};
}

std::optional<Settings> sweep_settings_of(const std::optional<Provenance>& p, bool* from_command) {
  if (from_command) *from_command = false;
  if (!p) return std::nullopt;
  if (p->settings) return p->settings;
  const std::vector<std::string> words = command_words(p->command);
  if (words.size() < 3 || words[1] != "experiment" || (words[2] != "fig9" && words[2] != "fig10")) return std::nullopt;
  Settings s = sweep_settings(SweepOptions{});  // what the flags it leaves out were
  for (size_t i = 3; i < words.size(); ++i)
    for (auto& [flag, value] : s) {
      std::optional<std::string> given;
      if (words[i] == flag && i + 1 < words.size()) given = words[i + 1];
      else if (words[i].starts_with(flag + "=")) given = words[i].substr(flag.size() + 1);
      if (!given) continue;
      const auto v = normalized(flag, *given);
      if (!v) return std::nullopt;
      value = *v;  // the last one given counts, as on the command line
    }
  if (from_command) *from_command = true;
  return s;
}

void check_sweep(const SweepSpec& spec, const StrategyOptions& opt) {
  // The size changes no placement: one check per (workload, topology, nodes).
  for (const auto& ws : spec.workloads)
    for (const auto& t : spec.topologies)
      for (int n : spec.nodes) {
        const ModelShape model = model_preset(ws.model);
        const Topology topo = cluster_topology(t, n);
        try {
          for (const auto& name : spec.strategies) {
            StrategyOptions so = opt;
            const std::string base = strategy_variant(name, so);
            check_strategy_fits(base, model, topo, so, "--nodes, --topologies, --extra-slots, --strategies or --workloads");
          }
        } catch (const ArgumentError& e) {
          throw ArgumentError(fmt::format("{}: configuration {} {} N={} (model {}): {}", spec.experiment, ws.name, t, n,
                                          ws.model, e.what()));
        }
      }
}

int run_sweep(const SweepSpec& spec, const SweepOptions& opt) {
  validate(spec, opt);

  // Rows already in the CSV (resume) are kept and not run again: a configuration runs only the
  // strategies it lacks (a strategy added to --strategies runs on every configuration), otherwise
  // the CSV starts afresh. The CSV is rewritten whole and atomically after each configuration
  // (write_results_atomically): a sweep killed at any moment leaves complete configurations only.
  std::map<std::string, std::set<std::string>> done;  // configuration -> strategies in the CSV
  const bool keep = opt.resume && std::filesystem::exists(opt.csv_path);
  std::string csv = provenance_line(sweep_settings(opt)) + csv_header();
  if (keep) {
    std::optional<Provenance> made_by;
    const auto kept = read_results(opt.csv_path, &made_by);
    // Rows of two programs in one file would be reported as one experiment.
    require(made_by && made_by->commit == git_commit(), "--resume",
            opt.csv_path + " was made by " + describe(made_by) + ", this program is commit " + git_commit() +
                ": finishing it would mix results of two programs; rerun without --resume (or with the program that "
                "started it)");
    for (const ResultRow& r : kept) {
      require(r.experiment == spec.experiment, "--resume",
              opt.csv_path + " holds results of " + r.experiment + ", not " + spec.experiment);
      done[config_key(r)].insert(r.strategy);
    }
    // Settings that change results but are no column: rows of two settings in one file would be
    // reported as one sweep.
    bool from_command = false;
    const auto kept_settings = sweep_settings_of(made_by, &from_command);
    require(kept_settings.has_value(), "--resume",
            opt.csv_path + " records neither its settings nor a zepp experiment fig9/fig10 command (" + made_by->command +
                "): cannot tell whether finishing it would mix results of different settings; rerun without --resume");
    for (const auto& [flag, value] : sweep_settings(opt)) {
      const auto kept_value = std::find_if(kept_settings->begin(), kept_settings->end(),
                                           [&](const auto& k) { return k.first == flag; });
      const std::string was = kept_value == kept_settings->end() ? "(not recorded)" : kept_value->second;
      require(was == value, "--resume",
              opt.csv_path + " was made with " + flag + " " + was + (from_command ? " (read from its command line)" : "") +
                  ", this run has " + flag + " " + value + ": finishing it would mix results of different settings; " +
                  "rerun with " + flag + " " + was + ", or without --resume");
    }
    std::ifstream in(opt.csv_path, std::ios::binary);  // read_results accepted it: kept as it is
    csv.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!csv.empty() && csv.back() != '\n') csv += '\n';
    write_results_atomically(opt.csv_path, csv);
  }
  // A fresh CSV replaces the file only once a configuration has finished: a sweep that failed on
  // its first one left the previous results header-only (found by a fresh-user review).

  // Traces are read once, before forking; workers share them.
  std::map<std::string, std::unique_ptr<Trace>> traces;
  for (const auto& ws : spec.workloads) {
    if (ws.trace.empty() || traces.count(ws.trace)) continue;
    auto t = std::make_unique<Trace>(read_trace(opt.traces_dir + "/" + ws.trace));
    check_trace_matches_model(*t, model_preset(ws.model));
    traces.emplace(ws.trace, std::move(t));
  }
  std::vector<Config> pending;
  int skipped = 0, partial = 0;
  for (const auto& ws : spec.workloads)
    for (const auto& topo : spec.topologies)
      for (int n : spec.nodes)
        for (double mb : spec.sizes_mb) {
          Config c{&ws, ws.trace.empty() ? nullptr : traces.at(ws.trace).get(), topo, n, mb, {}};
          const auto in_csv = done.find(c.key());
          for (const auto& s : spec.strategies)
            if (in_csv == done.end() || !in_csv->second.count(s)) c.strategies.push_back(s);
          if (c.strategies.empty()) ++skipped;
          else pending.push_back(c), partial += in_csv != done.end();
        }
  if (opt.progress && (skipped || partial))
    std::fprintf(opt.progress, "[%s] resuming: %d configurations already in %s, %d more run only the strategies it lacks\n",
                 spec.experiment.c_str(), skipped, opt.csv_path.c_str(), partial);

  struct Worker {
    pid_t pid;
    int fd;
    size_t config;
    std::string out;
  };
  std::vector<Worker> running;
  size_t next = 0;
  int finished = 0;
  std::string failure, failure_kind;
  const auto t0 = std::chrono::steady_clock::now();
  while ((failure.empty() && next < pending.size()) || !running.empty()) {
    while (failure.empty() && next < pending.size() && int(running.size()) < opt.jobs) {
      int fds[2];
      if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
      std::fflush(nullptr);
      const pid_t parent = ::getpid();
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        die_with_parent(parent);
        ::close(fds[0]);
        int code = 0;
        std::string out;
        try {
          out = "ok\n" + run_config(pending[next], spec, opt);
        } catch (const InputError& e) {
          out = std::string("error\ninput\n") + e.what(), code = 1;
        } catch (const ArgumentError& e) {
          out = std::string("error\nargument\n") + e.what(), code = 1;
        } catch (const std::exception& e) {
          out = std::string("error\nother\n") + e.what(), code = 1;
        }
        write_all(fds[1], out);
        ::_exit(code);
      }
      ::close(fds[1]);
      running.push_back({pid, fds[0], next++, {}});
    }

    std::vector<pollfd> pfds;
    for (const Worker& w : running) pfds.push_back({w.fd, POLLIN, 0});
    if (::poll(pfds.data(), pfds.size(), -1) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (size_t i = running.size(); i-- > 0;) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = running[i];
      char buf[1 << 16];
      const ssize_t n = ::read(w.fd, buf, sizeof buf);
      if (n > 0) {
        w.out.append(buf, size_t(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      ::close(w.fd);
      int status = 0;
      ::waitpid(w.pid, &status, 0);
      const Config& c = pending[w.config];
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && w.out.rfind("ok\n", 0) == 0) {
        csv += w.out.substr(3);
        write_results_atomically(opt.csv_path, csv);
        ++finished;
        if (opt.progress) {
          const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          const double left = el / finished * double(pending.size() - size_t(finished));
          std::fprintf(opt.progress, "[%s] %d/%zu configurations, elapsed %s, about %s left (done: %s)\n",
                       spec.experiment.c_str(), finished, pending.size(), duration(el).c_str(), duration(left).c_str(),
                       c.label().c_str());
        }
      } else if (failure.empty()) {
        const bool reported = w.out.rfind("error\n", 0) == 0;
        if (reported) failure_kind = w.out.substr(6, w.out.find('\n', 6) - 6);
        const std::string why = reported ? w.out.substr(w.out.find('\n', 6) + 1)
                                : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) +
                                                            " (out of memory?)"
                                                      : "worker exited with status " + std::to_string(WEXITSTATUS(status));
        failure = spec.experiment + ": configuration " + c.label() + " failed: " + why;
      }
      running.erase(running.begin() + long(i));
    }
  }
  if (!failure.empty()) {
    failure += finished > 0 || keep ? " (finished configurations are in " + opt.csv_path + "; rerun with --resume)"
                                    : " (no configuration finished; " + opt.csv_path + " is as it was)";
    if (failure_kind == "input") throw InputError(failure);
    if (failure_kind == "argument") throw ArgumentError(failure);
    throw std::runtime_error(failure);
  }
  return finished;
}

}  // namespace zepp::experiments
