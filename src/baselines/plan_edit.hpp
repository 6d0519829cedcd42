// Small edits of a built CommPlan (plan/comm_plan.hpp) that the baselines use to turn the plan
// build_comm_plan makes into their own dispatch (docs/baselines/*.md). Every edit keeps the
// plan's semantics: rows stay with their tasks, dependencies stay acyclic.
#pragma once
#include <cstdint>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp::baselines {

// Appends b's rows (tokens, and CSR pairs for combine rows), bytes and dependencies to a.
// Throws ArgumentError("b: ...") when one task has pair lists and the other has none.
void append_rows(Task& a, const Task& b);

// Removes the tasks with drop[i] != 0 and renumbers the rest in order. A task that depended on
// a dropped task depends instead on that task's dependencies (transitively), so merging task b
// into a is: append_rows(a, b), b.deps = {a}, drop b. Throws ArgumentError("drop: ...") unless
// drop has one entry per task.
void drop_tasks(CommPlan& plan, const std::vector<char>& drop);

// Tasks depending on each task: [tasks.size()] lists of task indices, ascending.
std::vector<std::vector<int32_t>> dependents(const CommPlan& plan);

}  // namespace zepp::baselines
