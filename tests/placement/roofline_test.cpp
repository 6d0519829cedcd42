// Zepp's placement weighed in roofline time (placement/roofline.cpp, issue 24's experiment, off by
// default): the model by hand, a replica below the ridge refused, the within-node balance moving
// a hot replica, and water-filling recovered far above the ridge (property).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "../common/errors.hpp"
#include "core/error.hpp"
#include "placement/pack.hpp"
#include "placement/placement.hpp"

namespace {

using zepp::RooflineBatch;
using zepp::placement_detail::expected_gemm_seconds;
using zepp::placement_detail::roofline_counts;
using zepp::placement_detail::water_fill_counts;

zepp::Topology one_node(int gpus) {
  zepp::Topology t;
  t.nodes = 1;
  t.gpus_per_node = gpus;
  return t;
}

// Ridge at 100 rows: a weight read costs 100 (any unit), a row 1.
RooflineBatch ridge_100(double rows) {
  RooflineBatch b;
  b.rows = rows;
  b.read_s = 100;
  b.row_s = 1;
  return b;
}

std::set<int> experts_on(const zepp::Placement& p, int gpu) {
  std::set<int> s;
  for (int k = 0; k < p.slots_per_gpu; ++k) s.insert(p.phy2log[size_t(gpu) * p.slots_per_gpu + k]);
  return s;
}

using zepp::testing::argument_error;

}  // namespace

TEST(RooflinePlacement, BatchFromModelAndTopology) {
  zepp::ModelShape m;
  m.hidden = 2, m.ffn = 3, m.top_k = 2;
  zepp::Topology t;
  t.nodes = 2, t.gpus_per_node = 2;
  t.compute.peak_flops = 12, t.compute.hbm_bw = 6, t.compute.kernel_launch = 0.5;
  const RooflineBatch b = zepp::roofline_batch(m, t, 10);
  EXPECT_DOUBLE_EQ(b.rows, 10.0 * 4 * 2);         // tokens per GPU x G x top_k
  EXPECT_DOUBLE_EQ(b.read_s, 3.0 * 2 * 3 * 2 / 6);  // 3 hidden ffn x 2 bytes / hbm_bw
  EXPECT_DOUBLE_EQ(b.row_s, 6.0 * 2 * 3 / 12);      // 6 hidden ffn / peak_flops
  EXPECT_DOUBLE_EQ(b.launch_s, 0.5);
  EXPECT_NE(argument_error([&] { zepp::roofline_batch(m, t, -1); }).find("tokens_per_gpu"), std::string::npos);
  t.compute.peak_flops = 0;
  EXPECT_NE(argument_error([&] { zepp::roofline_batch(m, t, 10); }).find("topo"), std::string::npos);
  RooflineBatch bad = ridge_100(10);
  bad.row_s = 0;
  EXPECT_NE(argument_error([&] { zepp::place_zepp({1, 2}, one_node(2), 0, &bad); }).find("roofline"),
            std::string::npos);
}

TEST(RooflinePlacement, ExpectedGemmTimeByHand) {
  const RooflineBatch b = ridge_100(0);
  EXPECT_EQ(expected_gemm_seconds(b, 0), 0.0);  // no rows: the GEMM is skipped
  // Far below the ridge a replica costs the read whenever it has a row: 100 (1 - e^-m).
  EXPECT_NEAR(expected_gemm_seconds(b, 0.5), 100 * (1 - std::exp(-0.5)), 1e-9);
  EXPECT_NEAR(expected_gemm_seconds(b, 5), 100 * (1 - std::exp(-5.0)), 1e-6);
  // Far above it, the FLOPs: m rows.
  EXPECT_NEAR(expected_gemm_seconds(b, 10000), 10000, 1e-6);
  // At the ridge the Poisson spread adds E[(k - 100)+] above the read (about 4 for m = 100).
  const double at = expected_gemm_seconds(b, 100);
  EXPECT_GT(at, 100);
  EXPECT_LT(at, 105);
}

