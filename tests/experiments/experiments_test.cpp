// The sweep driver, its CSV and resume, the report and the figures, on tiny configurations.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "../common/temp_dir.hpp"
#include "core/version.hpp"
#include "core/error.hpp"
#include "experiments/experiments.hpp"
#include "experiments/fig11.hpp"
#include "experiments/published.hpp"
#include "experiments/report.hpp"
#include "formats/results_csv.hpp"
#include "trace/csv_rows.hpp"

namespace zepp::experiments {
namespace {

namespace fs = std::filesystem;

// A file private to this test process (ctest runs tests in parallel processes).
fs::path scratch(const std::string& name) { return zepp::testing::process_dir() / name; }
using zepp::testing::slurp;

// One configuration: Kimi-K2 shape, synthetic, 2 nodes of a100, 3 tokens per GPU.
SweepSpec tiny_spec() {
  SweepSpec s;
  s.experiment = "fig10";
  s.workloads = {{"k2", "kimi-k2", "", -1, "K2", "synthetic"}};
  s.topologies = {"a100"};
  s.nodes = {2};
  s.sizes_mb = {0.04};  // 0.04 MiB / (7168 * 2 B) = 2.9 -> 2 tokens per GPU
  s.strategies = {"a2av", "zepp"};
  return s;
}

TEST(Sweep, OneConfigurationWritesItsRowsAndResumeSkipsIt) {
  SweepOptions opt;
  opt.csv_path = scratch("tiny.csv").string();
  opt.progress = nullptr;
  const SweepSpec spec = tiny_spec();
  ASSERT_EQ(run_sweep(spec, opt), 1);

  const std::string text = slurp(opt.csv_path);
  // Line 1 says which program made it (core/provenance.hpp), line 2 with which settings that are no
  // column, line 3 is the header.
  EXPECT_EQ(text.substr(0, text.find('\n') + 1), provenance_line());
  EXPECT_NE(text.find(std::string("(commit ") + git_commit() + ")"), std::string::npos) << text;
  std::string body = text.substr(text.find('\n') + 1);
  EXPECT_EQ(body.substr(0, body.find('\n') + 1),
            "# settings: --planning=model --link-sharing=fair --seed=1 --extra-slots=2 --balance-slack=0.1 --nic-slack=0\n");
  body = body.substr(body.find('\n') + 1);
  EXPECT_EQ(body.substr(0, body.find('\n') + 1), csv_header());
  EXPECT_EQ(csv_header(),
            "experiment,workload,model,trace,synthetic,layer,topology,nodes,gpus,size_mb,tokens_per_gpu,strategy,"
            "latency_us,speedup_vs_a2av,inter_node_bytes,nvlink_bytes,max_nic_bytes,imbalance,comm_hidden_fraction,"
            "max_compute_us,routing_wall_us,metadata_us,planning_us,planning\n");
  const auto rows = read_results(opt.csv_path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].strategy, "a2av");
  EXPECT_EQ(rows[1].strategy, "zepp");
  for (const auto& r : rows) {
    EXPECT_EQ(r.experiment, "fig10");
    EXPECT_EQ(r.workload, "k2");
    EXPECT_EQ(r.model, "kimi-k2");
    EXPECT_TRUE(r.synthetic);
    EXPECT_EQ(r.nodes, 2);
    EXPECT_EQ(r.gpus, 8);
    EXPECT_DOUBLE_EQ(r.size_mb, 0.04);
    EXPECT_EQ(r.tokens_per_gpu, 2);  // floor(0.04 * 2^20 / 14336)
    EXPECT_GT(r.latency_us, 0);
    EXPECT_GT(r.max_compute_us, 0);
    EXPECT_LE(r.max_compute_us, r.latency_us);
  }
  EXPECT_DOUBLE_EQ(rows[0].speedup_vs_a2av, 1.0);
  EXPECT_NEAR(rows[1].speedup_vs_a2av, rows[0].latency_us / rows[1].latency_us, 1e-9);

  // Resume: nothing left to run, the CSV is untouched; a new size runs only itself.
  opt.resume = true;
  EXPECT_EQ(run_sweep(spec, opt), 0);
  EXPECT_EQ(slurp(opt.csv_path), text);
  SweepSpec more = spec;
  more.sizes_mb = {0.04, 0.08};
  EXPECT_EQ(run_sweep(more, opt), 1);
  const auto after = read_results(opt.csv_path);
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[2].tokens_per_gpu, 5);
  EXPECT_EQ(slurp(opt.csv_path).substr(0, text.size()), text);  // earlier rows kept as they were

  // Without resume the CSV starts afresh.
  opt.resume = false;
  EXPECT_EQ(run_sweep(spec, opt), 1);
  EXPECT_EQ(read_results(opt.csv_path).size(), 2u);
}

// --resume with a strategy the CSV lacks skipped every configuration already in it, so the new
// strategy never ran: now each configuration runs the strategies it has no row for, once.
TEST(Sweep, ResumeRunsTheStrategiesAConfigurationLacks) {
  SweepOptions opt;
  opt.csv_path = scratch("resume-strategies.csv").string();
  opt.progress = nullptr;
  SweepSpec spec = tiny_spec();
  spec.strategies = {"a2av", "zepp"};
  ASSERT_EQ(run_sweep(spec, opt), 1);
  const std::string text = slurp(opt.csv_path);
  const auto first = read_results(opt.csv_path);
  ASSERT_EQ(first.size(), 2u);

  opt.resume = true;
  spec.strategies = {"a2av", "eplb", "zepp"};
  EXPECT_EQ(run_sweep(spec, opt), 1);
  EXPECT_EQ(slurp(opt.csv_path).substr(0, text.size()), text);  // earlier rows kept as they were
  const auto rows = read_results(opt.csv_path);
  ASSERT_EQ(rows.size(), 3u);  // a2av and zepp once each, eplb added
  EXPECT_EQ(rows[2].strategy, "eplb");
  EXPECT_GT(rows[2].latency_us, 0);
  // Its speedup divides the same a2av latency as the kept rows (a2av simulated again, not written).
  EXPECT_NEAR(rows[2].speedup_vs_a2av, first[0].latency_us / rows[2].latency_us, 1e-9);

  EXPECT_EQ(run_sweep(spec, opt), 0);  // nothing lacking now
  EXPECT_EQ(read_results(opt.csv_path).size(), 3u);
}

