// `zepp run`: real distributed execution of one MoE layer under MPI (issue 4). Launch with
// mpirun, one rank per simulated GPU; --gpus-per-node groups consecutive ranks into nodes.
// MPI is initialised here, only for this subcommand, so the others run without mpirun.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/calibrated.hpp"
#include "cli/commands.hpp"
#include "cli/degraded.hpp"
#include "cli/mpi_command.hpp"
#include "cli/options.hpp"
#include "cli/run_layers.hpp"
#include "cli/timelines.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "exec/phases.hpp"
#include "exec/sim_measured.hpp"
#include "formats/json_text.hpp"
#include "mpi/session.hpp"
#include "pipeline/cost.hpp"
#include "pipeline/swap_line.hpp"
#include "workload/size.hpp"

namespace zepp::cli {
namespace {

struct RunFlags {
  WorkloadFlags w;
  std::string strategies = "a2av,eplb,zepp";
  std::string format = "table";
  mpi::SessionOptions opt;
  double tolerance = 1e-4;
  bool nodes_given = false, swap_horizon_given = false, layer_given = false, link_sharing_given = false,
       nic_slack_given = false, extra_slots_given = false;
  std::string layers;  // "": one layer; "all" or a list: a stack of layers (run_layers.hpp)
  std::vector<int> failed_nodes;  // elastic EP: the ranks are the surviving GPUs of a larger cluster
  nlohmann::json degraded;        // set by prepare() when nodes are lost: the report printed with the results
  std::string timeline;  // FILE: FILE-<strategy>.json (Chrome trace) and .svg per strategy
  std::string predict;   // calibrated topology file: simulate each executed plan on it
  std::optional<CalibratedCluster> calibrated;  // set by prepare() from `predict`
  LayerStack stack;  // set by prepare() with --layers
};

std::string fmt_ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}

std::string fmt_ratio(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3fx", x);
  return b;
}

std::string table(const nlohmann::json& doc) {
  std::string out = doc["workload"].get<std::string>() + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-10s %-9s %9s %11s %10s %10s %11s %11s %6s %11s %-16s %-16s\n", "strategy", "executor",
                "wall_ms", "dispatch_ms", "compute_ms", "combine_ms", "nvlink_MB", "nic_MB", "=plan", "max_rel_err",
                "output_checksum", "wire_checksum");
  out += line;
  for (const auto& s : doc["strategies"]) {
    double d = 0, c = 0, b = 0;
    for (const auto& r : s["ranks"])
      d = std::max(d, r["dispatch_s"].get<double>()), c = std::max(c, r["compute_s"].get<double>()),
      b = std::max(b, r["combine_s"].get<double>());
    std::snprintf(line, sizeof line, "%-10s %-9s %9s %11s %10s %10s %11.3f %11.3f %6s %11.2e %-16s %-16s\n",
                  s["strategy"].get<std::string>().c_str(), s["executor"].get<std::string>().c_str(),
                  fmt_ms(s["wall_s"]).c_str(), fmt_ms(d).c_str(), fmt_ms(c).c_str(), fmt_ms(b).c_str(),
                  s["nvlink_bytes"].get<double>() / 1e6, s["nic_bytes"].get<double>() / 1e6,
                  s["bytes_match_plan"].get<bool>() ? "yes" : "NO", s["max_rel_error"].get<double>(),
                  s["output_checksum"].get<std::string>().c_str(), s["wire_checksum"].get<std::string>().c_str());
    out += line;
  }
  bool swaps = false;
  for (const auto& s : doc["strategies"])
    if (s.contains("swaps")) out += swap_line(s["strategy"].get<std::string>(), s["swaps"]), swaps = true;
  if (swaps)
    out += "  (the swap rule decides before the layer runs, in the cluster model's µs (the topology preset, fp32 "
           "weights as this run moves them), not in the measured ms above)\n";
  if (doc.contains("degraded")) {
    const auto& d = doc["degraded"];
    const auto& z = d["zepp_rebalance"];
    std::snprintf(line, sizeof line,
                  "degraded: nodes %s lost, %d of %d nodes run the full batch; zepp rebalancing refills %d slots "
                  "(%.1f MB NVLink, %.1f MB NIC), expected imbalance %.4f -> %.4f\n",
                  d["failed_nodes"].dump().c_str(), d["nodes_after"].get<int>(), d["nodes_before"].get<int>(),
                  z["slots_changed"].get<int>(), z["nvlink_bytes"].get<double>() / 1e6, z["nic_bytes"].get<double>() / 1e6,
                  z["imbalance_before"].get<double>(), z["imbalance_after"].get<double>());
    out += line;
  }
  out += "per rank (ms; bytes sent; metadata = counts MPI_Allgather and planning = the rank's own routing, before the "
         "layer, both 0 for strategies that decide nothing per batch on the rank; total = the layer):\n";
  for (const auto& s : doc["strategies"])
    for (const auto& r : s["ranks"]) {
      std::snprintf(line, sizeof line, "  %-10s rank %3d node %2d  metadata %9s planning %9s dispatch %9s compute %9s combine %9s total %9s  nvlink %12.0f nic %12.0f pairs %7lld\n",
                    s["strategy"].get<std::string>().c_str(), r["rank"].get<int>(), r["node"].get<int>(),
                    fmt_ms(r["metadata_s"]).c_str(), fmt_ms(r["planning_s"]).c_str(),
                    fmt_ms(r["dispatch_s"]).c_str(), fmt_ms(r["compute_s"]).c_str(), fmt_ms(r["combine_s"]).c_str(),
                    fmt_ms(r["total_s"]).c_str(), r["nvlink_bytes"].get<double>(), r["nic_bytes"].get<double>(),
                    static_cast<long long>(r["pairs_computed"].get<int64_t>()));
      out += line;
    }
  if (doc.contains("predict")) {
    out += "predicted by the sim executor on " + doc["predict"].get<std::string>() +
           " (phases: slowest rank's dispatch end, compute busy time, combine span):\n";
    std::snprintf(line, sizeof line, "%-10s %11s %12s %9s %19s %19s %19s\n", "strategy", "measured_ms", "predicted_ms",
                  "meas/pred", "dispatch_ms m/p", "compute_ms m/p", "combine_ms m/p");
    out += line;
    for (const auto& s : doc["strategies"]) {
      const auto& p = s["predicted"];
      auto pair = [&](const char* key) {
        double m = 0;
        for (const auto& r : s["ranks"]) m = std::max(m, r[key].get<double>());
        return fmt_ms(m) + " / " + fmt_ms(p[key].get<double>());
      };
      std::snprintf(line, sizeof line, "%-10s %11s %12s %9.3f %19s %19s %19s\n", s["strategy"].get<std::string>().c_str(),
                    fmt_ms(s["wall_s"]).c_str(), fmt_ms(p["wall_s"]).c_str(), s["measured_over_predicted"].get<double>(),
                    pair("dispatch_s").c_str(), pair("compute_s").c_str(), pair("combine_s").c_str());
      out += line;
    }
  }
  if (doc.contains("a2av_over_zepp")) {
    const auto& ratio = doc["a2av_over_zepp"];
    const std::string bytes = ratio["nic_bytes"].is_null() ? "n/a (zepp sends none)" : fmt_ratio(ratio["nic_bytes"].get<double>());
    std::snprintf(line, sizeof line, "a2av / zepp: wall time %.3fx, inter-node bytes %s\n", ratio["wall"].get<double>(), bytes.c_str());
    out += line;
    if (ratio.contains("predicted_wall")) {
      std::snprintf(line, sizeof line, "a2av / zepp predicted: wall time %.3fx (measured / predicted ratio %.3f)\n",
                    ratio["predicted_wall"].get<double>(), ratio["wall"].get<double>() / ratio["predicted_wall"].get<double>());
      out += line;
    }
  }
  return out;
}

