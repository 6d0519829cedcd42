// `zepp experiment fig12` (the paper's §6.5 ablation under drifting demand) and
// `zepp experiment replay` (excess load removed and weight bytes per iteration, as
// iser-moe.txt §6.1 reports them), issue 6 items 4 and 5.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/serve.hpp"
#include "core/error.hpp"
#include "core/figure.hpp"
#include "core/output_file.hpp"
#include "core/presets.hpp"
#include "core/provenance.hpp"
#include "pipeline/cost.hpp"
#include "serving/experiments.hpp"
#include "serving/iser_broadcast.hpp"
#include "serving/iser_replay.hpp"
#include "core/topology_file.hpp"

namespace zepp::cli {
namespace {

// CLI::PositiveNumber said "Value 0 not in range 0.000000 to 1797693...(309 digits)".
std::string at_least_one(const std::string& value) {
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  return end != value.c_str() && *end == '\0' && v >= 1 ? "" : "expected a whole number >= 1, got '" + value + "'";
}

struct DriftFlags {
  DriftExperimentOptions opt;
  std::string link_sharing = "fair";
  std::string out_dir = "results";
  std::vector<std::string> workloads;
};

void add_common(CLI::App* cmd, DriftFlags& f) {
  cmd->add_option("--traces", f.opt.traces_dir, "Folder of the real traces (shared/data/traces)")->capture_default_str();
  cmd->add_option("--out", f.out_dir, "Folder for the CSV, markdown table and figure")->capture_default_str();
  cmd->add_option("--workloads", f.workloads, "Only these workloads: llama4, qwen3, deepseek (comma-separated)")
      ->delimiter(',');
  cmd->add_option("--topology", f.opt.topology, "Cluster preset or topology file (docs/topology.md)")->capture_default_str();
  cmd->add_option("--nodes", f.opt.nodes, "Nodes")->capture_default_str();
  cmd->add_option("--size-mb", f.opt.size_mb, "MiB of BF16 activations per GPU per iteration")->capture_default_str();
  cmd->add_option("--only-iterations", f.opt.only_iterations, "Iterations of the `only` scenario")->capture_default_str();
  cmd->add_option("--period", f.opt.period, "Rotating: iterations per dataset")->capture_default_str();
  cmd->add_option("--systems", f.opt.systems, "Systems, the first is the speedup baseline (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--seed", f.opt.seed, "Sampling seed (load-only traces)")->capture_default_str()->check(non_negative);
  cmd->add_option("--extra-slots", f.opt.strategy.extra_slots, "R: extra slots per GPU")->capture_default_str();
  cmd->add_option("--balance-slack", f.opt.strategy.balance_slack, "C of equation (1) and of the swap trigger")
      ->capture_default_str();
  cmd->add_option("--link-sharing", f.link_sharing, "Links: fair (max-min, concurrent flows), serial (one transfer at a time) or pair (one in flight per GPU pair)")
      ->capture_default_str();
}

// The cases of the workloads --workloads names (every case without it); a name no case has is
// refused (a misspelt one was dropped without a word).
template <class Case>
std::vector<Case> named_cases(const std::vector<Case>& all, const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (const auto& c : all)
    if (std::find(known.begin(), known.end(), c.workload) == known.end()) known.push_back(c.workload);
  std::string listed;
  for (const auto& k : known) listed += (listed.empty() ? "" : ", ") + k;
  require_distinct(names, "--workloads");
  for (const auto& n : names)
    require(std::find(known.begin(), known.end(), n) != known.end(), "--workloads",
            "unknown workload '" + n + "', expected some of " + listed);
  std::vector<Case> out;
  for (const auto& c : all)
    if (names.empty() || std::find(names.begin(), names.end(), c.workload) != names.end()) out.push_back(c);
  return out;
}

void run(DriftFlags f, const std::string& name) {
  f.opt.link_sharing = parse_link_sharing(f.link_sharing, "--link-sharing");
  // The experiment resolves the cluster itself, naming its arguments ("topology: ..."): here the flags.
  require(f.opt.nodes >= 1, "--nodes", "must be at least 1, got " + std::to_string(f.opt.nodes));
  const Topology topo = cluster_topology(f.opt.topology, f.opt.nodes, "--topology");
  // So are these, some only after other systems have run ("period: must be >= 1").
  require(f.opt.only_iterations >= 1, "--only-iterations", "expected iterations >= 1, got " + std::to_string(f.opt.only_iterations));
  require(f.opt.period >= 1, "--period", "expected iterations per dataset >= 1, got " + std::to_string(f.opt.period));
  require_in_range(f.opt.strategy.extra_slots, "--extra-slots", 0, 1 << 16);  // R slots per GPU
  std::string systems;
  for (const auto& s : f.opt.systems) systems += (systems.empty() ? "" : ",") + s;
  strategy_list(systems, "--systems");  // known names, none twice
  const std::vector<DriftCase> cases = named_cases(fig12_cases(), f.workloads);
  // Each system's placement fits each workload's model, as `zepp simulate` checks its strategies
  // (--extra-slots above the experts failed at the placement, after the traces were read).
  for (const DriftCase& c : cases) {
    try {
      for (const auto& s : f.opt.systems)
        check_strategy_fits(s, model_preset(c.model), topo, f.opt.strategy, "--nodes, --topology, --extra-slots or --systems");
    } catch (const ArgumentError& e) {
      throw ArgumentError(c.workload + " (" + c.model + "): " + e.what());
    }
  }
  // Each workload's size within `zepp simulate`'s bound, per served iteration (1e6 MB per GPU grew
  // memory without bound; the rotating scenario's iteration count is known once the trace is read).
  for (const DriftCase& c : cases)
    check_experiment_size("--size-mb", f.opt.size_mb, name + " workload " + c.workload + " (" + c.model + ") on " +
                                                          f.opt.topology + " N=" + std::to_string(f.opt.nodes) +
                                                          ", each iteration",
                          model_preset(c.model), topo, int(f.opt.systems.size()), packs_with_zepp(f.opt.systems));
  const std::string base = f.out_dir + "/" + name;
  check_output_dir(f.out_dir, "--out");  // before the experiment: outputs that cannot be written
  for (const char* ext : {".csv", ".md"}) check_output_file(base + ext, "--out");
  if (f.opt.simulate) check_figure_files(base, {".dat"}, "--out");
  const auto rows = run_drift_experiment(cases, f.opt);
  std::filesystem::create_directories(f.out_dir);
  write_file_atomically(base + ".csv", provenance_line() + drift_csv(rows), "--out");
  const std::string md = drift_markdown(rows, f.opt.simulate);
  write_file_atomically(base + ".md", md, "--out");
  if (f.opt.simulate)
    plot_drift_speedups(rows, base, "Figure 12 analogue: speedup over " + f.opt.systems.front() + ", " +
                                        std::to_string(f.opt.nodes) + " nodes, " + std::to_string(int(f.opt.size_mb)) +
                                        " MB per GPU");
  std::fputs(md.c_str(), stdout);
  std::printf("results: %s.csv, %s.md%s\n", base.c_str(), base.c_str(), f.opt.simulate ? (", " + base + ".svg").c_str() : "");
}

// `zepp experiment iser-replay`: HALO-Q in ISER-MoE's own replay setting (serving/iser_replay.hpp).
struct IserFlags {
  IserReplayOptions opt;
  std::string out_dir = "results";
  std::vector<std::string> workloads;
};

void run_iser(IserFlags f) {
  require_distinct(f.opt.ep, "--ep");
  require_distinct(f.opt.helper_slots, "--helper-slots");
  const std::vector<IserReplayCase> cases = named_cases(iser_replay_cases(), f.workloads);
  const std::string base = f.out_dir + "/iser-replay";
  check_output_dir(f.out_dir, "--out");
  for (const char* ext : {".csv", ".md"}) check_output_file(base + ext, "--out");
  std::vector<IserReplayRow> rows;
  try {
    rows = run_iser_replay(cases, f.opt);
  } catch (const ArgumentError& e) {  // name the flags, not the library's arguments
    const std::string what = e.what();
    for (const auto& [arg, flag] : {std::pair<std::string, std::string>{"ep:", "--ep:"},
                                    {"helper_slots:", "--helper-slots:"},
                                    {"tokens_per_rank:", "--tokens-per-rank:"},
                                    {"iterations:", "--iterations:"}})
      if (what.rfind(arg, 0) == 0) throw ArgumentError(flag + what.substr(arg.size()));
    throw;
  }
  std::filesystem::create_directories(f.out_dir);
  write_file_atomically(base + ".csv", provenance_line() + iser_replay_csv(rows), "--out");
  const std::string md = iser_replay_markdown(rows, f.opt);
  write_file_atomically(base + ".md", md, "--out");
  std::fputs(md.c_str(), stdout);
  std::printf("results: %s.csv, %s.md\n", base.c_str(), base.c_str());
}

}  // namespace

void add_drift_experiments(CLI::App* experiment) {
  auto fig12 = std::make_shared<DriftFlags>();
  fig12->opt.systems = {"comet", "zepp-overlap", "zepp", "zepp+swaps"};
  CLI::App* cmd = experiment->add_subcommand(
      "fig12", "Figure 12: comet, Zepp's overlap alone, + placement and routing, + swaps; only and rotating drift (sim)");
  add_common(cmd, *fig12);
  cmd->callback([fig12] { run(*fig12, "fig12"); });

  auto replay = std::make_shared<DriftFlags>();
  replay->opt.simulate = false;
  replay->opt.size_mb = 4;
  replay->opt.systems = {"zepp", "zepp+swaps", "moonep", "halo-q"};
  CLI::App* rp = experiment->add_subcommand(
      "replay", "Excess load removed and weight bytes per iteration (iser-moe §6.1 replay), decisions only");
  add_common(rp, *replay);
  rp->callback([replay] { run(*replay, "replay"); });

  auto iser = std::make_shared<IserFlags>();
  CLI::App* ir = experiment->add_subcommand(
      "iser-replay",
      "HALO-Q in ISER-MoE's replay setting (iser-moe §6.1, Figure 7): one NVLink domain, EP 4-24, every layer, "
      "each (iteration, layer) planned independently; decisions only");
  ir->add_option("--traces", iser->opt.traces_dir, "Folder of the real traces (shared/data/traces)")->capture_default_str();
  ir->add_option("--out", iser->out_dir, "Folder for iser-replay.csv and iser-replay.md")->capture_default_str();
  ir->add_option("--workloads", iser->workloads, "Only these workloads: deepseek, llama4, qwen3 (comma-separated)")
      ->delimiter(',');
  ir->add_option("--ep", iser->opt.ep, "EP degrees (ranks in the NVLink domain), even and >= 4")
      ->delimiter(',')
      ->capture_default_str();
  ir->add_option("--helper-slots", iser->opt.helper_slots, "S: helper slots per rank (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  ir->add_option("--tokens-per-rank", iser->opt.tokens_per_rank, "Tokens per rank per iteration (before top-k)")
      ->capture_default_str()
      ->check(at_least_one);
  ir->add_option("--iterations", iser->opt.iterations, "Iterations per layer")->capture_default_str()->check(at_least_one);
  ir->add_option("--seed", iser->opt.seed, "Sampling seed (load-only traces)")->capture_default_str()->check(non_negative);
  ir->callback([iser] { run_iser(*iser); });

  // `zepp experiment iser-broadcast`: our multicast / SAMI model against Figure 8(a).
  auto bc = std::make_shared<std::pair<std::string, std::string>>("gb200-nvl72", "results");
  CLI::App* ib = experiment->add_subcommand(
      "iser-broadcast", "In-switch multicast and SAMI model vs ISER-MoE's Figure 8(a) (one broadcast, g = 4, 8, 16)");
  ib->add_option("--topology", bc->first, "NVSwitch preset or topology file with multicast")->capture_default_str();
  ib->add_option("--out", bc->second, "Folder for iser-broadcast.md")->capture_default_str();
  ib->callback([bc] {
    const Topology topo = cluster_topology(bc->first, 1, "--topology");
    // run_iser_broadcast's own checks name its argument ("topo: dgx-h100 has fewer than ...").
    require(topo.nvlink_model == NvlinkModel::Switch && topo.multicast_port_output > 0, "--topology",
            "expected an NVSwitch topology with in-switch multicast (e.g. gb200-nvl72), got " + bc->first);
    require(topo.gpus_per_node >= 16, "--topology",
            "expected at least 16 GPUs per NVLink domain (Figure 8(a) multicasts to 16; e.g. gb200-nvl72), got " +
                std::to_string(topo.gpus_per_node) + " in " + bc->first);
    const std::string path = bc->second + "/iser-broadcast.md";
    check_output_dir(bc->second, "--out");
    check_output_file(path, "--out");
    const std::string md = iser_broadcast_markdown(run_iser_broadcast(topo), topo);
    std::filesystem::create_directories(bc->second);
    write_file_atomically(path, md, "--out");
    std::fputs(md.c_str(), stdout);
  });
}

}  // namespace zepp::cli