// 2 GPUs, R = 1: two extra slots. Water-filling gives them to the hottest experts (130 and 60
// rows), each of whose second replica falls below the ridge and costs a whole read (+70, +100);
// the roofline rule refuses both and gives the slots to the experts with no expected rows, whose
// replicas routing leaves empty.
TEST(RooflinePlacement, RefusesAReplicaBelowTheRidge) {
  const std::vector<double> load = {130, 60, 0, 0};
  const RooflineBatch b = ridge_100(190);
  EXPECT_EQ(water_fill_counts(load, 6, 2), (std::vector<int>{2, 2, 1, 1}));
  EXPECT_EQ(roofline_counts(load, 6, 2, 2, b), (std::vector<int>{1, 1, 2, 2}));
  const zepp::Placement tokens = zepp::place_zepp(load, one_node(2), 1);
  const zepp::Placement roofline = zepp::place_zepp(load, one_node(2), 1, &b);
  EXPECT_EQ(tokens.logcnt(), (std::vector<int32_t>{2, 2, 1, 1}));
  EXPECT_EQ(roofline.logcnt(), (std::vector<int32_t>{1, 1, 2, 2}));
  // A replica above the ridge that lowers the bound is still made: one replica of 400 rows (400)
  // is above the mean GPU time ((400 + 100) / 2 = 250); two of 200 rows bring the bound to 250.
  EXPECT_EQ(roofline_counts({400, 60, 0, 0}, 5, 2, 2, ridge_100(460)), (std::vector<int>{2, 1, 1, 1}));
}

// 2 GPUs, no extra slots (counts all 1): only the packing differs. Token balance ends with the two
// hot, compute-bound experts 2 and 3 (150 rows each) on GPU 0 beside the near-empty expert 1 (320
// tokens against 280), which in roofline time is 150 + 150 + 100 = 400 against 300; weighing
// replicas by roofline time moves expert 3 to GPU 1 (354 against 350).
TEST(RooflinePlacement, WithinNodeBalanceMovesAHotReplica) {
  const std::vector<double> load = {90, 20, 150, 150, 100, 90};
  const RooflineBatch b = ridge_100(600);
  const zepp::Placement tokens = zepp::place_zepp(load, one_node(2), 0);
  const zepp::Placement roofline = zepp::place_zepp(load, one_node(2), 0, &b);
  EXPECT_EQ(experts_on(tokens, 0), (std::set<int>{1, 2, 3}));
  EXPECT_EQ(experts_on(roofline, 0), (std::set<int>{1, 2, 4}));
  EXPECT_EQ(experts_on(roofline, 1), (std::set<int>{0, 3, 5}));
  const auto busiest = [&](const zepp::Placement& p) {
    double mx = 0;
    for (int g = 0; g < 2; ++g) {
      double s = 0;
      for (int e : experts_on(p, g)) s += expected_gemm_seconds(b, load[e]);
      mx = std::max(mx, s);
    }
    return mx;
  };
  EXPECT_NEAR(busiest(tokens), 400, 1);
  EXPECT_LT(busiest(roofline), 360);
}

// Counts are always valid (>= 1, <= cap, sum = slots), and far above the ridge (every replica's
// expected rows >= 50 ridges) they are water-filling's exactly (roofline.cpp, property (2)).
RC_GTEST_PROP(RooflinePlacement, CountsValidAndWaterFillingAboveTheRidge, ()) {
  const int E = *rc::gen::inRange(1, 13);
  const int cap = *rc::gen::inRange(1, 7);
  const int slots = *rc::gen::inRange(E, E * cap + 1);
  const auto load = *rc::gen::container<std::vector<double>>(
      size_t(E), rc::gen::map(rc::gen::inRange(0, 1000), [](int x) { return double(x); }));
  const double rows = *rc::gen::map(rc::gen::inRange(0, 100000), [](int x) { return double(x); });
  const std::vector<int> any = roofline_counts(load, slots, cap, cap, ridge_100(rows));
  RC_ASSERT(std::accumulate(any.begin(), any.end(), 0) == slots);
  for (int c : any) RC_ASSERT(c >= 1 && c <= cap);

  std::vector<double> positive = load;
  for (double& x : positive) x += 1;
  const double total = std::accumulate(positive.begin(), positive.end(), 0.0);
  const double least = *std::min_element(positive.begin(), positive.end());
  const RooflineBatch far = ridge_100(50.0 * 100 * cap * total / least);
  RC_ASSERT(roofline_counts(positive, slots, cap, cap, far) == water_fill_counts(positive, slots, cap));
}