// Strategies the MPI executor runs: iser-moe's and zepp+hot's in-switch multicast and
// shared-expert tasks have no MPI execution.
bool has_mpi_execution(const std::string& name) { return name != "iser-moe" && name.rfind("zepp+hot", 0) != 0; }

// The checks that need no rank count, before any rank resolves the workload.
void check_flags(const RunFlags& f) {
  require(f.tolerance > 0, "--tolerance", "must be positive");
  require(f.format == "table" || f.format == "json", "--format", "expected table or json");
  std::vector<std::string> names;
  try {
    names = strategy_list(f.strategies, "--strategy");
  } catch (const ArgumentError& e) {  // an unknown name: list what runs here, not the sim-only ones
    const std::string m = e.what();
    if (m.find("unknown strategy") == std::string::npos) throw;
    std::string runnable;
    for (const auto& n : strategy_names())
      if (has_mpi_execution(n)) runnable += (runnable.empty() ? "" : ", ") + n;
    throw ArgumentError(m.substr(0, m.find(", expected one of ")) + ", expected one of " + runnable);
  }
  // The MPI executor refused these only after every rank had planned ("plan: task N: ...").
  for (const auto& name : names)
    require(has_mpi_execution(name), "--strategy",
            name + " runs on the sim executor only (zepp simulate --strategies " + name +
                "): its in-switch multicast and shared-expert tasks have no MPI execution");
  require(f.opt.repeat >= 1, "--repeat", "must be >= 1");
  require_in_range(f.opt.strategy.extra_slots, "--extra-slots", 0, 1 << 16);  // R slots per GPU
  require_in_range(f.opt.strategy.balance_slack, "--balance-slack", 0, 0.999999);
  require_in_range(f.opt.strategy.nic_slack, "--nic-slack", 0, 1e6);
  require(f.opt.strategy.swap_horizon >= 1 && f.opt.strategy.swap_horizon <= 1000000, "--swap-horizon",
          "must be in [1, 1000000] iterations, got " + std::to_string(f.opt.strategy.swap_horizon));
  require(!f.swap_horizon_given || std::find(names.begin(), names.end(), "zepp+swaps") != names.end(), "--swap-horizon",
          "only acts with zepp+swaps in --strategy; leave it out or add that");
  require(!f.extra_slots_given || std::any_of(names.begin(), names.end(), takes_extra_slots), "--extra-slots",
          "only acts with a strategy that replicates experts in --strategy (R extra slots per GPU; a2av, fast, comet, "
          "sglang and zepp-overlap keep one replica per expert); leave it out or add that");
  require(!f.nic_slack_given || std::any_of(names.begin(), names.end(), takes_zepp_ablations), "--nic-slack",
          "only acts with a Zepp strategy in --strategy (zepp, zepp+swaps, zepp-overlap: equation (2)'s NIC split); "
          "leave it out or add that");
  require(std::isfinite(f.tolerance), "--tolerance", "expected a finite positive number");
  // Accepted and ignored before (zepp simulate refuses the first as well).
  require(!f.layer_given || f.layers.empty(), "--layer",
          "only acts with one layer (--layers picks the layers itself); leave it out or add that");
  require(!f.link_sharing_given || !f.predict.empty(), "--link-sharing",
          "only acts with --predict (the sim executor's link model for the prediction); leave it out or add that");
  // The file is read only after every rank has resolved the workload, where a directory read as
  // an empty YAML file and a missing file as "cannot open the topology file", once per rank.
  if (!f.predict.empty()) {
    std::error_code ec;
    const auto type = std::filesystem::status(f.predict, ec).type();
    require(type == std::filesystem::file_type::regular, "--predict",
            "'" + f.predict + "' " +
                (type == std::filesystem::file_type::directory   ? "is a directory"
                 : type == std::filesystem::file_type::not_found
                     ? (std::filesystem::is_symlink(f.predict, ec) ? "is " + absent_kind(f.predict, "") : "does not exist")
                                                                 : "is not a regular file") +
                "; expected a calibrated topology file (written by zepp calibrate)");
  }
  // The size check before MPI starts (prepare repeats it with the rank count): the flags' model
  // on the nodes given, or one node.
  {
    WorkloadFlags sized = f.w;
    sized.strategies = int(names.size());
    sized.zepp_placement = packs_with_zepp(names);
    sized.runs_per_strategy = f.opt.repeat;
    if (!f.nodes_given) sized.nodes = 1;
    check_cost(sized, sized.model_shape(), sized.cluster());
    // Paced sends wait, they take no CPU: the estimate above missed them, and --nic-gbps 1e-6 ran
    // for minutes without a word. A bound: every (token, expert) row crosses a node in dispatch
    // and again in combine, fp32, for every strategy and repeat.
    if (f.w.nic_gbps) {
      const ModelShape m = sized.model_shape();
      const double rows = std::min(tokens_per_gpu(m, f.w.workload.size_mb), 1e15) * m.top_k;
      const double paced_s = 2 * rows * m.hidden * 4.0 / (*f.w.nic_gbps * 1e9) * sized.strategies * f.opt.repeat;
      require(paced_s <= f.w.max_minutes * 60, "--nic-gbps",
              fmt::format("at {:g} GB/s a rank's inter-node rows (fp32, dispatch and combine, every strategy and "
                          "repeat) may take up to {:.3g} s, more than --max-minutes allows ({:g} s); raise the rate "
                          "or --max-minutes, or use a smaller --size-mb",
                          *f.w.nic_gbps, paced_s, f.w.max_minutes * 60));
    }
  }
  f.w.model_shape();
  WorkloadFlags probe = f.w;
  probe.nodes = 1;
  probe.cluster();
}

