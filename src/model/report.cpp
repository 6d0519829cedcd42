#include "model/report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "pipeline/swap_line.hpp"

namespace zepp::model {
namespace {

constexpr double kMs = 1e3, kMB = 1e6;

nlohmann::json stage_json(const StageRow& r) {
  return {{"kind", r.kind},         {"layer", r.layer},          {"non_moe_ms", r.non_moe_s * kMs},
          {"moe_ms", r.moe_s * kMs}, {"host_us", r.host_s * 1e6}, {"start_ms", r.start_s * kMs},
          {"end_ms", r.end_s * kMs}, {"planning_ms", r.planning_s * kMs}, {"imbalance", r.imbalance},
          {"inter_node_mb", r.inter_node_bytes / kMB}, {"nvlink_mb", r.nvlink_bytes / kMB}};
}

double num(const nlohmann::json& j) { return j.is_null() ? 0.0 : j.get<double>(); }

}  // namespace

nlohmann::json model_json(const ReportContext& c, const std::vector<SystemSteps>& systems) {
  const bool decode = c.phase == "decode";
  const SystemSteps* ref = systems.empty() ? nullptr : &systems[0];
  for (const auto& s : systems)
    if (s.system == "sglang") ref = &s;
  nlohmann::json out = {{"workload", c.workload}, {"model", c.model},   {"cluster", c.cluster},
                        {"phase", c.phase},       {"tokens_per_gpu", c.tokens_per_gpu}, {"context", c.context},
                        {"gpus", c.gpus},         {"executor", c.executor},             {"reference", ref ? ref->system : ""}};
  out["systems"] = nlohmann::json::array();
  for (const SystemSteps& s : systems) {
    nlohmann::json steps = nlohmann::json::array();
    for (const StepReport& st : s.steps) {
      nlohmann::json stages = nlohmann::json::array();
      for (const StageRow& r : st.stages) stages.push_back(stage_json(r));
      steps.push_back({{"iteration", st.iteration}, {"step_ms", st.step_s * kMs}, {"non_moe_ms", st.non_moe_s * kMs},
                       {"moe_ms", st.moe_s * kMs}, {"stages", stages}});
    }
    // Speedup: prefill throughput ratio; decode: reference TPOT / this TPOT (the same ratio).
    const nlohmann::json speedup = ref && &s != ref && s.mean_step_s > 0 ? nlohmann::json(ref->mean_step_s / s.mean_step_s)
                                                                         : nlohmann::json(nullptr);
    out["systems"].push_back({{"system", s.system},
                              {"mean_step_ms", s.mean_step_s * kMs},
                              {"tokens_per_s", s.tokens_per_s},
                              {"tpot_ms", decode ? nlohmann::json(s.mean_step_s * kMs) : nlohmann::json(nullptr)},
                              {"speedup", speedup},
                              {"steps", steps}});
    if (s.swaps) {
      const SwapPlan::Refusal b = s.swaps->best.value_or(SwapPlan::Refusal{});
      nlohmann::json& w = out["systems"].back()["swaps"];
      w = {{"accepted", s.swaps->accepted},
           {"refused", s.swaps->refused},
           {"triggered", s.swaps->triggered},
           {"invocations", s.swaps->invocations},
           {"horizon", s.swaps->horizon}};
      put_refusal(w, &b);
    }
  }
  return out;
}

std::string model_table(const nlohmann::json& doc) {
  const bool decode = doc["phase"] == "decode";
  std::string out = fmt::format("workload: {}\nmodel: {}\ncluster: {}, executor {}\nphase: {}, {} tokens per GPU, context {}\n",
                                doc["workload"].get<std::string>(), doc["model"].get<std::string>(),
                                doc["cluster"].get<std::string>(), doc["executor"].get<std::string>(),
                                doc["phase"].get<std::string>(), doc["tokens_per_gpu"].get<int64_t>(),
                                doc["context"].get<int64_t>());
  for (const auto& s : doc["systems"]) {
    const auto& steps = s["steps"];
    const double n = double(steps.size());
    out += fmt::format("\n{} (mean over {} iteration{})\n", s["system"].get<std::string>(), steps.size(), steps.size() == 1 ? "" : "s");
    out += fmt::format("{:<10} {:>5} {:>11} {:>9} {:>9} {:>10} {:>10} {:>9} {:>13}\n", "stage", "layer", "non-MoE ms",
                       "MoE ms", "host us", "start ms", "end ms", "imbalance", "inter-node MB");
    for (size_t i = 0; i < steps[0]["stages"].size(); ++i) {
      double v[8] = {};
      for (const auto& st : steps) {
        const auto& r = st["stages"][i];
        const char* keys[8] = {"non_moe_ms", "moe_ms", "host_us", "start_ms", "end_ms", "imbalance", "inter_node_mb", "planning_ms"};
        for (int k = 0; k < 8; ++k) v[k] += num(r[keys[k]]) / n;
      }
      const auto& r0 = steps[0]["stages"][i];
      const std::string layer = r0["layer"].get<int>() < 0 ? "-" : std::to_string(r0["layer"].get<int>());
      const bool moe = r0["kind"] == "moe";
      out += fmt::format("{:<10} {:>5} {:>11.4f} {:>9} {:>9.1f} {:>10.4f} {:>10.4f} {:>9} {:>13}\n",
                         r0["kind"].get<std::string>(), layer, v[0], moe ? fmt::format("{:.4f}", v[1]) : "-", v[2], v[3], v[4],
                         moe ? fmt::format("{:.3f}", v[5]) : "-", moe ? fmt::format("{:.2f}", v[6]) : "-");
    }
    double non_moe = 0, moe = 0;
    for (const auto& st : steps) non_moe += st["non_moe_ms"].get<double>() / n, moe += st["moe_ms"].get<double>() / n;
    out += fmt::format("{:<10} {:>5} {:>11.4f} {:>9.4f} {:>9} {:>10} {:>10.4f}\n", "total", "", non_moe, moe, "", "",
                       s["mean_step_ms"].get<double>());
  }
  size_t width = 13;  // the name column fits the longest label ("zepp+swaps/no-waves")
  for (const auto& s : doc["systems"]) width = std::max(width, s["system"].get<std::string>().size());
  out += fmt::format("\n{:<{}} {:>12} {:>12} {:>14} {:>9}\n", "system", width, decode ? "TPOT ms" : "step ms", "MoE ms",
                     decode ? "output tok/s" : "prefill tok/s", "speedup");
  for (const auto& s : doc["systems"]) {
    double moe = 0;
    for (const auto& st : s["steps"]) moe += st["moe_ms"].get<double>() / double(s["steps"].size());
    out += fmt::format("{:<{}} {:>12.4f} {:>12.4f} {:>14.0f} {:>9}\n", s["system"].get<std::string>(), width,
                       s["mean_step_ms"].get<double>(), moe, s["tokens_per_s"].get<double>(),
                       s["speedup"].is_null() ? std::string("1.00x (ref)") : fmt::format("{:.2f}x", s["speedup"].get<double>()));
  }
  for (const auto& s : doc["systems"]) {  // zepp+swaps: what its swap rule did over every layer
    if (!s.contains("swaps")) continue;
    const auto& w = s["swaps"];
    const SwapPlan::Refusal best = get_refusal(w, w["horizon"].get<int>());
    out += swap_line(s["system"].get<std::string>(), w["accepted"].get<int>(), w["refused"].get<int>(),
                     w["triggered"].get<int>(), w["invocations"].get<int>(), w["horizon"].get<int>(),
                     w["refused"].get<int>() > 0 ? &best : nullptr, "layer invocation");
  }
  return out;
}

std::string model_csv(const nlohmann::json& doc) {
  std::string out =
      "phase,tokens_per_gpu,context,system,iteration,kind,layer,non_moe_ms,moe_ms,host_us,start_ms,end_ms,planning_ms,"
      "imbalance,inter_node_mb,nvlink_mb,tokens_per_s\n";
  const std::string head = fmt::format("{},{},{}", doc["phase"].get<std::string>(), doc["tokens_per_gpu"].get<int64_t>(),
                                       doc["context"].get<int64_t>());
  for (const auto& s : doc["systems"])
    for (const auto& st : s["steps"]) {
      const std::string sys = s["system"].get<std::string>();
      for (const auto& r : st["stages"])
        out += fmt::format("{},{},{},{},{},{:.6f},{:.6f},{:.3f},{:.6f},{:.6f},{:.6f},{:.4f},{:.4f},{:.4f},\n", head, sys,
                           st["iteration"].get<int>(), r["kind"].get<std::string>(), r["layer"].get<int>(),
                           r["non_moe_ms"].get<double>(), r["moe_ms"].get<double>(), r["host_us"].get<double>(),
                           r["start_ms"].get<double>(), r["end_ms"].get<double>(), r["planning_ms"].get<double>(),
                           r["imbalance"].get<double>(), r["inter_node_mb"].get<double>(), r["nvlink_mb"].get<double>());
      out += fmt::format("{},{},{},total,-1,{:.6f},{:.6f},,0,{:.6f},,,,,{:.1f}\n", head, sys, st["iteration"].get<int>(),
                         st["non_moe_ms"].get<double>(), st["moe_ms"].get<double>(), st["step_ms"].get<double>(),
                         s["tokens_per_s"].get<double>());
    }
  return out;
}

}  // namespace zepp::model
