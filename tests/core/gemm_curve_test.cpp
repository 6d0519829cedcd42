// The measured compute model (core/gemm_curve.hpp): piecewise-linear time against tokens.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/gemm_curve.hpp"

namespace zepp {
namespace {

GemmCurve curve() {
  GemmCurve c;
  c.hidden = 8, c.ffn = 4;
  c.tokens = {1, 4, 16};
  c.seconds = {10e-6, 16e-6, 40e-6};
  return c;
}

TEST(GemmCurve, InterpolatesBetweenPointsAndExtendsTheEndSegments) {
  const GemmCurve c = curve();
  c.validate("curve");
  EXPECT_EQ(c.time(0), 0.0);
  EXPECT_DOUBLE_EQ(c.time(1), 10e-6);
  EXPECT_DOUBLE_EQ(c.time(2), 12e-6);          // 10 + (16 - 10) / 3
  EXPECT_DOUBLE_EQ(c.time(4), 16e-6);
  EXPECT_DOUBLE_EQ(c.time(10), 28e-6);         // 16 + 24 * 6 / 12
  EXPECT_DOUBLE_EQ(c.time(16), 40e-6);
  EXPECT_DOUBLE_EQ(c.time(28), 64e-6);         // the last slope, 2 us per token, continues
}

TEST(GemmCurve, ValidateNamesTheBrokenRule) {
  GemmCurve c = curve();
  c.tokens = {4, 4, 16};
  EXPECT_THROW(c.validate("compute.gemm"), ArgumentError);
  c = curve();
  c.seconds[1] = 0;
  try {
    c.validate("compute.gemm");
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("compute.gemm: times must be positive (point 1)"), std::string::npos) << e.what();
  }
  c = curve();
  c.tokens.resize(1), c.seconds.resize(1);
  EXPECT_THROW(c.validate("compute.gemm"), ArgumentError);
}

}  // namespace
}  // namespace zepp
