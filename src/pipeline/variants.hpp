// Variants of a registered strategy: switches of StrategyOptions set, named
// "<base>/<switch>[/<switch>...]". Zepp's ablations (paper Figure 12's stages and issue 24's) and
// epic on Zepp's placement. Sweeps run them beside their base (`zepp experiment fig9`), `zepp
// simulate --strategies` runs them (on one layer, over --layers or --iterations), and every summary labels a run with them
// (variant_label): a label printed is a name accepted back. They are not baselines: the report
// compares each only with its base.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "pipeline/strategy.hpp"

namespace zepp {

// True for a variant name ("zepp/no-split", "zepp/no-split/no-waves", "zepp+hot/no-multicast/
// no-merge": a registered strategy, then switches it has, each once, in any order), false for a
// registered strategy or anything else. Switches: no-split, no-merge, no-overlap, no-waves,
// round-order-always, no-local-first, no-dispatch-chunks (strategies named zepp*), no-consolidate and
// no-locality (zepp* but zepp-overlap), roofline-placement (zepp, zepp+swaps), eplb-placement (zepp), zepp-placement (epic).
bool is_variant(const std::string& strategy);

// The registered strategy `name` runs: a variant's base, with its switches set in `so`; any
// other name is returned unchanged and `so` untouched.
std::string strategy_variant(const std::string& name, StrategyOptions& so);

// The name a run of registered strategy `base` with options `so` prints: base, then every switch
// of base that `so` sets, in the order above ("zepp/no-split/no-waves"). strategy_variant of it
// gives back `base` and those switches.
std::string variant_label(const std::string& base, const StrategyOptions& so);

// Every single-switch variant name, sorted: "epic/zepp-placement", "zepp/eplb-placement",
// "zepp/no-consolidate", "zepp/no-dispatch-chunks", "zepp/no-local-first", "zepp/no-locality", "zepp/no-merge",
// "zepp/no-overlap", "zepp/no-split", "zepp/no-waves", "zepp/roofline-placement",
// "zepp/round-order-always".
std::vector<std::string> variant_names();

}  // namespace zepp
