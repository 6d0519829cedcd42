// Zepp's placement-rule ablation (`zepp/eplb-placement`, issue 24): everything Zepp's but the
// placement, which is DeepSeek EPLB's with the same extra slots.
#include <gtest/gtest.h>

#include "core/presets.hpp"
#include "pipeline/strategy.hpp"
#include "workload/workload.hpp"

namespace zepp {
namespace {

TEST(PlacementRule, EplbPlacementVariantTakesEplbsPlacementAndKeepsZeppsRouting) {
  const ModelShape m = model_preset("kimi-k2");
  const Topology t = topology_preset("a100", 2);
  WorkloadOptions wo;
  wo.size_mb = 0.25;
  const Workload w = build_workload(nullptr, m, t, wo);
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
