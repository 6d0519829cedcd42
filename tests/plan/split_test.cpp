// Split (paper §4.2 eq. (2), (3)): closed form and min-cost flow.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "plan/split.hpp"

namespace zepp {
namespace {

int64_t column(const SplitMatrix& x, int G, int j) {
  int64_t s = 0;
  for (int i = 0; i < G; ++i) s += x[size_t(i) * G + j];
  return s;
}
int64_t row(const SplitMatrix& x, int G, int i) {
  int64_t s = 0;
  for (int j = 0; j < G; ++j) s += x[size_t(i) * G + j];
  return s;
}
// Eq. (3): sum_i (V_i - cap)^+.
int64_t excess(const std::vector<int64_t>& v, int64_t cap) {
  int64_t s = 0;
  for (int64_t x : v) s += std::max<int64_t>(0, x - cap);
  return s;
}

TEST(NicCapacity, RoundsToWholeRows) {
  EXPECT_EQ(nic_capacity(8, 4, 0.0), 2);
  EXPECT_EQ(nic_capacity(10, 4, 0.0), 3);   // 2.5 rounded up
  EXPECT_EQ(nic_capacity(8, 4, 0.5), 3);    // 1.5 * 2
  EXPECT_EQ(nic_capacity(10, 4, 0.5), 3);   // floor(3.75)
  EXPECT_EQ(nic_capacity(10, 4, 0.1), 3);   // floor(2.75) < ceil(2.5)
  EXPECT_EQ(nic_capacity(0, 4, 0.0), 0);
  EXPECT_THROW(nic_capacity(8, 0, 0.0), ArgumentError);
  EXPECT_THROW(nic_capacity(8, 4, -0.1), ArgumentError);
  EXPECT_THROW(nic_capacity(-1, 4, 0.0), ArgumentError);
}

TEST(SplitClosedForm, MovesOnlyTheExcess) {
  // V = (6, 2, 0, 0), V/G = 2: GPU 0 keeps 2 and hands 2 each to GPUs 2 and 3 (GPU 1 is full).
  const SplitMatrix x = split_closed_form({6, 2, 0, 0}, 2);
  const SplitMatrix want = {2, 0, 2, 2,  //
                            0, 2, 0, 0,  //
                            0, 0, 0, 0,  //
                            0, 0, 0, 0};
  EXPECT_EQ(x, want);
  EXPECT_EQ(moved_rows(x, 4), 4);  // eq. (3): (6-2) = 1/2 (4 + 0 + 2 + 2)
}

TEST(SplitClosedForm, EquationThreeOnUnevenVolumes) {
  // V = (5, 3, 3, 1), V/G = 3: eq. (3) = 1/2 (2 + 0 + 0 + 2) = 2, all to GPU 3.
  const SplitMatrix x = split_closed_form({5, 3, 3, 1}, 3);
  EXPECT_EQ(moved_rows(x, 4), 2);
  EXPECT_EQ(x[0 * 4 + 3], 2);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(column(x, 4, j), 3);
}

TEST(SplitClosedForm, RejectsBadArguments) {
  EXPECT_THROW(split_closed_form({5, 3}, 3), ArgumentError);      // 2 * 3 < 8
  EXPECT_THROW(split_closed_form({5, -1}, 5), ArgumentError);
  EXPECT_THROW(split_closed_form({}, 1), ArgumentError);
}

TEST(SplitMinCost, AgreesWithClosedFormAtZeroSlack) {
  const std::vector<int64_t> v = {6, 2, 0, 0};
  const std::vector<int64_t> cost(16, 1);
  const SplitMatrix x = split_min_cost(v, nic_capacity(8, 4, 0.0), cost);
  EXPECT_EQ(moved_rows(x, 4), 4);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(column(x, 4, j), 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(row(x, 4, i), v[i]);
}

TEST(SplitMinCost, SlackLetsANicCarryMore) {
  // C_NIC = 0.5: cap = 3, so GPU 0 keeps 3 and moves only 3.
  const SplitMatrix x = split_min_cost({6, 2, 0, 0}, nic_capacity(8, 4, 0.5), std::vector<int64_t>(16, 1));
  EXPECT_EQ(x[0], 3);
  EXPECT_EQ(moved_rows(x, 4), 3);
  for (int j = 0; j < 4; ++j) EXPECT_LE(column(x, 4, j), 3);
}

TEST(SplitMinCost, PrefersCheapLinks) {
  // G = 3, V = (4, 0, 0), cap 2: moving to GPU 2 costs 1, to GPU 1 costs 5.
  const std::vector<int64_t> cost = {0, 5, 1,  //
                                     1, 0, 1,  //
                                     1, 1, 0};
  const SplitMatrix x = split_min_cost({4, 0, 0}, 2, cost);
  EXPECT_EQ(x, (SplitMatrix{2, 0, 2, 0, 0, 0, 0, 0, 0}));
}

TEST(SplitMinCost, RejectsBadArguments) {
  EXPECT_THROW(split_min_cost({4, 0}, 2, {0, 1, 1}), ArgumentError);     // cost shape
  EXPECT_THROW(split_min_cost({4, 0}, 2, {0, -1, 1, 0}), ArgumentError); // negative cost
  EXPECT_THROW(split_min_cost({4, 0}, 1, {0, 1, 1, 0}), ArgumentError);  // cannot fit
}

RC_GTEST_PROP(Split, BothSolversMeetTheBoundWithTheMinimumMove, ()) {
  const int G = *rc::gen::inRange(1, 9);
  const auto v = *rc::gen::container<std::vector<int64_t>>(size_t(G), rc::gen::inRange<int64_t>(0, 60));
  const double slack = *rc::gen::element(0.0, 0.1, 0.25, 1.0);
  const int64_t total = std::accumulate(v.begin(), v.end(), int64_t(0));
  const int64_t cap = nic_capacity(total, G, slack);
  RC_ASSERT(cap * G >= total);
  RC_ASSERT(double(cap) <= std::max((1.0 + slack) * double(total) / G, std::ceil(double(total) / G)) + 1e-9);
  const SplitMatrix a = split_closed_form(v, cap);
  const SplitMatrix b = split_min_cost(v, cap, std::vector<int64_t>(size_t(G) * G, 1));
  for (const SplitMatrix* x : {&a, &b}) {
    for (int i = 0; i < G; ++i) RC_ASSERT(row(*x, G, i) == v[i]);
    for (int j = 0; j < G; ++j) RC_ASSERT(column(*x, G, j) <= cap);
    for (int64_t e : *x) RC_ASSERT(e >= 0);
    RC_ASSERT(moved_rows(*x, G) == excess(v, cap));
  }
  if (total % G == 0 && slack == 0.0) {  // eq. (3) exactly: 1/2 sum |V_i - V/G|
    int64_t dev = 0;
    for (int64_t x : v) dev += std::abs(x - total / G);
    RC_ASSERT(2 * moved_rows(a, G) == dev);
  }
}

}  // namespace
}  // namespace zepp
