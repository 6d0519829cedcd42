// End to end on a real trace (Mixtral-8x7B on GSM8K, shared/data/traces): one layer's tokens
// dealt round-robin over 2 nodes x 4 GPUs (a100 preset), plans for every option combination checked, then
// simulated; inter-node bytes are recounted independently from the batch.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "../common/plan_check.hpp"
#include "core/presets.hpp"
#include "exec/sim.hpp"
#include "placement/placement.hpp"
#include "routing/routing.hpp"
#include "trace/trace.hpp"

namespace zepp {
namespace {

TEST(SimOnRealTrace, MixtralLayerAllOptionCombinations) {
  const std::string path = std::string(ZEPP_SHARED_DIR) + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "real traces not found at " << path;
  const Trace trace = read_trace(path);
  const ModelShape model = model_preset("mixtral-8x7b");
  const Topology topo = topology_preset("a100", 2);
  const LayerTrace& lt = trace.layers.begin()->second;
  ASSERT_EQ(lt.top_k, 2);

  // Token t goes to GPU t % 8; gate weights from the trace.
  const int gpus = topo.num_gpus(), G = topo.gpus_per_node;
  RoutingBatch batch;
  batch.num_gpus = gpus;
  batch.num_experts = model.num_experts;
  batch.top_k = 2;
  batch.token_offset.push_back(0);
  for (int g = 0; g < gpus; ++g) {
    for (int64_t t = g; t < lt.num_tokens(); t += gpus)
      for (int k = 0; k < 2; ++k) {
        batch.expert_ids.push_back(lt.expert_ids[t * 2 + k]);
        batch.gate_weights.push_back(lt.gate_weights.empty() ? 0.5f : lt.gate_weights[t * 2 + k]);
      }
    batch.token_offset.push_back(int64_t(batch.expert_ids.size()) / 2);
  }
  const Placement placement = place_contiguous(model.num_experts, topo);  // expert g on GPU g
  const Routing routing = route_even(batch, placement);

  // Independent count: remote pairs, and distinct (token, remote node) pairs.
  int64_t remote_pairs = 0;
  std::set<std::pair<int64_t, int>> remote_nodes;
  for (int g = 0; g < gpus; ++g)
    for (int64_t t = batch.token_offset[g]; t < batch.token_offset[g + 1]; ++t)
      for (int k = 0; k < 2; ++k) {
        const int node = placement.gpu_of_slot(routing.slot_of_pair[t * 2 + k]) / G;
        if (node != g / G) {
          ++remote_pairs;
          remote_nodes.insert({t, node});
        }
      }
  ASSERT_GT(remote_pairs, int64_t(remote_nodes.size()));  // some tokens have both experts remote

  for (int combo = 0; combo < 8; ++combo) {
    const PlanOptions opt{bool(combo & 1), bool(combo & 2), bool(combo & 4), 0.0};
    SCOPED_TRACE("split/merge/overlap = " + std::to_string(combo));
    const CommPlan plan = build_comm_plan(batch, placement, routing, topo, model, opt);
    EXPECT_EQ(test::check_plan(plan, batch, placement, routing), "");
    const LayerResult r = simulate_plan(plan, topo);
    const int64_t rows = opt.merge ? int64_t(remote_nodes.size()) : remote_pairs;
    EXPECT_EQ(r.inter_node_bytes, 2.0 * double(rows) * model.token_bytes());  // dispatch + combine
    // The layer lasts at least as long as its busiest NIC needs for its bytes and its busiest
    // GPU computes (both are work done, not timings).
    EXPECT_GE(r.latency_s * (1 + 1e-9), r.max_nic_bytes / topo.nic_bw);
    int64_t computed = 0;
    for (const GpuStats& g : r.gpus) EXPECT_GE(r.latency_s * (1 + 1e-9), g.compute_s);
    for (const GpuStats& g : r.gpus) computed += g.tokens_computed;
    EXPECT_EQ(computed, batch.num_tokens() * 2);
  }
}

}  // namespace
}  // namespace zepp
