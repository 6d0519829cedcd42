// What a trace holds that a reader should know before trusting figures from it (issue 26): one
// top-k selection making up most of a layer's tokens (a placeholder or padding token logged for
// every position, or a saturated router), and token positions restarting within a request (decode
// steps logged after the prefill). Both are read as logged; these say so.
#pragma once
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace zepp {

// One line per finding, each with its figure and how zepp reads it; empty when there is none.
// A selection is flagged when it is more than `dominant_share` of a layer's tokens (layers with
// at least 100 tokens; the layer with the largest share is named, with how many layers are over).
// `layers`: the layers a run uses, the only ones looked at (empty: every layer).
std::vector<std::string> trace_oddities(const Trace& trace, double dominant_share = 0.5, const std::vector<int>& layers = {});

}  // namespace zepp
