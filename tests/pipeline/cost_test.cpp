// The placement cost estimate against hand-computed sizes: the maps a skewed load makes.
#include <gtest/gtest.h>

#include "pipeline/cost.hpp"

namespace zepp {
namespace {

// 4 experts in 4 M slots: one expert may hold all but 3 slots, so log2phy is padded to
// 4,000,000 - 3 entries per expert (int64 each), and `zepp place` prints every entry of phy2log,
// log2phy and logcnt (24 B each). It took 605 MB where the old estimate, which took log2phy's
// width as at most E + 1 and left the printed JSON out, said about 104 MB.
TEST(Cost, PlacementCountsLog2phyAtItsWidestAndThePrintedMaps) {
  const double width = 4e6 - 4 + 1;
  const CostEstimate c = estimate_placement_cost(1, 4, 4e6, 4, false);
  const CostEstimate base = estimate_placement_cost(1, 4, 4, 4, false);  // width 1: one slot each
  EXPECT_DOUBLE_EQ(c.bytes - base.bytes, 16 * (4e6 - 4) + 8 * 4 * (width - 1));
  EXPECT_DOUBLE_EQ(placement_json_bytes(1, 4, 4e6), 24 * (4e6 + 4 * width + 4));
  EXPECT_DOUBLE_EQ(placement_json_bytes(3, 4, 4e6), 3 * placement_json_bytes(1, 4, 4e6));
  EXPECT_GT(c.bytes + placement_json_bytes(1, 4, 4e6), 605e6);
  // The common shape: 256 experts in 288 slots, a row of at most 33.
  EXPECT_DOUBLE_EQ(placement_json_bytes(1, 256, 288), 24 * (288 + 256 * 33 + 256));
}

// Both placements scan the GPUs for every slot: `zepp place --nodes 4096 --gpus-per-node 8` (8
// experts, 3 slots per GPU) was estimated at under a second per layer and ran for minutes a layer.
TEST(Cost, PlacementTimeGrowsWithSlotsTimesGpus) {
  const double G = 32768, slots = 3 * G;
  const double base = (slots + G) * 7e-7;
  EXPECT_DOUBLE_EQ(estimate_placement_cost(1, 8, slots, G, true).seconds, 8 * 8 * 4e-8 + base + slots * G * 1.5e-8);
  EXPECT_DOUBLE_EQ(estimate_placement_cost(1, 8, slots, G, false).seconds, base + slots * G * 2e-9);
  EXPECT_GT(estimate_placement_cost(2, 8, slots, G, true).seconds, 60);  // two layers: over the 60 s budget
}

}  // namespace
}  // namespace zepp
