#include "pipeline/swap_line.hpp"

#include <fmt/format.h>

namespace zepp {

std::string swap_line(const std::string& name, int accepted, int refused, int triggered, int invocations, int horizon,
                      const SwapPlan::Refusal* best, const std::string& unit) {
  std::string line = fmt::format("{:<13} swaps: {} accepted, {} refused as not paying, triggered in {} of {} {}{} "
                                 "(horizon {} iterations)",
                                 name, accepted, refused, triggered, invocations, unit, invocations == 1 ? "" : "s", horizon);
  if (accepted == 0 && triggered == 0) line += "; none: the estimated load never exceeded (1 + C) x mean";
  else if (accepted == 0 && (refused == 0 || !best)) line += "; none: no swap inside a node lowered the busiest GPU's load";
  else if (accepted == 0 && best->saved_per_iteration_s <= 0 && best->combine_s > 0 &&
           best->after_dispatch_s <= best->combine_s)
    line += fmt::format("; none paid: NIC-bound, the best's pair has {:.1f} us of GEMMs left after the {:.1f} us "
                        "dispatch, within its node's {:.1f} us combine on the NICs, so it saved nothing",
                        best->after_dispatch_s * 1e6, best->dispatch_s * 1e6, best->combine_s * 1e6);
  else if (accepted == 0)
    line += fmt::format("; none paid: the best saved {:.1f} us per iteration x {} = {:.1f} us <= {:.1f} us of its "
                        "{:.1f} us weight transfer not hidden behind the independent compute left after the {:.1f} us "
                        "dispatch",
                        best->saved_per_iteration_s * 1e6, horizon, best->saved_per_iteration_s * 1e6 * horizon,
                        best->unhidden_s * 1e6, best->weight_s * 1e6, best->dispatch_s * 1e6);
  return line + "\n";
}

void put_refusal(nlohmann::json& j, const SwapPlan::Refusal* r) {
  const auto us = [r](double SwapPlan::Refusal::*f) { return r ? nlohmann::json(r->*f * 1e6) : nlohmann::json(); };
  j["best_refused_saved_us_per_iteration"] = us(&SwapPlan::Refusal::saved_per_iteration_s);
  j["best_refused_unhidden_us"] = us(&SwapPlan::Refusal::unhidden_s);
  j["best_refused_weight_us"] = us(&SwapPlan::Refusal::weight_s);
  j["best_refused_dispatch_us"] = us(&SwapPlan::Refusal::dispatch_s);
  j["best_refused_after_dispatch_us"] = us(&SwapPlan::Refusal::after_dispatch_s);
  j["best_refused_combine_us"] = us(&SwapPlan::Refusal::combine_s);
}

SwapPlan::Refusal get_refusal(const nlohmann::json& j, int horizon) {
  // The last two fields are absent from JSON written before the NIC floor (commit 2403caf).
  const auto opt = [&j](const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() / 1e6 : 0.0; };
  return {j["best_refused_saved_us_per_iteration"].get<double>() / 1e6, j["best_refused_unhidden_us"].get<double>() / 1e6,
          j["best_refused_weight_us"].get<double>() / 1e6, j["best_refused_dispatch_us"].get<double>() / 1e6, horizon,
          opt("best_refused_after_dispatch_us"), opt("best_refused_combine_us")};
}

nlohmann::json swap_json(const SwapOutcome& o) {
  nlohmann::json j = {{"accepted", o.accepted}, {"refused", o.refused}, {"triggered", o.triggered}, {"horizon", o.horizon}};
  put_refusal(j, &o.best_refused);
  return j;
}

std::string swap_line(const std::string& name, const nlohmann::json& w) {
  const int horizon = w["horizon"].get<int>();
  const SwapPlan::Refusal best = get_refusal(w, horizon);
  return swap_line(name, w["accepted"].get<int>(), w["refused"].get<int>(), w["triggered"].get<bool>() ? 1 : 0, 1, horizon,
                   &best);
}

std::string refusal_csv(const nlohmann::json& j) {
  return fmt::format("{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f}", j["best_refused_saved_us_per_iteration"].get<double>(),
                     j["best_refused_unhidden_us"].get<double>(), j["best_refused_weight_us"].get<double>(),
                     j["best_refused_dispatch_us"].get<double>(), j["best_refused_after_dispatch_us"].get<double>(),
                     j["best_refused_combine_us"].get<double>());
}

}  // namespace zepp