// --resume checked the kept CSV's commit and experiment but not the settings that change results
// and are no column: a CSV begun with --seed 1 was finished with --seed 2, and one begun with
// --planning free with the charge, as one sweep. Each such setting differing is refused, naming
// it and both values, the file left as it was; equal settings resume.
TEST(Sweep, ResumeRefusesAFileMadeWithOtherSettings) {
  SweepOptions opt;
  opt.csv_path = scratch("resume-settings.csv").string();
  opt.progress = nullptr;
  const SweepSpec spec = tiny_spec();
  ASSERT_EQ(run_sweep(spec, opt), 1);
  const std::string text = slurp(opt.csv_path);
  std::optional<Provenance> made_by;
  read_results(opt.csv_path, &made_by);
  ASSERT_TRUE(made_by && made_by->settings);
  EXPECT_EQ(*made_by->settings, sweep_settings(opt));

  opt.resume = true;
  SweepSpec more = spec;
  more.sizes_mb = {0.04, 0.08};
  const std::vector<std::pair<std::function<void(SweepOptions&)>, std::string>> changes = {
      {[](SweepOptions& o) { o.strategy.planning = PlanningMode::Free; }, "--planning model, this run has --planning free"},
      {[](SweepOptions& o) { o.link_sharing = LinkSharing::Serial; }, "--link-sharing fair, this run has --link-sharing serial"},
      {[](SweepOptions& o) { o.seed = 2; }, "--seed 1, this run has --seed 2"},
      {[](SweepOptions& o) { o.strategy.extra_slots = 3; }, "--extra-slots 2, this run has --extra-slots 3"},
      {[](SweepOptions& o) { o.strategy.balance_slack = 0.2; }, "--balance-slack 0.1, this run has --balance-slack 0.2"},
      {[](SweepOptions& o) { o.strategy.nic_slack = 0.5; }, "--nic-slack 0, this run has --nic-slack 0.5"},
  };
  for (const auto& [change, values] : changes) {
    SweepOptions other = opt;
    change(other);
    try {
      run_sweep(more, other);
      ADD_FAILURE() << "expected ArgumentError for " << values;
    } catch (const ArgumentError& e) {
      EXPECT_EQ(std::string(e.what()), "--resume: " + opt.csv_path + " was made with " + values +
                                           ": finishing it would mix results of different settings; rerun with " +
                                           values.substr(0, values.find(',')) + ", or without --resume");
    }
    EXPECT_EQ(slurp(opt.csv_path), text);
  }
  EXPECT_EQ(run_sweep(more, opt), 1);  // the same settings: the new size runs

  // A file of this program without a settings line is read by its command line, and one whose
  // command is no sweep (here: none recorded) is refused rather than guessed.
  std::string no_settings = text;
  const size_t line2 = no_settings.find('\n') + 1;
  no_settings.erase(line2, no_settings.find('\n', line2) + 1 - line2);
  std::ofstream(opt.csv_path) << no_settings;
  try {
    run_sweep(spec, opt);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("--resume: " + opt.csv_path + " records neither its settings nor a zepp "
                                         "experiment fig9/fig10 command"),
              std::string::npos) << e.what();
  }
}

// The settings line is read back and blanked (line numbers kept); a file written before it has
// its settings read from the command of its provenance line, the flags it leaves out at today's
// defaults.
TEST(Sweep, SettingsAreReadFromTheSettingsLineOrTheRecordedCommand) {
  std::string text = "# made by zepp 0.1.0 (commit abc) with: zepp experiment fig9 --csv 'a b.csv'\n"
                     "# settings: --planning=free --link-sharing=pair --seed=7\nheader\n";
  const auto p = take_provenance(text);
  ASSERT_TRUE(p && p->settings);
  EXPECT_EQ(*p->settings, (Settings{{"--planning", "free"}, {"--link-sharing", "pair"}, {"--seed", "7"}}));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_EQ(text.substr(text.rfind('\n', text.size() - 2) + 1), "header\n");
  EXPECT_EQ(text.find_first_not_of(" \n"), text.find("header"));
  EXPECT_EQ(command_words(p->command), (std::vector<std::string>{"zepp", "experiment", "fig9", "--csv", "a b.csv"}));
  EXPECT_EQ(command_words("zepp x 'it'\\''s'"), (std::vector<std::string>{"zepp", "x", "it's"}));

  bool from_command = false;
  EXPECT_EQ(sweep_settings_of(p, &from_command), p->settings);
  EXPECT_FALSE(from_command);
  Provenance old{"0.1.0", "abc",
                 "zepp experiment fig9 --traces /t --planning free --seed=3 --balance-slack 0.10 --csv x.csv", {}};
  const auto s = sweep_settings_of(old, &from_command);
  EXPECT_TRUE(from_command);
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (Settings{{"--planning", "free"}, {"--link-sharing", "fair"}, {"--seed", "3"}, {"--extra-slots", "2"},
                          {"--balance-slack", "0.1"}, {"--nic-slack", "0"}}));
  old.command = "zepp experiment fig12 --seed 3";
  EXPECT_FALSE(sweep_settings_of(old));
  old.command = "zepp experiment fig10 --seed x";
  EXPECT_FALSE(sweep_settings_of(old));
  EXPECT_FALSE(sweep_settings_of(std::nullopt));
}

// Issue 15: a sweep killed by SIGKILL in the middle of writing its CSV (here: half the file
// written, through the fault hook of write_results_atomically) loses nothing: --resume finishes
// with every configuration exactly once and no torn row. Killed in the 1st write (the first
// configuration's rows; a fresh CSV is written only then, so there is none yet) and in the 2nd
// (the second's, the first already recorded).
TEST(Sweep, KilledMidWriteResumesWithEveryConfigurationOnce) {
  SweepSpec spec = tiny_spec();
  spec.sizes_mb = {0.04, 0.08, 0.12};
  for (const char* kill_in : {"1", "2"}) {
    SweepOptions opt;
    opt.csv_path = scratch(std::string("killed-") + kill_in + ".csv").string();
    opt.progress = nullptr;
    opt.jobs = 1;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::setenv("ZEPP_FAULT_KILL_IN_WRITE", kill_in, 1);
      try {
        run_sweep(spec, opt);
      } catch (...) {
      }
      ::_exit(0);  // not reached when the hook fires
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the fault hook did not fire";
    EXPECT_TRUE(fs::exists(opt.csv_path + ".tmp"));  // the torn write, never renamed into place
    const bool first = std::string(kill_in) == "1";
    EXPECT_EQ(fs::exists(opt.csv_path), !first);
    const size_t recorded = first ? 0 : read_results(opt.csv_path).size();  // parses: no torn row
    EXPECT_EQ(recorded, first ? 0u : 2u);

    opt.resume = true;
    EXPECT_EQ(run_sweep(spec, opt), 3 - int(recorded / 2));
    const auto rows = read_results(opt.csv_path);
    ASSERT_EQ(rows.size(), 6u);
    std::map<std::string, int> per_config;
    for (const auto& r : rows) ++per_config[config_key(r) + "/" + r.strategy];
    for (const auto& [key, n] : per_config) EXPECT_EQ(n, 1) << key;
    EXPECT_EQ(per_config.size(), 6u);
  }
}

