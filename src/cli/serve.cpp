// `zepp simulate --iterations N`: one MoE layer served over N batches of a trace, placement kept
// between iterations (issue 6 item 1).
#include "cli/serve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "exec/sim.hpp"
#include "formats/json_text.hpp"
#include "pipeline/cost.hpp"
#include "report/summary.hpp"
#include "serving/serve.hpp"
#include "trace/csv_rows.hpp"
#include "workload/size.hpp"

namespace zepp::cli {
namespace {

constexpr double MB = 1e6;

// swap_rule: the system is zepp+swaps; for every other system the swap rule's fields are null
// (a horizon of 0 and "not triggered" described a rule that never ran). simulated: false with
// --executor none, whose latency and charged metadata / planning are null (they printed 0).
nlohmann::json iteration_json(const IterationReport& it, bool swap_rule, bool simulated) {
  const auto rule = [swap_rule](nlohmann::json v) { return swap_rule ? v : nlohmann::json(); };
  const auto sim = [simulated](double v) { return simulated ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json j = {{"iteration", it.iteration},
          {"dataset", it.dataset},
          {"latency_ms", sim(it.latency_s * 1e3)},
          {"metadata_us", sim(it.metadata_s * 1e6)},
          {"rank_planning_us", sim(it.rank_planning_s * 1e6)},
          {"rank_planning_wall_us", it.rank_planning_wall_s * 1e6},
          {"imbalance", it.imbalance},
          {"home_imbalance", it.home_imbalance},
          {"swaps", it.swaps},
          {"swap_triggered", rule(it.swap_triggered)},
          {"swaps_refused", rule(it.swaps_refused)},
          {"swap_horizon", rule(it.swap_horizon)},
          {"weight_moves", it.weight_moves},
          {"token_nic_mb", it.token_nic_bytes / MB},
          {"token_nvlink_mb", it.token_nvlink_bytes / MB},
          {"weight_nic_mb", it.weight_nic_bytes / MB},
          {"weight_nvlink_mb", it.weight_nvlink_bytes / MB},
          {"routing_ms", it.routing_s * 1e3},
          {"plan_build_ms", it.plan_build_s * 1e3},
          {"planning_ms", it.planning_s * 1e3},
          {"planning_share", it.latency_s > 0 ? nlohmann::json(it.planning_s / it.latency_s) : nlohmann::json()}};
  put_refusal(j, swap_rule ? &it.best_refused : nullptr);
  return j;
}

// How many swaps the rule accepted over the iterations and, when none, why: the best refused
// swap's figures (pipeline/swap_line.hpp).
std::string swap_summary(const std::string& name, const nlohmann::json& iterations, int horizon) {
  int accepted = 0, triggered = 0, refused = 0;
  const nlohmann::json* best = nullptr;
  for (const auto& it : iterations) {
    accepted += it["swaps"].get<int>();
    triggered += it["swap_triggered"].get<bool>();
    refused += it["swaps_refused"].get<int>();
    if (it["swaps_refused"].get<int>() > 0 &&
        (!best || it["best_refused_saved_us_per_iteration"].get<double>() > (*best)["best_refused_saved_us_per_iteration"].get<double>()))
      best = &it;
  }
  std::optional<SwapPlan::Refusal> r;
  if (best)
    r = get_refusal(*best, horizon);
  return swap_line(name, accepted, refused, triggered, int(iterations.size()), horizon, r ? &*r : nullptr);
}

// The swap rule's CSV columns of one iteration (swap_triggered .. swap_horizon), empty for a
// system without the rule.
// A simulated figure with `decimals` decimals, or `none` where --executor none left it null.
std::string fixed_or(const nlohmann::json& v, int decimals, const char* none) {
  return v.is_null() ? std::string(none) : fmt::format("{:.{}f}", v.get<double>(), decimals);
}

std::string swap_csv(const nlohmann::json& it) {
  if (it["swap_horizon"].is_null()) return ",,,,,,,,";
  return fmt::format("{},{},{},{}", it["swap_triggered"].get<bool>() ? 1 : 0, it["swaps_refused"].get<int>(),
                     refusal_csv(it), it["swap_horizon"].get<int>());
}

}  // namespace

void ServeFlags::add_to(CLI::App* cmd) {
  cmd->add_option("--iterations", iterations,
                  "Serve N consecutive batches of the trace, keeping placement state (sim or none executor)");
  cmd->add_option("--drift", drift, "With --iterations: none, only (serve --dataset) or rotating (--dataset left out of history)")
      ->capture_default_str();
  cmd->add_option("--drift-period", period, "Rotating: iterations per dataset")->capture_default_str();
  cmd->add_option("--drift-groups", groups, "Traces without dataset folders: requests split into this many groups")
      ->capture_default_str();
}

void run_serve(const WorkloadFlags& w, const std::vector<std::string>& systems, const std::string& executor,
               const std::string& format, const StrategyOptions& opt, const ServeFlags& s) {
  require(s.iterations >= 1, "--iterations", "must be >= 1");
  require(executor == "sim" || executor == "none", "--executor",
          "--iterations runs on sim (or none: decisions only), got '" + executor + "'");
  require(format == "table" || format == "json" || format == "csv", "--format", "expected table, json or csv");
  require(!w.trace_path.empty(), "--trace", "--iterations walks a trace; name one");
  const ModelShape model = w.model_shape();
  const Topology topo = w.cluster();
  WorkloadFlags sized = w;
  sized.strategies = int(systems.size());
  check_cost(sized, model, topo);  // before reading the trace
  // The time budget covers every iteration: each samples a batch, routes, plans and simulates a
  // layer per system (--iterations 2147483647 ran for hours with no word).
  CostEstimate all = estimate_cost(model, topo, int64_t(std::min(tokens_per_gpu(model, w.workload.size_mb), 1e15)),
                                   int(systems.size()), packs_with_zepp(systems));
  all.seconds *= s.iterations;
  check_budget(all, std::numeric_limits<double>::infinity(), "--max-memory", w.max_minutes * 60, "--max-minutes",
               "use fewer --iterations, a smaller --size-mb, fewer --nodes or fewer strategies");
  // Each placement fits the cluster, naming the flags (a2av said "num_experts: 64 is not a
  // positive multiple of the 24 GPUs", iser-moe "topo: ... (contiguous homes)").
  // Each entry: its registered strategy with its options (a variant sets its switches) and label.
  const std::vector<StrategyRun> runs = strategy_runs(systems, opt, "--strategies");
  for (const StrategyRun& run : runs) check_strategy_fits(run.strategy, model, topo, run.opt);
  // With drift none every dataset is served as one stream: a --dataset was ignored.
  require(w.workload.dataset.empty() || s.drift != "none", "--dataset",
          "with --iterations, picks the dataset --drift only or rotating serves; with --drift none every dataset is "
          "served, so leave it out or add --drift only");
  require(w.history_path.empty() || s.drift == "none", "--history",
          "combines with --drift none only (the drift modes take each dataset's history from --trace)");
  const Trace trace = read_trace_warning(w.trace_path, w.skip_invalid, nullptr, {w.workload.layer});
  // --history: the placement from one source, the served stream from another.
  const std::optional<Trace> history =
      w.history_path.empty() ? std::nullopt
                             : std::optional<Trace>(read_trace_warning(w.history_path, w.skip_invalid, nullptr, {w.workload.layer}));
  w.check_experts(trace);
  if (history) w.check_experts(*history);
  DriftOptions d;
  d.layer = w.workload.layer;
  d.size_mb = w.workload.size_mb;
  d.seed = w.workload.seed;
  d.history_fraction = w.workload.history_fraction;
  require(s.drift == "none" || s.drift == "only" || s.drift == "rotating", "--drift",
          "expected none, only or rotating, got '" + s.drift + "'");
  d.mode = parse_drift_mode(s.drift);
  d.dataset = w.workload.dataset;
  d.period = s.period;
  d.groups = s.groups;
  d.history = history ? &*history : nullptr;
  const PlanExecutor sim = [](const CommPlan& plan, const Topology& t, bool timeline) {
    return simulate_plan(plan, t, timeline);
  };

  nlohmann::json out = nlohmann::json::array();
  std::string description;
  const auto drift_workload = [&] {  // every system sees the same batches
    try {
      return DriftWorkload(trace, model, topo, d);
    } catch (const ArgumentError& e) {
      rethrow_as_flag(e);
    }
  };
  for (const StrategyRun& run : runs) {
    const std::string& system = run.strategy;
    DriftWorkload workload = drift_workload();
    description = workload.description();
    int done = 0;  // progress on stderr, as --layers shows it
    const ServeReport r = serve(workload, model, topo, system, s.iterations, run.opt, executor == "sim" ? sim : nullptr,
                                [&](const IterationReport&, const LayerResult&) {
                                  ++done;
                                  progress_line("iterations: " + std::to_string(done) + "/" + std::to_string(s.iterations) +
                                                    " (" + run.label + ")",
                                                done == s.iterations);
                                });
    nlohmann::json its = nlohmann::json::array();
    for (const auto& it : r.iterations) its.push_back(iteration_json(it, system == "zepp+swaps", executor == "sim"));
    out.push_back({{"system", run.label},
                   {"strategy", system},
                   {"total_latency_ms", executor == "sim" ? nlohmann::json(r.total_latency_s() * 1e3) : nlohmann::json()},
                   {"mean_imbalance", r.mean_imbalance()},
                   {"excess_removed", r.excess_removed()},
                   {"weight_mb_per_iteration", r.total_weight_bytes() / MB / s.iterations},
                   {"wrapped", workload.wrapped()},
                   {"iterations", its}});
  }

  std::string text;
  if (format == "json") {
    text = json_text(nlohmann::json{{"workload", description}, {"executor", executor}, {"systems", out}}, 2) + "\n";
  } else if (format == "csv") {
    text = "system,iteration,dataset,latency_ms,imbalance,home_imbalance,swaps,weight_moves,token_nic_mb,"
           "token_nvlink_mb,weight_nic_mb,weight_nvlink_mb,planning_ms,routing_ms,plan_build_ms,planning_share,"
           "metadata_us,rank_planning_us,rank_planning_wall_us,swap_triggered,swaps_refused,"
           "best_refused_saved_us_per_iteration,best_refused_unhidden_us,best_refused_weight_us,best_refused_dispatch_us,"
           "best_refused_after_dispatch_us,best_refused_combine_us,swap_horizon\n";
    for (const auto& sys : out)
      for (const auto& it : sys["iterations"])
        text += fmt::format("{},{},{},{},{:.4f},{:.4f},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{},{:.3f},"
                            "{}\n",
                            csv_field(sys["system"].get<std::string>()), it["iteration"].get<int>(),
                            csv_field(it["dataset"].get<std::string>()), fixed_or(it["latency_ms"], 6, ""),
                            it["imbalance"].get<double>(), it["home_imbalance"].get<double>(), it["swaps"].get<int>(),
                            it["weight_moves"].get<int>(), it["token_nic_mb"].get<double>(),
                            it["token_nvlink_mb"].get<double>(), it["weight_nic_mb"].get<double>(),
                            it["weight_nvlink_mb"].get<double>(), it["planning_ms"].get<double>(),
                            it["routing_ms"].get<double>(), it["plan_build_ms"].get<double>(),
                            it["planning_share"].is_null() ? "" : fmt::format("{:.6g}", it["planning_share"].get<double>()),
                            fixed_or(it["metadata_us"], 3, ""), fixed_or(it["rank_planning_us"], 3, ""),
                            it["rank_planning_wall_us"].get<double>(), swap_csv(it));
  } else {
    text = description + ", executor " + executor + "\n";
    size_t width = 13;  // the name column fits the longest label ("zepp+swaps/no-split")
    for (const auto& sys : out) width = std::max(width, sys["system"].get<std::string>().size());
    text += fmt::format("{:<{}} {:>4} {:<18} {:>10} {:>7} {:>7} {:>6} {:>6} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
                        "system", width, "it", "dataset", "latency_ms", "meta_us", "rplan_us", "R", "R_home", "swaps", "tokNIC_MB",
                        "tokNVL_MB", "wNIC_MB", "wNVL_MB", "plan_ms", "plan_%");
    for (const auto& sys : out) {
      double planning_ms = 0, charged_us = 0, rank_wall_us = 0;
      for (const auto& it : sys["iterations"]) {
        planning_ms += it["planning_ms"].get<double>();
        if (!it["latency_ms"].is_null()) charged_us += it["metadata_us"].get<double>() + it["rank_planning_us"].get<double>();
        rank_wall_us = std::max(rank_wall_us, it["rank_planning_wall_us"].get<double>());
        text += fmt::format("{:<{}} {:>4} {:<18} {:>10} {:>7} {:>7} {:>6.3f} {:>6.3f} {:>5} {:>9.2f} {:>9.2f} {:>9.1f} {:>9.1f} {:>9.3f} {:>7}\n",
                            sys["system"].get<std::string>(), width, it["iteration"].get<int>(),
                            it["dataset"].get<std::string>(), fixed_or(it["latency_ms"], 4, "-"),
                            fixed_or(it["metadata_us"], 1, "-"), fixed_or(it["rank_planning_us"], 1, "-"),
                            it["imbalance"].get<double>(), it["home_imbalance"].get<double>(), it["swaps"].get<int>(),
                            it["token_nic_mb"].get<double>(), it["token_nvlink_mb"].get<double>(),
                            it["weight_nic_mb"].get<double>(), it["weight_nvlink_mb"].get<double>(),
                            it["planning_ms"].get<double>(),
                            it["planning_share"].is_null() ? "-" : fmt::format("{:.2f}", 100 * it["planning_share"].get<double>()));
      }
      if (sys["strategy"].get<std::string>() == "zepp+swaps")
        text += swap_summary(sys["system"].get<std::string>(), sys["iterations"], opt.swap_horizon);
      const double latency_ms = sys["total_latency_ms"].is_null() ? 0 : sys["total_latency_ms"].get<double>();
      if (latency_ms > 0)
        text += fmt::format("{:<13} metadata exchange + per-rank planning charged in the simulated latency: {:.1f} us per "
                            "iteration, {:.2f}% of it\n",
                            sys["system"].get<std::string>(), charged_us / s.iterations, 100 * charged_us / 1e3 / latency_ms);
      if (rank_wall_us > 0)
        text += fmt::format("{:<13} per-rank planning measured on this machine's CPU (count, plan, own tokens, own send "
                            "lists; warm): slowest rank {:.1f} us in the worst iteration\n",
                            sys["system"].get<std::string>(), rank_wall_us);
      text += fmt::format("{:<13} global decision (routing + the simulator's comm plan{}) {:.3f} ms per iteration on this machine's CPU{}\n",
                          sys["system"].get<std::string>(),
                          sys["strategy"].get<std::string>() == "zepp+swaps" ? " + swaps" : "", planning_ms / s.iterations,
                          latency_ms > 0 ? fmt::format(", {:.2f}% of the simulated latency (paper §5: about 5%, on the GPU)",
                                                       100 * planning_ms / latency_ms)
                                         : "");
      // NaN (JSON null) when the home reference is undefined (E % G != 0): printed "nan%".
      const auto& excess = sys["excess_removed"];
      const std::string removed = excess.is_number() && std::isfinite(excess.get<double>())
                                      ? fmt::format("{:.1f}%", 100 * excess.get<double>())
                                      : std::string("- (no home reference: GPUs do not divide the experts)");
      text += fmt::format("{:<13} total latency {}, mean R {:.3f}, excess load removed {}, weights {:.1f} MB/iteration{}\n",
                          sys["system"].get<std::string>(),
                          sys["total_latency_ms"].is_null() ? "- (--executor none simulates no latency)"
                                                            : fmt::format("{:.4f} ms", sys["total_latency_ms"].get<double>()),
                          sys["mean_imbalance"].get<double>(), removed,
                          sys["weight_mb_per_iteration"].get<double>(),
                          sys["wrapped"].get<int64_t>() > 0 ? " (evaluation tokens reused: stream wrapped)" : "");
    }
  }
  std::fputs(text.c_str(), stdout);
}

}  // namespace zepp::cli
