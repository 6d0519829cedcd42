// One line of text on zepp+swaps' swap rule (paper §4.3, swap/swap.hpp), shared by every output
// that reports it (zepp simulate's one layer, --iterations and --layers).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/strategy.hpp"
#include "swap/swap.hpp"

namespace zepp {

// The line that says what zepp+swaps' swap rule did over `invocations` batches (paper §4.3):
// "<name> swaps: A accepted, R refused as not paying, triggered in T of N iterations (horizon H
// iterations)", and when none was accepted, why: the trigger never fired, no swap lowered the
// busiest GPU, or the best refused swap's saving x horizon against its unhidden weight transfer
// (`best`, the refusal with the largest saving; null when none was refused). Ends in a newline.
// `unit` names what was counted ("iteration"; "layer invocation" for a whole model's layers).
std::string swap_line(const std::string& name, int accepted, int refused, int triggered, int invocations, int horizon,
                      const SwapPlan::Refusal* best, const std::string& unit = "iteration");

// One batch's swap rule outcome as the outputs' JSON: {"accepted", "refused", "triggered",
// "horizon"} and the best refused swap's six fields (put_refusal).
nlohmann::json swap_json(const SwapOutcome& o);
// swap_line for one batch, read back from swap_json's object.
std::string swap_line(const std::string& name, const nlohmann::json& swaps);

// The best refused swap in the outputs' JSON (µs): sets best_refused_saved_us_per_iteration,
// best_refused_unhidden_us, best_refused_weight_us, best_refused_dispatch_us,
// best_refused_after_dispatch_us and best_refused_combine_us (SwapPlan::Refusal) of `j`, all null
// when `r` is null (a system without the swap rule).
void put_refusal(nlohmann::json& j, const SwapPlan::Refusal* r);
// Those six fields of `j` back in seconds, with `horizon` (the last two 0 when absent).
SwapPlan::Refusal get_refusal(const nlohmann::json& j, int horizon);
// Those six fields of `j` as CSV cells, "%.3f" each, comma-separated, in that order.
std::string refusal_csv(const nlohmann::json& j);

}  // namespace zepp
