// Unit tests of the `mpi` executor's parts that need no MPI: seeded data, SwiGLU, partial sums,
// pacing, the reference and its error metric.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "mpi/ffn.hpp"
#include "mpi/pacer.hpp"
#include "mpi/partials.hpp"
#include "mpi/reference.hpp"
#include "mpi/seeded.hpp"
#include "mpi/stack.hpp"

namespace zepp::mpi {
namespace {

// Textbook SwiGLU with double accumulation, the independent check of the OpenBLAS path.
// x: one token's row [hidden]. A pointer, not a vector: building a temporary vector of the row
// made GCC 12 at -O3 report a false -Wfree-nonheap-object on the user's terminal (as did sizing
// `y` from `x.size()` in the property below; both vectors are sized from one `n` instead).
std::vector<double> naive_swiglu(const ExpertWeights& w, const float* x) {
  const int h = w.hidden, f = w.ffn;
  std::vector<double> y(h, 0.0), a(f);
  for (int j = 0; j < f; ++j) {
    double g = 0, u = 0;
    for (int i = 0; i < h; ++i) g += double(x[i]) * w.gate[i * f + j], u += double(x[i]) * w.up[i * f + j];
    a[j] = g / (1 + std::exp(-g)) * u;
  }
  for (int i = 0; i < h; ++i)
    for (int j = 0; j < f; ++j) y[i] += a[j] * w.down[j * h + i];
  return y;
}

TEST(Stack, ResidualNormByHand) {
  // Row 1: r = (1 + 2, 1 - 1) = (3, 0), rms = sqrt(9 / 2 + 1e-6); row 2: r = (0, 0) stays 0.
  const auto out = residual_norm({1, 1, 0, 0}, {2, -1, 0, 0}, 2);
  EXPECT_NEAR(out[0], 3 / std::sqrt(4.5 + 1e-6), 1e-6);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_THROW(residual_norm({1, 1}, {1}, 2), ArgumentError);
  EXPECT_NE(layer_seed(7, 1), layer_seed(7, 2));
}

TEST(Seeded, DeterministicPerTokenAndExpertInRange) {
  std::vector<float> a(16), b(16), c(16);
  token_activation(3, 42, 16, a.data());
  token_activation(3, 42, 16, b.data());
  token_activation(3, 43, 16, c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float v : a) EXPECT_TRUE(v >= -1.0f && v < 1.0f);
  const ExpertWeights w1 = expert_weights(3, 5, 8, 4), w2 = expert_weights(3, 5, 8, 4), w3 = expert_weights(4, 5, 8, 4);
  EXPECT_EQ(w1.gate, w2.gate);
  EXPECT_EQ(w1.down, w2.down);
  EXPECT_NE(w1.gate, w3.gate);
  EXPECT_NE(w1.gate, w1.up);
  ASSERT_EQ(w1.gate.size(), 32u);
  for (float v : w1.gate) EXPECT_LE(std::fabs(v), 1.0f / std::sqrt(8.0f));
  for (float v : w1.down) EXPECT_LE(std::fabs(v), 0.5f);  // 1 / sqrt(ffn = 4)
  const ExpertWeights back = ExpertWeights::unpack(5, 8, 4, w1.packed().data());
  EXPECT_EQ(back.gate, w1.gate);
  EXPECT_EQ(back.up, w1.up);
  EXPECT_EQ(back.down, w1.down);
  EXPECT_THROW(token_activation(1, 0, 0, a.data()), ArgumentError);
  EXPECT_THROW(expert_weights(1, -1, 8, 4), ArgumentError);
}

TEST(Swiglu, HandComputedOneByOne) {
  // hidden = ffn = 1: y = down * silu(gate * x) * (up * x).
  ExpertWeights w{0, 1, 1, {2.0f}, {3.0f}, {0.5f}};
  const float x = 1.5f;
  float y = 0;
  swiglu(w, &x, 1, &y);
  const double g = 3.0, expect = 0.5 * (g / (1 + std::exp(-g))) * 4.5;
  EXPECT_NEAR(y, expect, 1e-5);
}

RC_GTEST_PROP(Swiglu, MatchesNaiveLoops, ()) {
  const int h = *rc::gen::inRange(1, 24), f = *rc::gen::inRange(1, 24), rows = *rc::gen::inRange(0, 9);
  const ExpertWeights w = expert_weights(*rc::gen::arbitrary<uint32_t>(), *rc::gen::inRange(0, 100), h, f);
  const size_t n = size_t(rows) * h;
  std::vector<float> x(n), y(n, -7.0f);
  for (int r = 0; r < rows; ++r) token_activation(9, r, h, x.data() + r * h);
  swiglu(w, x.data(), rows, y.data());
  for (int r = 0; r < rows; ++r) {
    const auto want = naive_swiglu(w, x.data() + r * h);
    for (int i = 0; i < h; ++i) RC_ASSERT(std::fabs(y[r * h + i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i])));
  }
}

TEST(PartialStore, CoversWithLargestRowsFirst) {
  PartialStore s(2);
  const float a[] = {1, 2}, b[] = {10, 20}, c[] = {100, 200}, ab[] = {11, 22};
  s.put(7, {3}, a);
  s.put(7, {4}, b);
  s.put(7, {5}, c);
  s.put(7, {4, 3}, ab);  // a pre-reduced sum of pairs 3 and 4, unsorted on purpose
  float out[2];
  const int64_t all[] = {5, 3, 4};
  s.sum(7, all, 3, out);
  EXPECT_EQ(out[0], 111);
  EXPECT_EQ(out[1], 222);
  const int64_t one[] = {4};
  s.sum(7, one, 1, out);
  EXPECT_EQ(out[0], 10);
  const int64_t none[] = {0};
  s.sum(8, none, 0, out);
  EXPECT_EQ(out[0], 0);
  const int64_t missing[] = {3, 6};
  EXPECT_THROW(s.sum(7, missing, 2, out), std::logic_error);
  EXPECT_THROW(s.sum(9, one, 1, out), std::logic_error);
}

TEST(PartialStore, OverlappingRowsDoNotDoubleCount) {
  PartialStore s(1);
  const float p1[] = {1}, p2[] = {2}, p3[] = {4}, p12[] = {3}, p23[] = {6};
  s.put(0, {1}, p1), s.put(0, {2}, p2), s.put(0, {3}, p3), s.put(0, {1, 2}, p12), s.put(0, {2, 3}, p23);
  float out;
  const int64_t want[] = {1, 2, 3};
  s.sum(0, want, 3, &out);  // {1,2} first (size 2, smallest pair), then {3}; {2,3} overlaps
  EXPECT_EQ(out, 7);
}

TEST(PartialStore, UsesOnlyRowsOfAcceptedProducers) {
  PartialStore s(1);
  const float p1[] = {1}, p2[] = {2}, p12[] = {3.5f};  // a pre-reduced row that differs in the last bits
  s.put(0, {1}, p1, 10), s.put(0, {2}, p2, 11), s.put(0, {1, 2}, p12, 12);
  float out;
  const int64_t want[] = {1, 2};
  s.sum(0, want, 2, &out, [](int32_t producer) { return producer != 12; });
  EXPECT_EQ(out, 3);
  s.sum(0, want, 2, &out);
  EXPECT_EQ(out, 3.5f);
  EXPECT_THROW(s.sum(0, want, 2, &out, [](int32_t producer) { return producer == 10; }), std::logic_error);
}

TEST(NicPacer, SerialisesMessagesAtTheRate) {
  NicPacer p(100.0);  // 100 bytes/s
  EXPECT_DOUBLE_EQ(p.reserve(1.0, 50), 1.5);
  EXPECT_DOUBLE_EQ(p.reserve(1.2, 100), 2.5);  // waits behind the first
  EXPECT_DOUBLE_EQ(p.reserve(4.0, 10), 4.1);   // idle NIC: leaves after its own serialisation
  NicPacer off(0);
  EXPECT_FALSE(off.enabled());
  EXPECT_DOUBLE_EQ(off.reserve(3.0, 1e9), 3.0);
}

TEST(Reference, SumsGateWeightedExpertsInOrder) {
  RoutingBatch b;
  b.num_gpus = 2, b.num_experts = 3, b.top_k = 2;
  b.token_offset = {0, 1, 2};
  b.expert_ids = {2, 0, 1, 2};
  b.gate_weights = {0.75f, 0.25f, 0.5f, 0.5f};
  ModelShape m;
  m.num_experts = 3, m.top_k = 2, m.hidden = 6, m.ffn = 5;
  const std::vector<float> y = reference_outputs(b, 1, m, 11);
  ASSERT_EQ(y.size(), 6u);
  std::vector<float> x(6);
  token_activation(11, 1, 6, x.data());
  const auto y1 = naive_swiglu(expert_weights(11, 1, 6, 5), x.data());
  const auto y2 = naive_swiglu(expert_weights(11, 2, 6, 5), x.data());
  for (int h = 0; h < 6; ++h) EXPECT_NEAR(y[h], 0.5 * y1[h] + 0.5 * y2[h], 1e-5);
  EXPECT_THROW(reference_outputs(b, 2, m, 11), ArgumentError);
}

TEST(Reference, RelativeErrorIsPerTokenNorm) {
  const std::vector<float> ref = {3, 4, 0, 0}, y = {3, 4.5f, 0, 0.25f};
  // token 0: |(0, .5)| / |(3, 4)| = 0.1; token 1: reference 0 -> absolute 0.25.
  EXPECT_NEAR(max_relative_error(y, ref, 2), 0.25, 1e-12);
  EXPECT_NEAR(max_relative_error({3, 4.5f}, {3, 4}, 2), 0.1, 1e-12);
  EXPECT_TRUE(std::isnan(max_relative_error({NAN, 0}, {1, 0}, 2)));
  EXPECT_THROW(max_relative_error({1}, {1, 2}, 1), ArgumentError);
}

}  // namespace
}  // namespace zepp::mpi