TEST(Sweep, RejectsBadOptions) {
  SweepOptions opt;
  opt.csv_path = scratch("bad.csv").string();
  opt.progress = nullptr;
  SweepSpec spec = tiny_spec();
  opt.jobs = 0;
  EXPECT_THROW(run_sweep(spec, opt), ArgumentError);
  opt.jobs = 1;
  spec.strategies = {"zepp"};
  EXPECT_THROW(run_sweep(spec, opt), ArgumentError);
  spec.strategies = {"a2av", "nonesuch"};
  EXPECT_THROW(run_sweep(spec, opt), ArgumentError);
  spec = tiny_spec();
  spec.sizes_mb = {-1};
  EXPECT_THROW(run_sweep(spec, opt), ArgumentError);

  // Resume on a CSV of another experiment.
  {
    std::ofstream f(opt.csv_path);
    ResultRow r;
    r.experiment = "fig9";
    r.latency_us = r.speedup_vs_a2av = 1;
    f << provenance_line() << csv_header() << csv_line(r);
  }
  opt.resume = true;
  try {
    run_sweep(tiny_spec(), opt);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("holds results of fig9"), std::string::npos) << e.what();
  }
  // Resume on a CSV another program (commit) made, or one without a provenance line: refused,
  // rows of two programs never share a file.
  for (const std::string first : {"# made by zepp 0.0.1 (commit " + std::string(40, 'f') + ") with: zepp experiment fig10\n",
                                  std::string()}) {
    std::ofstream(opt.csv_path) << first << csv_header();
    try {
      run_sweep(tiny_spec(), opt);
      FAIL() << "expected ArgumentError";
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("would mix results of two programs"), std::string::npos) << e.what();
    }
  }
}

TEST(Sweep, AFailingConfigurationIsReportedByName) {
  SweepOptions opt;
  opt.csv_path = scratch("fail.csv").string();
  opt.progress = nullptr;
  SweepSpec spec = tiny_spec();
  spec.nodes = {5};  // 20 GPUs do not divide 384 experts (contiguous placement)
  try {
    run_sweep(spec, opt);
    FAIL() << "expected an error";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("k2 a100 N=5"), std::string::npos) << e.what();
  }
}

// A sweep whose first configuration failed in its worker (iser-moe on a100, found there) left the
// previous results header-only: a fresh CSV now replaces the file only once a configuration is done.
TEST(Sweep, AFailureBeforeAnyConfigurationLeavesThePreviousCsv) {
  SweepOptions opt;
  opt.csv_path = scratch("kept.csv").string();
  opt.progress = nullptr;
  {
    std::ofstream f(opt.csv_path);
    f << "previous results\n";
  }
  SweepSpec spec = tiny_spec();
  spec.strategies = {"a2av", "iser-moe"};
  try {
    run_sweep(spec, opt);
    FAIL() << "expected an error";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("(no configuration finished; " + opt.csv_path + " is as it was)"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(opt.csv_path), "previous results\n");
}

// A configuration no placement fits failed only when its turn came, after the CSV was rewritten
// and earlier configurations had run: refused first, naming it and the sweep's flags.
TEST(Sweep, ConfigurationsThatCannotBePlacedAreRefusedBeforeAnyWork) {
  SweepOptions opt;
  opt.csv_path = scratch("unplaceable.csv").string();
  opt.progress = nullptr;
  SweepSpec spec = tiny_spec();
  spec.nodes = {2, 5};  // N=2 runs; 20 GPUs do not divide 384 experts (contiguous placement)
  const std::string flags = " (change --nodes, --topologies, --extra-slots, --strategies or --workloads): ";
  try {
    run_sweep(spec, opt);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "fig10: configuration k2 a100 N=5 (model kimi-k2): strategies: a2av cannot place "
                                     "384 experts on 5 x 4 GPUs" + flags + "num_experts: 384 is not a positive multiple of the 20 GPUs");
  }
  EXPECT_FALSE(fs::exists(opt.csv_path));
  spec = tiny_spec();
  opt.strategy.extra_slots = 400;
  try {
    run_sweep(spec, opt);
    FAIL() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "fig10: configuration k2 a100 N=2 (model kimi-k2): strategies: zepp cannot place "
                                     "384 experts on 2 x 4 GPUs" + flags + "extra_slots: 400 gives 448 slots per GPU, "
                                     "more than the 384 experts (an expert holds at most one replica per GPU)");
  }
  // The figures' own configurations all fit (every strategy and variant, every node count).
  EXPECT_NO_THROW(check_sweep(fig9_spec(), StrategyOptions{}));
  EXPECT_NO_THROW(check_sweep(fig10_spec(), StrategyOptions{}));
}

TEST(ResultsCsv, MalformedFilesNameFileAndLine) {
  const fs::path p = scratch("malformed.csv");
  auto expect_error = [&](const std::string& content, const std::string& where) {
    std::ofstream(p) << content;
    try {
      read_results(p.string());
      FAIL() << "expected InputError for " << content;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(p.string() + ":" + where), std::string::npos) << e.what();
    }
  };
  ResultRow r;
  r.experiment = "fig9";
  r.latency_us = 12.5;
  r.speedup_vs_a2av = 1;
  const std::string good = csv_line(r);
  expect_error("", "1: expected the header");
  expect_error("a,b,c\n", "1: expected the header");
  expect_error(csv_header() + good + "fig9,w,m\n", "3: expected 24 fields");
  std::string unknown_mode = good;
  unknown_mode.replace(unknown_mode.rfind(",model\n"), 7, ",maybe\n");
  expect_error(csv_header() + unknown_mode, "2: expected model or free in column planning");
  std::string bad = good;
  bad.replace(bad.find(",0,0,,0,"), 8, ",0,x,,0,");  // layer column is not a number
  expect_error(csv_header() + bad, "2: expected a number in column layer");
  // A negative or zero latency was taken (nan and text were refused): the report divided by it.
  for (const auto& [latency, expected] : std::vector<std::pair<std::string, std::string>>{
           {"-12.5", "2: expected a positive number in column latency_us, got '-12.5'"},
           {"0", "2: expected a positive number in column latency_us, got '0'"}}) {
    std::string row = good;
    row.replace(row.find(",12.5,"), 6, "," + latency + ",");
    expect_error(csv_header() + row, expected);
  }
  std::string negative_bytes = good;
  negative_bytes.replace(negative_bytes.find(",12.5,1,0,"), 10, ",12.5,1,-8,");
  expect_error(csv_header() + negative_bytes, "2: expected a non-negative number in column inter_node_bytes, got '-8'");
  EXPECT_THROW(read_results((p.string() + ".missing")), InputError);
}

