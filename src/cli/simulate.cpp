// `zepp simulate`: one MoE layer invocation under each strategy, side by side (issue 2 item 9).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/degraded.hpp"
#include "cli/model.hpp"
#include "cli/options.hpp"
#include "cli/serve.hpp"
#include "cli/timelines.hpp"
#include "core/error.hpp"
#include "core/measured_compute.hpp"
#include "exec/sim_measured.hpp"
#include "formats/json_text.hpp"
#include "pipeline/cost.hpp"
#include "pipeline/strategy.hpp"
#include "pipeline/variants.hpp"
#include "report/summary.hpp"
#include "routing/routing.hpp"
#include "serving/serve.hpp"

namespace zepp::cli {
namespace {

struct SimulateFlags {
  WorkloadFlags w;
  std::string strategies = "a2av,eplb,zepp";
  std::string executor = "sim";
  std::string format = "table";
  std::string timeline;  // FILE: FILE-<strategy>.json (Chrome trace) and .svg (Gantt) per strategy
  std::string optimum = "auto";
  std::string planning = "model";
  StrategyOptions opt;
  bool no_split = false, no_merge = false, no_overlap = false, no_locality = false, no_waves = false;
  bool round_order_always = false, no_local_first = false, roofline_placement = false, no_dispatch_chunks = false,
       no_consolidate = false;
  ServeFlags serve;
  ModelFlags model;
  std::vector<int> failed_nodes;  // elastic EP: simulate again on the surviving nodes
};

// Every registered strategy (one layer and --iterations alike), from the registry, and the variants.
std::string strategies_help() {
  std::string text = "Comma-separated strategies: ";
  for (const auto& n : strategy_names()) text += (text.back() == ' ' ? "" : ", ") + n;
  text += "; on one layer also a variant (one stage switched, as the sweeps name them):";
  for (const auto& n : variant_names()) text += (text.back() == ':' ? " " : ", ") + n;
  return text;
}

// Flags that act only in another mode are refused, naming the mode (issue 23).
void check_modes(const CLI::App& cmd, const SimulateFlags& f) {
  require(cmd.count("--iterations") == 0 || f.serve.iterations >= 1, "--iterations",
          "expected a number of batches >= 1 (leave it out for one layer), got " + std::to_string(f.serve.iterations));
  const bool serving = f.serve.iterations >= 1;
  require_mode(cmd, {"--drift", "--drift-period", "--drift-groups"}, serving, "--iterations N");
  require(f.serve.drift == "none" || f.serve.drift == "only" || f.serve.drift == "rotating", "--drift",
          "expected none, only or rotating, got '" + f.serve.drift + "'");
  require_mode(cmd, {"--drift-period"}, f.serve.drift == "rotating", "--drift rotating");
  require_mode(cmd, {"--drift-groups"}, f.serve.drift != "none", "--drift only or --drift rotating");
  require(f.serve.period >= 1, "--drift-period", "expected iterations per dataset >= 1, got " + std::to_string(f.serve.period));
  require(f.serve.groups >= 1, "--drift-groups", "expected a number of groups >= 1, got " + std::to_string(f.serve.groups));
  // Zepp's ablation flags and the swap horizon change only Zepp's strategies (a2av --no-merge
  // ran plain a2av and printed it as if ablated nothing). The names are checked first, so that
  // " zepp+swaps" is not mistaken for another strategy.
  const auto names = strategy_list(f.strategies, "--strategies", true);
  const auto named = [&](auto pred) { return std::any_of(names.begin(), names.end(), pred); };
  require_mode(cmd, {"--no-split", "--no-merge", "--no-overlap", "--no-waves", "--round-order-always", "--no-local-first",
                     "--no-dispatch-chunks"},
               named([](const std::string& n) { return takes_zepp_ablations(n); }),
               "a Zepp strategy in --strategies (zepp, zepp+swaps, zepp+hot, zepp-overlap)");
  require_mode(cmd, {"--no-locality", "--no-consolidate"},
               named([](const std::string& n) { return takes_zepp_ablations(n) && n != "zepp-overlap"; }),
               "a Zepp strategy that routes by locality in --strategies (zepp, zepp+swaps, zepp+hot; zepp-overlap "
               "routes home)");
  require_mode(cmd, {"--roofline-placement"},
               named([](const std::string& n) { return n == "zepp" || n == "zepp+swaps"; }),
               "a strategy on Zepp's §4.1 placement in --strategies (zepp, zepp+swaps)");
  require_mode(cmd, {"--swap-horizon"}, named([](const std::string& n) { return n == "zepp+swaps"; }),
               "zepp+swaps in --strategies");
  require_mode(cmd, {"--extra-slots"}, named([](const std::string& n) { return takes_extra_slots(n); }),
               "a strategy that replicates experts in --strategies (R extra slots per GPU; a2av, fast, comet, sglang "
               "and zepp-overlap keep one replica per expert)");
  // C_NIC bounds Zepp's NIC split (equation 2) only: --strategies a2av,eplb --nic-slack 5 ran unchanged.
  require_mode(cmd, {"--nic-slack"}, named([](const std::string& n) { return takes_zepp_ablations(n); }),
               "a Zepp strategy in --strategies (zepp, zepp+swaps, zepp+hot, zepp-overlap: equation (2)'s NIC split)");
  // EPLB's expert groups shape only EPLB's placement: --strategies a2av,zepp --eplb-groups 7 ran
  // unchanged (and 7 groups, which 384 experts do not divide, went unnoticed).
  require_mode(cmd, {"--eplb-groups"},
               named([](const std::string& n) {
                 return n == "eplb" || n == "comet+eplb" || n.find("/eplb-placement") != std::string::npos;
               }),
               "a strategy on EPLB's placement in --strategies (eplb, comet+eplb, zepp/eplb-placement)");
  check_workload_modes(cmd, f.w);  // workload flags that only shape another workload
  require_mode(cmd, {"--layer"}, !f.model.active(), "one layer (--layers picks the layers itself)");
  require_mode(cmd, {"--link-sharing"}, f.executor == "sim", "--executor sim (the estimate has no links to share)");
  // Decode's --batch is the tokens per GPU, which --size-mb sets otherwise: --size-mb 5 beside it
  // changed nothing.
  require(cmd.count("--size-mb") == 0 || !f.model.batch, "--size-mb",
          "and --batch both set the tokens per GPU (decode: one per sequence); give one");
  // One layer's diagnostics: --iterations and --layers drew no timeline and solved no optimum
  // while accepting both silently.
  for (const char* flag : {"--timeline", "--optimum"})
    require(cmd.count(flag) == 0 || (!serving && !f.model.active()), flag,
            std::string(serving ? "acts on one layer; it does not combine with --iterations"
                                : "acts on one layer; it does not combine with --layers") +
                " (leave it out)");
}

void run(const SimulateFlags& f) {
  require(f.opt.balance_slack >= 0 && f.opt.balance_slack < 1, "--balance-slack", "must be in [0, 1)");
  require(f.opt.nic_slack >= 0, "--nic-slack", "must be >= 0");
  require_in_range(f.opt.extra_slots, "--extra-slots", 0, 1 << 16);  // R slots per GPU
  require(f.serve.iterations >= 0, "--iterations", "must be >= 0");
  require(f.opt.swap_horizon >= 1 && f.opt.swap_horizon <= 1000000, "--swap-horizon",
          "must be in [1, 1000000] iterations, got " + std::to_string(f.opt.swap_horizon));
  const auto names = strategy_list(f.strategies, "--strategies", true);
  StrategyOptions opt = f.opt;
  opt.split = !f.no_split;
  opt.merge = !f.no_merge;
  opt.overlap = !f.no_overlap;
  opt.locality = !f.no_locality;
  opt.waves = !f.no_waves;
  opt.round_order_rule = !f.round_order_always;
  opt.local_first = !f.no_local_first;
  opt.dispatch_chunks = !f.no_dispatch_chunks;
  opt.consolidate = !f.no_consolidate;
  opt.roofline_placement = f.roofline_placement;
  require(f.planning == "model" || f.planning == "free", "--planning", "expected model or free, got '" + f.planning + "'");
  opt.planning = f.planning == "model" ? PlanningMode::Model : PlanningMode::Free;
  require(opt.eplb_groups >= 0 && opt.eplb_groups <= f.w.model_shape().num_experts, "--eplb-groups",
          "expected 0 (automatic) or a group count in [1, " + std::to_string(f.w.model_shape().num_experts) + "], got " +
              std::to_string(opt.eplb_groups));
  require(f.model.active() || !f.model.any_step_flag(), "--phase/--batch/--context/--kv-cache-gb",
          "describe a whole model's step; add --layers all (or a list)");
  require(f.failed_nodes.empty() || (f.serve.iterations == 0 && !f.model.active()), "--failed-nodes",
          "runs one layer; leave out --iterations and --layers");
  // A calibrated file's measured expert times are used by one layer on the simulator only; the
  // other modes timed experts by the roofline with the file's other figures, silently.
  const std::string roofline_mode = f.model.active()           ? "--layers"
                                    : f.serve.iterations > 0   ? (f.executor == "sim" ? "--iterations" : "")
                                    : f.executor == "estimate" ? "--executor estimate"
                                                               : "";
  if (std::error_code ec; !roofline_mode.empty() && std::filesystem::is_regular_file(f.w.topology, ec))
    require(read_measured_compute(f.w.topology).empty(), "--topology",
            f.w.topology + " holds a compute model measured by zepp calibrate, which only one layer on --executor sim "
                           "uses; " + roofline_mode + " would time the experts by the roofline instead, ignoring it");
  if (f.model.active()) return run_model(f.w, names, f.executor, f.format, opt, f.serve, f.model);  // model.cpp
  if (f.serve.iterations > 0) return run_serve(f.w, names, f.executor, f.format, opt, f.serve);  // serve.cpp
  ExecutorKind ex;
  if (f.executor == "estimate") ex = ExecutorKind::Estimate;
  else if (f.executor == "sim") ex = ExecutorKind::Sim;
  else throw ArgumentError("--executor: expected sim or estimate, got '" + f.executor + "'");
  require(f.format == "table" || f.format == "json" || f.format == "csv", "--format", "expected table, json or csv");

  require(f.timeline.empty() || ex == ExecutorKind::Sim, "--timeline", "needs --executor sim");
  opt.timeline = !f.timeline.empty();
  require(f.optimum == "auto" || f.optimum == "on" || f.optimum == "off", "--optimum",
          "expected auto, on or off, got '" + f.optimum + "'");
  // Limits before work: the cost fits the memory and time (before the placement checks, which
  // place a uniform load), every strategy's placement fits the cluster.
  WorkloadFlags w = f.w;
  w.strategies = int(names.size());
  w.zepp_placement = packs_with_zepp(names);
  check_cost(w, w.model_shape(), w.cluster());
  // Each run: the registered strategy with its options (a variant sets one switch) and its label.
  std::vector<StrategyRun> runs = strategy_runs(names, opt, "--strategies");
  std::vector<std::string> labels;
  for (const StrategyRun& run : runs) {
    check_strategy_fits(run.strategy, f.w.model_shape(), f.w.cluster(), run.opt);
    labels.push_back(run.label);
  }
  if (!f.timeline.empty()) {
    // With --failed-nodes each strategy also runs on the survivors: FILE-<strategy>-degraded.
    std::vector<std::string> files = labels;
    if (!f.failed_nodes.empty())
      for (const auto& l : labels) files.push_back(l + "-degraded");
    check_timeline_outputs(f.timeline, files);
  }
  ResolvedWorkload r = resolve(w);
  // The exact optimum of equation (1) (LEMON, one min-cost flow per expert) is a diagnostic of
  // the routing's gap, not part of any strategy. Measured on this 2-core machine under load
  // (kimi-k2 shape, 4,681 tokens per GPU): 0.11 s at 128 GPUs, 0.18 s at 256, 0.72 s at 512,
  // 3-9x the greedy routing itself; auto solves it up to kAutoOptimumGpus GPUs.
  constexpr int kAutoOptimumGpus = 256;
  // Its integer arc costs need the NVLink / NIC bandwidth ratio as a ratio of integers below 2^31.
  const bool exact = exact_optimum_possible(r.topo);
  require(exact || f.optimum != "on", "--optimum",
          fmt::format("on: the exact solver (LEMON, integer arc costs) needs the NVLink / NIC bandwidth ratio as one of "
                      "integers below 2^31, and {:g} / {:g} GB/s (--nvlink-gbps / --nic-gbps, or the topology's) has none; "
                      "use --optimum auto or off",
                      r.topo.nvlink_bw / 1e9, r.topo.nic_bw / 1e9));
  opt.optimal = exact && (f.optimum == "on" || (f.optimum == "auto" && r.topo.num_gpus() <= kAutoOptimumGpus));
  if (f.optimum == "auto" && !exact)
    std::fprintf(stderr, "optimum: skipped: NVLink / NIC bandwidth %g / %g GB/s (--nvlink-gbps / --nic-gbps, or the "
                 "topology's) is no ratio of integers below 2^31, which the exact solver's integer arc costs need\n",
                 r.topo.nvlink_bw / 1e9, r.topo.nic_bw / 1e9);
  else if (f.optimum == "auto" && !opt.optimal)
    std::fprintf(stderr, "optimum: skipped at %d GPUs (--optimum auto solves equation (1) exactly up to %d GPUs, beyond "
                 "which LEMON's min-cost flows outgrow the routing they check; --optimum on forces it)\n",
                 r.topo.num_gpus(), kAutoOptimumGpus);
  for (StrategyRun& run : runs) run.opt.optimal = opt.optimal;
  std::optional<Degraded> d;  // checked before anything runs
  if (!f.failed_nodes.empty()) {
    require(f.format != "csv", "--format", "csv holds one cluster; use table or json with --failed-nodes");
    d = degrade(f.w, opt, f.failed_nodes, r);
    for (const StrategyRun& run : runs) {  // each strategy's placement on the survivors, before any runs
      StrategyOptions o = d->opt;
      const std::string strategy = strategy_variant(run.name, o);
      try {
        check_strategy_fits(strategy, d->flags.model_shape(), d->flags.cluster(), o);
      } catch (const ArgumentError& e) {
        throw ArgumentError("--failed-nodes: on the " + std::to_string(d->flags.nodes) + " surviving nodes, " + e.what());
      }
    }
  }
  std::vector<StrategyOutcome> outcomes;
  // A topology file from `zepp calibrate` carries a compute model measured on the machine: each
  // strategy's plan is timed with it (the closed-form figures come from the estimate pass).
  std::error_code ec;
  const std::vector<GemmCurve> gemm =
      std::filesystem::is_regular_file(f.w.topology, ec) ? read_measured_compute(f.w.topology) : std::vector<GemmCurve>{};
  if (!gemm.empty() && ex == ExecutorKind::Sim) std::fprintf(stderr, "compute: expert times measured by zepp calibrate (%s)\n", f.w.topology.c_str());
  for (const StrategyRun& run : runs) {
    if (gemm.empty() || ex != ExecutorKind::Sim) {
      outcomes.push_back(run_strategy(run.strategy, r.workload, r.model, r.topo, run.opt, ex));
    } else {
      StrategyOutcome o = run_strategy(run.strategy, r.workload, r.model, r.topo, run.opt, ExecutorKind::Estimate);
      const StrategyDecision d = find_strategy(run.strategy).decide(StrategyInput{r.workload, r.model, r.topo, run.opt});
      o.result = simulate_plan_measured(plan_to_simulate(d, run.opt), r.topo, gemm, run.opt.timeline);
      o.metadata_s = o.result.metadata_s;
      o.planning_s = o.result.planning_s;
      outcomes.push_back(std::move(o));
    }
    // Zepp's rows with ablation flags are not Zepp: named as the sweeps name them (zepp/no-split,
    // zepp+hot/no-split).
    outcomes.back().name = run.label;
  }
  if (!f.timeline.empty()) {
    std::vector<LabelledTimeline> timelines;
    for (const auto& o : outcomes) timelines.push_back({o.name, &o.result, o.name + ": one MoE layer"});
    write_timelines(f.timeline, timelines, r.topo.gpus_per_node);
  }

  const auto summary = summary_json(r.workload, r.model, r.topo, f.executor, outcomes, opt.planning);
  if (d) {  // the same layer on the cluster that survives
    const ResolvedWorkload after = resolve(d->flags);
    std::vector<StrategyOutcome> degraded;
    for (const StrategyRun& run : runs) {
      StrategyOptions o = d->opt;  // the survivors' slots, with the run's switch
      const std::string strategy = strategy_variant(run.name, o);
      degraded.push_back(run_strategy(strategy, after.workload, after.model, after.topo, o, ex));
      degraded.back().name = run.label;
    }
    if (!f.timeline.empty()) {
      std::vector<LabelledTimeline> timelines;
      const std::string title = ": one MoE layer on the " + std::to_string(after.topo.nodes) + " surviving nodes";
      for (const auto& o : degraded) timelines.push_back({o.name + "-degraded", &o.result, o.name + title});
      write_timelines(f.timeline, timelines, after.topo.gpus_per_node);
    }
    const auto after_summary = summary_json(after.workload, after.model, after.topo, f.executor, degraded, d->opt.planning);
    if (f.format == "json") {
      const nlohmann::json doc = {{"before", summary}, {"after", after_summary}, {"degraded", d->report}};
      std::fputs((json_text(doc, 2) + "\n").c_str(), stdout);
      return;
    }
    const auto& z = d->report["zepp_rebalance"];
    std::string text = "before: " + std::to_string(r.topo.nodes) + " nodes\n" + summary_table(summary) + "\nafter losing node(s) " +
                       d->report["failed_nodes"].dump() + ": " + std::to_string(after.topo.nodes) +
                       " nodes, the same batch (--size-mb x " + std::to_string(r.topo.nodes) + " / " +
                       std::to_string(after.topo.nodes) + " per GPU), " + std::to_string(d->report["slots_per_gpu"].get<int>()) +
                       " slots per GPU\n" + summary_table(after_summary);
    char line[256];
    std::snprintf(line, sizeof line,
                  "zepp rebalancing onto the survivors: %d slots refilled, %.1f MB over NVLink, %.1f MB over NICs; expected "
                  "imbalance %.4f before, %.4f after; every expert keeps >= %d replica(s)\n",
                  z["slots_changed"].get<int>(), z["nvlink_bytes"].get<double>() / 1e6, z["nic_bytes"].get<double>() / 1e6,
                  z["imbalance_before"].get<double>(), z["imbalance_after"].get<double>(), z["min_replicas"].get<int>());
    std::fputs((text + line).c_str(), stdout);
    return;
  }
  std::string text = f.format == "json" ? json_text(summary, 2) + "\n" : f.format == "csv" ? summary_csv(summary) : summary_table(summary);
  std::fputs(text.c_str(), stdout);
}

}  // namespace

void add_simulate(CLI::App& app) {
  auto f = std::make_shared<SimulateFlags>();
  CLI::App* cmd = app.add_subcommand("simulate", "Place, route and time one MoE layer under each strategy");
  f->w.add_to(cmd);
  f->serve.add_to(cmd);
  f->model.add_to(cmd);
  cmd->add_option("--strategies", f->strategies, strategies_help())->capture_default_str();
  cmd->add_option("--executor", f->executor, "Latency model: sim (SimGrid cluster) or estimate (closed form, no overlap); with --iterations sim or "
                  "none (decisions only: placement, routing and swaps, no latency)")->capture_default_str();
  cmd->add_option("--format", f->format, "Output: table, json or csv")->capture_default_str();
  cmd->add_option("--timeline", f->timeline, "Write FILE-<strategy>.json (Chrome trace, opens in Perfetto) and FILE-<strategy>.svg (gnuplot Gantt chart; its data and script stay beside it as .svg.dat and .svg.gp); with --failed-nodes also FILE-<strategy>-degraded.* on the surviving nodes. In file names a strategy's '/' and '+' become '_' (zepp/no-split: FILE-zepp_no-split.json; zepp+swaps: FILE-zepp_swaps.json)");
  cmd->add_option("--optimum", f->optimum,
                  "Solve equation (1) exactly (LEMON) for the gap column: auto (up to 256 GPUs), on or off")
      ->capture_default_str();
  cmd->add_option("--planning", f->planning,
                  "Per-batch metadata exchange and per-rank planning: model (charged on each strategy's critical path, "
                  "timed by the cost model of src/plan/planning.cpp) or free (left out, the numbers before issue 20)")
      ->capture_default_str();
  cmd->add_option("--extra-slots", f->opt.extra_slots, "R: extra expert slots per GPU (paper §4.1)")->capture_default_str();
  cmd->add_option("--balance-slack", f->opt.balance_slack, "C: replica load within (1 +- C) q (equation 1)")->capture_default_str();
  cmd->add_option("--nic-slack", f->opt.nic_slack, "C_NIC: NIC load within (1 + C_NIC) V / G (equation 2)")->capture_default_str();
  cmd->add_option("--swap-horizon", f->opt.swap_horizon,
                  "zepp+swaps: iterations a swap's compute saving is summed over against the unhidden part of its "
                  "weight transfer (a swap persists until demand moves again; paper §4.3)")
      ->capture_default_str();
  cmd->add_option("--eplb-groups", f->opt.eplb_groups, "EPLB expert groups (0: one per node when it divides)");
  cmd->add_option("--failed-nodes", f->failed_nodes,
                  "Lost nodes (comma-separated ids): also run the layer on the surviving nodes, each GPU keeping its "
                  "slots and the batch's tokens kept, and report latency before and after plus Zepp's rebalancing moves")
      ->delimiter(',');
  cmd->add_flag("--no-split", f->no_split, "Zepp ablation: no NIC split");
  cmd->add_flag("--no-merge", f->no_merge, "Zepp ablation: no merge in dispatch or combine");
  cmd->add_flag("--no-overlap", f->no_overlap, "Zepp ablation: barrier-separated dispatch, compute, combine");
  cmd->add_flag("--no-locality", f->no_locality, "Zepp ablation: even split over replicas instead of locality-preferred routing");
  cmd->add_flag("--no-waves", f->no_waves,
                "Zepp ablation: combine pre-reduces once per (GPU, destination node) instead of in completion waves "
                "(each NIC's after its dispatch)");
  cmd->add_flag("--round-order-always", f->round_order_always,
                "Zepp ablation: Algorithm 1's round order as plan dependencies in both phases (Zepp orders rounds by "
                "priority only)");
  cmd->add_flag("--no-local-first", f->no_local_first,
                "Zepp ablation: own-node rows wait in delivery order instead of computing while dispatch runs");
  cmd->add_flag("--no-dispatch-chunks", f->no_dispatch_chunks,
                "Zepp ablation: one RDMA put per NIC and peer per node pair instead of dispatch in chunks ordered by "
                "the destination's GEMMs");
  cmd->add_flag("--no-consolidate", f->no_consolidate,
                "Zepp ablation: routing balances rows only (equation (1)) instead of then moving weight-bound "
                "replicas' rows onto fewer replicas where that lowers the busiest GPU's GEMM time");
  cmd->add_flag("--roofline-placement", f->roofline_placement,
                "Zepp experiment (issue 24; off by default, it lost on held-out data): placement weighs replicas by "
                "expected roofline time at the batch instead of tokens (docs/baselines/epic.md)");
  cmd->callback([f, cmd] {
    check_modes(*cmd, *f);
    run(*f);
  });
}

}  // namespace zepp::cli