// Every rank resolves the same workload from the same flags and files; throws what resolve throws.
ResolvedWorkload prepare(RunFlags& f, int size) {
  const auto names = strategy_list(f.strategies, "--strategy");
  WorkloadFlags probe = f.w;
  probe.nodes = 1;
  const int gpn = probe.cluster().gpus_per_node;
  // One rank: most likely started without mpirun (found by a fresh-user check), which the
  // divisibility message alone left the user to guess.
  const std::string alone = " zepp run runs one MPI rank per GPU: start it as mpirun -np " +
                            std::to_string(gpn * (f.nodes_given ? f.w.nodes : 2)) + " zepp run ...";
  require(size % gpn == 0, "--gpus-per-node",
          std::to_string(gpn) + " does not divide the " + std::to_string(size) + " MPI ranks (nodes = ranks / GPUs per node)" +
              (size == 1 ? ";" + alone : ""));
  const int lost = int(f.failed_nodes.size());
  require(!f.nodes_given || f.w.nodes == size / gpn + lost, "--nodes",
          "must equal ranks / --gpus-per-node + lost nodes = " + std::to_string(size / gpn + lost) + " (or be left out)");
  require(lost == 0 || f.layers.empty(), "--failed-nodes", "runs one layer; leave out --layers");
  if (lost > 0) {  // the full cluster's batch and placement, moved onto the surviving ranks
    f.w.nodes = size / gpn + lost;
    const Degraded d = degrade(f.w, f.opt.strategy, f.failed_nodes, resolve(f.w));
    f.w = d.flags;
    f.opt.strategy = d.opt;
    f.degraded = d.report;
  }
  f.w.nodes = size / gpn;
  f.w.strategies = int(names.size());
  f.w.zepp_placement = packs_with_zepp(names);
  f.w.runs_per_strategy = f.opt.repeat;
  if (f.w.nic_gbps) f.opt.exec.nic_bytes_per_s = *f.w.nic_gbps * 1e9;
  f.opt.strategy.optimal = false;
  f.opt.exec.timeline = !f.timeline.empty();
  // Each strategy's placement fits the ranks' cluster, as zepp simulate checks it: eplb on one
  // rank (more slots than experts) was refused only once every rank ran it, by MPI_Abort.
  for (const auto& n : names)
    check_strategy_fits(n, f.w.model_shape(), f.w.cluster(), f.opt.strategy,
                        "the ranks (mpirun -np), --gpus-per-node, --experts or --extra-slots");
  require(f.layers.empty() || (f.timeline.empty() && f.predict.empty()), "--timeline/--predict", "apply to one layer, not with --layers");
  if (!f.timeline.empty()) {  // before any work: a device or folder is refused
    std::vector<std::string> labels;
    for (const auto& n : strategy_list(f.strategies, "--strategy")) labels.insert(labels.end(), {n, n + "-predicted"});
    check_timeline_outputs(f.timeline, labels);
  }
  if (!f.layers.empty()) {  // a stack of layers: each layer's workload, run by run_layers (run_ranks)
    f.stack = prepare_layers(f.w, f.layers);
    return {};
  }
  ResolvedWorkload r = resolve(f.w);
  // The calibrated cluster is read here, on every rank alike, so a file that does not fit the run
  // is refused as the other inputs are: one message, exit 2, no MPI_Abort banner.
  if (!f.predict.empty()) f.calibrated = calibrated_topology_for_run(f.predict, r.topo, f.opt.exec.nic_bytes_per_s);
  return r;
}

