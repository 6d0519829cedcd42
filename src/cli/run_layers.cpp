#include "cli/run_layers.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "cli/model.hpp"
#include "core/error.hpp"
#include "formats/json_text.hpp"
#include "model/moe_layers.hpp"
#include "mpi/stack.hpp"
#include "pipeline/swap_line.hpp"

namespace zepp::cli {
namespace {

std::string table(const nlohmann::json& doc) {
  std::string out = doc["workload"].get<std::string>() + "\n";
  out += fmt::format("{:<10} {:>6} {:>11} {:>11} {:>10} {:>9} {:>11} {:>11} {:>11}\n", "strategy", "layer", "metadata_ms",
                     "planning_ms", "wall_ms", "norm_ms", "nvlink_MB", "nic_MB", "layer_err");
  for (const auto& s : doc["strategies"]) {
    for (const auto& l : s["layers"])
      out += fmt::format("{:<10} {:>6} {:>11.3f} {:>11.3f} {:>10.3f} {:>9.3f} {:>11.3f} {:>11.3f} {:>11.2e}\n",
                         s["strategy"].get<std::string>(), l["layer"].get<int>(), l["metadata_s"].get<double>() * 1e3,
                         l["planning_s"].get<double>() * 1e3, l["wall_s"].get<double>() * 1e3, l["norm_s"].get<double>() * 1e3,
                         l["nvlink_bytes"].get<double>() / 1e6, l["nic_bytes"].get<double>() / 1e6,
                         l["max_rel_error"].get<double>());
    out += fmt::format("{:<10} {:>6} {:>10.3f}   stack output vs dense reference: max relative error {:.2e}, checksum {}\n",
                       s["strategy"].get<std::string>(), "total", s["total_s"].get<double>() * 1e3,
                       s["max_rel_error"].get<double>(), s["output_checksum"].get<std::string>());
    // zepp+swaps: its swap rule summed over the layers, the best refusal the one saving most.
    int accepted = 0, refused = 0, triggered = 0, horizon = 0;
    bool rule = false;
    std::optional<SwapPlan::Refusal> best;
    for (const auto& l : s["layers"]) {
      if (!l.contains("swaps")) continue;
      const auto& w = l["swaps"];
      rule = true;
      accepted += w["accepted"].get<int>(), refused += w["refused"].get<int>(), triggered += w["triggered"].get<bool>();
      horizon = w["horizon"].get<int>();
      const SwapPlan::Refusal r = get_refusal(w, horizon);
      if (w["refused"].get<int>() > 0 && (!best || r.saved_per_iteration_s > best->saved_per_iteration_s)) best = r;
    }
    if (rule)
      out += swap_line(s["strategy"].get<std::string>(), accepted, refused, triggered, int(s["layers"].size()), horizon,
                       best ? &*best : nullptr, "layer");
  }
  return out;
}

}  // namespace

LayerStack prepare_layers(const WorkloadFlags& w, const std::string& layers) {
  require(!w.trace_path.empty(), "--trace", "--layers runs the MoE layers of a trace; name one");
  LayerStack s;
  s.model = w.model_shape();
  s.topo = w.cluster();
  require(w.history_path.empty(), "--history",
          "is not used with --layers (each layer's history is the first requests of --trace)");
  const Trace trace = read_trace_warning(w.trace_path, w.skip_invalid, nullptr, parse_layers(layers));
  w.check_experts(trace);
  check_trace_matches_model(trace, s.model);
  s.ids = model::selected_layers(trace, parse_layers(layers));  // as zepp simulate --layers
  require(trace.has_tokens(), "--trace", "--layers under MPI needs per-token selections (not a load-only trace)");
  for (int l : s.ids) {
    WorkloadOptions o = w.workload;
    o.layer = l;
    s.workloads.push_back(build_workload(&trace, s.model, s.topo, o));
  }
  return s;
}

int run_layers(const WorkloadFlags& w, const LayerStack& stack, const std::vector<std::string>& strategies,
               const std::string& format, const mpi::SessionOptions& opt, double tolerance) {
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const ModelShape& model = stack.model;
  const Topology& topo = stack.topo;
  const std::vector<int>& ids = stack.ids;
  const std::vector<Workload>& workloads = stack.workloads;
  nlohmann::json doc;
  doc["workload"] = fmt::format("{} MoE layers ({} .. {}) of {}; {} ranks = {} nodes x {} GPUs; {} tokens/GPU, hidden {}, ffn {}, "
                                "fp32 rows; residual add + RMSNorm between layers",
                                ids.size(), ids.front(), ids.back(), w.trace_path, size, topo.nodes, topo.gpus_per_node,
                                workloads[0].tokens_per_gpu, model.hidden, model.ffn);
  doc["layers"] = ids;
  doc["strategies"] = nlohmann::json::array();
  double worst = 0;
  for (const auto& name : strategies) {
    const mpi::StackRun r = mpi::run_stack_mpi(name, workloads, ids, model, topo, opt, MPI_COMM_WORLD);
    worst = std::isnan(r.max_rel_error) ? r.max_rel_error : std::max(worst, r.max_rel_error);
    doc["strategies"].push_back(mpi::to_json(r));
  }
  if (me == 0) {
    const std::string text = format == "json" ? json_text(doc, 2) + "\n" : table(doc);
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
  if (!(worst <= tolerance)) {
    if (me == 0) std::fprintf(stderr, "zepp run: verification failed: stack output max relative error %.3e exceeds --tolerance %.3e\n", worst, tolerance);
    return 3;
  }
  return 0;
}

}  // namespace zepp::cli
