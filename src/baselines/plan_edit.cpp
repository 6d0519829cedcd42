#include "baselines/plan_edit.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace zepp::baselines {

void append_rows(Task& a, const Task& b) {
  const bool a_pairs = !a.pair_begin.empty(), b_pairs = !b.pair_begin.empty();
  require(a.tokens.empty() || b.tokens.empty() || a_pairs == b_pairs, "b", "rows with and without pair lists cannot share a task");
  if (b_pairs) {
    if (a.pair_begin.empty()) a.pair_begin.push_back(0);
    const int64_t base = int64_t(a.pairs.size());
    for (size_t r = 1; r < b.pair_begin.size(); ++r) a.pair_begin.push_back(base + b.pair_begin[r]);
  }
  a.tokens.insert(a.tokens.end(), b.tokens.begin(), b.tokens.end());
  a.pairs.insert(a.pairs.end(), b.pairs.begin(), b.pairs.end());
  a.bytes += b.bytes;
  a.deps.insert(a.deps.end(), b.deps.begin(), b.deps.end());
}

void drop_tasks(CommPlan& plan, const std::vector<char>& drop) {
  const size_t n = plan.tasks.size();
  require(drop.size() == n, "drop", "needs one entry per task (" + std::to_string(n) + ")");
  std::vector<int32_t> new_index(n, -1);
  int32_t next = 0;
  for (size_t i = 0; i < n; ++i)
    if (!drop[i]) new_index[i] = next++;

  // Kept tasks a dropped task stands for, resolved once per dropped task (memoised DFS).
  std::vector<std::vector<int32_t>> resolved(n);
  std::vector<char> done(n, 0);
  auto resolve = [&](auto&& self, int32_t d) -> const std::vector<int32_t>& {
    if (!done[d]) {
      std::vector<int32_t> out;
      for (int32_t x : plan.tasks[d].deps) {
        if (!drop[x]) {
          out.push_back(new_index[x]);
        } else {
          const auto& sub = self(self, x);
          out.insert(out.end(), sub.begin(), sub.end());
        }
      }
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
      resolved[d] = std::move(out);
      done[d] = 1;
    }
    return resolved[d];
  };

  std::vector<Task> kept;
  kept.reserve(size_t(next));
  for (size_t i = 0; i < n; ++i) {
    if (drop[i]) continue;
    Task t = std::move(plan.tasks[i]);
    std::vector<int32_t> deps;
    for (int32_t x : t.deps) {
      if (!drop[x]) {
        deps.push_back(new_index[x]);
      } else {
        const auto& sub = resolve(resolve, x);
        deps.insert(deps.end(), sub.begin(), sub.end());
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    t.deps = std::move(deps);
    kept.push_back(std::move(t));
  }
  plan.tasks = std::move(kept);
}

std::vector<std::vector<int32_t>> dependents(const CommPlan& plan) {
  std::vector<std::vector<int32_t>> out(plan.tasks.size());
  for (size_t i = 0; i < plan.tasks.size(); ++i)
    for (int32_t d : plan.tasks[i].deps) out[d].push_back(int32_t(i));
  return out;
}

}  // namespace zepp::baselines
