// Figure 11 (paper §6.4): end to end, prefill throughput and decode time per output token of
// Zepp over the SGLang baseline, Qwen3-30B-A3B on the paper's cluster at 1-16 MB per GPU, on
// the whole-model stage (src/model/). CSV, gnuplot SVG and a docs/reproduction.md section.
#pragma once
#include <optional>

#include "core/provenance.hpp"
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "model/non_moe.hpp"
#include "pipeline/strategy.hpp"

namespace zepp::experiments {

struct Fig11Spec {
  std::string model = "qwen3-30b-a3b";
  std::string trace = "qwen3-30b-a3b-load";  // subfolder of the traces directory
  std::string topology = "a100";
  int nodes = 4;
  double hbm_bw = 0;             // bytes/s overriding the preset's (A100 80 GB, see fig11.cpp)
  double gpu_memory = 0;         // bytes per GPU, for the KV cache budget
  double kv_fraction = 0;        // share of (memory - weights) given to the KV cache
  int64_t prompt = 0;            // prefill: tokens per prompt
  std::vector<double> sizes_mb;
  int iterations = 0;                // 0: one batch sampled per layer (§6.1); >= 1: served batches (swaps)
  std::vector<std::string> systems;  // reference first ("sglang"), then the others
};
// The configuration the figure uses, every constant with its source in fig11.cpp.
Fig11Spec fig11_spec();

struct Fig11Row {
  double size_mb = 0;
  std::string phase;         // "prefill" or "decode"
  std::string system;
  int64_t tokens_per_gpu = 0, context = 0;
  double step_ms = 0, moe_ms = 0, non_moe_ms = 0;
  double tokens_per_s = 0;   // cluster: prefill tokens/s; decode output tokens/s (= batch · GPUs / TPOT)
  double speedup = 0;        // reference step / this step (TPS gain in prefill, TPOT speedup in decode)
};

// Runs every size (one MoE simulation per (size, layer, system), shared by prefill and decode)
// and writes the CSV (rewritten) as each size finishes. Progress lines go to `progress`.
// Throws ArgumentError naming the option (a system's placement that cannot hold the experts
// before any work, check_strategy_fits), and what the stages throw.
std::vector<Fig11Row> run_fig11(const Fig11Spec& spec, const std::string& traces_dir, const std::string& csv_path,
                                const StrategyOptions& opt, std::FILE* progress);

// The CSV's text, its first line saying which program made it (core/provenance.hpp).
std::string fig11_csv(const std::vector<Fig11Row>& rows);
// Throws InputError "FILE:LINE: expected ..." on another header or a malformed row (a step_ms,
// tokens_per_s or speedup that is not positive, a negative moe_ms or non_moe_ms). `made_by`:
// the provenance line's content, nullopt for a file written before zepp recorded it.
std::vector<Fig11Row> read_fig11(const std::string& path, std::optional<Provenance>* made_by = nullptr);

// One SVG: each system's prefill TPS gain and decode TPOT speedup over the reference (the rows'
// first system) against MB per GPU, with the paper's published endpoints. Returns its path. Throws std::runtime_error when
// gnuplot fails, ArgumentError("rows") when empty.
std::string plot_fig11(const std::vector<Fig11Row>& rows, const std::string& out_dir);
// The files plot_fig11 writes in out_dir, checked (check_figure_files, core/figure.hpp) naming
// `flag`: before the runs that make them.
void check_fig11_files(const std::string& out_dir, const std::string& flag);

// The docs/reproduction.md section: our figures beside the paper's 1.32-1.92x and 1.04-1.57x,
// the setup and a reading generated from the rows. `figure`: SVG path relative to the markdown.
std::string fig11_markdown(const std::vector<Fig11Row>& rows, const std::string& source, const std::string& figure);

}  // namespace zepp::experiments
