#include "pipeline/variants.hpp"

#include <map>

namespace zepp {
namespace {

struct Variant {
  const char* base;
  bool StrategyOptions::*option;
  bool value;
  const char* flag;  // `zepp simulate`'s flag that sets the same switch, or "" (none)
};

const std::map<std::string, Variant>& variants() {
  static const std::map<std::string, Variant> v = {
      {"zepp/no-split", {"zepp", &StrategyOptions::split, false, "--no-split"}},
      {"zepp/no-merge", {"zepp", &StrategyOptions::merge, false, "--no-merge"}},
      {"zepp/no-overlap", {"zepp", &StrategyOptions::overlap, false, "--no-overlap"}},
      {"zepp/no-locality", {"zepp", &StrategyOptions::locality, false, "--no-locality"}},
      {"zepp/no-waves", {"zepp", &StrategyOptions::waves, false, "--no-waves"}},
      {"zepp/round-order-always", {"zepp", &StrategyOptions::round_order_rule, false, "--round-order-always"}},
      {"zepp/no-local-first", {"zepp", &StrategyOptions::local_first, false, "--no-local-first"}},
      {"zepp/eplb-placement", {"zepp", &StrategyOptions::zepp_placement_rule, false, ""}},
      {"zepp/roofline-placement", {"zepp", &StrategyOptions::roofline_placement, true, "--roofline-placement"}},
      {"epic/zepp-placement", {"epic", &StrategyOptions::epic_zepp_placement, true, ""}},
  };
  return v;
}

}  // namespace

bool is_variant(const std::string& strategy) { return variants().count(strategy) > 0; }

std::string strategy_variant(const std::string& name, StrategyOptions& so) {
  const auto it = variants().find(name);
  if (it == variants().end()) return name;
  so.*(it->second.option) = it->second.value;
  return it->second.base;
}

std::string variant_flag(const std::string& name) {
  const auto it = variants().find(name);
  return it == variants().end() ? "" : it->second.flag;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const auto& [name, v] : variants()) out.push_back(name);
  return out;
}

}  // namespace zepp
