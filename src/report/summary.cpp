#include "report/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/topology_file.hpp"

namespace zepp {
namespace {

// Relative gap of the routing used to the optimum; null when the optimum is 0 (everything
// local) but the routing is not, where a ratio has no meaning.
nlohmann::json gap(double cost, double optimum) {
  if (std::isnan(optimum)) return nullptr;
  if (optimum > 0) return cost / optimum - 1.0;
  return cost > 0 ? nlohmann::json() : nlohmann::json(0.0);
}

}  // namespace

nlohmann::json summary_json(const Workload& w, const ModelShape& m, const Topology& t, const std::string& executor,
                            const std::vector<StrategyOutcome>& outcomes, PlanningMode planning) {
  nlohmann::json j;
  const StrategyOutcome* a2av = nullptr;
  for (const auto& o : outcomes)
    if (o.name == "a2av") a2av = &o;
  for (const auto& o : outcomes) {
    nlohmann::json s;
    s["name"] = o.name;
    s["latency_us"] = o.result.latency_s * 1e6;
    s["speedup_vs_a2av"] = a2av ? nlohmann::json(a2av->result.latency_s / o.result.latency_s) : nlohmann::json();
    s["imbalance"] = o.imbalance;
    s["inter_node_bytes"] = o.result.inter_node_bytes;
    s["nvlink_bytes"] = o.result.nvlink_bytes;
    s["max_nic_bytes"] = o.result.max_nic_bytes;
    s["comm_hidden_fraction"] = o.result.comm_hidden_fraction;
    s["routing_cost_us"] = o.routing_cost_s * 1e6;
    // null: not solved (--optimum off), or the strategy's routing ignores the balance bound, so
    // equation (1)'s optimum is no lower bound for it (StrategyDecision::balanced_routing).
    const bool solved = !std::isnan(o.routing_cost_optimal_s);  // NaN: not solved (--optimum off)
    s["routing_cost_optimal_us"] = solved ? nlohmann::json(o.routing_cost_optimal_s * 1e6) : nlohmann::json();
    s["routing_gap"] = solved ? gap(o.routing_cost_s, o.routing_cost_optimal_s) : nlohmann::json();
    s["routing_wall_us"] = o.routing_wall_s * 1e6;
    s["metadata_us"] = o.metadata_s * 1e6;
    s["planning_us"] = o.planning_s * 1e6;
    if (o.swap) s["swaps"] = swap_json(*o.swap);
    j["strategies"].push_back(s);
  }
  j["workload"] = {{"description", w.description}, {"synthetic", w.synthetic},     {"layer", w.layer},
                   {"model", m.name},              {"num_experts", m.num_experts}, {"top_k", m.top_k},
                   {"hidden", m.hidden},           {"ffn", m.ffn},                 {"tokens_per_gpu", w.tokens_per_gpu}};
  j["cluster"] = {{"topology", t.name},
                  {"nodes", t.nodes},
                  {"gpus_per_node", t.gpus_per_node},
                  {"executor", executor},
                  {"link_sharing", to_string(t.link_sharing)},
                  {"planning", planning == PlanningMode::Model ? "model" : "free"},
                  {"links", describe_links(t)}};
  return j;
}

std::string summary_table(const nlohmann::json& s) {
  const auto& w = s["workload"];
  const auto& c = s["cluster"];
  std::string out = fmt::format("workload: {}\nmodel: {} (E={}, top-{}, hidden {}, ffn {}), {} tokens per GPU\n",
                                w["description"].get<std::string>(), w["model"].get<std::string>(),
                                w["num_experts"].get<int>(), w["top_k"].get<int>(), w["hidden"].get<int>(),
                                w["ffn"].get<int>(), w["tokens_per_gpu"].get<long>());
  out += fmt::format("cluster: {} x {} GPUs ({}: {}), executor {}{}\n\n", c["nodes"].get<int>(),
                     c["gpus_per_node"].get<int>(), c["topology"].get<std::string>(), c["links"].get<std::string>(),
                     c["executor"].get<std::string>(),
                     c["executor"] == "sim" ? ", " + c["link_sharing"].get<std::string>() + " link sharing" : "");
  size_t width = 12;  // the name column fits the longest label ("zepp+swaps/no-split/no-merge")
  for (const auto& r : s["strategies"]) width = std::max(width, r["name"].get<std::string>().size());
  out += fmt::format("{:<{}} {:>12} {:>8} {:>8} {:>8} {:>9} {:>13} {:>12} {:>12} {:>7} {:>13} {:>13} {:>8}\n", "strategy", width,
                     "latency(us)", "meta us", "plan us", "speedup", "imbalance", "inter-node MB", "NVLink MB", "max NIC MB",
                     "hidden", "route cost us", "optimum us", "gap");
  for (const auto& r : s["strategies"]) {
    const std::string speedup = r["speedup_vs_a2av"].is_null() ? "-" : fmt::format("{:.2f}x", r["speedup_vs_a2av"].get<double>());
    const bool solved = !r["routing_cost_optimal_us"].is_null();
    const std::string gap_s = !solved ? "-" : r["routing_gap"].is_null() ? "n/a" : fmt::format("{:.1f}%", 100 * r["routing_gap"].get<double>());
    const std::string optimum_s = solved ? fmt::format("{:.1f}", r["routing_cost_optimal_us"].get<double>()) : "-";
    out += fmt::format("{:<{}} {:>12.1f} {:>8.1f} {:>8.1f} {:>8} {:>9.3f} {:>13.2f} {:>12.2f} {:>12.2f} {:>6.0f}% {:>13.1f} {:>13} {:>8}\n",
                       r["name"].get<std::string>(), width, r["latency_us"].get<double>(), r["metadata_us"].get<double>(),
                       r["planning_us"].get<double>(), speedup,
                       r["imbalance"].get<double>(), r["inter_node_bytes"].get<double>() / 1e6,
                       r["nvlink_bytes"].get<double>() / 1e6, r["max_nic_bytes"].get<double>() / 1e6,
                       100 * r["comm_hidden_fraction"].get<double>(), r["routing_cost_us"].get<double>(),
                       optimum_s, gap_s);
  }
  if (std::any_of(s["strategies"].begin(), s["strategies"].end(), [](const auto& r) { return r["routing_cost_optimal_us"].is_null(); }))
    out += "optimum -: not solved (--optimum off, or skipped as stderr says), or the strategy's routing ignores equation (1)'s balance bound, so that optimum is no lower bound for it\n";
  for (const auto& r : s["strategies"])
    if (r.contains("swaps")) out += swap_line(r["name"].get<std::string>(), r["swaps"]);
  return out;
}

std::string summary_csv(const nlohmann::json& s) {
  std::string out =
      "strategy,latency_us,speedup_vs_a2av,imbalance,inter_node_bytes,nvlink_bytes,max_nic_bytes,comm_hidden_fraction,"
      "routing_cost_us,routing_cost_optimal_us,routing_gap,model,layer,tokens_per_gpu,topology,nodes,gpus_per_node,"
      "metadata_us,planning_us,planning,swaps,swap_triggered,swaps_refused,best_refused_saved_us_per_iteration,"
      "best_refused_unhidden_us,best_refused_weight_us,best_refused_dispatch_us,best_refused_after_dispatch_us,"
      "best_refused_combine_us,swap_horizon\n";
  const auto& w = s["workload"];
  const auto& c = s["cluster"];
  for (const auto& r : s["strategies"]) {
    const std::string speedup = r["speedup_vs_a2av"].is_null() ? "" : fmt::format("{:.6g}", r["speedup_vs_a2av"].get<double>());
    const std::string gap_s = r["routing_gap"].is_null() ? "" : fmt::format("{:.6g}", r["routing_gap"].get<double>());
    const std::string optimum_s =
        r["routing_cost_optimal_us"].is_null() ? "" : fmt::format("{:.6g}", r["routing_cost_optimal_us"].get<double>());
    // The swap rule's columns, named and ordered as `--iterations` CSV names them; empty for a
    // strategy without the rule.
    const nlohmann::json sw = r.contains("swaps") ? r["swaps"] : nlohmann::json();
    const std::string swaps =
        sw.is_null() ? ",,,,,,,,,"
                    : fmt::format("{},{},{},{},{}", sw["accepted"].get<int>(), sw["triggered"].get<bool>() ? 1 : 0,
                                  sw["refused"].get<int>(), refusal_csv(sw), sw["horizon"].get<int>());
    out += fmt::format("{},{:.6g},{},{:.6g},{:.0f},{:.0f},{:.0f},{:.6g},{:.6g},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{},{}\n",
                       r["name"].get<std::string>(), r["latency_us"].get<double>(), speedup,
                       r["imbalance"].get<double>(), r["inter_node_bytes"].get<double>(),
                       r["nvlink_bytes"].get<double>(), r["max_nic_bytes"].get<double>(),
                       r["comm_hidden_fraction"].get<double>(), r["routing_cost_us"].get<double>(), optimum_s, gap_s,
                       w["model"].get<std::string>(), w["layer"].get<int>(), w["tokens_per_gpu"].get<long>(),
                       c["topology"].get<std::string>(), c["nodes"].get<int>(), c["gpus_per_node"].get<int>(),
                       r["metadata_us"].get<double>(), r["planning_us"].get<double>(), c["planning"].get<std::string>(), swaps);
  }
  return out;
}

}  // namespace zepp
