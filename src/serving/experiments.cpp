#include "serving/experiments.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/figure.hpp"
#include "core/presets.hpp"
#include "core/topology_file.hpp"
#include "exec/sim.hpp"
#include "serving/serve.hpp"
#include "trace/csv_rows.hpp"

namespace zepp {
namespace {

const char* mode_name(DriftMode m) { return m == DriftMode::Only ? "only" : m == DriftMode::Rotating ? "rotating" : "none"; }

}  // namespace

std::vector<DriftCase> fig12_cases() {
  std::vector<DriftCase> cases;
  for (DriftMode m : {DriftMode::Only, DriftMode::Rotating}) {
    cases.push_back({"llama4", "llama4-maverick-mmlu", "llama4-maverick", m, "anatomy"});
    cases.push_back({"qwen3", "qwen3-30b-a3b-load", "qwen3-30b-a3b", m, "mmlu/Hebrew"});
    cases.push_back({"deepseek", "deepseek-v2-lite-puffin", "deepseek-v2-lite", m, "group1"});
  }
  return cases;
}

std::vector<DriftResult> run_drift_experiment(const std::vector<DriftCase>& cases, const DriftExperimentOptions& opt) {
  require(!opt.systems.empty(), "systems", "names no system");
  Topology topo = cluster_topology(opt.topology, opt.nodes);
  topo.link_sharing = opt.link_sharing;
  const PlanExecutor sim = [](const CommPlan& plan, const Topology& t, bool timeline) {
    return simulate_plan(plan, t, timeline);
  };
  std::map<std::string, Trace> traces;  // each trace folder read once
  std::vector<DriftResult> out;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t c = 0; c < cases.size(); ++c) {
    const DriftCase& dc = cases[c];
    if (!traces.count(dc.trace)) traces.emplace(dc.trace, read_trace(opt.traces_dir + "/" + dc.trace));
    const Trace& trace = traces.at(dc.trace);
    const ModelShape model = model_preset(dc.model);
    DriftOptions d;
    d.size_mb = opt.size_mb;
    d.seed = opt.seed;
    d.mode = dc.mode;
    d.dataset = dc.dataset;
    d.period = opt.period;
    d.groups = opt.groups;
    double first_latency = 0;
    for (size_t s = 0; s < opt.systems.size(); ++s) {
      DriftWorkload w(trace, model, topo, d);
      const int iterations =
          dc.mode == DriftMode::Rotating ? opt.period * int(w.datasets().size()) : opt.only_iterations;
      const ServeReport r = serve(w, model, topo, opt.systems[s], iterations, opt.strategy, opt.simulate ? sim : nullptr);
      DriftResult row{dc.workload, mode_name(dc.mode), dc.dataset, opt.systems[s], iterations};
      row.total_latency_s = r.total_latency_s();
      if (s == 0) first_latency = row.total_latency_s;
      row.speedup = row.total_latency_s > 0 ? first_latency / row.total_latency_s : 0;
      row.mean_imbalance = r.mean_imbalance();
      row.mean_home_imbalance = r.mean_home_imbalance();
      row.excess_removed = r.excess_removed();
      double charged = 0, wall = 0;
      for (const auto& it : r.iterations) {
        row.weight_nvlink_mb += it.weight_nvlink_bytes / 1e6 / iterations;
        row.weight_nic_mb += it.weight_nic_bytes / 1e6 / iterations;
        row.token_nic_mb += it.token_nic_bytes / 1e6 / iterations;
        row.swaps += it.swaps;
        charged += it.metadata_s + it.rank_planning_s;
        wall += it.planning_s;
      }
      row.charged_planning_share = row.total_latency_s > 0 ? charged / row.total_latency_s : 0;
      row.decision_wall_share = row.total_latency_s > 0 ? wall / row.total_latency_s : 0;
      row.wrapped = w.wrapped();
      out.push_back(row);
      std::fprintf(stderr, "[%zu/%zu] %s %s %s: %s %s (%.0f s elapsed)\n", c + 1, cases.size(), dc.workload.c_str(),
                   mode_name(dc.mode), dc.dataset.c_str(), opt.systems[s].c_str(),
                   opt.simulate ? fmt::format("{:.3f} ms", row.total_latency_s * 1e3).c_str()
                                : fmt::format("R {:.3f}", row.mean_imbalance).c_str(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  }
  return out;
}

std::string drift_csv(const std::vector<DriftResult>& rows) {
  std::string s =
      "workload,scenario,dataset,system,iterations,total_latency_ms,speedup,mean_imbalance,mean_home_imbalance,"
      "excess_removed,weight_nvlink_mb_per_it,weight_nic_mb_per_it,token_nic_mb_per_it,swaps,charged_planning_share,"
      "decision_wall_share,wrapped\n";
  for (const auto& r : rows)
    s += fmt::format("{},{},{},{},{},{:.6f},{:.4f},{:.4f},{:.4f},{:.4f},{:.2f},{:.2f},{:.2f},{},{:.5f},{:.5f},{}\n", csv_field(r.workload),
                     csv_field(r.scenario), csv_field(r.dataset), csv_field(r.system), r.iterations, r.total_latency_s * 1e3, r.speedup, r.mean_imbalance,
                     r.mean_home_imbalance, r.excess_removed, r.weight_nvlink_mb, r.weight_nic_mb, r.token_nic_mb,
                     r.swaps, r.charged_planning_share, r.decision_wall_share, r.wrapped);
  return s;
}

std::string drift_markdown(const std::vector<DriftResult>& rows, bool latency) {
  std::string s = latency ? "| workload | scenario | system | latency (ms, all iterations) | speedup | mean R | swaps | "
                            "weights NVLink / NIC (MB/it) | planning charged / latency |\n|---|---|---|---|---|---|---|---|---|\n"
                          : "| workload | scenario | system | mean R (no balancing) | mean R | excess load removed | "
                            "weights NVLink / NIC (MB/it) | token NIC (MB/it) |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    s += latency ? fmt::format("| {} | {} ({}) | {} | {:.3f} | {:.3f}x | {:.3f} | {} | {:.1f} / {:.1f} | {:.1f}% |\n",
                               r.workload, r.scenario, r.dataset, r.system, r.total_latency_s * 1e3, r.speedup,
                               r.mean_imbalance, r.swaps, r.weight_nvlink_mb, r.weight_nic_mb, 100 * r.charged_planning_share)
                 : fmt::format("| {} | {} ({}) | {} | {:.3f} | {:.3f} | {:.1f}% | {:.1f} / {:.1f} | {:.1f} |\n",
                               r.workload, r.scenario, r.dataset, r.system, r.mean_home_imbalance, r.mean_imbalance,
                               100 * r.excess_removed, r.weight_nvlink_mb, r.weight_nic_mb, r.token_nic_mb);
  }
  return s;
}

void plot_drift_speedups(const std::vector<DriftResult>& rows, const std::string& base, const std::string& title) {
  std::vector<std::string> systems, groups;
  std::map<std::string, std::map<std::string, double>> speedup;  // group -> system -> speedup
  for (const auto& r : rows) {
    const std::string g = r.workload + " " + r.scenario;
    if (std::find(systems.begin(), systems.end(), r.system) == systems.end()) systems.push_back(r.system);
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    speedup[g][r.system] = r.speedup;
  }
  std::string dat = "group";
  for (const auto& s : systems) dat += " \"" + s + "\"";
  dat += "\n";
  for (const auto& g : groups) {
    dat += "\"" + g + "\"";
    for (const auto& s : systems) dat += speedup[g].count(s) ? fmt::format(" {:.4f}", speedup[g][s]) : " NaN";
    dat += "\n";
  }
  std::string gp = "set terminal svg size 1000,420 dynamic enhanced font 'Helvetica,12' background rgb 'white'\n";
  gp += fmt::format("set output '{}.svg'\nset title '{}'\n", base, title);
  gp += "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
        "set yrange [0:*]\nset grid ytics\nset key outside right top\nset xtics nomirror scale 0\n";
  gp += fmt::format("set ylabel 'speedup over {}'\n", systems.front());
  gp += fmt::format("plot for [i=2:{}] '{}.dat' using i:xtic(1) title columnheader(i)\n", systems.size() + 1, base);
  write_figure(base, {{".dat", dat}}, gp, "base");
}

}  // namespace zepp