// A file written before issue 20's planning columns reads as planning "free" (what it measured).
TEST(Results, FilesFromBeforeThePlanningColumnsReadAsFree) {
  const fs::path p = scratch("before-planning.csv");
  std::string header = csv_header();
  header = header.substr(0, header.find(",metadata_us")) + "\n";
  std::ofstream(p) << header << "fig9,w,m,t,0,5,a100,4,16,1,256,zepp,300.5,2,1,2,3,1.1,0.2,100,40\n";
  const auto rows = read_results(p.string());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].planning, "free");
  EXPECT_DOUBLE_EQ(rows[0].latency_us, 300.5);
  EXPECT_DOUBLE_EQ(rows[0].planning_us, 0);
  EXPECT_DOUBLE_EQ(rows[0].routing_wall_us, 40);
}

ResultRow row(const std::string& workload, int nodes, double mb, const std::string& strategy, double latency_us) {
  ResultRow r;
  r.experiment = "fig9";
  r.workload = workload;
  r.model = workload;
  r.topology = "a100";
  r.nodes = nodes;
  r.size_mb = mb;
  r.strategy = strategy;
  r.latency_us = latency_us;
  return r;
}

std::vector<ResultRow> with_speedups(std::vector<ResultRow> rows) {
  for (auto& r : rows)
    for (const auto& a : rows)
      if (a.strategy == "a2av" && config_key(a) == config_key(r)) r.speedup_vs_a2av = a.latency_us / r.latency_us;
  return rows;
}

// A topology named in its file as `a,b"c` added a column to every row (found by a fresh-user
// review); a name with a line break split the row. Such fields are quoted and read back whole.
TEST(ResultsCsv, FieldsWithCommasQuotesAndLineBreaksReadBackWhole) {
  ResultRow r = row("qwen3-235b", 4, 1, "zepp", 100);
  r.topology = "a,b\"c";
  r.trace = "t\nwo lines";
  r.speedup_vs_a2av = 2;
  const std::string line = csv_line(r);
  EXPECT_NE(line.find(",\"a,b\"\"c\","), std::string::npos) << line;
  testing::TempDir dir;
  const std::string path = dir.write("quoted.csv", provenance_line() + csv_header() + line);
  const auto back = read_results(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].topology, "a,b\"c");
  EXPECT_EQ(back[0].trace, "t\nwo lines");
  EXPECT_EQ(back[0].strategy, "zepp");
  EXPECT_EQ(back[0].nodes, 4);
  EXPECT_EQ(csv_field("zepp"), "zepp");  // plain fields stay as they were
}

// A second row of a configuration and strategy (an edit, two files joined) was read, and the
// report took whichever it met first: refused, naming both lines.
TEST(ResultsCsv, ASecondRowOfAConfigurationAndStrategyIsRefused) {
  testing::TempDir dir;
  auto rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 100),
                             row("qwen3-235b", 8, 1, "zepp", 90)});
  rows[2].speedup_vs_a2av = 1;  // no a2av there: the reader takes any positive speedup
  std::string text = provenance_line() + csv_header();
  for (const auto& r : rows) text += csv_line(r);
  const auto back = read_results(dir.write("ok.csv", text));  // zepp in two configurations: no repeat
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].line, 3);
  EXPECT_EQ(back[2].line, 5);
  ResultRow again = rows[1];
  again.latency_us = 120;
  const std::string path = dir.write("twice.csv", text + csv_line(again));
  try {
    read_results(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path + ":6: a second row of fig9 configuration qwen3-235b/a100/4/1 strategy zepp (the "
                                           "first is line 4): a sweep writes each (configuration, strategy) once; delete "
                                           "one of them");
  }
}

// The report's checks of its inputs (check_report_inputs), on files written as the sweeps write them.
class ReportInputs : public ::testing::Test {
 protected:
  // A results file `name` of `rows` after `first_lines` (provenance, settings), read back as the
  // report reads it, for `flag`; rows without a speedup get a2av's latency over theirs.
  ReportInput input(const std::string& flag, const std::string& name, const std::string& first_lines,
                    std::vector<ResultRow> rows) {
    std::string text = first_lines + csv_header();
    const auto computed = with_speedups(rows);  // for the rows given without a speedup
    for (size_t i = 0; i < rows.size(); ++i) {
      ResultRow r = rows[i].speedup_vs_a2av == 0 ? computed[i] : rows[i];
      if (r.speedup_vs_a2av == 0) r.speedup_vs_a2av = 1;  // no a2av beside it: any positive speedup reads
      text += csv_line(r);
    }
    ReportInput in{flag, dir.write(name, text), {}, std::nullopt};
    in.rows = read_results(in.path, &in.made_by);
    return in;
  }
  // Two configurations of a2av and zepp, each row with `planning`.
  static std::vector<ResultRow> rows(const std::string& planning = "model", const std::string& experiment = "fig9") {
    std::vector<ResultRow> out = {row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 100),
                                  row("qwen3-235b", 8, 1, "a2av", 400), row("qwen3-235b", 8, 1, "zepp", 200)};
    for (auto& r : out) r.planning = planning, r.experiment = experiment;
    return out;
  }
  // The provenance and settings lines of a sweep run with `change` made to the default options.
  static std::string made_with(const std::function<void(SweepOptions&)>& change = [](SweepOptions&) {}) {
    SweepOptions opt;
    change(opt);
    return provenance_line(sweep_settings(opt));
  }
  // What check_report_inputs throws ("accepted" when nothing).
  static std::string refusal(const std::vector<ReportInput>& inputs) {
    try {
      check_report_inputs(inputs);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  }
  testing::TempDir dir;
};

