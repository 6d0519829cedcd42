// Command-line options shared by the subcommands that build a workload on a cluster:
// trace, model and topology presets with per-field overrides, workload sampling.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/types.hpp"
#include "core/error.hpp"
#include "pipeline/strategy.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"

namespace zepp::cli {

struct WorkloadFlags {
  std::string trace_path;
  std::string history_path;        // placement input apart from the evaluation trace (--history)
  bool skip_invalid = false;       // --skip-invalid: skip malformed trace files, listing them
  std::string model = "";          // default: kimi-k2 without a trace; required with one
  std::string topology = "a100";
  int nodes = 4;
  std::optional<int> gpus_per_node, num_experts, top_k, hidden, ffn;
  std::optional<double> nvlink_gbps, nic_gbps, nvlink_latency_us, nic_latency_us, peak_tflops, hbm_tbps,
      kernel_launch_us;
  std::string link_sharing = "fair";
  WorkloadOptions workload;
  std::optional<double> max_memory_mib;  // --max-memory; default: what the machine has
  double max_minutes = 60;               // --max-minutes (pipeline/cost.hpp: kDefaultSecondsBudget)
  int strategies = 1;                    // set by the command: strategies run on the workload (cost estimate)
  int64_t runs_per_strategy = 1;         // set by zepp run: --repeat (the estimate's time, not its memory)
  bool zepp_placement = true;            // set by the command: a strategy packs with Zepp's rule (cost estimate)
  bool history_fraction_given = false;   // --history-fraction on the command line (refused beside a load-only trace)

