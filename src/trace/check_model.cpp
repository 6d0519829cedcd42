#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "trace/layer_check.hpp"
#include "trace/trace.hpp"

namespace zepp {

// Messages are built only on failure: the loop visits every (token, k) id of the trace.
void check_trace_matches_model(const Trace& trace, const ModelShape& model) {
  const auto fail = [&](const std::string& what) {
    throw ArgumentError("trace: " + trace.path + " and model " + model.name + " disagree: " + what);
  };
  require(model.num_experts > 0 && model.top_k > 0, "model", model.name + " needs num_experts and top_k > 0");
  for (const auto& [layer, lt] : trace.layers) {
    if (lt.top_k != model.top_k)
      fail("layer " + std::to_string(layer) + " has top-k " + std::to_string(lt.top_k) + ", the model " +
           std::to_string(model.top_k));
    // read_trace guarantees the shapes; a Trace built by hand may not (the workload indexes by them).
    const size_t T = lt.request.size();
    if (lt.expert_ids.size() != T * size_t(lt.top_k) || lt.step.size() != T ||
        !(lt.gate_weights.empty() || lt.gate_weights.size() == lt.expert_ids.size()))
      fail("layer " + std::to_string(layer) + " has " + std::to_string(lt.expert_ids.size()) + " expert ids, " +
           std::to_string(lt.gate_weights.size()) + " gate weights and " + std::to_string(lt.step.size()) +
           " steps for " + std::to_string(T) + " tokens of top-k " + std::to_string(lt.top_k));
    for (int32_t r : lt.request)
      if (r < 0 || size_t(r) >= trace.requests.size())
        fail("layer " + std::to_string(layer) + " names request " + std::to_string(r) + " of " +
             std::to_string(trace.requests.size()));
    // The request names where it was read (its file, relative to the trace, or its problem id in a log).
    for (size_t i = 0; i < lt.expert_ids.size(); ++i)
      if (const int32_t id = lt.expert_ids[i]; id < 0 || id >= model.num_experts)
        fail("layer " + std::to_string(layer) + " selects expert " + std::to_string(id) + " in request '" +
             trace.requests[size_t(lt.request[i / size_t(lt.top_k)])] + "', the model has " +
             std::to_string(model.num_experts) + " experts");
  }
  for (const LoadTable& t : trace.loads)
    for (const auto& [layer, row] : t.per_layer)
    {
      if (int(row.size()) != model.num_experts)
        fail("load table " + t.name + " layer " + std::to_string(layer) + " has " + std::to_string(row.size()) +
             " expert columns, the model " + std::to_string(model.num_experts) + " experts");
      for (double x : row)
        if (!(std::isfinite(x) && x >= 0))
          fail("load table " + t.name + " layer " + std::to_string(layer) + " has load " + std::to_string(x) +
               ", expected finite loads >= 0");
    }
}

void check_trace_layers(const Trace& trace, const std::map<int, std::string>& layer_source, const ModelShape& model) {
  if (model.layers > 0) {
    int top = trace.layers.empty() ? -1 : trace.layers.rbegin()->first;
    for (const LoadTable& t : trace.loads)
      if (!t.per_layer.empty()) top = std::max(top, t.per_layer.rbegin()->first);
    if (top >= model.layers) {
      const int first = [&] {  // the lowest offending layer, for a message pointing at its first line
        int id = top;
        for (const auto& [layer, lt] : trace.layers)
          if (layer >= model.layers) id = std::min(id, layer);
        for (const LoadTable& t : trace.loads)
          if (auto it = t.per_layer.lower_bound(model.layers); it != t.per_layer.end()) id = std::min(id, it->first);
        return id;
      }();
      const auto where = layer_source.find(first);
      throw InputError((where != layer_source.end() ? where->second : trace.path) + ": layer " +
                       std::to_string(first) + " is beyond the " + std::to_string(model.layers) + " layers (ids 0.." +
                       std::to_string(model.layers - 1) + ") of model preset " + model.name +
                       "; the trace's layer labels do not belong to this model");
    }
  }
}

}  // namespace zepp
