// Greedy vs exact optimum of equation (1) on real routing traces (shared/data/traces), at
// 4 nodes x 4 GPUs (a100), place_zepp with R = 2 extra slots per GPU from the history half of
// the requests, C = 0.1, 1 MiB of activations per GPU, several MoE layers.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"
#include "routing/router.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"
#include "helpers.hpp"

namespace zepp {
namespace {

struct Gap {
  double worst = 0;  // -1: trace folder absent
};

// Largest relative gap (greedy / optimum - 1) over `layers`, also checking each plan's invariants.
Gap measure(const std::string& folder, const std::string& model_name, const std::vector<int>& layers) {
  const std::string path = std::string(ZEPP_SHARED_DIR) + "/data/traces/" + folder;
  if (!std::filesystem::exists(path)) return {-1};
  const Trace trace = read_trace(path);
  const ModelShape model = model_preset(model_name);
  const Topology topo = topology_preset("a100", 4);
  Gap g;
  for (int layer : layers) {
    WorkloadOptions opt;
    opt.layer = layer;
    const Workload w = build_workload(&trace, model, topo, opt);
    const Placement p = place_zepp(w.history_load, topo, 2);
    const Routing r = route_locality(w.batch, p, topo, 0.1);
    EXPECT_EQ(test::tally(w.batch, r.slot_of_pair), test::as_map(r.counts)) << folder << " layer " << layer;
    const ReplicaBounds b = replica_bounds(w.batch.demand(), p, 0.1);
    const std::vector<int64_t> load = test::slot_loads(r.counts, p);
    for (int s = 0; s < p.num_slots(); ++s) {
      EXPECT_GE(load[s], b.lower[s]);
      EXPECT_LE(load[s], b.upper[s]);
    }
    const double greedy = routing_cost(r, p, topo, model.token_bytes());
    const double optimum = routing_cost_optimal(w.batch, p, topo, 0.1, model.token_bytes());
    EXPECT_LE(optimum, greedy * (1 + 1e-12));
    EXPECT_GT(optimum, 0);
    g.worst = std::max(g.worst, greedy / optimum - 1);
    std::cout << folder << " layer " << layer << ": greedy " << greedy * 1e6 << " us, optimum " << optimum * 1e6
              << " us, gap " << 100 * (greedy / optimum - 1) << " %\n";
  }
  return g;
}

TEST(RoutingTraces, DeepSeekV2LiteGreedyNearOptimum) {
  const Gap g = measure("deepseek-v2-lite-puffin", "deepseek-v2-lite", {1, 13, 26});
  if (g.worst < 0) GTEST_SKIP() << "shared/data/traces/deepseek-v2-lite-puffin is absent";
  // Measured (seed 1): gap 0 on layers 1, 5, 9, 13, 17, 21, 26 -- the greedy found the optimum
  // every time. Bound 1 %, a margin for changes in workload sampling and placement.
  EXPECT_LE(g.worst, 0.01);
}

TEST(RoutingTraces, Llama4MaverickGreedyNearOptimum) {
  const Gap g = measure("llama4-maverick-mmlu", "llama4-maverick", {1, 25, 37, 47});
  if (g.worst < 0) GTEST_SKIP() << "shared/data/traces/llama4-maverick-mmlu is absent";
  // Measured (seed 1): gap 0 on layers 1, 13, 25, 47 and 0.07 % on layer 37 (436.43 vs
  // 436.12 us). Bound 1 %, a margin for changes in workload sampling and placement.
  EXPECT_LE(g.worst, 0.01);
}

}  // namespace
}  // namespace zepp

namespace zepp {
namespace {

// Per-rank planning (router.hpp) on real traces: every rank counts its own tokens, plans from
// the all-gathered counts and routes its own tokens; concatenated, the slots are
// route_locality's on the whole batch. Returns false when the trace folder is absent.
bool ranks_equal_global(const std::string& folder, const std::string& model_name, int nodes,
                        const std::vector<int>& layers) {
  const std::string path = std::string(ZEPP_SHARED_DIR) + "/data/traces/" + folder;
  if (!std::filesystem::exists(path)) return false;
  const Trace trace = read_trace(path);
  const ModelShape model = model_preset(model_name);
  const Topology topo = topology_preset("a100", nodes);
  for (int layer : layers) {
    WorkloadOptions opt;
    opt.layer = layer;
    const Workload w = build_workload(&trace, model, topo, opt);
    const Placement p = place_zepp(w.history_load, topo, 2);
    const Routing global = route_locality(w.batch, p, topo, 0.1);
    const RoutingBatch& b = w.batch;
    const int G = b.num_gpus, E = b.num_experts, k = b.top_k;
    Router router(p, topo, 0.1);
    std::vector<int64_t> counts(size_t(G) * E), m(size_t(p.num_slots()) * G);
    for (int i = 0; i < G; ++i)
      router.count_rank(&b.expert_ids[b.token_offset[i] * k], b.token_offset[i + 1] - b.token_offset[i], k,
                        std::span<int64_t>(counts).subspan(size_t(i) * E, E));
    router.plan(counts, m);
    std::vector<int32_t> slots(b.expert_ids.size());
    for (int i = 0; i < G; ++i)
      router.route_rank(&b.expert_ids[b.token_offset[i] * k], b.token_offset[i + 1] - b.token_offset[i], k, i, m,
                        &slots[b.token_offset[i] * k]);
    EXPECT_EQ(slots, global.slot_of_pair) << folder << " layer " << layer;
    std::vector<RouteCount> sparse;
    router.to_counts(m, sparse);
    EXPECT_EQ(test::as_map(sparse), test::as_map(global.counts)) << folder << " layer " << layer;
  }
  return true;
}

TEST(RoutingTraces, PerRankPlanningEqualsGlobalRouting) {
  bool any = false;
  any |= ranks_equal_global("deepseek-v2-lite-puffin", "deepseek-v2-lite", 4, {1, 13, 26});
  any |= ranks_equal_global("llama4-maverick-mmlu", "llama4-maverick", 4, {1, 37});
  if (!any) GTEST_SKIP() << "shared/data/traces has neither deepseek-v2-lite-puffin nor llama4-maverick-mmlu";
}

}  // namespace
}  // namespace zepp
