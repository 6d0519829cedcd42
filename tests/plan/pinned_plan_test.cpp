// The builder's output pinned: a hash of every plan field (tasks in order, each one's kind,
// GPUs, link, hop, round, slot, expert, node, bytes, seconds, priority, rows, pairs,
// dependencies and multicast members) on seven layers and option sets, so that work on the
// builder's speed (issue 21) cannot change a plan unseen. The expected hashes were computed by the
// builder of commit 7a7e0d3, before that work; the layers are made here from a fixed generator
// (no placement or routing code, whose own changes would move them), on a cluster with A100-like
// figures so that waves, dispatch chunks and local-first groups occur. Options are written out
// (not zepp_plan_options) and leave out combine_after_dispatch, whose rule is still changing
// (plan/nic_order.cpp). A change that moves a plan on purpose updates these hashes and says why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "plan/comm_plan.hpp"

namespace zepp {
namespace {

// splitmix64: fixed output on every platform (unlike std's distributions).
struct Gen {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int below(int n) { return int(next() % uint64_t(n)); }
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
};

struct Layer {
  Topology topo;
  ModelShape model;
  Placement placement;
  RoutingBatch batch;
  Routing routing;
};

// N x G GPUs, E experts (top-k, skewed popularity), slots_per_gpu slots per GPU: every expert
// once, the rest replicas of the hottest, all shuffled; a pair goes to a replica on its token's
// node with probability 0.7 when there is one, else to any replica.
Layer make_layer(int nodes, int gpus_per_node, int experts, int top_k, int slots_per_gpu, int tokens_per_gpu,
                 uint64_t seed) {
  Gen gen{seed};
  Layer l;
  l.topo.name = "a100-like";
  l.topo.nodes = nodes;
  l.topo.gpus_per_node = gpus_per_node;
  l.topo.nvlink_bw = 300e9, l.topo.nvlink_latency = 1e-6;
  l.topo.nic_bw = 25e9, l.topo.nic_latency = 3e-6;
  l.topo.compute = {312e12, 2.0e12, 5e-6};
  l.model.name = "test";
  l.model.num_experts = experts, l.model.top_k = top_k;
  l.model.hidden = 4096, l.model.ffn = 1536;
  const int gpus = nodes * gpus_per_node, slots = gpus * slots_per_gpu;
  l.placement.num_gpus = gpus, l.placement.num_experts = experts, l.placement.slots_per_gpu = slots_per_gpu;
  for (int s = 0; s < slots; ++s) l.placement.phy2log.push_back(s < experts ? s : (s - experts) % std::max(1, experts / 4));
  for (int s = slots - 1; s > 0; --s) std::swap(l.placement.phy2log[size_t(s)], l.placement.phy2log[size_t(gen.below(s + 1))]);
  l.batch.num_gpus = gpus, l.batch.num_experts = experts, l.batch.top_k = top_k;
  l.batch.token_offset.push_back(0);
  const auto replicas = l.placement.replicas();
  for (int g = 0; g < gpus; ++g) {
    for (int t = 0; t < tokens_per_gpu; ++t) {
      std::vector<int32_t> chosen;
      while (int(chosen.size()) < top_k) {
        const double u = gen.unit();
        const auto e = int32_t(double(experts) * u * u);  // low ids are hot
        if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
      }
      for (int32_t e : chosen) {
        l.batch.expert_ids.push_back(e);
        l.batch.gate_weights.push_back(1.0f / float(top_k));
        std::vector<int32_t> near;
        for (int32_t s : replicas[size_t(e)])
          if (s / slots_per_gpu / gpus_per_node == g / gpus_per_node) near.push_back(s);
        const auto& from = !near.empty() && gen.unit() < 0.7 ? near : replicas[size_t(e)];
        l.routing.slot_of_pair.push_back(from[size_t(gen.below(int(from.size())))]);
      }
    }
    l.batch.token_offset.push_back(l.batch.token_offset.back() + tokens_per_gpu);
  }
  return l;
}

// FNV-1a over every field of every task and its lists.
uint64_t plan_hash(const CommPlan& p) {
  uint64_t h = 1469598103934665603ull;
  auto add = [&](const void* data, size_t n) {
    const auto* c = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  };
  auto value = [&](auto x) { add(&x, sizeof x); };
  for (const Task& t : p.tasks) {
    value(t.kind), value(t.phase), value(t.gpu), value(t.dst_gpu), value(t.link), value(t.hop), value(t.round);
    value(t.slot), value(t.expert), value(t.node), value(t.bytes), value(t.seconds), value(t.priority);
    for (const auto list : {p.tokens(t), p.pair_begin(t), p.pairs(t), p.deps(t), p.multicast(t)}) {
      value(uint64_t(list.size()));
      add(list.data(), list.size() * sizeof(int32_t));
    }
  }
  return h;
}

PlanOptions zepp_like() {  // Zepp's options (pipeline/strategies.cpp) without combine_after_dispatch
  PlanOptions o{true, true, true, 0.0};
  o.split_if_it_pays = true, o.local_first = true, o.combine_waves = 16, o.dispatch_chunks = 16;
  return o;
}

struct Case {
  const char* name;
  uint64_t hash;
  size_t tasks;
};

void expect_pinned(const Layer& l, const PlanOptions& o, const Case& want, const std::vector<WeightMove>& moves = {}) {
  const CommPlan plan = build_comm_plan(l.batch, l.placement, l.routing, l.topo, l.model, o, moves);
  EXPECT_EQ(plan.tasks.size(), want.tasks) << want.name;
  EXPECT_EQ(plan_hash(plan), want.hash) << want.name << ": 0x" << std::hex << plan_hash(plan);
  // A reused builder and plan (a serving loop's) give the same plan, here after another build.
  CommPlanBuilder builder;
  CommPlan reused;
  builder.build(reused, l.batch, l.placement, l.routing, l.topo, l.model, PlanOptions{false, false, false, 0.0});
  builder.build(reused, l.batch, l.placement, l.routing, l.topo, l.model, o, moves);
  EXPECT_EQ(plan_hash(reused), want.hash) << want.name << " (reused builder)";
}

TEST(PinnedPlan, FourNodesOfFourGpus) {
  const Layer l = make_layer(4, 4, 64, 8, 5, 256, 21);
  expect_pinned(l, PlanOptions{false, false, false, 0.0}, {"all-to-allv", 0x76840ad64ff61791, 864});
  expect_pinned(l, PlanOptions{true, true, true, 0.0}, {"split, merge, overlap", 0x21109f7b20a187d5, 860});
  expect_pinned(l, zepp_like(), {"Zepp's options", 0x8383dc790a03fa0b, 3481});
  PlanOptions o{true, true, true, 0.5};
  o.pre_reduce = false, o.round_order = true, o.round_order_combine = false, o.dispatch_chunks = 4;
  expect_pinned(l, o, {"no pre-reduction, LEMON split, round order, weight moves", 0xf3f8033b736f247f, 1429},
                {{3, 7}, {41, 0}});
  expect_pinned(l, PlanOptions{true, true, false, 0.0}, {"no overlap (barriers)", 0x1a1ac13730358d95, 846});
}

TEST(PinnedPlan, SharedExpertWindow) {
  Layer l = make_layer(2, 4, 16, 4, 3, 128, 7);
  l.model.shared_experts = 1;
  PlanOptions o = zepp_like();
  o.shared_expert_window = true, o.round_order = true;
  expect_pinned(l, o, {"shared-expert window, round order", 0xf9d5d958512255f9, 515});
}

TEST(PinnedPlan, SixtySixNodes) {  // local-first counts rows of nodes >= 64 per pair
  const Layer l = make_layer(66, 2, 96, 4, 1, 24, 66);
  expect_pinned(l, zepp_like(), {"Zepp's options", 0x5b54c4e3e7a55477, 35812});
}

}  // namespace
}  // namespace zepp
