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

}  // namespace
}  // namespace zepp
