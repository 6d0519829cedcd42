#include "pipeline/variants.hpp"

#include <algorithm>
#include <sstream>

namespace zepp {
namespace {

bool zepp_family(const std::string& base) { return base.rfind("zepp", 0) == 0; }
bool zepp_locality(const std::string& base) { return zepp_family(base) && base != "zepp-overlap"; }  // no locality stage
bool zepp_placed(const std::string& base) { return base == "zepp" || base == "zepp+swaps"; }
// Only decide_zepp reads zepp_placement_rule: zepp+swaps/eplb-placement ran zepp+swaps unchanged
// under the variant's name.
bool zepp_only(const std::string& base) { return base == "zepp"; }
bool epic(const std::string& base) { return base == "epic"; }

struct Switch {
  const char* name;
  bool StrategyOptions::*option;
  bool value;                                // the option's value when the switch is on
  bool (*applies)(const std::string& base);  // the registered strategies that have the stage
};

// In the order a label lists them.
const std::vector<Switch>& switches() {
  static const std::vector<Switch> s = {
      {"no-split", &StrategyOptions::split, false, zepp_family},
      {"no-merge", &StrategyOptions::merge, false, zepp_family},
      {"no-overlap", &StrategyOptions::overlap, false, zepp_family},
      {"no-locality", &StrategyOptions::locality, false, zepp_locality},
      {"no-waves", &StrategyOptions::waves, false, zepp_family},
      {"round-order-always", &StrategyOptions::round_order_rule, false, zepp_family},
      {"no-local-first", &StrategyOptions::local_first, false, zepp_family},
      {"no-dispatch-chunks", &StrategyOptions::dispatch_chunks, false, zepp_family},
      {"no-consolidate", &StrategyOptions::consolidate, false, zepp_locality},
      {"roofline-placement", &StrategyOptions::roofline_placement, true, zepp_placed},
      {"eplb-placement", &StrategyOptions::zepp_placement_rule, false, zepp_only},
      {"zepp-placement", &StrategyOptions::epic_zepp_placement, true, epic},
  };
  return s;
}

struct Parsed {
  std::string base;
  std::vector<const Switch*> on;
};

// "<base>/<switch>/<switch>...": base the longest registered name before a '/' ("zepp+hot/
// no-multicast" is one), each switch one that base has, each once. Nothing for anything else.
std::optional<Parsed> parse(const std::string& name) {
  const std::vector<std::string> registered = strategy_names();
  for (size_t cut = name.size(); cut != std::string::npos && cut > 0; cut = name.rfind('/', cut - 1)) {
    const std::string base = name.substr(0, cut);
    if (std::find(registered.begin(), registered.end(), base) == registered.end()) continue;
    if (cut == name.size()) return std::nullopt;  // a registered strategy, no variant
    Parsed p{base, {}};
    std::stringstream rest(name.substr(cut + 1));
    for (std::string item; std::getline(rest, item, '/');) {
      const auto it = std::find_if(switches().begin(), switches().end(), [&](const Switch& s) { return item == s.name; });
      if (it == switches().end() || !it->applies(base) || std::find(p.on.begin(), p.on.end(), &*it) != p.on.end())
        return std::nullopt;
      p.on.push_back(&*it);
    }
    if (p.on.empty() || name.back() == '/') return std::nullopt;
    return p;
  }
  return std::nullopt;
}

}  // namespace

bool is_variant(const std::string& strategy) { return parse(strategy).has_value(); }

std::string strategy_variant(const std::string& name, StrategyOptions& so) {
  const auto p = parse(name);
  if (!p) return name;
  for (const Switch* s : p->on) so.*(s->option) = s->value;
  return p->base;
}

std::string variant_label(const std::string& base, const StrategyOptions& so) {
  std::string label = base;
  for (const Switch& s : switches())
    if (s.applies(base) && so.*(s.option) == s.value) label += "/" + std::string(s.name);
  return label;
}

std::vector<std::string> variant_names() {
  std::vector<std::string> out;
  for (const char* base : {"zepp", "epic"})
    for (const Switch& s : switches())
      if (s.applies(base)) out.push_back(std::string(base) + "/" + s.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace zepp
