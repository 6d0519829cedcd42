// A random small MoE layer (cluster, placement with replicas, batch, routing) for property
// tests of plans and executors.
#pragma once
#include <rapidcheck.h>

#include <algorithm>
#include <numeric>

#include "fixture.hpp"
#include "plan/comm_plan.hpp"

namespace zepp::test {

struct RandomCase {
  Topology topo;
  ModelShape model;
  Placement placement;
  RoutingBatch batch;
  Routing routing;
  PlanOptions options;
  std::vector<WeightMove> moves;
};

inline RandomCase random_case(int max_nodes = 3, int max_gpus = 3, int max_tokens = 5) {
  RandomCase c;
  c.topo = small_topology(*rc::gen::inRange(1, max_nodes + 1), *rc::gen::inRange(1, max_gpus + 1));
  const int gpus = c.topo.num_gpus();
  const int slots = *rc::gen::inRange(1, 4);
  const int experts = *rc::gen::inRange(1, gpus * slots + 1);
  c.placement.num_gpus = gpus;
  c.placement.num_experts = experts;
  c.placement.slots_per_gpu = slots;
  // Every expert once, the remaining slots random replicas, all shuffled over the slots.
  std::vector<int32_t> phy(gpus * slots);
  for (int s = 0; s < gpus * slots; ++s) phy[s] = s < experts ? s : *rc::gen::inRange(0, experts);
  c.placement.phy2log.resize(phy.size());
  const auto order = *rc::gen::unique<std::vector<int>>(size_t(gpus * slots), rc::gen::inRange(0, gpus * slots));
  for (int s = 0; s < gpus * slots; ++s) c.placement.phy2log[s] = phy[order[s]];

  const int top_k = *rc::gen::inRange(1, std::min(experts, 4) + 1);
  c.model = small_model(experts, top_k);
  std::vector<std::vector<std::vector<int>>> per_gpu(gpus);
  for (auto& tokens : per_gpu) {
    const int n = *rc::gen::inRange(0, max_tokens + 1);
    for (int t = 0; t < n; ++t)
      tokens.push_back(*rc::gen::unique<std::vector<int>>(size_t(top_k), rc::gen::inRange(0, experts)));
  }
  c.batch = make_batch(experts, top_k, per_gpu);
  const auto reps = c.placement.replicas();
  for (int32_t e : c.batch.expert_ids)
    c.routing.slot_of_pair.push_back(reps[e][*rc::gen::inRange<size_t>(0, reps[e].size())]);

  c.options.split = *rc::gen::arbitrary<bool>();
  c.options.merge = *rc::gen::arbitrary<bool>();
  c.options.overlap = *rc::gen::arbitrary<bool>();
  c.options.nic_slack = *rc::gen::element(0.0, 0.5);
  c.options.combine_waves = *rc::gen::element(1, 1, 2, 4, 16);
  c.options.combine_after_dispatch = *rc::gen::arbitrary<bool>();
  c.options.dispatch_chunks = *rc::gen::element(1, 1, 2, 16);
  if (gpus > 1)
    for (int s = 0; s < gpus * slots; ++s)
      if (*rc::gen::inRange(0, 4) == 0) {
        const int dst = s / slots;
        c.moves.push_back({s, (dst + *rc::gen::inRange(1, gpus)) % gpus});
      }
  return c;
}

}  // namespace zepp::test
