// Timeline events of plan tasks, shared by the `sim` and `mpi` executors so their timelines read
// alike.
#pragma once
#include <string>

#include "exec/result.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

// The kind of `t`, its timeline event's name: "expert GEMM", "pre-reduce", "final reduce",
// "weights", "weights multicast", "shared expert", or for rows "<phase> <hop>", e.g. "dispatch put", "combine relay". Combine-phase
// events are those starting "combine", "pre-reduce" or "final reduce" (exec/phases.hpp).
std::string task_label(const Task& t);

// `t`'s event on `gpu`'s `track` over [start_s, end_s]: named task_label(t), with rows, bytes,
// expert, peer (receiving GPU), node (of a pre-reduction) and round filled where they apply.
TimelineEvent task_event(const Task& t, const std::string& track, double start_s, double end_s);

}  // namespace zepp
