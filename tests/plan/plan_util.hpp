// Lookups over a CommPlan for tests.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "plan/comm_plan.hpp"
#include "../common/plan_check.hpp"

namespace zepp::test {

// The one transfer (src -> dst, phase, hop); fails the test if there is not exactly one.
inline const Task* find_transfer(const CommPlan& plan, int src, int dst, Phase phase, Hop hop) {
  const Task* found = nullptr;
  int count = 0;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.gpu == src && t.dst_gpu == dst && t.phase == phase && t.hop == hop) {
      found = &t;
      ++count;
    }
  EXPECT_EQ(count, 1) << "transfers " << src << "->" << dst << " " << to_string(phase) << " " << to_string(hop);
  return found;
}

inline double bytes_on(const CommPlan& plan, Link link, Phase phase) {
  double b = 0;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.link == link && t.phase == phase) b += t.bytes;
  return b;
}

inline int count_kind(const CommPlan& plan, TaskKind kind) {
  int n = 0;
  for (const Task& t : plan.tasks) n += t.kind == kind;
  return n;
}

// Rows of a combine-like task as (token, pairs) for comparisons.
inline std::vector<std::pair<int64_t, std::vector<int64_t>>> rows_of(const CommPlan& p, const Task& t) {
  std::vector<std::pair<int64_t, std::vector<int64_t>>> rows;
  const auto tokens = p.tokens(t);
  for (size_t r = 0; r < tokens.size(); ++r) {
    const auto pairs = p.row_pairs_of(t, int64_t(r));
    rows.emplace_back(tokens[r], std::vector<int64_t>(pairs.begin(), pairs.end()));
  }
  return rows;
}
using Rows = std::vector<std::pair<int64_t, std::vector<int64_t>>>;

}  // namespace zepp::test