// Returns the exit status: 0, or 3 when an output is off the reference by more than the tolerance.
int run_ranks(const RunFlags& f, const ResolvedWorkload& r) {
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto names = strategy_list(f.strategies, "--strategy");
  if (!f.layers.empty()) return run_layers(f.w, f.stack, names, f.format, f.opt, f.tolerance);
  const int gpn = r.topo.gpus_per_node;
  const std::optional<CalibratedCluster>& calibrated = f.calibrated;

  nlohmann::json doc;
  std::ostringstream desc;
  desc << r.workload.description << "; " << size << " ranks = " << r.topo.nodes << " nodes x " << gpn << " GPUs; "
       << r.workload.tokens_per_gpu << " tokens/GPU, hidden " << r.model.hidden << ", ffn " << r.model.ffn
       << ", fp32 rows; NIC pacing " << (f.w.nic_gbps ? std::to_string(*f.w.nic_gbps) + " GB/s" : std::string("off"))
       << "; repeat " << f.opt.repeat;
  doc["workload"] = desc.str();
  doc["ranks"] = size, doc["nodes"] = r.topo.nodes, doc["gpus_per_node"] = gpn;
  doc["tokens_per_gpu"] = r.workload.tokens_per_gpu, doc["hidden"] = r.model.hidden, doc["ffn"] = r.model.ffn;
  doc["nic_gbps"] = f.w.nic_gbps ? nlohmann::json(*f.w.nic_gbps) : nlohmann::json(nullptr);
  doc["tolerance"] = f.tolerance;
  if (!f.degraded.is_null()) doc["degraded"] = f.degraded;
  doc["strategies"] = nlohmann::json::array();
  if (calibrated) doc["predict"] = f.predict;
  double worst = 0;
  std::vector<LayerResult> measured, predicted;  // rank 0, with --timeline / --predict
  for (const auto& name : names) {
    const mpi::StrategyRun run = mpi::run_strategy_mpi(name, r.workload, r.model, r.topo, f.opt, MPI_COMM_WORLD);
    worst = std::isnan(run.max_rel_error) ? run.max_rel_error : std::max(worst, run.max_rel_error);
    nlohmann::json s = mpi::to_json(run, gpn);
    if (me == 0 && f.opt.exec.timeline) {
      measured.emplace_back();
      measured.back().gpus.resize(size_t(size));
      measured.back().timeline = run.timeline;
    }
    if (me == 0 && calibrated) {
      // The same plan on the calibrated cluster (a forked child process runs SimGrid; no MPI
      // there), with its timeline always: the phases are read from it (exec/phases.hpp).
      predicted.push_back(simulate_plan_measured(run.plan, calibrated->topo, calibrated->gemm, true));
      const LayerResult& p = predicted.back();
      double d = 0, c = 0, b = 0;
      for (const PhaseTimes& g : phase_times(p, size))
        d = std::max(d, g.dispatch_end_s), c = std::max(c, g.compute_s), b = std::max(b, g.combine_s);
      s["predicted"] = {{"wall_s", p.latency_s}, {"dispatch_s", d}, {"compute_s", c}, {"combine_s", b}};
      s["measured_over_predicted"] = run.wall_s / p.latency_s;
    }
    doc["strategies"].push_back(std::move(s));
  }
  const nlohmann::json* a2av = nullptr;
  const nlohmann::json* zepp = nullptr;
  for (const auto& s : doc["strategies"]) {
    if (s["strategy"] == "a2av") a2av = &s;
    if (s["strategy"] == "zepp") zepp = &s;
  }
  if (a2av && zepp) {
    const double zn = (*zepp)["nic_bytes"].get<double>();
    doc["a2av_over_zepp"] = {{"wall", (*a2av)["wall_s"].get<double>() / (*zepp)["wall_s"].get<double>()},
                             {"nic_bytes", zn > 0 ? nlohmann::json((*a2av)["nic_bytes"].get<double>() / zn) : nlohmann::json(nullptr)}};
    if (a2av->contains("predicted"))
      doc["a2av_over_zepp"]["predicted_wall"] =
          (*a2av)["predicted"]["wall_s"].get<double>() / (*zepp)["predicted"]["wall_s"].get<double>();
  }
  if (me == 0 && !f.timeline.empty()) {
    std::vector<LabelledTimeline> timelines;
    for (size_t i = 0; i < names.size(); ++i) {
      timelines.push_back({names[i], &measured[i], names[i] + ": one MoE layer under MPI (measured)"});
      if (calibrated) timelines.push_back({names[i] + "-predicted", &predicted[i], names[i] + ": predicted on " + f.predict});
    }
    write_timelines(f.timeline, timelines, gpn);
  }
  if (me == 0) {
    const std::string text = f.format == "json" ? json_text(doc, 2) + "\n" : table(doc);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
  if (!(worst <= f.tolerance)) {
    if (me == 0) std::fprintf(stderr, "zepp run: verification failed: max relative error %.3e exceeds --tolerance %.3e\n", worst, f.tolerance);
    return 3;
  }
  return 0;
}

}  // namespace

