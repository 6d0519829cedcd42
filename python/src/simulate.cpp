// `zepp simulate` as a function: the same resolution of presets and overrides (src/cli/options.cpp),
// the same strategy pipeline and the same summary, returned as the JSON text the CLI prints.
#include <pybind11/stl.h>

#include <algorithm>

#include "bindings.hpp"
#include "cli/float_flags.hpp"
#include "cli/options.hpp"
#include "core/error.hpp"
#include "formats/json_text.hpp"
#include "pipeline/cost.hpp"
#include "pipeline/strategy.hpp"
#include "report/summary.hpp"

namespace zepp::py {

namespace {

template <class T>
std::optional<T> optional_field(const pb::dict& s, const char* key) {
  if (!s.contains(key) || s[key].is_none()) return std::nullopt;
  return s[key].cast<T>();
}

// settings: every keyword of zepp.simulate (python/zepp/_simulate.py checks their types).
std::string simulate_settings(const pb::dict& s) {
  cli::WorkloadFlags w;
  w.trace_path = s["trace"].cast<std::string>();
  w.history_path = s["history"].cast<std::string>();
  w.model = s["model"].cast<std::string>();
  w.topology = s["topology"].cast<std::string>();
  w.nodes = s["nodes"].cast<int>();
  w.gpus_per_node = optional_field<int>(s, "gpus_per_node");
  w.num_experts = optional_field<int>(s, "num_experts");
  w.top_k = optional_field<int>(s, "top_k");
  w.hidden = optional_field<int>(s, "hidden");
  w.ffn = optional_field<int>(s, "ffn");
  w.nvlink_gbps = optional_field<double>(s, "nvlink_gbps");
  w.nic_gbps = optional_field<double>(s, "nic_gbps");
  w.nvlink_latency_us = optional_field<double>(s, "nvlink_latency_us");
  w.nic_latency_us = optional_field<double>(s, "nic_latency_us");
  w.peak_tflops = optional_field<double>(s, "peak_tflops");
  w.hbm_tbps = optional_field<double>(s, "hbm_tbps");
  w.kernel_launch_us = optional_field<double>(s, "kernel_launch_us");
  w.workload.layer = s["layer"].cast<int>();
  w.workload.size_mb = s["size_mb"].cast<double>();
  w.workload.seed = s["seed"].cast<uint64_t>();
  w.workload.history_fraction = s["history_fraction"].cast<double>();
  w.workload.zipf = s["zipf"].cast<double>();
  w.workload.dataset = s["dataset"].cast<std::string>();
  w.max_minutes = s["max_seconds"].cast<double>() / 60;

  StrategyOptions opt;
  opt.extra_slots = s["extra_slots"].cast<int>();
  opt.balance_slack = s["balance_slack"].cast<double>();
  opt.nic_slack = s["nic_slack"].cast<double>();
  opt.eplb_groups = s["eplb_groups"].cast<int>();
  opt.split = s["split"].cast<bool>();
  opt.merge = s["merge"].cast<bool>();
  opt.overlap = s["overlap"].cast<bool>();
  opt.locality = s["locality"].cast<bool>();
  opt.waves = s["waves"].cast<bool>();
  opt.round_order_rule = !s["round_order_always"].cast<bool>();
  opt.local_first = s["local_first"].cast<bool>();
  opt.roofline_placement = s["roofline_placement"].cast<bool>();
  const std::optional<int> horizon = optional_field<int>(s, "swap_horizon");  // None: the default
  opt.swap_horizon = horizon.value_or(kDefaultSwapHorizon);
  // "model" (default) charges each strategy's metadata exchange and planning, "free" does not.
  const std::string planning = s["planning"].cast<std::string>();
  require(planning == "model" || planning == "free", "planning", "expected model or free, got '" + planning + "'");
  opt.planning = planning == "model" ? PlanningMode::Model : PlanningMode::Free;
  // Parsed as `zepp simulate --strategies` parses them (entries trimmed; empty, repeated and
  // unknown ones refused), from the list joined with commas.
  std::string joined;
  for (const auto& n : s["strategies"].cast<std::vector<std::string>>()) joined += (joined.empty() ? "" : ",") + n;
  const auto names = cli::strategy_list(joined, "strategies", true);
  const auto executor = s["executor"].cast<std::string>();

  // Every float keyword in the range of its flag (src/core/flag_ranges.cpp), the error naming the keyword.
  for (const char* key : {"size_mb", "history_fraction", "zipf", "balance_slack", "nic_slack", "nvlink_gbps", "nic_gbps",
                          "nvlink_latency_us", "nic_latency_us", "peak_tflops", "hbm_tbps", "kernel_launch_us"}) {
    if (!s.contains(key) || s[key].is_none()) continue;
    std::string flag = std::string("--") + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    cli::require_flag_range(s[key].cast<double>(), flag, key);
  }
  pb::gil_scoped_release unlocked;
  require(opt.extra_slots >= 0, "extra_slots", "must be >= 0");
  require(opt.swap_horizon >= 1 && opt.swap_horizon <= 1000000, "swap_horizon",
          "expected iterations in [1, 1000000], got " + std::to_string(opt.swap_horizon));
  // As `zepp simulate` refuses them (cli/simulate.cpp): Zepp's ablations change only Zepp's
  // strategies, --no-locality only those that route by locality, the horizon only zepp+swaps.
  const auto named = [&](auto pred) { return std::any_of(names.begin(), names.end(), pred); };
  const bool zepp = named([](const std::string& n) { return cli::takes_zepp_ablations(n); });
  for (const auto& [key, changed] : {std::pair{"split", !opt.split}, {"merge", !opt.merge}, {"overlap", !opt.overlap},
                                     {"waves", !opt.waves}, {"round_order_always", !opt.round_order_rule},
                                     {"local_first", !opt.local_first}})
    require(!changed || zepp, key, "only acts with a Zepp strategy in strategies (zepp, zepp+swaps, zepp+hot, zepp-overlap)");
  require(!opt.roofline_placement || named([](const std::string& n) { return n == "zepp" || n == "zepp+swaps"; }),
          "roofline_placement", "only acts with a strategy on Zepp's §4.1 placement in strategies (zepp, zepp+swaps)");
  require(opt.locality || named([](const std::string& n) { return cli::takes_zepp_ablations(n) && n != "zepp-overlap"; }),
          "locality", "only acts with a Zepp strategy that routes by locality (zepp, zepp+swaps, zepp+hot)");
  require(!horizon || named([](const std::string& n) { return n == "zepp+swaps"; }),
          "swap_horizon", "only acts with zepp+swaps in strategies");
  ExecutorKind ex;
  if (executor == "estimate") ex = ExecutorKind::Estimate;
  else if (executor == "sim") ex = ExecutorKind::Sim;
  else throw ArgumentError("executor: expected sim or estimate, got '" + executor + "'");
  require(opt.eplb_groups >= 0 && opt.eplb_groups <= w.model_shape().num_experts, "eplb_groups",
          "expected 0 (automatic) or at most the expert count " + std::to_string(w.model_shape().num_experts));
  w.strategies = int(names.size());
  w.zepp_placement = cli::packs_with_zepp(names);
  try {
    cli::check_cost(w, w.model_shape(), w.cluster());  // before the placement checks, which place a uniform load
  } catch (const ArgumentError& e) {  // the size arguments, not the program's budget flags
    std::string what = e.what();
    for (const std::string flag : {"--max-memory", "--max-minutes"}) {
      if (what.rfind(flag, 0) == 0) what = "num_experts, nodes, gpus_per_node, size_mb or strategies" + what.substr(flag.size());
      if (auto at = what.find(" (or raise " + flag); at != std::string::npos) what.erase(at);
    }
    throw ArgumentError(what);
  }
  const auto runs = cli::strategy_runs(names, opt, "strategies");  // variants ("zepp/no-split") set their switch
  for (const auto& run : runs) check_strategy_fits(run.strategy, w.model_shape(), w.cluster(), run.opt);
  cli::ResolvedWorkload r = cli::resolve(w);  // repeats check_cost: cheap
  std::vector<StrategyOutcome> outcomes;
  for (const auto& run : runs) {
    outcomes.push_back(run_strategy(run.strategy, r.workload, r.model, r.topo, run.opt, ex));
    outcomes.back().name = run.label;  // "zepp/no-split", as the CLI names rows
  }
  return json_text(summary_json(r.workload, r.model, r.topo, executor, outcomes, opt.planning));
}

// The checks shared with `zepp simulate` name its flags ("--layer: layer 99 is not in ..."): a
// Python caller is told the keyword ("layer: ..."), --experts being num_experts.
std::string simulate(const pb::dict& s) {
  try {
    return simulate_settings(s);
  } catch (const ArgumentError& e) {
    const std::string what = e.what();
    const size_t colon = what.find(':');
    if (what.rfind("--", 0) != 0 || colon == std::string::npos || what.find(' ') < colon) throw;
    std::string key = what.substr(2, colon - 2);
    std::replace(key.begin(), key.end(), '-', '_');
    if (key == "experts") key = "num_experts";
    throw ArgumentError(key + what.substr(colon));
  }
}

}  // namespace

void bind_simulate(pb::module_& m) { m.def("simulate", &simulate); }

}  // namespace zepp::py
