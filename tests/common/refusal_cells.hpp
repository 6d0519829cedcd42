// The swap rule's six refusal figures of an outputs' JSON object as the CSVs write them
// (",%.3f" each, in put_refusal's order), for tests that check a CSV row against the JSON.
#pragma once
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace zepp::testing {

inline std::string refusal_cells(const nlohmann::json& j) {
  std::string out;
  for (const char* key : {"best_refused_saved_us_per_iteration", "best_refused_unhidden_us", "best_refused_weight_us",
                          "best_refused_dispatch_us", "best_refused_after_dispatch_us", "best_refused_combine_us"})
    out += fmt::format(",{:.3f}", j[key].get<double>());
  return out;
}

}  // namespace zepp::testing