TEST_F(ReportInputs, AConfigurationWithoutItsA2avRowOrOfAnotherExperimentIsRefused) {  // or with another speedup
  auto no_base = rows();
  no_base.erase(no_base.begin() + 2);  // N=8 keeps zepp only, on line 6 (after provenance, settings, header)
  const ReportInput fig9 = input("--fig9", "fig9.csv", made_with(), no_base);
  EXPECT_EQ(refusal({fig9}), fig9.path + ":6: configuration qwen3-235b a100 N=8 1 MB (fig9) has no a2av row, the base of "
                                          "its speedups (speedup_vs_a2av) and of the report's a2av column; run the sweep "
                                          "again for it (a2av runs in every configuration)");
  auto wrong = with_speedups(rows());
  wrong[3].speedup_vs_a2av = 2.5;  // 400 / 200 = 2
  const ReportInput edited = input("--fig9", "edited.csv", made_with(), wrong);
  EXPECT_EQ(refusal({edited}), edited.path + ":7: speedup_vs_a2av 2.5 disagrees with the latencies: a2av's 400 µs (line "
                                             "6) / 200 µs is 2");
  const ReportInput fig10 = input("--fig10", "fig10.csv", made_with(), rows());
  EXPECT_EQ(refusal({fig10}), fig10.path + ":4: --fig10 takes fig10 results, got a row of fig9");
  EXPECT_EQ(refusal({input("--fig10", "fig10.csv", made_with(), rows("model", "fig10"))}), "accepted");
}

// A --fig9-free CSV made with the planning charged (or --fig9-serial with pair links, ...) was
// reported as what its section describes: each file's settings are those of its section, and a
// sensitivity file's others those of --fig9.
TEST_F(ReportInputs, SectionsRefuseFilesMadeWithOtherSettings) {
  const ReportInput fig9 = input("--fig9", "fig9.csv", made_with(), rows());
  const ReportInput free_rows = input("--fig9-free", "free.csv", made_with([](SweepOptions& o) { o.strategy.planning = PlanningMode::Free; }), rows("free"));
  const ReportInput serial = input("--fig9-serial", "serial.csv", made_with([](SweepOptions& o) { o.link_sharing = LinkSharing::Serial; }), rows());
  const ReportInput pair = input("--fig9-pair", "pair.csv", made_with([](SweepOptions& o) { o.link_sharing = LinkSharing::Pair; }), rows());
  EXPECT_EQ(refusal({fig9, serial, pair, free_rows}), "accepted");

  const std::string planning = "the report's \"Planning charged and left out\" section is about ";
  const ReportInput charged = input("--fig9-free", "charged.csv", made_with(), rows());
  EXPECT_EQ(refusal({fig9, charged}), charged.path + ":2: --fig9-free was made with --planning model; " + planning +
                                          "--planning free: rerun that sweep with --planning free, or name the file with "
                                          "the flag of its settings");
  ReportInput fig9_free = free_rows;
  fig9_free.flag = "--fig9";
  EXPECT_EQ(refusal({fig9_free, free_rows}), free_rows.path + ":2: --fig9 was made with --planning free; the report's "
                                                 "\"Planning charged and left out\" section (charged beside --fig9-free) is "
                                                 "about --planning model: rerun that sweep with --planning model, or name the "
                                                 "file with the flag of its settings");
  ReportInput pair_as_serial = pair;
  pair_as_serial.flag = "--fig9-serial";
  EXPECT_EQ(refusal({fig9, pair_as_serial}), pair.path + ":2: --fig9-serial was made with --link-sharing pair; the report's "
                                                 "\"Link-sharing sensitivity\" section is about --link-sharing serial: rerun "
                                                 "that sweep with --link-sharing serial, or name the file with the flag of its settings");
  ReportInput serial_as_fig9 = serial;
  serial_as_fig9.flag = "--fig9";
  EXPECT_EQ(refusal({serial_as_fig9}).rfind(serial.path + ":2: --fig9 was made with --link-sharing serial; the report's "
                                             "Figure 9 tables (max-min fair links) is about --link-sharing fair",
                                             0),
            0u);
  const ReportInput seed = input("--fig9-serial", "seed.csv", made_with([](SweepOptions& o) {
    o.link_sharing = LinkSharing::Serial;
    o.seed = 2;
  }), rows());
  EXPECT_EQ(refusal({fig9, seed}), seed.path + ":2: --fig9-serial was made with --seed 2, --fig9 (" + fig9.path +
                                       ") with --seed 1: the report's \"Link-sharing sensitivity\" section compares the "
                                       "two as differing in --link-sharing only");
  // A row whose planning column is not its file's --planning.
  auto mixed = rows("free");
  mixed[1].planning = "model";
  const ReportInput mixed_free = input("--fig9-free", "mixed.csv", made_with([](SweepOptions& o) { o.strategy.planning = PlanningMode::Free; }), mixed);
  EXPECT_EQ(refusal({fig9, mixed_free}), mixed_free.path + ":5: a row of planning model, but the file was made with "
                                             "--planning free (line 2): it mixes results of two settings");
}

// Files written before the settings line: their settings are read from the recorded command (flags
// left out at today's defaults) and --planning from their rows; a sensitivity file with neither
// is refused, a --fig9 one taken as it is.
TEST_F(ReportInputs, OlderFilesAreReadByTheirCommandOrRefusedForASection) {
  auto made_by = [](const std::string& flags) {
    return "# made by zepp 0.1.0 (commit " + std::string(40, 'a') + ") with: zepp experiment fig9 --traces /t --csv x.csv" +
           flags + "\n";
  };
  const ReportInput fig9 = input("--fig9", "fig9.csv", made_by(""), rows());
  const ReportInput free_rows = input("--fig9-free", "free.csv", made_by(" --planning free"), rows("free"));
  const ReportInput serial = input("--fig9-serial", "serial.csv", made_by(" --link-sharing=serial --seed 1"), rows());
  EXPECT_EQ(refusal({fig9, serial, free_rows}), "accepted");
  ReportInput free_as_pair = free_rows;
  free_as_pair.flag = "--fig9-pair";
  EXPECT_EQ(refusal({fig9, free_as_pair}), free_rows.path + ":1: --fig9-pair was made with --link-sharing fair (read from "
                                               "its command line); the report's \"Link-sharing sensitivity\" section is "
                                               "about --link-sharing pair: rerun that sweep with --link-sharing pair, or "
                                               "name the file with the flag of its settings");
  ReportInput fig9_as_free = fig9;
  fig9_as_free.flag = "--fig9-free";
  EXPECT_EQ(refusal({fig9, fig9_as_free}).rfind(fig9.path + ":3: --fig9-free was made with --planning model (its rows' "
                                                  "planning column); the report's",
                                                  0),
            0u);
  const ReportInput slack = input("--fig9-serial", "slack.csv", made_by(" --link-sharing serial --balance-slack 0.20"), rows());
  EXPECT_EQ(refusal({fig9, slack}), slack.path + ":1: --fig9-serial was made with --balance-slack 0.2 (read from its command "
                                        "line), --fig9 (" + fig9.path + ") with --balance-slack 0.1 (read from its command "
                                        "line): the report's \"Link-sharing sensitivity\" section compares the two as "
                                        "differing in --link-sharing only");
  const ReportInput unknown_fig9 = input("--fig9", "unknown9.csv", "", rows());
  const ReportInput unknown_serial = input("--fig9-serial", "unknown.csv", "", rows());
  EXPECT_EQ(refusal({unknown_fig9}), "accepted");
  EXPECT_EQ(refusal({fig9, unknown_serial}),
            unknown_serial.path + ":1: --fig9-serial takes the Figure 9 sweep made with --link-sharing serial (the "
                                  "report's \"Link-sharing sensitivity\" section), but " + unknown_serial.path +
                                  " records neither its settings nor the zepp experiment fig9 command that made it: "
                                  "nothing says it is; rerun that sweep");
}

