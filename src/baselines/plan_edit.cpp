#include "baselines/plan_edit.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace zepp::baselines {

void append_rows(CommPlan& plan, int32_t a, int32_t b) {
  const Task &ta = plan.tasks[size_t(a)], &tb = plan.tasks[size_t(b)];
  const bool a_pairs = !ta.pair_begin_at.empty(), b_pairs = !tb.pair_begin_at.empty();
  require(ta.tokens_at.empty() || tb.tokens_at.empty() || a_pairs == b_pairs, "b",
          "rows with and without pair lists cannot share a task");
  auto joined = [](std::span<const int32_t> x, std::span<const int32_t> y) {
    std::vector<int32_t> v(x.begin(), x.end());
    v.insert(v.end(), y.begin(), y.end());
    return v;
  };
  const auto pb_a = plan.pair_begin(ta), pb_b = plan.pair_begin(tb);
  std::vector<int32_t> pair_begin(pb_a.begin(), pb_a.end());
  if (b_pairs) {
    if (pair_begin.empty()) pair_begin.push_back(0);
    const auto base = int32_t(ta.pairs_at.size());
    for (size_t r = 1; r < pb_b.size(); ++r) pair_begin.push_back(base + pb_b[r]);
  }
  const std::vector<int32_t> tokens = joined(plan.tokens(ta), plan.tokens(tb)),
                             pairs = joined(plan.pairs(ta), plan.pairs(tb)), deps = joined(plan.deps(ta), plan.deps(tb));
  plan.tasks[size_t(a)].bytes += plan.tasks[size_t(b)].bytes;
  plan.set_rows(a, tokens, pair_begin, pairs);
  plan.set_deps(a, deps);
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
      for (int32_t x : plan.deps(plan.tasks[d])) {
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
  CommPlan::Array index;  // the kept tasks' dependencies
  for (size_t i = 0; i < n; ++i) {
    if (drop[i]) continue;
    Task t = plan.tasks[i];
    std::vector<int32_t> deps;
    for (int32_t x : plan.deps(t)) {
      if (!drop[x]) {
        deps.push_back(new_index[x]);
      } else {
        const auto& sub = resolve(resolve, x);
        deps.insert(deps.end(), sub.begin(), sub.end());
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    t.deps_at = {int64_t(index.size()), int64_t(index.size() + deps.size())};
    index.insert(index.end(), deps.begin(), deps.end());
    kept.push_back(t);
  }
  plan.tasks = std::move(kept);
  plan.dep_index = std::move(index);
}

std::vector<std::vector<int32_t>> dependents(const CommPlan& plan) {
  std::vector<std::vector<int32_t>> out(plan.tasks.size());
  for (size_t i = 0; i < plan.tasks.size(); ++i)
    for (int32_t d : plan.deps(plan.tasks[i])) out[d].push_back(int32_t(i));
  return out;
}

}  // namespace zepp::baselines