  // Registers the flags on `cmd`.
  void add_to(CLI::App* cmd);
  // Preset plus overrides; ArgumentError naming the flag on bad values.
  ModelShape model_shape() const;
  Topology cluster() const;
  // --experts beside a token-level trace: refused (ArgumentError naming the flag and the experts
  // the trace selects) when above the experts the trace selects, whose extra experts no token
  // would select (idle slots that only skew the placement). A load-only trace's columns are its
  // expert count (check_trace_matches_model).
  void check_experts(const Trace& trace) const;
};

// What the flags resolve to: the model, the cluster, the trace (if any) and the workload.
struct ResolvedWorkload {
  ModelShape model;
  Topology topo;
  std::unique_ptr<Trace> trace;
  std::unique_ptr<Trace> history;  // with --history
  Workload workload;
};
// Throws ArgumentError naming --max-memory when the estimated cost of running f.strategies
// strategies on this model and cluster (pipeline/cost.hpp) exceeds --max-memory, by default the
// memory this process may still allocate.
void check_cost(const WorkloadFlags& f, const ModelShape& model, const Topology& topo);
// check_cost's bound with its defaults (the memory this process may allocate, --max-minutes 60)
// for an experiment's size flag (fig9, fig10, fig11 --sizes; fig12, replay --size-mb), which has
// no --max-memory or --max-minutes: one configuration, `strategies` strategies on `size_mb` MiB
// per GPU of `model` on `topo`, `runs` times (its layers; the time only). Called for every
// configuration before the first runs (a size `zepp simulate` refused grew memory without bound
// in a sweep's worker), then the batch bounds of the workload builder (check_batch_size: at least
// one token per GPU, at most 2^31 (token, expert) pairs), which a worker found. Throws
// ArgumentError "FLAG: SIZE MiB per GPU in CONFIGURATION: this run needs about ..., more than the
// ... available; use a smaller FLAG ..." (or the batch bound's reason).
void check_experiment_size(const std::string& flag, double size_mb, const std::string& configuration,
                           const ModelShape& model, const Topology& topo, int strategies, bool zepp_placement,
                           double runs = 1);

// Checks the flags and the estimated cost (pipeline/cost.hpp: --max-memory, default the
// machine's memory) before reading the trace or building anything; errors name the flag.
ResolvedWorkload resolve(const WorkloadFlags& flags);

// Flag values (issue 23): each throws ArgumentError "FLAG: expected ..., got VALUE".
// A finite number in [lo, hi] (NaN and infinities refused).
void require_in_range(double value, const std::string& flag, double lo, double hi, const std::string& unit = "");
// Flags that only act in one mode: refuses each of `flags` the user gave on `cmd` unless
// `mode_on`, saying it needs `mode` ("--drift-period: only acts with --iterations N (>= 1) and
// --drift rotating; leave it out or add them").
void require_mode(const CLI::App& cmd, const std::vector<std::string>& flags, bool mode_on, const std::string& mode);
// The workload flags of `w` that only shape another workload than the one asked for (--zipf
// beside --trace, --layer or --skip-invalid without a trace, --history-fraction beside
// --history), refused as require_mode does; zepp simulate and zepp run alike.
void check_workload_modes(const CLI::App& cmd, const WorkloadFlags& w);
// The strategies of a comma-separated --strategies value, in order, each trimmed of spaces
// ("a2av, zepp" is a2av and zepp). Throws ArgumentError naming `flag` for an empty list, an empty
// entry ("a2av,,zepp", a trailing comma), a name given twice (its row would repeat the same
// numbers) or a name the strategy registry does not know (pipeline/strategy.hpp); with
// `variants`, a variant's name ("zepp/no-split", pipeline/variants.hpp) is taken too.
std::vector<std::string> strategy_list(const std::string& text, const std::string& flag, bool variants = false);

// Throws ArgumentError "FLAG: names VALUE twice" for the first value a comma-separated list flag
// (CLI11 ->delimiter(',')) gives twice: `--nodes 4,4`, `--sizes 1,1.0` (equal numbers) or
// `--strategies a2av,a2av` ran the configuration twice and wrote its rows twice.
void require_distinct(const std::vector<std::string>& values, const std::string& flag);
void require_distinct(const std::vector<int>& values, const std::string& flag);
void require_distinct(const std::vector<double>& values, const std::string& flag);

// Strategies built on Zepp's plan, which Zepp's ablation flags change (zepp+hot adds replicas to
// it, zepp+swaps swaps, zepp-overlap keeps contiguous experts): every name starting with "zepp".
bool takes_zepp_ablations(const std::string& name);
// False for the strategies that place each expert once at its contiguous home (a2av, fast, comet,
// sglang, zepp-overlap and their variants), on which --extra-slots (R) changes nothing.
bool takes_extra_slots(const std::string& name);
// The name a result row carries: a Zepp strategy with its ablations, named as the Figure 9 sweep
// names them ("zepp/no-split/no-merge"; zepp-overlap routes home, so --no-locality leaves it
// unchanged), so a row says what ran; any other strategy as it is.
std::string strategy_label(const std::string& name, const StrategyOptions& opt);
// One strategy of a one-layer run: as given ("zepp/no-split"), the registered strategy it runs
// ("zepp"), its options (`opt` with the variant's switch set, pipeline/variants.hpp) and the
// label its row prints (strategy_label). Throws ArgumentError naming `flag` when two entries run
// the same thing ("zepp,zepp/no-split" with the --no-split flag).
struct StrategyRun {
  std::string name, strategy, label;
  StrategyOptions opt;
};
std::vector<StrategyRun> strategy_runs(const std::vector<std::string>& names, const StrategyOptions& opt,
                                       const std::string& flag);
// True when the strategy list names one that packs with Zepp's §4.1 rule (cost estimate).
bool packs_with_zepp(const std::vector<std::string>& strategies);

// CLI11 check for counts and seeds: rejects negative values ('-1' would wrap for unsigned fields
// or pick a default for --layer).
std::string non_negative(const std::string& value);

// read_trace, then a warning on stderr listing the files skipped (empty, or invalid with
// --skip-invalid) and the requests a log recorded more than once, and what the layers the run
// uses hold that skews its figures (trace_oddities): `layers` empty = every layer, -1 = the
// trace's first layer (--layer's default). A layer the run never reads is not warned about.
// Also rejects layer ids beyond `model`'s layer count when given (trace/layer_check.hpp).
Trace read_trace_warning(const std::string& path, bool skip_invalid, const ModelShape* model = nullptr,
                         std::vector<int> layers = {});

// The workload's builders (build_workload, DriftWorkload) name option fields ("dataset: ..."); the
// user typed flags: rethrows `e` under the flag's name ("--dataset: ...") for size_mb,
// history_fraction, zipf, layer, dataset and seed, else as it is.
[[noreturn]] void rethrow_as_flag(const ArgumentError& e);

// Under mpirun every rank reads the same trace: ranks other than 0 call this so its warnings
// print once, not once per rank (errors still go through `zepp run`'s one reporter).
void silence_trace_warnings();

}  // namespace zepp::cli
