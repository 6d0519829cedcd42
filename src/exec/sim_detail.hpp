// Internal pieces of the `sim` executor (sim.hpp), split so each file has one job.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/gemm_curve.hpp"
#include "core/types.hpp"
#include "exec/result.hpp"
#include "plan/comm_plan.hpp"

namespace zepp::sim_detail {

// When each task started and ended, in simulated seconds. [tasks]
struct TaskTimes {
  std::vector<double> start, end;
};

// Seconds a compute-stream task (Compute, PreReduce, FinalReduce, Planning) takes; 0 for others. Expert
// GEMMs by `measured` curves when given (exec/sim_measured.hpp), else by the roofline.
double stream_task_seconds(const Task& t, const CommPlan& plan, const Topology& topo,
                           const std::vector<GemmCurve>* measured = nullptr);

// Runs the plan in a SimGrid engine created here (call at most once per process).
TaskTimes run_engine(const CommPlan& plan, const Topology& topo, const std::vector<GemmCurve>* measured = nullptr);

// The report from task times (no SimGrid involved).
LayerResult summarize(const CommPlan& plan, const TaskTimes& times, bool want_timeline);

// LayerResult to bytes and back, for the pipe from the child process.
std::string encode(const LayerResult& r);
LayerResult decode(const std::string& bytes);

}  // namespace zepp::sim_detail
