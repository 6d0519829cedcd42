// Routing traces (src/trace) as numpy arrays and model presets (core/presets.hpp), for Python
// programs that replay real selections (examples/torch_ep.py).
#include <pybind11/stl.h>

#include "core/error.hpp"
#include "core/presets.hpp"
#include "trace/trace.hpp"

#include "bindings.hpp"

namespace zepp::py {

void bind_trace(pb::module_& m) {
  // Returns (format, num_experts, {layer: (expert_ids [T, k] int32, gate_weights [T, k] float32 or
  // None, request [T] int32, step [T] int32)}, requests [names]); token-level traces only.
  m.def("read_trace", [](const std::string& path) {
    Trace trace = read_trace(path);
    if (!trace.has_tokens())
      throw InputError(path + ": expected a token-level trace (per-token expert ids), got the load-only format " +
                       trace.format);
    pb::dict layers;
    for (auto& [id, layer] : trace.layers) {
      const pb::ssize_t T = layer.num_tokens(), k = layer.top_k;
      pb::object gates = pb::none();
      if (!layer.gate_weights.empty()) gates = to_numpy(std::move(layer.gate_weights), {T, k});
      layers[pb::int_(id)] = pb::make_tuple(to_numpy(std::move(layer.expert_ids), {T, k}), gates,
                                            to_numpy(std::move(layer.request), {T}),
                                            to_numpy(std::move(layer.step), {T}));
    }
    pb::list requests;  // names from file names and contents: any bytes
    for (const std::string& name : trace.requests) requests.append(lenient_str(name));
    return pb::make_tuple(trace.format, trace.num_experts, layers, requests);
  });
  m.def("model_preset", [](const std::string& name) {
    ModelShape s = model_preset(name);
    pb::dict d;
    d["name"] = s.name;
    d["num_experts"] = s.num_experts;
    d["top_k"] = s.top_k;
    d["hidden"] = s.hidden;
    d["ffn"] = s.ffn;
    d["layers"] = s.layers;
    d["moe_layers"] = s.moe_layers;
    d["shared_experts"] = s.shared_experts;
    return d;
  });
}

}  // namespace zepp::py