TEST(Report, SpeedupOverFastestOtherStrategyAndGeometricMean) {
  const auto rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "comet", 200),
                                   row("qwen3-235b", 4, 1, "zepp", 100), row("qwen3-235b", 8, 1, "a2av", 400),
                                   row("qwen3-235b", 8, 1, "zepp", 500)});
  const auto best = speedup_over_best(rows);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].best, "comet");
  EXPECT_DOUBLE_EQ(best[0].speedup, 2.0);
  EXPECT_EQ(best[1].best, "a2av");
  EXPECT_DOUBLE_EQ(best[1].speedup, 0.8);
  EXPECT_NEAR(geometric_mean(best), std::sqrt(1.6), 1e-12);
}

TEST(Report, PublishedNumbersSitBesideOurs) {
  // The paper: Qwen, 4 nodes, 1 MB, 2.99x over A2AV+GEMM and 2.18x over COMET+EPLB.
  const auto rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 600), row("qwen3-235b", 4, 1, "comet+eplb", 400),
                                   row("qwen3-235b", 4, 1, "zepp", 200)});
  const std::string md = reproduction_markdown(rows, {}, "fig9.csv", "", {"figures/fig9-qwen3-235b.svg"});
  EXPECT_NE(md.find("| fig9 | Qwen (qwen3-235b) | a100 N=4 1 MB | a2av | 2.99x | 3.00x | 1.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| fig9 | Qwen (qwen3-235b) | a100 N=4 1 MB | comet+eplb | 2.18x | 2.00x | 0.92 |"), std::string::npos);
  EXPECT_NE(md.find("| fig9 | K2 (kimi-k2) | a100 N=4 1 MB | a2av | 2.10x | not run |"), std::string::npos);
  EXPECT_NE(md.find("Figure 10: weak scaling, every configuration\n\nNot run."), std::string::npos);
  EXPECT_NE(md.find("![figures/fig9-qwen3-235b.svg](figures/fig9-qwen3-235b.svg)"), std::string::npos);
  // Every published point appears once in the side-by-side table.
  for (const auto& p : published_points()) EXPECT_NE(md.find(p.source), std::string::npos) << p.source;
}

TEST(Report, VariantsAreComparedWithTheirBaseNotAsBaselines) {
  const auto rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 100),
                                   row("qwen3-235b", 4, 1, "zepp/no-split", 97), row("qwen3-235b", 4, 1, "zepp/no-merge", 150),
                                   row("qwen3-235b", 8, 1, "a2av", 300), row("qwen3-235b", 8, 1, "zepp", 100),
                                   row("qwen3-235b", 8, 1, "zepp/no-split", 99), row("qwen3-235b", 8, 1, "epic", 200),
                                   row("qwen3-235b", 8, 1, "epic/zepp-placement", 180)});
  const auto best = speedup_over_best(rows);  // an ablation is never "the fastest other strategy"
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].best, "a2av");
  EXPECT_EQ(best[1].best, "epic");
  const std::string md = reproduction_markdown(rows, {}, "fig9.csv", "", {});
  EXPECT_NE(md.find("| qwen3-235b a100 N=4 1 MB | 100.0 | 0.970 ** | 1.500 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| qwen3-235b a100 N=8 1 MB | 100.0 | 0.990 | |"), std::string::npos) << md;
  EXPECT_NE(md.find("`zepp` is within 2% of its fastest variant or faster in 1 of 2 configurations."), std::string::npos);
  // Summary rows: no-split sqrt(0.97 * 0.99) = 0.97995, slower in none, more than 2% faster in one of
  // two; no-merge 1.5 in its one configuration.
  EXPECT_NE(md.find("| geometric mean | | 0.980 | 1.500 |\n| slower without the stage / more than 2% faster | | "
                    "0 / 1 of 2 | 1 / 0 of 1 |\n"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| qwen3-235b a100 N=8 1 MB | 200.0 | 0.900 |\n| geometric mean | | 0.900 |\n"),
            std::string::npos) << md;
  EXPECT_EQ(md.find("zepp/no-split |---"), std::string::npos);  // not a column of the full table
}

