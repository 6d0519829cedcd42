// Figures and the reproduction report from sweep CSVs (experiments/results_csv.hpp).
#pragma once
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "formats/results_csv.hpp"

namespace zepp::experiments {

// Figure 9 as one SVG per workload: speedup over a2av of every strategy, clustered by
// configuration (nodes, size). Figure 10 as one SVG: speedup over a2av against node count, one
// line per (strategy, topology, size). Drawn by gnuplot into out_dir (created if missing);
// returns the SVG paths. Throws ArgumentError("rows: ...") when there is nothing of that
// experiment, std::runtime_error when gnuplot fails.
std::vector<std::string> plot_fig9(const std::vector<ResultRow>& rows, const std::string& out_dir);
std::vector<std::string> plot_fig10(const std::vector<ResultRow>& rows, const std::string& out_dir);
// The files plot_fig9 (for these workloads) and plot_fig10 write in out_dir, checked
// (check_figure_files, core/figure.hpp) naming `flag`: before the sweep that makes them.
void check_fig9_files(const std::string& out_dir, const std::vector<std::string>& workloads, const std::string& flag);
void check_fig10_files(const std::string& out_dir, const std::string& flag);

// Zepp's speedup over the fastest other strategy of each configuration, and its geometric
// mean over configurations. Configurations without a zepp row or another strategy are skipped.
struct BestBaseline {
  std::string config, best;  // config_key, fastest other strategy
  double speedup = 0;
};
std::vector<BestBaseline> speedup_over_best(const std::vector<ResultRow>& rows);
double geometric_mean(const std::vector<BestBaseline>& v);

// docs/reproduction.md: our numbers beside the paper's published ones (published.hpp), with a
// generated explanation of each difference, then full tables of both experiments and links to
// `figures` (paths relative to the markdown file). Either row set may be empty (its section then
// says the experiment was not run). fig9_serial: Figure 9 rows simulated with serial link
// sharing (Topology::link_sharing), fig9_pair with pair sharing; when either is given, a
// sensitivity section compares each strategy's latency and Zepp's speedup over the fastest other
// strategy under fair sharing and each model given. fig9_free:
// Figure 9 rows run with --planning free; when given, a section compares each strategy's charged
// and free latency, Zepp's planning share and its speedup over the fastest other both ways.
std::string reproduction_markdown(const std::vector<ResultRow>& fig9, const std::vector<ResultRow>& fig10,
                                  const std::string& fig9_source, const std::string& fig10_source,
                                  const std::vector<std::string>& figures = {},
                                  const std::vector<ResultRow>& fig9_serial = {}, const std::string& provenance = "",
                                  const std::vector<ResultRow>& fig9_free = {},
                                  const std::vector<ResultRow>& fig9_pair = {});

// Which program made each results file (core/provenance.hpp), as a markdown paragraph for
// reproduction_markdown's `provenance`: "Results made by commit X (zepp V): `a.csv`, `b.csv`." per
// commit, files without a provenance line named as such. `files`: (path as shown, provenance).
using MadeBy = std::vector<std::pair<std::string, std::optional<Provenance>>>;
std::string provenance_markdown(const MadeBy& files);

// One results CSV `zepp experiment report` reads: the flag that named it (--fig9, --fig10,
// --fig9-serial, --fig9-pair, --fig9-free), its path, rows and provenance line.
struct ReportInput {
  std::string flag, path;
  std::vector<ResultRow> rows;
  std::optional<Provenance> made_by;
};

// What the report checks of its CSVs before it draws anything (read_results has refused a second
// row of a configuration and strategy). Throws InputError "FILE:LINE: ..." when
// - a configuration has no a2av row, the base of its speedups (the line of its first row), or a
//   row's speedup_vs_a2av is not a2av's latency over its own (beyond 1e-9 relative);
// - a row is of another experiment than its flag takes (--fig10: fig10, the others fig9);
// - a file was made with other settings (sweep_settings_of) than its section describes: --fig9 and
//   --fig10 with --link-sharing fair, and --fig9 with --planning model beside --fig9-free;
//   --fig9-serial with --link-sharing serial, --fig9-pair with pair, --fig9-free with --planning
//   free, each else made as --fig9 was; a row whose planning column is not the --planning its
//   file was made with. A file written before the settings line is read by its recorded command
//   (flags left out at today's defaults) and its rows' planning column; a --fig9 or --fig10 file
//   with neither is taken as it is, a --fig9-serial, -pair or -free one refused (nothing says it
//   is what its section compares).
void check_report_inputs(const std::vector<ReportInput>& inputs);

// Throws ArgumentError naming `flags` when the files come from more than one commit (a file
// without a provenance line counts as its own, unknown one), listing each file's commit.
void check_one_commit(const MadeBy& files, const std::string& flags);

}  // namespace zepp::experiments