void add_run(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run", "Execute one MoE layer for real under MPI (mpirun -np <GPUs> zepp run ...): "
                                            "fp32 rows, SwiGLU experts, outputs checked against a dense reference");
  f->w.add_to(cmd);
  // The ranks set the nodes here: the shared help's "=4" was no default of this command.
  cmd->get_option("--nodes")
      ->description("Number of nodes N: ranks / --gpus-per-node (plus the --failed-nodes) when left out; given, it "
                    "must equal that")
      ->default_str("");
  cmd->add_option("--strategy,--strategies", f->strategies, "Comma-separated strategies run one after another: a2av, eplb, zepp, ...")
      ->capture_default_str();
  cmd->add_option("--format", f->format, "Output: table or json")->capture_default_str();
  cmd->add_option("--data-seed", f->opt.exec.data_seed, "Seed of token activations and expert weights")->capture_default_str()->check(non_negative);
  cmd->add_option("--tolerance", f->tolerance, "Largest relative error to the dense reference before exiting with status 3")
      ->capture_default_str();
  cmd->add_option("--repeat", f->opt.repeat, "Runs per strategy (fastest wall time reported; outputs must not change)")
      ->capture_default_str();
  cmd->add_option("--layers", f->layers, "Run consecutive MoE layers ('all' or a list such as 1-3): each layer's output, after a "
                                         "residual add and a norm, is the next one's input; checked against a dense reference of the stack");
  cmd->add_option("--extra-slots", f->opt.strategy.extra_slots, "R: extra expert slots per GPU (paper §4.1)")->capture_default_str();
  cmd->add_option("--balance-slack", f->opt.strategy.balance_slack, "C: replica load within (1 +- C) q (equation 1)")->capture_default_str();
  cmd->add_option("--nic-slack", f->opt.strategy.nic_slack, "C_NIC of equation (2)")->capture_default_str();
  cmd->add_option("--swap-horizon", f->opt.strategy.swap_horizon,
                  "zepp+swaps: iterations a swap's compute saving is summed over against the unhidden part of its "
                  "weight transfer (paper §4.3; as zepp simulate)")
      ->capture_default_str();
  cmd->add_option("--failed-nodes", f->failed_nodes,
                  "Lost nodes (comma-separated ids) of a cluster of ranks / --gpus-per-node + lost nodes: the ranks are "
                  "its surviving GPUs, running the full cluster's batch with every GPU keeping its slots")
      ->delimiter(',');
  cmd->add_option("--timeline", f->timeline,
                  "Write FILE-<strategy>.json (Chrome trace, one process per rank, as zepp simulate writes) and .svg (with its "
                  "gnuplot data and script as .svg.dat and .svg.gp), "
                  "from the executor's own timestamps (fastest repeat). In file names a strategy's '/' and '+' become '_' "
                  "(zepp/no-split: FILE-zepp_no-split.json)");
  cmd->add_option("--predict", f->predict,
                  "Calibrated topology file (zepp calibrate): also simulate each executed plan on it and print measured vs "
                  "predicted wall time and phases (with --timeline, FILE-<strategy>-predicted.json too)");
  cmd->callback([f, cmd] {
    f->nodes_given = cmd->count("--nodes") > 0;
    f->swap_horizon_given = cmd->count("--swap-horizon") > 0;
    f->layer_given = cmd->count("--layer") > 0;
    f->link_sharing_given = cmd->count("--link-sharing") > 0;
    f->nic_slack_given = cmd->count("--nic-slack") > 0;
    f->extra_slots_given = cmd->count("--extra-slots") > 0;
    // Flag errors too go through the one-reporter path (prepare): a rank that exits on its own
    // before MPI_Init can make mpirun kill rank 0 before it has printed the message.
    auto r = std::make_shared<ResolvedWorkload>();
    run_under_mpi(
        "run",
        [f, r, cmd] {
          check_flags(*f);
          check_workload_modes(*cmd, f->w);
          int me = 0, size = 0;
          MPI_Comm_rank(MPI_COMM_WORLD, &me);
          MPI_Comm_size(MPI_COMM_WORLD, &size);
          if (me != 0) silence_trace_warnings();
          *r = prepare(*f, size);
        },
        [f, r] { return run_ranks(*f, *r); });
  });
}

}  // namespace zepp::cli
