// The fast paths (Router, router.hpp, and the routing.hpp wrappers over it) against the plain
// implementation of the same rules in reference.hpp: exactly equal counts and slots on random
// inputs (up to 80 nodes, so the pair level's node masks wrap) and on real traces; every thread
// count, token order and entry point gives the same result.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <tuple>

#include "core/presets.hpp"
#include "placement/placement.hpp"
#include "routing/router.hpp"
#include "routing/routing.hpp"
#include "trace/trace.hpp"
#include "workload/workload.hpp"
#include "helpers.hpp"
#include "reference.hpp"

namespace zepp {
namespace {

struct Case {
  Topology topo;
  Placement placement;
  RoutingBatch batch;
  double slack = 0.1;
};

// A random cluster, placement and batch from `seed`: skewed expert popularity (so replicas and
// bounds matter), place_zepp or random extra replicas, top-k distinct experts per token.
Case random_case(uint64_t seed, int nodes, int gpn, int E, int k, int max_tokens) {
  std::mt19937_64 rng(seed);
  Case c;
  c.topo = test::tiny_topo(nodes, gpn);
  const int G = nodes * gpn;
  std::vector<double> pop(E);
  for (int e = 0; e < E; ++e) pop[e] = std::pow(double(rng() % E + 1), -1.2);
  if (rng() % 2 && E >= G) {
    const int extra = std::min(int(rng() % 3), E - (E + G - 1) / G);  // place_zepp needs S <= E
    c.placement = place_zepp(pop, c.topo, extra);
  } else {
    const int spg = (E + G - 1) / G + int(rng() % 3);  // may exceed E: duplicates are allowed
    std::vector<int32_t> phy2log(size_t(G) * spg);
    for (size_t p = 0; p < phy2log.size(); ++p) phy2log[p] = p < size_t(E) ? int32_t(p) : int32_t(rng() % E);
    std::shuffle(phy2log.begin(), phy2log.end(), rng);
    c.placement = test::make_placement(G, E, phy2log);
  }
  std::discrete_distribution<int> pick(pop.begin(), pop.end());
  RoutingBatch& b = c.batch;
  b.num_gpus = G;
  b.num_experts = E;
  b.top_k = std::min(k, E);
  b.token_offset = {0};
  for (int i = 0; i < G; ++i) {
    const int n = int(rng() % (max_tokens + 1));
    for (int t = 0; t < n; ++t) {
      const size_t start = b.expert_ids.size();
      while (b.expert_ids.size() < start + size_t(b.top_k)) {
        const int e = pick(rng);
        if (std::find(b.expert_ids.begin() + start, b.expert_ids.end(), e) == b.expert_ids.end()) b.expert_ids.push_back(e);
      }
    }
    b.token_offset.push_back(b.token_offset.back() + n);
  }
  b.gate_weights.assign(b.expert_ids.size(), 1.0f / float(b.top_k));
  c.slack = std::vector<double>{0.0, 0.05, 0.1, 0.25, 0.5, 0.9}[rng() % 6];
  return c;
}

// Every fast entry point equals the reference on case c: "" when so, else what differs.
#define SAME(cond) \
  if (diff.empty() && !(cond)) diff = #cond
std::string check_against_reference(const Case& c) {
  std::string diff;  // the first check that failed
  const std::vector<int64_t> demand = c.batch.demand();
  const std::vector<RouteCount> ref_counts = test::reference_counts(demand, c.placement, c.topo, c.slack);
  const std::vector<int32_t> ref_slots = test::reference_assign(c.batch, c.placement, c.topo, ref_counts);

  SAME(test::same_counts(route_locality_counts(demand, c.placement, c.topo, c.slack), ref_counts));
  const Routing r = route_locality(c.batch, c.placement, c.topo, c.slack);
  SAME(test::same_counts(r.counts, ref_counts));
  SAME(r.slot_of_pair == ref_slots);
  SAME(assign_pairs(c.batch, c.placement, c.topo, ref_counts) == ref_slots);

  // Router: threads over source GPUs give the same slots.
  Router router(c.placement, c.topo, c.slack);
  std::vector<int64_t> by_expert, m(size_t(router.num_slots()) * router.num_gpus());
  demand_by_expert(c.batch, by_expert);
  router.route_counts(by_expert, m);
  std::vector<RouteCount> counts;
  router.to_counts(m, counts);
  SAME(test::same_counts(counts, ref_counts));
  for (int threads : {1, 2, 3, 7}) {
    std::vector<int32_t> slots(c.batch.expert_ids.size(), -1);
    router.assign(c.batch, m, slots, threads);
    SAME(slots == ref_slots);
  }

  // route_tokens: tokens in a shuffled order, int32 and int64 ids, one or several threads.
  const int64_t T = c.batch.num_tokens();
  const int k = c.batch.top_k;
  std::vector<int64_t> perm(T);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(uint64_t(T) * 7 + 1));
  std::vector<int32_t> src_of(T), ids32(T * k);
  for (int i = 0; i < c.batch.num_gpus; ++i)
    for (int64_t t = c.batch.token_offset[i]; t < c.batch.token_offset[i + 1]; ++t) src_of[t] = i;
  std::vector<int64_t> ids64(T * k), src64(T);
  std::vector<int32_t> src32(T);
  for (int64_t x = 0; x < T; ++x) {
    src32[x] = src_of[perm[x]];
    src64[x] = src32[x];
    for (int q = 0; q < k; ++q) ids32[x * k + q] = c.batch.expert_ids[perm[x] * k + q];
  }
  std::copy(ids32.begin(), ids32.end(), ids64.begin());
  // Within a GPU the shuffled order is a different token order, so compare with the reference
  // on the batch regrouped in that order.
  RoutingBatch regrouped = c.batch;
  std::vector<int64_t> pos_in_batch;  // position in `regrouped` of shuffled token x
  pos_in_batch.resize(T);
  {
    int64_t w = 0;
    for (int i = 0; i < c.batch.num_gpus; ++i)
      for (int64_t x = 0; x < T; ++x)
        if (src32[x] == i) {
          std::copy_n(&ids32[x * k], k, &regrouped.expert_ids[w * k]);
          pos_in_batch[x] = w++;
        }
  }
  const std::vector<int32_t> ref_regrouped =
      test::reference_assign(regrouped, c.placement, c.topo,
                             test::reference_counts(regrouped.demand(), c.placement, c.topo, c.slack));
  for (int threads : {1, 4}) {
    std::vector<int32_t> out32(T * k, -1);
    router.route_tokens(ids32.data(), src32.data(), T, k, out32.data(), threads);
    std::vector<int64_t> out64(T * k, -1);
    router.route_tokens(ids64.data(), src64.data(), T, k, out64.data(), threads);
    for (int64_t x = 0; x < T; ++x)
      for (int q = 0; q < k; ++q) {
        SAME(out32[x * k + q] == ref_regrouped[pos_in_batch[x] * k + q]);
        SAME(out64[x * k + q] == int64_t(out32[x * k + q]));
      }
  }

