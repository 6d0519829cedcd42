// The size check before any work (pipeline/cost.hpp), for the Python entry points: the same
// estimates of memory and time `zepp` makes, from the sizes of the arguments, checked before
// numpy copies or the core allocates anything.
#include <string>

#include "bindings.hpp"
#include "pipeline/cost.hpp"

namespace zepp::py {

void bind_limits(pb::module_& m) {
  // Raise ValueError "NAME: this run needs about X B and Y s ..., more than ..." when placing
  // `slots` replicas of `experts` experts on `gpus` GPUs for `layers` layers would not fit.
  m.def("check_placement_cost", [](double layers, double experts, double slots, double gpus, bool zepp,
                                   double budget_seconds, const std::string& name, const std::string& smaller) {
    check_budget(estimate_placement_cost(layers, experts, slots, gpus, zepp), memory_budget_bytes(), name, budget_seconds,
                 name, smaller);
  });
  // Likewise for routing `pairs` (token, k) pairs over `slots` slots of `experts` experts on `gpus` GPUs.
  m.def("check_routing_cost", [](double slots, double experts, double gpus, double pairs, double budget_seconds,
                                 const std::string& name, const std::string& smaller) {
    check_budget(estimate_routing_cost(slots, experts, gpus, pairs), memory_budget_bytes(), name, budget_seconds, name,
                 smaller);
  });
  m.def("memory_budget_bytes", &memory_budget_bytes);
  m.def("seconds_budget", &call_seconds_budget);  // ZEPP_MAX_SECONDS or 60 s, as `zepp place`
}

}  // namespace zepp::py
