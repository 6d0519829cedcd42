// Figures 9 and 10 as SVG through gnuplot: a data file and a script per figure, kept beside the
// SVG so a figure can be restyled by hand.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/figure.hpp"
#include "experiments/experiments.hpp"
#include "experiments/report.hpp"

namespace zepp::experiments {
namespace {

std::vector<const ResultRow*> of_experiment(const std::vector<ResultRow>& rows, const std::string& experiment) {
  std::vector<const ResultRow*> out;
  for (const auto& r : rows)
    if (r.experiment == experiment && !is_variant(r.strategy)) out.push_back(&r);  // variants: in the report's tables
  require(!out.empty(), "rows", "hold no " + experiment + " results");
  return out;
}

std::vector<std::string> strategies_in_order(const std::vector<const ResultRow*>& rows) {
  std::vector<std::string> out;
  for (const auto* r : rows)
    if (std::find(out.begin(), out.end(), r->strategy) == out.end()) out.push_back(r->strategy);
  return out;
}

const char* kTerminal = "set terminal svg size 1100,460 dynamic enhanced font 'Helvetica,12' background rgb 'white'\n";

std::string fig9_base(const std::string& out_dir, const std::string& workload) { return out_dir + "/fig9-" + workload; }
std::string fig10_base(const std::string& out_dir) { return out_dir + "/fig10"; }

}  // namespace

void check_fig9_files(const std::string& out_dir, const std::vector<std::string>& workloads, const std::string& flag) {
  for (const auto& w : workloads) check_figure_files(fig9_base(out_dir, w), {".dat"}, flag);
}

void check_fig10_files(const std::string& out_dir, const std::string& flag) {
  check_figure_files(fig10_base(out_dir), {".dat"}, flag);
}

std::vector<std::string> plot_fig9(const std::vector<ResultRow>& all, const std::string& out_dir) {
  const auto rows = of_experiment(all, "fig9");
  const auto strategies = strategies_in_order(rows);
  std::vector<std::string> workloads;
  for (const auto* r : rows)
    if (std::find(workloads.begin(), workloads.end(), r->workload) == workloads.end()) workloads.push_back(r->workload);

  std::vector<std::string> svgs;
  for (const auto& w : workloads) {
    // Rows: configurations by (nodes, size); columns: strategies.
    std::map<std::pair<int, double>, std::map<std::string, double>> table;
    std::string model;
    for (const auto* r : rows)
      if (r->workload == w) table[{r->nodes, r->size_mb}][r->strategy] = r->speedup_vs_a2av, model = r->model;
    std::string dat = "config";
    for (const auto& s : strategies) dat += " \"" + s + "\"";
    dat += "\n";
    for (const auto& [cfg, by] : table) {
      dat += fmt::format("\"N={} {}MB\"", cfg.first, cfg.second);
      for (const auto& s : strategies) dat += by.count(s) ? fmt::format(" {:.4f}", by.at(s)) : std::string(" NaN");
      dat += "\n";
    }
    const std::string base = fig9_base(out_dir, w);
    std::string gp = kTerminal;
    gp += fmt::format("set output '{}.svg'\n", base);
    gp += fmt::format("set title 'Figure 9: {} ({}), speedup over A2AV+GEMM, simulated a100 cluster'\n", w, model);
    gp += "set datafile missing 'NaN'\nset style data histogram\nset style histogram cluster gap 1\n"
          "set style fill solid 0.85 border -1\nset boxwidth 0.9\nset ylabel 'speedup over a2av (x)'\n"
          "set yrange [0:*]\nset grid ytics\nset key outside right top\nset xtics nomirror\n";
    gp += fmt::format("plot for [i=2:{}] '{}.dat' using i:xtic(1) title columnheader(i)\n", strategies.size() + 1, base);
    write_figure(base, {{".dat", dat}}, gp, "out_dir");
    svgs.push_back(base + ".svg");
  }
  return svgs;
}

std::vector<std::string> plot_fig10(const std::vector<ResultRow>& all, const std::string& out_dir) {
  const auto rows = of_experiment(all, "fig10");
  // Columns: one series per (strategy other than a2av, topology, size); rows: node counts.
  std::vector<std::string> series;
  std::map<int, std::map<std::string, double>> table;
  for (const auto* r : rows) {
    if (r->strategy == "a2av") continue;
    const std::string name = fmt::format("{} {} {}MB", r->strategy, r->topology, r->size_mb);
    if (std::find(series.begin(), series.end(), name) == series.end()) series.push_back(name);
    table[r->nodes][name] = r->speedup_vs_a2av;
  }
  require(!series.empty(), "rows", "hold no fig10 strategy besides a2av");
  std::string dat = "nodes";
  for (const auto& s : series) dat += " \"" + s + "\"";
  dat += "\n";
  for (const auto& [n, by] : table) {
    dat += std::to_string(n);
    for (const auto& s : series) dat += by.count(s) ? fmt::format(" {:.4f}", by.at(s)) : std::string(" NaN");
    dat += "\n";
  }
  const std::string base = fig10_base(out_dir);
  std::string gp = kTerminal;
  gp += fmt::format("set output '{}.svg'\n", base);
  gp += "set title 'Figure 10: weak scaling, Kimi-K2 shape (synthetic selections), speedup over A2AV+GEMM'\n"
        "set datafile missing 'NaN'\nset logscale x 2\nset xlabel 'nodes (4 GPUs each)'\n"
        "set ylabel 'speedup over a2av (x)'\nset yrange [0:*]\nset grid\nset key outside right top\n";
  gp += fmt::format("plot for [i=2:{}] '{}.dat' using 1:i with linespoints lw 2 pt 7 title columnheader(i)\n",
                    series.size() + 1, base);
  write_figure(base, {{".dat", dat}}, gp, "out_dir");
  return {base + ".svg"};
}

}  // namespace zepp::experiments
