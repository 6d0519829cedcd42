// `zepp experiment`: the paper's Figures 9 and 10 as sweeps on the `sim` executor, and the
// reproduction report beside the published numbers (issue 5).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/serve.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"
#include "core/output_file.hpp"
#include "core/provenance.hpp"
#include "core/topology_file.hpp"
#include "experiments/experiments.hpp"
#include "experiments/fig11.hpp"
#include "experiments/report.hpp"

namespace zepp::cli {
namespace {

struct SweepFlags {
  experiments::SweepOptions opt;
  std::string plots_dir = "results";
  std::string link_sharing = "fair";
  std::string planning = "model";
  std::vector<std::string> workloads, strategies, topologies;
  std::vector<int> nodes;
  std::vector<double> sizes;
};

// Narrows the figure's configurations to what the flags name (unknown workloads are errors).
experiments::SweepSpec narrowed(experiments::SweepSpec spec, const SweepFlags& f) {
  if (!f.workloads.empty()) {
    std::vector<experiments::WorkloadSpec> keep;
    for (const auto& name : f.workloads) {
      auto it = std::find_if(spec.workloads.begin(), spec.workloads.end(), [&](const auto& w) { return w.name == name; });
      std::string known;
      for (const auto& w : spec.workloads) known += (known.empty() ? "" : ", ") + w.name;
      require(it != spec.workloads.end(), "--workloads", "unknown workload '" + name + "', expected one of " + known);
      keep.push_back(*it);
    }
    spec.workloads = keep;
  }
  if (!f.strategies.empty()) spec.strategies = f.strategies;
  if (!f.topologies.empty()) spec.topologies = f.topologies;
  for (const auto& t : f.topologies) cluster_topology(t, 1, "--topologies");  // before the sweep, naming the flag
  if (!f.nodes.empty()) spec.nodes = f.nodes;
  if (!f.sizes.empty()) spec.sizes_mb = f.sizes;
  return spec;
}

// Every configuration's size within `zepp simulate`'s bound (check_experiment_size), before any
// runs: 1e6 MB per GPU grew a worker's memory without bound.
void check_sizes(const experiments::SweepSpec& spec) {
  for (const auto& ws : spec.workloads)
    for (const auto& t : spec.topologies)
      for (int n : spec.nodes) {
        if (n < 1) continue;  // refused by run_sweep, naming --nodes
        const Topology topo = cluster_topology(t, n, "--topologies");
        for (double mb : spec.sizes_mb)
          check_experiment_size("--sizes", mb,
                                fmt::format("{} configuration {} {} N={}", spec.experiment, ws.name, t, n),
                                model_preset(ws.model), topo, int(spec.strategies.size()),
                                packs_with_zepp(spec.strategies));
      }
}

void run_figure(const experiments::SweepSpec& base, const SweepFlags& f) {
  const experiments::SweepSpec spec = narrowed(base, f);
  check_sizes(spec);
  experiments::SweepOptions opt = f.opt;
  if (opt.csv_path.empty()) opt.csv_path = f.plots_dir + "/" + spec.experiment + ".csv";
  // Outputs checked before the sweep: a device, FIFO or folder is refused, never replaced. --plots
  // first: the default CSV is in it, and a bad --plots was reported as a bad --csv.
  check_output_dir(f.plots_dir, "--plots");
  check_output_file(opt.csv_path, "--csv");
  // The same path as both (neither existing yet) failed only after the sweep, naming "out_dir".
  require(std::filesystem::absolute(opt.csv_path).lexically_normal() !=
              std::filesystem::absolute(f.plots_dir).lexically_normal(),
          "--csv", opt.csv_path + " is also the --plots folder: name a file for the results and a folder for the plots");
  if (spec.experiment == "fig9") {
    std::vector<std::string> workloads;
    for (const auto& w : spec.workloads) workloads.push_back(w.name);
    experiments::check_fig9_files(f.plots_dir, workloads, "--plots");
  } else {
    experiments::check_fig10_files(f.plots_dir, "--plots");
  }
  std::filesystem::create_directories(std::filesystem::path(opt.csv_path).parent_path().empty()
                                          ? std::filesystem::path(".")
                                          : std::filesystem::path(opt.csv_path).parent_path());
  experiments::run_sweep(spec, opt);

  const auto rows = experiments::read_results(opt.csv_path);
  const auto svgs = spec.experiment == "fig9" ? experiments::plot_fig9(rows, f.plots_dir)
                                              : experiments::plot_fig10(rows, f.plots_dir);
  std::printf("results: %s\n", opt.csv_path.c_str());
  for (const auto& s : svgs) std::printf("figure: %s\n", s.c_str());
  const auto best = experiments::speedup_over_best(rows);
  if (spec.experiment == "fig9" && !best.empty())
    std::printf("geometric mean speedup of zepp over the fastest other strategy: %.2fx (%zu configurations)\n",
                experiments::geometric_mean(best), best.size());
}

void add_sweep(CLI::App* parent, const std::string& name, const std::string& help, experiments::SweepSpec (*spec)()) {
  auto f = std::make_shared<SweepFlags>();
  f->opt.jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  CLI::App* cmd = parent->add_subcommand(name, help);
  cmd->add_option("--traces", f->opt.traces_dir, "Folder of the real traces (shared/data/traces)")->capture_default_str();
  cmd->add_option("--csv", f->opt.csv_path, "Results CSV (default: PLOTS/" + name + ".csv); rewritten unless --resume");
  cmd->add_option("--plots", f->plots_dir, "Folder for the CSV default, the SVG figures and their gnuplot scripts")->capture_default_str();
  cmd->add_flag("--resume", f->opt.resume, "Keep the CSV and run only the rows it lacks: new configurations, and strategies of --strategies a configuration has no row for (refused when the CSV was made with other --planning, --link-sharing, --seed, --extra-slots, --balance-slack or --nic-slack)");
  cmd->add_option("--jobs", f->opt.jobs, "Configurations simulated at once (default: CPU count)");
  cmd->add_option("--workloads", f->workloads, "Only these workloads (comma-separated)")->delimiter(',');
  cmd->add_option("--strategies", f->strategies, "Strategies to run (comma-separated; must include a2av)")->delimiter(',');
  cmd->add_option("--topologies", f->topologies, "Cluster presets or topology files (comma-separated; docs/topology.md)")->delimiter(',');
  cmd->add_option("--nodes", f->nodes, "Node counts (comma-separated)")->delimiter(',');
  cmd->add_option("--sizes", f->sizes, "MiB of BF16 activations per GPU (comma-separated)")->delimiter(',');
  cmd->add_option("--seed", f->opt.seed, "Sampling seed")->capture_default_str()->check(non_negative);
  cmd->add_option("--extra-slots", f->opt.strategy.extra_slots, "R: extra expert slots per GPU (paper §6.1: 2)")->capture_default_str();
  cmd->add_option("--balance-slack", f->opt.strategy.balance_slack, "C of equation (1)")->capture_default_str();
  cmd->add_option("--nic-slack", f->opt.strategy.nic_slack, "C_NIC of equation (2)")->capture_default_str();
  cmd->add_option("--link-sharing", f->link_sharing, "Links: fair (max-min, concurrent flows), serial (one transfer at a time) or pair (one in flight per GPU pair)")
      ->capture_default_str();
  cmd->add_option("--planning", f->planning,
                  "Per-batch metadata exchange and planning: model (charged in latency_us) or free (left out)")
      ->capture_default_str();
  cmd->callback([f, spec] {
    require_distinct(f->workloads, "--workloads");
    require_distinct(f->strategies, "--strategies");
    require_distinct(f->topologies, "--topologies");
    require_distinct(f->nodes, "--nodes");
    require_distinct(f->sizes, "--sizes");
    f->opt.link_sharing = parse_link_sharing(f->link_sharing, "--link-sharing");
    require(f->planning == "model" || f->planning == "free", "--planning", "expected model or free, got '" + f->planning + "'");
    f->opt.strategy.planning = f->planning == "model" ? PlanningMode::Model : PlanningMode::Free;
    require_in_range(f->opt.strategy.extra_slots, "--extra-slots", 0, 1 << 16);  // R slots per GPU
    require(f->opt.strategy.balance_slack >= 0 && f->opt.strategy.balance_slack < 1, "--balance-slack", "must be in [0, 1)");
    require(f->opt.strategy.nic_slack >= 0, "--nic-slack", "must be >= 0");
    run_figure(spec(), *f);
  });
}

struct ReportFlags {
  std::string fig9, fig10, fig11, fig9_serial, fig9_pair, fig9_free, out = "docs/reproduction.md", figures_dir;
  bool allow_mixed_commits = false;
};

struct Fig11Flags {
  std::string traces = "../shared/data/traces", csv, plots = "results";
  std::vector<double> sizes;
  StrategyOptions opt;
};

void run_fig11_cmd(const Fig11Flags& f) {
  experiments::Fig11Spec spec = experiments::fig11_spec();
  require_distinct(f.sizes, "--sizes");
  if (!f.sizes.empty()) spec.sizes_mb = f.sizes;
  for (double mb : spec.sizes_mb) require(mb > 0 && std::isfinite(mb), "--sizes", "must be positive numbers");
  require_in_range(f.opt.extra_slots, "--extra-slots", 0, 1 << 16);  // R slots per GPU, as fig9's
  {  // each size within `zepp simulate`'s bound, one MoE layer's run taken once per MoE layer
    const ModelShape model = model_preset(spec.model);
    const Topology topo = cluster_topology(spec.topology, spec.nodes);
    for (double mb : spec.sizes_mb)
      check_experiment_size("--sizes", mb,
                            fmt::format("fig11 configuration {} {} N={} ({} MoE layers)", spec.model, spec.topology,
                                        spec.nodes, model.moe_layers),
                            model, topo, int(spec.systems.size()), packs_with_zepp(spec.systems), std::max(1, model.moe_layers));
  }
  const std::string csv = f.csv.empty() ? f.plots + "/fig11.csv" : f.csv;
  check_output_dir(f.plots, "--plots");  // first: the default CSV is in it
  check_output_file(csv, "--csv");
  experiments::check_fig11_files(f.plots, "--plots");
  const auto dir = std::filesystem::path(csv).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  const auto rows = experiments::run_fig11(spec, f.traces, csv, f.opt, stderr);
  std::printf("results: %s\nfigure: %s\n", csv.c_str(), experiments::plot_fig11(rows, f.plots).c_str());
  for (const auto& r : rows)
    if (r.system != spec.systems[0])
      std::printf("%5g MB %-7s %s over %s: %.2fx\n", r.size_mb, r.phase.c_str(), r.system.c_str(), spec.systems[0].c_str(), r.speedup);
}

void run_report(const ReportFlags& f) {
  require(!f.fig9.empty() || !f.fig10.empty(), "--fig9/--fig10", "name at least one results CSV");
  // Figure 11's results sit beside Figure 9's (docs/results/): a regeneration that does not
  // name them keeps their section.
  std::string fig11_csv = f.fig11;
  if (fig11_csv.empty() && !f.fig9.empty()) {
    const auto beside = std::filesystem::path(f.fig9).parent_path() / "fig11.csv";
    if (std::filesystem::exists(beside)) fig11_csv = beside.string();
  }
  check_output_file(f.out, "--out");
  // The report replaced a results CSV given as --out (found by a fresh-user review).
  for (const auto& [flag, in] : {std::pair{"--fig9", f.fig9}, {"--fig10", f.fig10}, {"--fig11", fig11_csv},
                                 {"--fig9-serial", f.fig9_serial}, {"--fig9-pair", f.fig9_pair}, {"--fig9-free", f.fig9_free}}) {
    std::error_code ec;
    require(in.empty() || !std::filesystem::equivalent(in, f.out, ec), "--out",
            f.out + " is the " + flag + " results CSV; the report would replace it: name another file");
  }
  const std::filesystem::path out(f.out);
  const std::filesystem::path dir = out.parent_path().empty() ? "." : out.parent_path();
  const std::filesystem::path figs = f.figures_dir.empty() ? dir / "figures" : std::filesystem::path(f.figures_dir);
  check_output_dir(figs.string(), "--figures");
  // Each file's provenance line (core/provenance.hpp): one report, one program, unless asked.
  experiments::MadeBy made_by;
  std::vector<experiments::ReportInput> inputs;  // each sweep CSV with its flag, for check_report_inputs
  auto results = [&](const std::string& flag, const std::string& path) {
    experiments::ReportInput in{flag, path, {}, std::nullopt};
    if (!path.empty()) {
      in.rows = experiments::read_results(path, &in.made_by);
      made_by.emplace_back(path, in.made_by);
    }
    inputs.push_back(in);
    return in.rows;
  };
  const auto fig9 = results("--fig9", f.fig9);
  const auto fig10 = results("--fig10", f.fig10);
  const auto serial = results("--fig9-serial", f.fig9_serial);
  const auto pair = results("--fig9-pair", f.fig9_pair);
  const auto fig9_free = results("--fig9-free", f.fig9_free);
  std::vector<experiments::Fig11Row> fig11;
  if (!fig11_csv.empty()) {
    std::optional<Provenance> p;
    fig11 = experiments::read_fig11(fig11_csv, &p);
    made_by.emplace_back(fig11_csv, p);
  }
  if (!f.allow_mixed_commits) experiments::check_one_commit(made_by, "--fig9/--fig10/--fig11/--fig9-serial/--fig9-pair/--fig9-free");
  // Speedup bases, experiments and the settings each section describes, before anything is drawn.
  experiments::check_report_inputs(inputs);
  {  // every figure's files before the first is drawn
    std::vector<std::string> workloads;
    for (const auto& r : fig9)
      if (std::find(workloads.begin(), workloads.end(), r.workload) == workloads.end()) workloads.push_back(r.workload);
    experiments::check_fig9_files(figs.string(), workloads, "--figures");
    if (!fig10.empty()) experiments::check_fig10_files(figs.string(), "--figures");
    if (!fig11.empty()) experiments::check_fig11_files(figs.string(), "--figures");
  }
  const std::string provenance = experiments::provenance_markdown(made_by);
  if (std::none_of(made_by.begin(), made_by.end(), [](const auto& m) { return m.second.has_value(); }))
    std::fprintf(stderr, "zepp: warning: no results CSV says which program made it (written before zepp recorded its "
                         "commit in the first line); the report says so\n");
  std::vector<std::string> links;
  auto keep = [&](const std::vector<std::string>& svgs) {
    for (const auto& s : svgs) links.push_back(std::filesystem::relative(s, dir).string());
  };
  if (!fig9.empty()) keep(experiments::plot_fig9(fig9, figs.string()));
  if (!fig10.empty()) keep(experiments::plot_fig10(fig10, figs.string()));
  std::string md = experiments::reproduction_markdown(fig9, fig10, f.fig9, f.fig10, links, serial, provenance, fig9_free, pair);
  if (!fig11.empty())
    md += experiments::fig11_markdown(fig11, fig11_csv,
                                      std::filesystem::relative(experiments::plot_fig11(fig11, figs.string()), dir).string());
  write_file_atomically(f.out, md, "--out");
  std::printf("report: %s\n", f.out.c_str());
  if (const size_t n = links.size() + (fig11.empty() ? 0 : 1); n > 0)
    std::printf("figures: %zu SVGs and their gnuplot scripts in %s (--figures)\n", n, figs.string().c_str());
  for (const auto& [path, p] : made_by) std::printf("  %s: %s\n", path.c_str(), describe(p).c_str());
}

}  // namespace

void add_experiment(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "experiment", "The paper's evaluation: fig9, fig10, fig11, fig12, replay, validate and the reproduction report (report); iser-replay (ISER-MoE's replay setting) and iser-broadcast (its Figure 8(a) multicast)");
  cmd->require_subcommand(1);
  add_sweep(cmd, "fig9", "Figure 9: 4/8/16 nodes x 1/4/16 MB per GPU x four workloads on a100, every baseline",
            &experiments::fig9_spec);
  add_sweep(cmd, "fig10", "Figure 10: weak scaling of the Kimi-K2 shape, 2-32 nodes, 1 and 64 MB, a100 and h100",
            &experiments::fig10_spec);
  add_drift_experiments(cmd);  // fig12 and replay (src/cli/drift_experiments.cpp)
  auto f11 = std::make_shared<Fig11Flags>();
  CLI::App* c11 = cmd->add_subcommand("fig11", "Figure 11: Qwen3-30B-A3B end to end, prefill TPS and decode TPOT of zepp over "
                                               "sglang at 1-16 MB per GPU (whole model, src/model/)");
  c11->add_option("--traces", f11->traces, "Folder of the real traces (shared/data/traces)")->capture_default_str();
  c11->add_option("--csv", f11->csv, "Results CSV (default: PLOTS/fig11.csv)");
  c11->add_option("--plots", f11->plots, "Folder for the CSV default, the SVG and its gnuplot script")->capture_default_str();
  c11->add_option("--sizes", f11->sizes, "MiB per GPU (comma-separated; default 1,2,4,8,16)")->delimiter(',');
  c11->add_option("--extra-slots", f11->opt.extra_slots, "R: extra expert slots per GPU (paper §6.1: 2)")->capture_default_str();
  c11->callback([f11] { run_fig11_cmd(*f11); });
  add_validate(cmd);           // measured vs predicted under MPI (src/cli/validate.cpp)
  auto f = std::make_shared<ReportFlags>();
  CLI::App* rep = cmd->add_subcommand("report", "docs/reproduction.md: our numbers beside the paper's, from the CSVs");
  rep->add_option("--fig9", f->fig9, "Figure 9 results CSV");
  rep->add_option("--fig10", f->fig10, "Figure 10 results CSV");
  rep->add_option("--fig11", f->fig11, "Figure 11 results CSV (zepp experiment fig11; default: fig11.csv beside --fig9 when it exists); its section follows");
  rep->add_option("--fig9-serial", f->fig9_serial,
                  "Figure 9 results CSV run with --link-sharing serial (adds the link-sharing sensitivity section)");
  rep->add_option("--fig9-pair", f->fig9_pair,
                  "Figure 9 results CSV run with --link-sharing pair (adds it to the link-sharing sensitivity section)");
  rep->add_option("--fig9-free", f->fig9_free,
                  "Figure 9 results CSV run with --planning free (adds the planning charged / left out section)");
  rep->add_option("--out", f->out, "Markdown file to write")->capture_default_str();
  rep->add_option("--figures", f->figures_dir, "Folder for the SVG figures (default: figures/ beside --out)");
  rep->add_flag("--allow-mixed-commits", f->allow_mixed_commits,
                "Report CSVs made by different commits of zepp together (refused by default; each file's commit is named)");
  rep->callback([f] { run_report(*f); });
}

}  // namespace zepp::cli
