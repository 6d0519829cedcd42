// Layer labels against a model preset (issue 11: a routing log whose layer field was a record
// index mod 60 for a 32-layer model): where each layer was first read, and the check.
#pragma once
#include <map>
#include <string>

#include "core/types.hpp"
#include "trace/trace.hpp"

namespace zepp {

// read_trace, also filling `layer_source` with where each layer was first read ("FILE:LINE" for
// CSV and JSON Lines, "FILE: byte N" for JSON). Throws as read_trace.
Trace read_trace_located(const std::string& path, std::map<int, std::string>& layer_source,
                         const ReadOptions& options = {});

// Throws InputError "WHERE: layer L is beyond the N layers (ids 0..N-1) of model preset NAME; ..."
// for the lowest layer id >= model.layers (WHERE from layer_source, else the trace's path). No
// check when model.layers <= 0.
void check_trace_layers(const Trace& trace, const std::map<int, std::string>& layer_source, const ModelShape& model);

}  // namespace zepp
