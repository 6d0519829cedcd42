#include "core/error.hpp"
#include "trace/trace.hpp"

namespace zepp {

// Messages are built only on failure: the loop visits every (token, k) id of the trace.
void check_trace_matches_model(const Trace& trace, const ModelShape& model) {
  const auto fail = [&](const std::string& what) {
    throw ArgumentError("trace: trace " + trace.path + " and model " + model.name + " disagree: " + what);
  };
  require(model.num_experts > 0 && model.top_k > 0, "model", model.name + " needs num_experts and top_k > 0");
  for (const auto& [layer, lt] : trace.layers) {
    if (lt.top_k != model.top_k)
      fail("layer " + std::to_string(layer) + " has top-k " + std::to_string(lt.top_k) + ", the model " +
           std::to_string(model.top_k));
    for (int32_t id : lt.expert_ids)
      if (id >= model.num_experts)
        fail("layer " + std::to_string(layer) + " selects expert " + std::to_string(id) + ", the model has " +
             std::to_string(model.num_experts) + " experts");
  }
  for (const LoadTable& t : trace.loads)
    for (const auto& [layer, row] : t.per_layer)
      if (int(row.size()) != model.num_experts)
        fail("load table " + t.name + " layer " + std::to_string(layer) + " has " + std::to_string(row.size()) +
             " expert columns, the model " + std::to_string(model.num_experts) + " experts");
}

}  // namespace zepp