// Issue 24: each ablation more than 2% faster than zepp is listed with the figure that puts zepp
// behind. 4 nodes: no-locality 90 vs zepp 100, whose planning is charged 30 + 5 against 8 + 2 us:
// 25 us more on a 10 us gap, so planning is named; eplb-placement 97 vs 100 with the same
// planning and busiest GPU 80 vs 70 us of GEMMs: compute. 8 nodes: 99 vs 100 is within 2%.
TEST(Report, AblationMissesSayWhichFigurePutsZeppBehind) {
  auto rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 100),
                             row("qwen3-235b", 4, 1, "zepp/no-locality", 90),
                             row("qwen3-235b", 4, 1, "zepp/eplb-placement", 97), row("qwen3-235b", 8, 1, "a2av", 300),
                             row("qwen3-235b", 8, 1, "zepp", 100), row("qwen3-235b", 8, 1, "zepp/no-locality", 99)});
  rows[1].metadata_us = 5, rows[1].planning_us = 30, rows[1].max_compute_us = 80;
  rows[2].metadata_us = 2, rows[2].planning_us = 8, rows[2].max_compute_us = 80;
  rows[3].metadata_us = 5, rows[3].planning_us = 30, rows[3].max_compute_us = 70;
  const std::string md = reproduction_markdown(rows, {}, "fig9.csv", "", {});
  EXPECT_NE(md.find("`zepp` is within 2% of its fastest variant or faster in 1 of 2 configurations.\nWhere it is not"),
            std::string::npos) << md;
  EXPECT_NE(md.find("- qwen3-235b/a100/4/1: zepp 100.0 µs, zepp/no-locality 90.0 µs (0.90x)."), std::string::npos) << md;
  EXPECT_NE(md.find("metadata exchange and planning 35.0 vs 10.0 µs. Behind because its per-batch planning is charged "
                    "25.0 µs more (the gap is 10.0 µs).\n"),
            std::string::npos) << md;
  EXPECT_NE(md.find("- qwen3-235b/a100/4/1: zepp 100.0 µs, zepp/eplb-placement 97.0 µs (0.97x). Busiest GPU computes 80 "
                    "vs 70 µs;"),
            std::string::npos) << md;
  EXPECT_NE(md.find("planning 35.0 vs 35.0 µs. Behind because its busiest GPU spends longer in expert GEMMs.\n"),
            std::string::npos) << md;
  EXPECT_EQ(md.find("- qwen3-235b/a100/8/1"), std::string::npos) << md;
}

// Issue 24: a configuration where zepp is more than 2% behind is listed with the figure that puts it
// behind; one within 2% is counted as close. 4 nodes: zepp 110 vs epic 100 (0.91x), busiest GPU
// 95 vs 80 us of GEMMs; 8 nodes: zepp 101 vs epic 100 (0.99x), within 2%.
TEST(Report, MissesSayWhichFigurePutsZeppBehind) {
  auto rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 110),
                             row("qwen3-235b", 4, 1, "epic", 100), row("qwen3-235b", 8, 1, "a2av", 300),
                             row("qwen3-235b", 8, 1, "zepp", 101), row("qwen3-235b", 8, 1, "epic", 100)});
  rows[1].max_compute_us = 95, rows[2].max_compute_us = 80;
  rows[1].max_nic_bytes = 2e6, rows[2].max_nic_bytes = 3e6;
  const std::string md = reproduction_markdown(rows, {}, "fig9.csv", "", {});
  EXPECT_NE(md.find("Zepp is the fastest strategy or within 2% of it in 1 of 2 configurations. Where it is not"),
            std::string::npos) << md;
  EXPECT_NE(md.find("- qwen3-235b/a100/4/1: zepp 110.0 µs, epic 100.0 µs (0.91x). Busiest GPU computes 95 vs 80 µs; "
                    "busiest NIC 2.0 vs 3.0 MB;"),
            std::string::npos) << md;
  EXPECT_NE(md.find("Behind because its busiest GPU spends longer in expert GEMMs."), std::string::npos) << md;
  EXPECT_EQ(md.find("- qwen3-235b/a100/8/1"), std::string::npos) << md;
}

// Issue 20 item 8: charged against free, hand-computed. Config 4 nodes: a2av 300 both ways, zepp
// 110 charged (6 us metadata + 4 us planning) and 100 free; config 8 nodes: a2av 400, zepp 210
// charged (5 + 5) and 200 free. Charged/free: a2av 1, zepp sqrt(1.1 * 1.05); share 9.1% and 4.8%.
TEST(Report, PlanningChargedBesideFree) {
  auto charged = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 110),
                                row("qwen3-235b", 8, 1, "a2av", 400), row("qwen3-235b", 8, 1, "zepp", 210)});
  charged[1].metadata_us = 6, charged[1].planning_us = 4;
  charged[3].metadata_us = 5, charged[3].planning_us = 5;
  auto free_rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 100),
                                  row("qwen3-235b", 8, 1, "a2av", 400), row("qwen3-235b", 8, 1, "zepp", 200)});
  for (auto& r : free_rows) r.planning = "free";
  const std::string md = reproduction_markdown(charged, {}, "fig9.csv", "", {}, {}, "", free_rows);
  EXPECT_NE(md.find("## Planning charged and left out"), std::string::npos) << md;
  EXPECT_NE(md.find("| a2av | 1.000 | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find(fmt::format("| zepp | {:.3f} | 2 |", std::sqrt(1.1 * 1.05))), std::string::npos) << md;
  EXPECT_NE(md.find("take 4.8–9.1% of its charged latency"), std::string::npos) << md;
  EXPECT_NE(md.find("| qwen3-235b/a100/4/1 | 2.73x over a2av | 3.00x over a2av |"), std::string::npos) << md;
  EXPECT_NE(md.find("charged in its latency"), std::string::npos);
  // Without the free rows: no section, and the intro still says the latencies are charged.
  EXPECT_EQ(reproduction_markdown(charged, {}, "fig9.csv", "").find("## Planning charged"), std::string::npos);
}

// Serial and pair link sharing each get a column: per strategy the geometric mean of its latency
// over fair's, per configuration Zepp's speedup over the fastest other.
TEST(Report, LinkSharingSensitivityHasAColumnPerModel) {
  const auto fair = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 100),
                                   row("qwen3-235b", 8, 1, "a2av", 400), row("qwen3-235b", 8, 1, "zepp", 200)});
  const auto serial = with_speedups({row("qwen3-235b", 4, 1, "a2av", 600), row("qwen3-235b", 4, 1, "zepp", 100),
                                     row("qwen3-235b", 8, 1, "a2av", 400), row("qwen3-235b", 8, 1, "zepp", 800)});
  const auto pair = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 150)});
  const std::string md = reproduction_markdown(fair, {}, "fig9.csv", "", {}, serial, "", {}, pair);
  EXPECT_NE(md.find("## Link-sharing sensitivity"), std::string::npos) << md;
  EXPECT_NE(md.find("| strategy | serial / fair latency (geometric mean, configurations) | pair / fair latency "
                    "(geometric mean, configurations) |"),
            std::string::npos) << md;
  // a2av: serial 2 and 1 (geometric mean sqrt 2), pair 1 on the one configuration pair ran.
  EXPECT_NE(md.find(fmt::format("| a2av | {:.2f} (2) | 1.00 (1) |", std::sqrt(2.0))), std::string::npos) << md;
  EXPECT_NE(md.find("| zepp | 2.00 (2) | 1.50 (1) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| qwen3-235b/a100/4/1 | 3.00x over a2av | 6.00x over a2av | 2.00x over a2av |"), std::string::npos) << md;
  EXPECT_NE(md.find("| qwen3-235b/a100/8/1 | 2.00x over a2av | 0.50x over a2av | not run |"), std::string::npos) << md;
  EXPECT_NE(md.find("`--link-sharing pair`"), std::string::npos) << md;
  // Only serial: one column.
  const std::string one = reproduction_markdown(fair, {}, "fig9.csv", "", {}, serial);
  EXPECT_EQ(one.find("pair / fair"), std::string::npos) << one;
  EXPECT_NE(one.find("with serial links (2 configurations)"), std::string::npos) << one;
}

