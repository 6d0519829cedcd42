// Variants of a registered strategy: one switch of StrategyOptions set, named
// "<base>/<switch>". Zepp's ablations (paper Figure 12's stages and issue 24's) and epic on
// Zepp's placement. Sweeps run them beside their base (`zepp experiment fig9`), `zepp simulate
// --strategies` runs them on one layer, and every summary labels a run with them
// (cli strategy_label). They are not baselines: the report compares each only with its base.
#pragma once
#include <string>
#include <vector>

#include "pipeline/strategy.hpp"

namespace zepp {

// True for a variant name ("zepp/no-split"), false for a registered strategy or anything else.
bool is_variant(const std::string& strategy);

// The registered strategy `name` runs: a variant's base, with its switch set in `so`; any other
// name is returned unchanged and `so` untouched.
std::string strategy_variant(const std::string& name, StrategyOptions& so);

// The `zepp simulate` flag that switches the same stage of the base ("--no-split" for
// "zepp/no-split"), or "" when none does (zepp/eplb-placement, epic/zepp-placement) or `name` is
// no variant.
std::string variant_flag(const std::string& name);

// Every variant name, sorted: "epic/zepp-placement", "zepp/eplb-placement", "zepp/no-local-first",
// "zepp/no-locality", "zepp/no-merge", "zepp/no-overlap", "zepp/no-split", "zepp/no-waves",
// "zepp/roofline-placement", "zepp/round-order-always".
std::vector<std::string> variant_names();

}  // namespace zepp
