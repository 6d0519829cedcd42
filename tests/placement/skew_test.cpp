// Placement quality under skew (issue 11): Zepp's expected imbalance against the lower bound
// max(mean, max_e load_e / copies_e) and a plain LPT reference packing computed here, independently
// of src/placement.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "../common/loads.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"

namespace {

using zepp::test::power_law;

zepp::Topology topo(int nodes, int gpus_per_node) {
  zepp::Topology t;
  t.nodes = nodes;
  t.gpus_per_node = gpus_per_node;
  return t;
}

double hottest_share(const std::vector<double>& load) {
  return *std::max_element(load.begin(), load.end()) / std::accumulate(load.begin(), load.end(), 0.0);
}

// Water-filling counts, written out plainly: each extra slot to the highest load per replica.
std::vector<int> counts(const std::vector<double>& load, int slots, int cap) {
  std::vector<int> c(load.size(), 1);
  for (int s = int(load.size()); s < slots; ++s) {
    int best = -1;
    for (size_t e = 0; e < load.size(); ++e)
      if (c[e] < cap && (best < 0 || load[e] / c[e] > load[best] / c[best])) best = int(e);
    ++c[best];
  }
  return c;
}

struct Reference {
  double lower_bound = 0;  // max(mean, max_e load_e / c_e), as max / mean
  double lpt = std::numeric_limits<double>::infinity();  // plain LPT's max / mean (inf: stuck)
};

// The bound and a plain LPT: replicas by load per replica descending, each onto the least-loaded
// GPU with a free slot not holding the expert.
Reference reference(const std::vector<double>& load, int G, int S) {
  const std::vector<int> c = counts(load, G * S, G);
  const double total = std::accumulate(load.begin(), load.end(), 0.0);
  if (total == 0) return {1, 1};
  const double mean = total / G;
  Reference r;
  double per_replica = 0;
  std::vector<std::pair<double, int>> items;
  for (size_t e = 0; e < load.size(); ++e) {
    per_replica = std::max(per_replica, load[e] / c[e]);
    for (int k = 0; k < c[e]; ++k) items.push_back({load[e] / c[e], int(e)});
  }
  r.lower_bound = std::max(mean, per_replica) / mean;
  std::stable_sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<double> gpu(G, 0);
  std::vector<std::set<int>> held(G);
  for (auto [w, e] : items) {
    int best = -1;
    for (int g = 0; g < G; ++g)
      if (int(held[g].size()) < S && !held[g].count(e) && (best < 0 || gpu[g] < gpu[best])) best = g;
    if (best < 0) return r;  // the plain greedy got stuck: no reference
    gpu[best] += w;
    held[best].insert(e);
  }
  r.lpt = *std::max_element(gpu.begin(), gpu.end()) / mean;
  return r;
}

// The issue's structural guarantees: S slots per GPU, one copy per GPU, every expert served.
void expect_valid(const zepp::Placement& p, int G, int S) {
  ASSERT_EQ(p.num_gpus, G);
  ASSERT_EQ(p.slots_per_gpu, S);
  p.validate("placement");
  for (int g = 0; g < G; ++g) {
    std::set<int> seen(p.phy2log.begin() + g * S, p.phy2log.begin() + (g + 1) * S);
    EXPECT_EQ(int(seen.size()), S) << "GPU " << g << " holds an expert twice";
  }
}

// The two inputs of issue 11: 256 experts, 288 slots (S = 9), 32 GPUs on 4 nodes, power-law
// loads with exponent 1.5 (hottest ~40% of the load) and one expert at 82%. Zepp's §4.1 two-level
// placement gave 1.212 and 1.622 there, against 1.005 and 1.001 for plain LPT.
TEST(SkewedPlacement, IssueInputsWithinOnePercentOfLpt) {
  const zepp::Topology t = topo(4, 8);
  std::vector<double> strong = power_law(256, 1.5, 11);
  EXPECT_NEAR(hottest_share(strong), 0.40, 0.01);
  // The exponent putting 82% of the load on the hottest expert, by bisection.
  double lo = 1.5, hi = 6;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (hottest_share(power_law(256, mid, 11)) < 0.82 ? lo : hi) = mid;
  }
  std::vector<double> one_hot = power_law(256, lo, 11);
  EXPECT_NEAR(hottest_share(one_hot), 0.82, 1e-6);
  for (const auto* load : {&strong, &one_hot}) {
    const zepp::Placement p = zepp::place_zepp(*load, t, 1);
    expect_valid(p, 32, 9);
    const Reference ref = reference(*load, 32, 9);
    ASSERT_TRUE(std::isfinite(ref.lpt));
    const double got = zepp::expected_imbalance(p, *load);
    EXPECT_GE(got, ref.lower_bound * (1 - 1e-9));
    EXPECT_LE(got, 1.01 * std::max(ref.lower_bound, ref.lpt))
        << "bound " << ref.lower_bound << " lpt " << ref.lpt << " zepp " << got;
    // Node spreading stays: the hottest expert has a replica on every node.
    const auto reps = p.replicas();
    const int hot = int(std::max_element(load->begin(), load->end()) - load->begin());
    std::set<int> nodes;
    for (int s : reps[hot]) nodes.insert(t.node_of(p.gpu_of_slot(s)));
    EXPECT_EQ(nodes.size(), 4u);
  }
}

// Skews of every kind at several sizes: power laws with exponents 0-2, one hot expert, all
// equal, many zeros.
RC_GTEST_PROP(SkewedPlacement, WithinOnePercentOfLptAndAboveTheBound, ()) {
  const int N = *rc::gen::inRange(1, 5), gpn = *rc::gen::element(1, 2, 4, 8), G = N * gpn;
  const int E = *rc::gen::element(8, 16, 32, 64, 128, 256);
  const int R = *rc::gen::inRange(0, 4), S = (E + G - 1) / G + R;
  RC_PRE(S <= E);
  const int kind = *rc::gen::inRange(0, 4);
  const unsigned seed = *rc::gen::arbitrary<unsigned>();
  std::vector<double> load;
  if (kind == 0) {
    load = power_law(E, *rc::gen::inRange(0, 201) / 100.0, seed);
  } else if (kind == 1) {
    load.assign(E, 1.0);
    load[seed % E] = 1000.0 * E;
  } else if (kind == 2) {
    load.assign(E, 7.0);
  } else {
    load = power_law(E, 1.0, seed);
    std::mt19937 rng(seed);
    for (double& v : load)
      if (rng() % 4 != 0) v = 0;  // three in four experts idle
  }
  RC_TAG(kind);
  const zepp::Placement p = zepp::place_zepp(load, topo(N, gpn), R);
  RC_ASSERT(p.num_slots() == G * S);
  p.validate("placement");
  for (int g = 0; g < G; ++g)
    RC_ASSERT(std::set<int>(p.phy2log.begin() + g * S, p.phy2log.begin() + (g + 1) * S).size() == size_t(S));
  const Reference ref = reference(load, G, S);
  const double got = zepp::expected_imbalance(p, load);
  RC_ASSERT(got >= ref.lower_bound * (1 - 1e-9));
  if (std::isfinite(ref.lpt)) RC_ASSERT(got <= 1.01 * std::max(ref.lower_bound, ref.lpt));
}

}  // namespace