  // The even split's counts in Router's layout are route_even's.
  router.even_counts(by_expert, m);
  router.to_counts(m, counts);
  SAME(test::same_counts(counts, route_even(c.batch, c.placement, false).counts));
  return diff;
}
#undef SAME

RC_GTEST_PROP(RoutingDifferential, SmallClusters, ()) {
  const int nodes = *rc::gen::inRange(1, 5);
  const int gpn = *rc::gen::inRange(1, 5);
  const int E = *rc::gen::inRange(1, 17);
  const int k = *rc::gen::inRange(1, 5);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  const std::string diff = check_against_reference(random_case(seed, nodes, gpn, E, k, 30));
  RC_ASSERT(diff == "");
}

// Above 64 nodes node masks wrap; the reference follows the same rule, so results still agree.
RC_GTEST_PROP(RoutingDifferential, ManyNodes, ()) {
  const int nodes = *rc::gen::inRange(60, 81);
  const int E = *rc::gen::inRange(nodes / 2, 2 * nodes);
  const int k = *rc::gen::inRange(2, 7);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  const std::string diff = check_against_reference(random_case(seed, nodes, 1, E, k, 12));
  RC_ASSERT(diff == "");
}

// "fewer (src_gpu g, expert e)" from an error of Router or reference_assign, "ok" when none.
template <class Fn>
std::string outcome(Fn&& fn) {
  try {
    fn();
    return "ok";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const size_t key = what.find("(src_gpu");
    const std::string kind = what.find("fewer") != std::string::npos ? "fewer " : "more ";
    return key == std::string::npos ? what : kind + what.substr(key, what.find(')', key) + 1 - key);
  }
}

// Counts that do not match the batch (a key with one token more or fewer, or a token moved to
// another slot) raise the rule's error naming the same (src_gpu, expert) as the reference --
// the fixed-slot table falls back to the rule for that -- or, when the move stays within one
// key, give the reference's slots: through assign (1 and 2 threads) and every rank's route_rank.
RC_GTEST_PROP(RoutingDifferential, MismatchedCountsRaiseTheRulesError, ()) {
  const int nodes = *rc::gen::inRange(1, 4), gpn = *rc::gen::inRange(1, 4), E = *rc::gen::inRange(1, 13);
  const Case c = random_case(*rc::gen::arbitrary<uint64_t>(), nodes, gpn, E, *rc::gen::inRange(1, 5), 20);
  const int k = c.batch.top_k;
  std::vector<RouteCount> counts = test::reference_counts(c.batch.demand(), c.placement, c.topo, c.slack);
  RC_PRE(!counts.empty());
  const size_t y = *rc::gen::inRange<size_t>(0, counts.size());
  const int how = *rc::gen::inRange(0, 3);
  if (how == 0) {
    counts[y].tokens += 1;
  } else {
    RouteCount to = counts[y];
    to.slot = *rc::gen::inRange(0, c.placement.num_slots());
    to.expert = c.placement.phy2log[to.slot];
    to.tokens = 1;
    if (--counts[y].tokens == 0) counts.erase(counts.begin() + ptrdiff_t(y));
    if (how == 2) {  // the token moves to `to`'s slot
      auto at = std::lower_bound(counts.begin(), counts.end(), to, [](const RouteCount& a, const RouteCount& b) {
        return std::tuple(a.expert, a.src_gpu, a.slot) < std::tuple(b.expert, b.src_gpu, b.slot);
      });
      if (at != counts.end() && at->expert == to.expert && at->src_gpu == to.src_gpu && at->slot == to.slot)
        ++at->tokens;
      else
        counts.insert(at, to);
    }
  }
  std::vector<int32_t> want;
  const std::string ref = outcome([&] { want = test::reference_assign(c.batch, c.placement, c.topo, counts); });
  std::vector<int32_t> got;
  RC_ASSERT(outcome([&] { got = assign_pairs(c.batch, c.placement, c.topo, counts); }) == ref);
  RC_TAG(ref == "ok" ? "ok" : ref.substr(0, ref.find(' ')));
  if (ref == "ok") RC_ASSERT(got == want);
  Router router(c.placement, c.topo, c.slack);
  std::vector<int64_t> m(size_t(router.num_slots()) * router.num_gpus());
  router.from_counts(counts, m);
  std::vector<int32_t> slots(c.batch.expert_ids.size(), -1);
  RC_ASSERT(outcome([&] { router.assign(c.batch, m, slots, 2); }) == ref);
  if (ref == "ok") RC_ASSERT(slots == want);
  // Per rank: the rank the reference names raises its error; with none, every rank's slots.
  for (int i = 0; i < c.batch.num_gpus; ++i) {
    if (ref != "ok" && ref.find("(src_gpu " + std::to_string(i) + ",") == std::string::npos) continue;
    const int64_t t0 = c.batch.token_offset[i], T = c.batch.token_offset[i + 1] - t0;
    const std::string mine = outcome([&] { router.route_rank(&c.batch.expert_ids[t0 * k], T, k, i, m, &slots[t0 * k]); });
    RC_ASSERT(mine == ref);
    if (ref == "ok")
      RC_ASSERT(std::equal(slots.begin() + t0 * k, slots.begin() + (t0 + T) * k, want.begin() + t0 * k));
  }
}

TEST(RoutingDifferential, BatchedLayersEqualOneByOne) {
  std::vector<Router> routers;
  std::vector<std::vector<int64_t>> demands;
  std::vector<std::vector<int64_t>> one_by_one;
  for (int l = 0; l < 5; ++l) {
    const Case c = random_case(100 + l, 4, 2, 24, 4, 40);
    routers.emplace_back(c.placement, c.topo, c.slack);
    demands.emplace_back();
    demand_by_expert(c.batch, demands.back());
    one_by_one.emplace_back(size_t(routers.back().num_slots()) * routers.back().num_gpus());
    routers.back().route_counts(demands.back(), one_by_one.back());
  }
  for (int threads : {1, 2, 8}) {
    std::vector<std::vector<int64_t>> plans;
    route_counts_layers(routers, demands, plans, threads);
    EXPECT_EQ(plans, one_by_one) << threads << " threads";
  }
}

// Real traces: several layers of two token-level traces on 4 and 16 nodes of 4 GPUs.
TEST(RoutingDifferential, RealTraces) {
  for (const auto& [folder, model_name, layers] :
       {std::tuple<std::string, std::string, std::vector<int>>{"deepseek-v2-lite-puffin", "deepseek-v2-lite", {1, 13, 26}},
        {"llama4-maverick-mmlu", "llama4-maverick", {1, 25, 47}}}) {
    const std::string path = std::string(ZEPP_SHARED_DIR) + "/data/traces/" + folder;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
    const Trace trace = read_trace(path);
    const ModelShape model = model_preset(model_name);
    for (int nodes : {4, 16})
      for (int layer : layers) {
        const Topology topo = topology_preset("a100", nodes);
        WorkloadOptions opt;
        opt.layer = layer;
        opt.size_mb = 0.5;
        const Workload w = build_workload(&trace, model, topo, opt);
        Case c{topo, place_zepp(w.history_load, topo, 2), w.batch, 0.1};
        SCOPED_TRACE(folder + " layer " + std::to_string(layer) + ", " + std::to_string(nodes) + " nodes");
        EXPECT_EQ(check_against_reference(c), "");
      }
  }
}

}  // namespace
}  // namespace zepp
