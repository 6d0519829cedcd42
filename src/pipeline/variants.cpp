#include "pipeline/variants.hpp"

#include <map>

namespace zepp {
namespace {

struct Variant {
  const char* base;
  bool StrategyOptions::*flag;
  bool value;
};

const std::map<std::string, Variant>& variants() {
  static const std::map<std::string, Variant> v = {
      {"zepp/no-split", {"zepp", &StrategyOptions::split, false}},
      {"zepp/no-merge", {"zepp", &StrategyOptions::merge, false}},
      {"zepp/no-overlap", {"zepp", &StrategyOptions::overlap, false}},
      {"zepp/no-locality", {"zepp", &StrategyOptions::locality, false}},
      {"zepp/no-waves", {"zepp", &StrategyOptions::waves, false}},
      {"zepp/round-order-always", {"zepp", &StrategyOptions::round_order_rule, false}},
      {"zepp/no-local-first", {"zepp", &StrategyOptions::local_first, false}},
      {"zepp/eplb-placement", {"zepp", &StrategyOptions::zepp_placement_rule, false}},
      {"zepp/roofline-placement", {"zepp", &StrategyOptions::roofline_placement, true}},
      {"epic/zepp-placement", {"epic", &StrategyOptions::epic_zepp_placement, true}},
  };
  return v;
}

}  // namespace

bool is_variant(const std::string& strategy) { return variants().count(strategy) > 0; }

std::string strategy_variant(const std::string& name, StrategyOptions& so) {
  const auto it = variants().find(name);
  if (it == variants().end()) return name;
  so.*(it->second.flag) = it->second.value;
  return it->second.base;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const auto& [name, v] : variants()) out.push_back(name);
  return out;
}

}  // namespace zepp
