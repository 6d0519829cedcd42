#include "cli/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/progress.hpp"
#include "core/error.hpp"
#include "formats/json_text.hpp"
#include "model/compose.hpp"
#include "model/moe_layers.hpp"
#include "model/report.hpp"
#include "pipeline/cost.hpp"
#include "workload/size.hpp"

namespace zepp::cli {

void ModelFlags::add_to(CLI::App* cmd) {
  cmd->add_option("--layers", layers,
                  "Whole model: 'all' (every MoE layer of the trace plus the model's dense layers) or a list of trace "
                  "layers ('1,5,9', '1-4'), each with its own placement and routing, plus attention and dense work");
  cmd->add_option("--phase", phase, "With --layers: prefill (default; tokens per GPU from --size-mb) or decode (one token per sequence)");
  cmd->add_option("--batch", batch, "Decode: sequences per GPU (default: tokens per GPU from --size-mb)");
  cmd->add_option("--context", context, "Prefill: prompt length in tokens, at most the tokens per GPU (default 1024, or the tokens per GPU when fewer); decode: cached tokens per sequence, the new one included (default 1024)");
  cmd->add_option("--kv-cache-gb", kv_cache_gb, "Decode: KV cache per GPU in GB; context = the most tokens per sequence it holds (instead of --context)");
}

constexpr int64_t kMaxListedLayers = 4096;

std::vector<int> parse_layers(const std::string& s) {
  if (s == "all") return {};
  std::vector<int> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto dash = item.find('-', 1);
    try {
      size_t used = 0;
      const int a = std::stoi(item.substr(0, dash), &used);
      require(used == (dash == std::string::npos ? item.size() : dash), "--layers", "'" + item + "' is not a layer number");
      const int b = dash == std::string::npos ? a : std::stoi(item.substr(dash + 1), &used);
      require(dash == std::string::npos || used == item.size() - dash - 1, "--layers", "'" + item + "' is not a range");
      require(a >= 0 && b >= a, "--layers", "'" + item + "': layers are >= 0 and ranges ascend");
      // Bounded before the range is listed (0-2000000000 took 8 GB); no model has this many layers.
      require(int64_t(out.size()) + (int64_t(b) - a + 1) <= kMaxListedLayers, "--layers",
              fmt::format("'{}' names more than {} layers", s, kMaxListedLayers));
      for (int l = a; l <= b; ++l) {
        require(std::find(out.begin(), out.end(), l) == out.end(), "--layers", fmt::format("layer {} is listed twice", l));
        out.push_back(l);
      }
    } catch (const std::logic_error& e) {
      if (dynamic_cast<const ArgumentError*>(&e)) throw;
      throw ArgumentError("--layers: expected 'all' or layer numbers and ranges such as 1,5,9 or 1-4, got '" + s + "'");
    }
  }
  require(!out.empty(), "--layers", "names no layer");
  return out;
}

