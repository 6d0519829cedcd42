// Names of timeline events, shared by the `sim` and `mpi` executors so their timelines read alike.
#pragma once
#include <string>

#include "plan/comm_plan.hpp"

namespace zepp {

// The name of `t`'s timeline event: "expert 17 (52 tok)", "pre-reduce -> node 1 (30 tok)",
// "final reduce (40 rows)", "weights expert 3 -> gpu 2", or for rows
// "<phase> <hop> r<round> -> gpu <dst> (<rows> rows)", e.g. "dispatch put r1 -> gpu 5 (40 rows)".
// Combine-phase events are those starting "combine", "pre-reduce" or "final reduce"
// (exec/phases.hpp reads phases back from these names).
std::string task_label(const Task& t);

}  // namespace zepp
