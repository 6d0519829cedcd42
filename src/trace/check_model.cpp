#include <cmath>

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
    for (int32_t id : lt.expert_ids)
      if (id < 0 || id >= model.num_experts)
        fail("layer " + std::to_string(layer) + " selects expert " + std::to_string(id) + ", the model has " +
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

}  // namespace zepp
