// The `sim` executor with a compute model measured on the machine (`zepp calibrate`,
// core/gemm_curve.hpp) in place of the roofline.
#pragma once
#include <vector>

#include "core/gemm_curve.hpp"
#include "exec/result.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

// simulate_plan (exec/sim.hpp), except that an expert GEMM over n rows takes the time of the
// curve measured for the plan's (hidden, ffn); reductions still take bytes / compute.hbm_bw (a
// calibrated file's hbm is the reductions' measured bandwidth). Throws ArgumentError("topology:
// ...") when no curve has the plan's shape, and what simulate_plan throws.
LayerResult simulate_plan_measured(const CommPlan& plan, const Topology& topo, const std::vector<GemmCurve>& gemm,
                                   bool want_timeline = false);

}  // namespace zepp
