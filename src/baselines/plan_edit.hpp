// Small edits of a built CommPlan (plan/comm_plan.hpp) that the baselines use to turn the plan
// build_comm_plan makes into their own dispatch (docs/baselines/*.md). Every edit keeps the
// plan's semantics: rows stay with their tasks, dependencies stay acyclic.
#pragma once
#include <cstdint>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp::baselines {

// Appends task b's rows (tokens, and CSR pairs for combine rows), bytes and dependencies to
// task a (a's lists move to the end of the plan's flat arrays). Throws ArgumentError("b: ...")
// when one task has pair lists and the other has none.
void append_rows(CommPlan& plan, int32_t a, int32_t b);

// Removes the tasks with drop[i] != 0 and renumbers the rest in order. A task that depended on
// a dropped task depends instead on that task's dependencies (transitively), so merging task b
// into a is: append_rows(plan, a, b), set_deps(b, {a}), drop b. Every kept task's dependencies
// come out sorted and deduplicated, in a new dep_index. Throws ArgumentError("drop: ...") unless
// drop has one entry per task.
void drop_tasks(CommPlan& plan, const std::vector<char>& drop);

// Tasks depending on each task: [tasks.size()] lists of task indices, ascending.
std::vector<std::vector<int32_t>> dependents(const CommPlan& plan);

}  // namespace zepp::baselines