TEST(Sweep, RunsZeppAblationsAsVariants) {
  SweepOptions opt;
  opt.csv_path = scratch("variants.csv").string();
  opt.progress = nullptr;
  SweepSpec spec = tiny_spec();
  spec.strategies = {"a2av", "zepp", "zepp/no-merge", "epic", "epic/zepp-placement", "zepp/eplb-placement",
                     "zepp/roofline-placement"};
  ASSERT_EQ(run_sweep(spec, opt), 1);
  const auto rows = read_results(opt.csv_path);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[2].strategy, "zepp/no-merge");
  EXPECT_EQ(rows[4].strategy, "epic/zepp-placement");
  EXPECT_EQ(rows[5].strategy, "zepp/eplb-placement");
  EXPECT_EQ(rows[6].strategy, "zepp/roofline-placement");
  EXPECT_GT(rows[2].inter_node_bytes, rows[1].inter_node_bytes);  // merge removes duplicate rows
  spec.strategies = {"a2av", "zepp/no-such-stage"};
  EXPECT_THROW(run_sweep(spec, opt), ArgumentError);
}

TEST(Plots, GnuplotWritesSvgs) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  auto rows = with_speedups({row("qwen3-235b", 4, 1, "a2av", 300), row("qwen3-235b", 4, 1, "zepp", 100),
                             row("kimi-k2", 4, 1, "a2av", 300), row("kimi-k2", 4, 1, "zepp", 150)});
  const fs::path dir = scratch("figs");
  const auto svgs = plot_fig9(rows, dir.string());
  ASSERT_EQ(svgs.size(), 2u);
  for (const auto& s : svgs) EXPECT_NE(slurp(s).find("<svg"), std::string::npos) << s;
  EXPECT_NE(slurp(dir / "fig9-qwen3-235b.dat").find("\"N=4 1MB\" 1.0000 3.0000"), std::string::npos);
  for (auto& r : rows) r.experiment = "fig10";
  const auto line = plot_fig10(rows, dir.string());
  ASSERT_EQ(line.size(), 1u);
  EXPECT_NE(slurp(line[0]).find("<svg"), std::string::npos);
  EXPECT_THROW(plot_fig9(rows, dir.string()), ArgumentError);  // no fig9 rows left
}

}  // namespace
}  // namespace zepp::experiments

namespace zepp::experiments {
namespace {

// docs/reproduction.md is generated: regenerating it from the committed CSVs must give the
// committed file (rerun `zepp experiment report` after changing either).
TEST(Report, CommittedReproductionMatchesCommittedResults) {
  const fs::path root = ZEPP_SOURCE_DIR;  // __FILE__ is relative to the build folder under Ninja
  const fs::path md = root / "docs" / "reproduction.md";
  const fs::path f9 = root / "docs" / "results" / "fig9.csv", f10 = root / "docs" / "results" / "fig10.csv";
  if (!fs::exists(md) || !fs::exists(f9) || !fs::exists(f10)) GTEST_SKIP() << "no committed results under " << root;
  MadeBy made_by(2);
  const auto fig9 = read_results(f9.string(), &made_by[0].second), fig10 = read_results(f10.string(), &made_by[1].second);
  made_by[0].first = "docs/results/fig9.csv", made_by[1].first = "docs/results/fig10.csv";
  std::vector<std::string> figures;
  for (const auto& r : fig9)
    if (std::find(figures.begin(), figures.end(), "figures/fig9-" + r.workload + ".svg") == figures.end())
      figures.push_back("figures/fig9-" + r.workload + ".svg");
  figures.push_back("figures/fig10.svg");
  const fs::path f9s = root / "docs" / "results" / "fig9-serial.csv";
  std::vector<ResultRow> fig9_serial;
  if (fs::exists(f9s)) {
    made_by.emplace_back("docs/results/fig9-serial.csv", std::nullopt);
    fig9_serial = read_results(f9s.string(), &made_by.back().second);
  }
  const fs::path f9p = root / "docs" / "results" / "fig9-pair.csv";
  std::vector<ResultRow> fig9_pair;
  if (fs::exists(f9p)) {
    made_by.emplace_back("docs/results/fig9-pair.csv", std::nullopt);
    fig9_pair = read_results(f9p.string(), &made_by.back().second);
  }
  const fs::path f9f = root / "docs" / "results" / "fig9-free.csv";
  std::vector<ResultRow> fig9_free;
  if (fs::exists(f9f)) {
    made_by.emplace_back("docs/results/fig9-free.csv", std::nullopt);
    fig9_free = read_results(f9f.string(), &made_by.back().second);
  }
  const fs::path f11 = root / "docs" / "results" / "fig11.csv";
  std::vector<Fig11Row> fig11;
  if (fs::exists(f11)) {
    made_by.emplace_back("docs/results/fig11.csv", std::nullopt);
    fig11 = read_fig11(f11.string(), &made_by.back().second);
  }
  std::string expected = reproduction_markdown(fig9, fig10, "docs/results/fig9.csv", "docs/results/fig10.csv", figures,
                                               fig9_serial, provenance_markdown(made_by), fig9_free, fig9_pair);
  if (fs::exists(f11)) expected += fig11_markdown(fig11, "docs/results/fig11.csv", "figures/fig11.svg");
  EXPECT_EQ(slurp(md), expected) << "docs/reproduction.md is stale: run zepp experiment report --fig9 docs/results/fig9.csv "
                                    "--fig10 docs/results/fig10.csv --fig11 docs/results/fig11.csv "
                                    "--fig9-serial docs/results/fig9-serial.csv --fig9-pair docs/results/fig9-pair.csv --fig9-free docs/results/fig9-free.csv --out docs/reproduction.md (with --allow-mixed-commits "
                                    "when the CSVs come from different commits)";
}

}  // namespace
}  // namespace zepp::experiments