void run_model(const WorkloadFlags& w, const std::vector<std::string>& systems, const std::string& executor,
               const std::string& format, const StrategyOptions& opt, const ServeFlags& serve, const ModelFlags& flags) {
  ModelFlags f = flags;
  if (f.phase.empty()) f.phase = "prefill";
  require(format == "table" || format == "json" || format == "csv", "--format", "expected table, json or csv");
  require(f.phase == "prefill" || f.phase == "decode", "--phase", "expected prefill or decode, got '" + f.phase + "'");
  require(!w.trace_path.empty(), "--trace", "--layers runs the MoE layers of a trace; name one");
  require(executor == "sim" || executor == "estimate", "--executor", "expected sim or estimate, got '" + executor + "'");
  const bool decode = f.phase == "decode";
  require(decode || (!f.batch && !f.kv_cache_gb), decode ? "--phase" : (f.batch ? "--batch" : "--kv-cache-gb"),
          "is a decode option (--phase decode)");
  require(!(f.context && f.kv_cache_gb), "--kv-cache-gb", "and --context both set the context; give one");
  require(!f.batch || *f.batch >= 1, "--batch", "must be >= 1");
  require(!f.context || *f.context >= 1, "--context", "must be >= 1");

  const ModelShape model = w.model_shape();
  const Topology topo = w.cluster();
  const model::DenseShape dense = model::dense_shape(model.name);
  // Each entry: its registered strategy with its options (a variant sets its switches) and label.
  const std::vector<StrategyRun> runs = strategy_runs(systems, opt, "--strategies");
  for (const StrategyRun& run : runs) check_strategy_fits(run.strategy, model, topo, run.opt);  // naming the flags
  require(w.history_path.empty(), "--history",
          "is not used with --layers (each layer's history is the first requests of --trace)");
  model::MoeRunOptions run;
  run.size_mb = w.workload.size_mb;
  if (decode && f.batch) run.size_mb = double(*f.batch) * model.token_bytes() / double(1 << 20);  // exactly batch tokens

  // The step's shape, checked before any layer is simulated: tokens per GPU follow from the size.
  model::StepShape step;
  step.phase = decode ? model::StepPhase::Decode : model::StepPhase::Prefill;
  step.tokens = decode && f.batch ? *f.batch : int64_t(tokens_per_gpu(model, run.size_mb));
  require(step.tokens >= 1, "--size-mb",
          fmt::format("{:g} MiB per GPU holds less than one token of {} bytes", run.size_mb, model.token_bytes()));
  require(double(step.tokens) * topo.num_gpus() * model.top_k < 2147483648.0, decode && f.batch ? "--batch" : "--size-mb",
          fmt::format("{} tokens per GPU on {} GPUs at top-{} make more than 2^31 (token, expert) pairs in all",
                      step.tokens, topo.num_gpus(), model.top_k));
  step.context = f.context ? *f.context : 1024;
  // A prefill prompt longer than a GPU's batch would be prefilled in chunks, each attending to the
  // earlier chunks' KV cache, which the step model does not include: it would time one prompt of
  // the batch's length whatever --context says.
  require(decode || !f.context || *f.context <= step.tokens, "--context",
          fmt::format("a prefill prompt of {} tokens does not fit in the {} tokens per GPU of --size-mb {:g} (chunked "
                      "prefill is not modelled); give --context <= {} or a larger --size-mb",
                      f.context ? *f.context : 0, step.tokens, w.workload.size_mb, step.tokens));
  if (!decode && !f.context) step.context = std::min<int64_t>(step.context, step.tokens);  // the default: whole batch
  const double kv_per_token = model::kv_bytes_per_token(model, dense);
  if (f.kv_cache_gb) {
    step.context = int64_t(std::floor(*f.kv_cache_gb * 1e9 / (double(step.tokens) * kv_per_token)));
    require(step.context >= 1, "--kv-cache-gb",
            fmt::format("{} GB holds less than one token per sequence for {} sequences", *f.kv_cache_gb, step.tokens));
  }
  // A decode step reads each sequence's whole cache: it must be resident, so it cannot exceed the
  // GPU's memory (the topology's compute.memory; 0 when a topology file does not give it).
  const double memory = topo.compute.memory;
  if (decode && memory > 0) {
    if (f.kv_cache_gb) {
      require(*f.kv_cache_gb * 1e9 <= memory, "--kv-cache-gb",
              fmt::format("{:g} GB = {:.0f} bytes of KV cache per GPU exceeds the GPU memory of {}, {:.0f} bytes ({:g} GB)",
                          *f.kv_cache_gb, *f.kv_cache_gb * 1e9, topo.name, memory, memory / 1e9));
    } else {
      const double bytes = double(step.tokens) * double(step.context) * kv_per_token;
      require(bytes <= memory, f.context ? "--context" : f.batch ? "--batch" : "--size-mb",
              fmt::format("a KV cache of {} sequences x {} tokens{} x {:.0f} bytes per token ({} layers) = {:.0f} bytes "
                          "({:g} GB) per GPU exceeds the GPU memory of {}, {:.0f} bytes ({:g} GB); give a smaller --context "
                          "or --batch{}",
                          step.tokens, step.context, f.context ? "" : " (--context's default)", kv_per_token, model.layers,
                          bytes, bytes / 1e9, topo.name, memory, memory / 1e9,
                          f.batch ? "" : " (sequences per GPU; default: the tokens per GPU of --size-mb)"));
    }
  }
  const Trace trace = read_trace_warning(w.trace_path, w.skip_invalid, nullptr, parse_layers(f.layers));
  w.check_experts(trace);
  check_trace_matches_model(trace, model);

  run.layers = parse_layers(f.layers);
  const std::vector<int> present = trace.layer_ids();
  for (int l : run.layers)
    require(std::binary_search(present.begin(), present.end(), l), "--layers",
            fmt::format("layer {} is not an MoE layer of {}; it has {}", l, w.trace_path, fmt::join(present, ",")));
  if (f.layers == "all") {  // refused before any layer runs, not when the step is composed
    const std::string problem = model::all_layers_problem(present, model, dense);
    require(problem.empty(), "--layers", problem);
  }
  run.iterations = serve.iterations;
  run.workload = w.workload;
  run.drift.mode = parse_drift_mode(serve.drift);
  run.drift.dataset = w.workload.dataset;
  run.drift.period = serve.period;
  run.drift.groups = serve.groups;
  run.executor = executor == "sim" ? ExecutorKind::Sim : ExecutorKind::Estimate;
  StrategyOptions o = opt;
  o.optimal = false;  // the exact routing optimum is a single-layer diagnostic
  const model::MoeRun moe = model::simulate_moe_layers(trace, model, topo, systems, o, run, [](int done, int total, const std::string& s) {
    progress_line(fmt::format("MoE layers: {}/{} ({})", done, total, s), done == total);
  });

  if (moe.tokens_per_gpu != step.tokens)
    throw std::logic_error(fmt::format("zepp simulate --layers: {} tokens per GPU simulated, {} expected",
                                       moe.tokens_per_gpu, step.tokens));
  auto steps = model::compose_steps(moe, model, dense, topo, step, f.layers == "all");
  for (size_t i = 0; i < steps.size(); ++i) steps[i].system = runs[i].label;  // a Zepp row says which ablations ran

  model::ReportContext c;
  c.workload = moe.description;
  const model::AttentionShape& a = dense.attention;
  const std::string attention = a.mla_kv_rank > 0
                                    ? fmt::format("MLA, {} heads, cached latent {} + rope {}", a.heads, a.mla_kv_rank, a.rope_dim)
                                    : fmt::format("{} heads, {} KV heads, head dim {}", a.heads, a.kv_heads, a.head_dim);
  c.model = fmt::format("{} ({} layers, {} MoE; E={}, top-{}, hidden {}, expert ffn {}; attention: {})", model.name,
                        model.layers, model.moe_layers, model.num_experts, model.top_k, model.hidden, model.ffn, attention);
  c.cluster = fmt::format("{} x {} GPUs ({}), data-parallel attention", topo.nodes, topo.gpus_per_node, topo.name);
  c.phase = f.phase;
  c.tokens_per_gpu = step.tokens;
  c.context = step.context;
  c.gpus = topo.num_gpus();
  c.executor = executor;
  const auto doc = model::model_json(c, steps);
  const std::string text = format == "json" ? json_text(doc, 2) + "\n" : format == "csv" ? model::model_csv(doc) : model::model_table(doc);
  std::fputs(text.c_str(), stdout);
}

}  // namespace zepp::cli
