#include "report/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/topology_file.hpp"
#include "trace/csv_rows.hpp"

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
  // Each column as wide as its header's minimum width or its widest cell, so the columns stay
  // aligned however large a value: a 1 KB/s NIC (--nic-gbps 1e-6) takes 1e10 us and more.
  const std::vector<std::pair<std::string, size_t>> head = {
      {"strategy", 12},  {"latency(us)", 12}, {"meta us", 8},    {"plan us", 8},       {"speedup", 8},
      {"imbalance", 9},  {"inter-node MB", 13}, {"NVLink MB", 12}, {"max NIC MB", 12}, {"hidden", 7},
      {"route cost us", 13}, {"optimum us", 13}, {"gap", 8}};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : s["strategies"]) {
    const std::string speedup = r["speedup_vs_a2av"].is_null() ? "-" : fmt::format("{:.2f}x", r["speedup_vs_a2av"].get<double>());
    const bool solved = !r["routing_cost_optimal_us"].is_null();
    const std::string gap_s = !solved ? "-" : r["routing_gap"].is_null() ? "n/a" : fmt::format("{:.1f}%", 100 * r["routing_gap"].get<double>());
    const std::string optimum_s = solved ? fmt::format("{:.1f}", r["routing_cost_optimal_us"].get<double>()) : "-";
    rows.push_back({r["name"].get<std::string>(), fmt::format("{:.1f}", r["latency_us"].get<double>()),
                    fmt::format("{:.1f}", r["metadata_us"].get<double>()), fmt::format("{:.1f}", r["planning_us"].get<double>()),
                    speedup, fmt::format("{:.3f}", r["imbalance"].get<double>()),
                    fmt::format("{:.2f}", r["inter_node_bytes"].get<double>() / 1e6),
                    fmt::format("{:.2f}", r["nvlink_bytes"].get<double>() / 1e6),
                    fmt::format("{:.2f}", r["max_nic_bytes"].get<double>() / 1e6),
                    fmt::format("{:.0f}%", 100 * r["comm_hidden_fraction"].get<double>()),
                    fmt::format("{:.1f}", r["routing_cost_us"].get<double>()), optimum_s, gap_s});
  }
  std::vector<size_t> width;
  for (const auto& [name, least] : head) width.push_back(std::max(least, name.size()));
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l = fmt::format("{:<{}}", cells[0], width[0]);  // names left, numbers right
    for (size_t i = 1; i < cells.size(); ++i) l += fmt::format(" {:>{}}", cells[i], width[i]);
    return l + "\n";
  };
  std::vector<std::string> names;
  for (const auto& h : head) names.push_back(h.first);
  out += line(names);
  for (const auto& row : rows) out += line(row);
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
                       csv_field(r["name"].get<std::string>()), r["latency_us"].get<double>(), speedup,
                       r["imbalance"].get<double>(), r["inter_node_bytes"].get<double>(),
                       r["nvlink_bytes"].get<double>(), r["max_nic_bytes"].get<double>(),
                       r["comm_hidden_fraction"].get<double>(), r["routing_cost_us"].get<double>(), optimum_s, gap_s,
                       csv_field(w["model"].get<std::string>()), w["layer"].get<int>(), w["tokens_per_gpu"].get<long>(),
                       csv_field(c["topology"].get<std::string>()), c["nodes"].get<int>(), c["gpus_per_node"].get<int>(),
                       r["metadata_us"].get<double>(), r["planning_us"].get<double>(), c["planning"].get<std::string>(), swaps);
  }
  return out;
}

}  // namespace zepp
