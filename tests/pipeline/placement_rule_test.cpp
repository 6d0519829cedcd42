// Zepp's placement-rule ablation (`zepp/eplb-placement`, issue 24): everything Zepp's but the
// placement, which is DeepSeek EPLB's with the same extra slots.
#include <gtest/gtest.h>

#include "../common/synthetic_layer.hpp"
#include "pipeline/strategy.hpp"

namespace zepp {
namespace {

TEST(PlacementRule, EplbPlacementVariantTakesEplbsPlacementAndKeepsZeppsRouting) {
  const test::SyntheticLayer l = test::synthetic_layer("kimi-k2", "a100", 2, 0.25);
  const ModelShape& m = l.model;
  const Topology& t = l.topo;
  const Workload& w = l.workload;
  StrategyOptions zepp_rule, eplb_rule;
  eplb_rule.zepp_placement_rule = false;  // what the sweep's zepp/eplb-placement sets
  const StrategyDecision ours = find_strategy("zepp").decide(StrategyInput{w, m, t, zepp_rule});
  const StrategyDecision ablated = find_strategy("zepp").decide(StrategyInput{w, m, t, eplb_rule});
  const StrategyDecision eplb = find_strategy("eplb").decide(StrategyInput{w, m, t, zepp_rule});
  EXPECT_EQ(ablated.placement.phy2log, eplb.placement.phy2log);  // EPLB's rule, same slots
  EXPECT_NE(ablated.placement.phy2log, ours.placement.phy2log);  // on this skew the rules differ
  EXPECT_TRUE(ablated.locality_routing);                          // routed and planned as Zepp
  EXPECT_FALSE(eplb.locality_routing);
}

}  // namespace
}  // namespace zepp
