// Zepp's placements pinned on fixed inputs (issue 21 item 4): place_zepp and rebalance_zepp must
// decide exactly as the rule did when the digests below were taken, so work on how fast they
// decide cannot change what they decide. Each case hashes (FNV-1a) every layer's phy2log, the
// survivors, the move report, the imbalances' bits and used_fresh.
//
// When the rule changes on purpose (src/placement: what it decides), take the new digests from
// the failure messages on the commit that changes the rule, before any speed change lands on
// top, and say so in that commit.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../common/loads.hpp"
#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "placement/rebalance.hpp"

namespace {

using zepp::test::drift;
using zepp::test::power_law;

struct Digest {
  uint64_t h = 1469598103934665603ull;
  void add(uint64_t v) {
    for (int k = 0; k < 8; ++k, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  }
  void add(double v) { add(std::bit_cast<uint64_t>(v)); }
  template <class T>
  void add_all(const std::vector<T>& xs) {
    add(uint64_t(xs.size()));
    for (T x : xs) add(uint64_t(int64_t(x)));
  }
};

zepp::Topology topo(int nodes, int gpus_per_node) {
  zepp::Topology t = zepp::topology_preset("h100", nodes);  // NIC move = 6 NVLink moves
  t.gpus_per_node = gpus_per_node;
  return t;
}

// Loads of layer l: power laws of several exponents, then loads with many ties (small integer
// counts, zeros included), which exercise every tie rule.
std::vector<double> layer_load(int E, int l) {
  if (l % 4 == 3) {
    std::vector<double> load(E);
    for (int e = 0; e < E; ++e) load[e] = double((e * 7 + l) % 5) * ((e % 11 == 0) ? 40 : 1);
    return load;
  }
  return power_law(E, 0.5 + 0.5 * (l % 4), 100 + unsigned(l));
}

struct Shape {
  int nodes, gpus_per_node, experts, extra_slots;
};
const Shape kShapes[] = {{4, 8, 256, 1}, {16, 4, 384, 2}, {2, 4, 64, 3}, {1, 8, 128, 3}, {8, 8, 256, 1}};
constexpr int kLayers = 8;

uint64_t fresh_digest(const Shape& s) {
  Digest d;
  for (int l = 0; l < kLayers; ++l)
    d.add_all(zepp::place_zepp(layer_load(s.experts, l), topo(s.nodes, s.gpus_per_node), s.extra_slots).phy2log);
  return d.h;
}

// Rebalanced from the placement of loads drifted by up to +-30%, under `opt` (previous filled in;
// lose_last_node: as many of the last node's GPUs fail as leave a slot for every expert).
uint64_t rebalance_digest(const Shape& s, zepp::RebalanceOptions opt, bool lose_last_node) {
  const zepp::Topology t = topo(s.nodes, s.gpus_per_node);
  const int G = t.num_gpus(), S = (s.experts + G - 1) / G + s.extra_slots;
  for (int g = G - 1; lose_last_node && g >= G - s.gpus_per_node && (G - g) * S <= G * S - s.experts; --g)
    opt.failed_gpus.push_back(g);
  Digest d;
  for (int l = 0; l < kLayers; ++l) {
    const std::vector<double> load = layer_load(s.experts, l);
    opt.previous = zepp::place_zepp(drift(load, 0.3, 7 + unsigned(l)), t, s.extra_slots).phy2log;
    const zepp::Rebalanced r = zepp::rebalance_zepp(load, t, S, opt);
    d.add_all(r.placement.phy2log);
    d.add_all(r.survivors);
    const zepp::MoveReport& m = r.moves;
    d.add_all(std::vector<int>{m.slots_changed, m.local, m.nvlink, m.nic, int(r.used_fresh)});
    d.add(m.nvlink_bytes), d.add(m.nic_bytes), d.add(r.imbalance), d.add(r.fresh_imbalance);
  }
  return d.h;
}

const double kExpertBytes = 3.0 * 7168 * 2048 * 2;  // one DeepSeek-V3 expert in BF16

}  // namespace

TEST(PinnedPlacement, FreshPlacementsUnchanged) {
  const uint64_t expected[] = {5260736954707687475ull, 3367394878009730785ull, 11941445695149178606ull,
                               4797869308591647270ull, 17349968276085486835ull};
  for (size_t i = 0; i < std::size(kShapes); ++i) EXPECT_EQ(fresh_digest(kShapes[i]), expected[i]) << "shape " << i;
}

TEST(PinnedPlacement, RebalancedPlacementsUnchanged) {
  zepp::RebalanceOptions sized, budget, failed_gpu, tight;
  sized.expert_bytes = budget.expert_bytes = kExpertBytes;
  budget.max_moved_bytes = 3 * kExpertBytes;
  failed_gpu.failed_gpus = {5};
  tight.balance_tolerance = 0;
  const zepp::RebalanceOptions opts[] = {{}, sized, budget, failed_gpu, {}, tight};
  const uint64_t expected[][6] = {{4504989660559599165ull, 1468488217473753038ull, 4359210404893454979ull,
                                   14662140951753177062ull, 5593330672475961825ull, 12330310369424735836ull},
                                  {3581967549486778507ull, 3054504822468471007ull, 16333325264124333835ull,
                                   2278419877987741202ull, 4295633664532590109ull, 9890214196980532609ull},
                                  {8971826867733316457ull, 11433459155345319304ull, 8928720241818663936ull,
                                   537414290426763518ull, 7886060327759701225ull, 12007156741042939342ull},
                                  {4787486305670484429ull, 6499245099996788794ull, 13354817871234937099ull,
                                   11052395681022594476ull, 14550194908806969798ull, 9609992870388937978ull},
                                  {12269161551090740811ull, 2371562895382091298ull, 1744602903327999733ull,
                                   7379485220315266364ull, 15604300513896417936ull, 3372189881390796648ull}};
  for (size_t i = 0; i < std::size(kShapes); ++i)
    for (size_t k = 0; k < std::size(opts); ++k)
      EXPECT_EQ(rebalance_digest(kShapes[i], opts[k], k == 4), expected[i][k]) << "shape " << i << ", options " << k;
}
