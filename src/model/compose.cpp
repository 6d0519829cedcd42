#include "model/compose.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "model/pipeline.hpp"

namespace zepp::model {
namespace {

constexpr int kMoeKernels = 3;  // dispatch, expert GEMMs, combine (see compose.hpp)

// Stage skeletons of one step (layer kinds, non-MoE and host times), MoE times filled later.
std::vector<StageRow> skeleton(const MoeRun& moe, const ModelShape& m, const DenseShape& d, const Topology& t,
                               const StepShape& s, bool all_layers) {
  const std::vector<Op> ends = step_ops(m, d, s, t);  // embedding, final_norm, lm_head
  std::vector<StageRow> rows;
  rows.push_back({"embedding", -1, ends[0].time_s, 0, t.compute.kernel_launch});
  auto add_layer = [&](int layer, bool is_moe) {
    const std::vector<Op> ops = layer_ops(m, d, s, t, is_moe);
    rows.push_back({is_moe ? "moe" : "dense", layer, total_time(ops), 0,
                    t.compute.kernel_launch * double(ops.size() + (is_moe ? kMoeKernels : 0))});
  };
  if (all_layers) {
    const std::string problem = all_layers_problem(moe.layers, m, d);
    require(problem.empty(), "layers", problem);
    for (int l = 0; l < m.layers; ++l) add_layer(l, std::binary_search(moe.layers.begin(), moe.layers.end(), l));
  } else {
    for (int l : moe.layers) add_layer(l, true);
  }
  rows.push_back({"lm_head", -1, ends[1].time_s + ends[2].time_s, 0, 2 * t.compute.kernel_launch});
  return rows;
}

}  // namespace

std::string all_layers_problem(const std::vector<int>& moe_layers, const ModelShape& m, const DenseShape& d) {
  if (!moe_layers.empty() && moe_layers.back() >= m.layers)
    return "the trace has layer " + std::to_string(moe_layers.back()) + " but " + m.name + " has layers 0-" +
           std::to_string(m.layers - 1);
  if (d.dense_ffn > 0 || int(moe_layers.size()) == m.layers) return "";
  std::string missing;
  int count = 0;
  for (int l = 0; l < m.layers; ++l)
    if (!std::binary_search(moe_layers.begin(), moe_layers.end(), l) && ++count <= 5)
      missing += (missing.empty() ? "" : ",") + std::to_string(l);
  return "all: every one of " + m.name + "'s " + std::to_string(m.layers) + " layers is an MoE layer (it has no dense layers), " +
         "but the trace lacks " + std::to_string(count) + " of them (" + missing + (count > 5 ? ",..." : "") +
         "); name the trace's layers (--layers " + layer_ranges(moe_layers) + ") to run those alone";
}

std::vector<SystemSteps> compose_steps(const MoeRun& moe, const ModelShape& m, const DenseShape& d, const Topology& t,
                                       const StepShape& s, bool all_layers) {
  require(s.tokens == moe.tokens_per_gpu, "step",
          "tokens per GPU " + std::to_string(s.tokens) + " differ from the MoE layers' " + std::to_string(moe.tokens_per_gpu));
  const std::vector<StageRow> base = skeleton(moe, m, d, t, s, all_layers);
  std::vector<SystemSteps> out;
  for (const SystemMoe& sys : moe.systems) {
    SystemSteps ss;
    ss.system = sys.system;
    for (size_t it = 0; it < sys.iterations.size(); ++it) {
      const std::vector<MoeLayerTime>& layers = sys.iterations[it];
      require(layers.size() == moe.layers.size(), "layers", "system " + sys.system + " lacks MoE layer results");
      StepReport step;
      step.iteration = int(it);
      step.stages = base;
      size_t next = 0;
      for (StageRow& r : step.stages) {
        if (r.kind != "moe") continue;
        const MoeLayerTime& lt = layers[next++];
        r.moe_s = lt.latency_s, r.planning_s = lt.planning_s, r.imbalance = lt.imbalance;
        r.inter_node_bytes = lt.inter_node_bytes, r.nvlink_bytes = lt.nvlink_bytes;
        if (lt.swap) {
          SystemSteps::Swaps& w = ss.swaps ? *ss.swaps : ss.swaps.emplace();
          w.accepted += lt.swap->accepted, w.refused += lt.swap->refused, w.triggered += lt.swap->triggered;
          ++w.invocations, w.horizon = lt.swap->horizon;
          if (lt.swap->refused > 0 && (!w.best || lt.swap->best_refused.saved_per_iteration_s > w.best->saved_per_iteration_s))
            w.best = lt.swap->best_refused;
        }
      }
      std::vector<StageTimes> times;
      for (const StageRow& r : step.stages) times.push_back({r.host_s, r.non_moe_s + r.moe_s});
      const PipelineTimes p = pipeline(times);
      for (size_t i = 0; i < step.stages.size(); ++i) {
        StageRow& r = step.stages[i];
        r.start_s = p.device_start_s[i], r.end_s = p.device_end_s[i];
        step.non_moe_s += r.non_moe_s, step.moe_s += r.moe_s;
      }
      step.step_s = p.step_s;
      ss.mean_step_s += step.step_s / double(sys.iterations.size());
      ss.steps.push_back(std::move(step));
    }
    ss.tokens_per_s = ss.mean_step_s > 0 ? double(s.tokens) * t.num_gpus() / ss.mean_step_s : 0;
    out.push_back(std::move(ss));
  }
  return out;
}

}  // namespace zepp::model
