// build_workload (paper §6.1): batch size, split, sampling source, determinism, errors.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "core/presets.hpp"
#include "workload/workload.hpp"

namespace zepp {
namespace {

ModelShape small_model(int experts, int k, int hidden = 1024) { return {"small", experts, k, hidden, 64, 2, 2, 0}; }

Topology cluster(int nodes, int gpus) {
  Topology t;
  t.name = "test";
  t.nodes = nodes;
  t.gpus_per_node = gpus;
  return t;
}

// Layer 1, top-2, requests 0..3; each token given as {request, id0, id1}.
Trace hand_trace(const std::vector<std::array<int, 3>>& tokens, bool with_weights) {
  Trace t;
  t.path = "hand";
  t.format = "selection-json";
  t.requests = {"r0", "r1", "r2", "r3"};
  LayerTrace& lt = t.layers[1];
  lt.layer = 1;
  lt.top_k = 2;
  for (const auto& [r, a, b] : tokens) {
    lt.request.push_back(r);
    lt.step.push_back(0);
    lt.expert_ids.insert(lt.expert_ids.end(), {a, b});
    if (with_weights) lt.gate_weights.insert(lt.gate_weights.end(), {0.75f, 0.25f});
    t.num_experts = std::max({t.num_experts, a + 1, b + 1});
  }
  return t;
}

using Selection = std::vector<float>;  // ids then weights, as floats

Selection selection(const RoutingBatch& b, int64_t t) {
  Selection s;
  for (int j = 0; j < b.top_k; ++j) s.push_back(float(b.expert_ids[t * b.top_k + j]));
  for (int j = 0; j < b.top_k; ++j) s.push_back(b.gate_weights[t * b.top_k + j]);
  return s;
}

std::string argument_error(const Trace* trace, const ModelShape& m, const Topology& topo, const WorkloadOptions& o) {
  try {
    build_workload(trace, m, topo, o);
  } catch (const ArgumentError& e) {
    return e.what();
  }
  return "no ArgumentError";
}

TEST(Workload, TokensPerGpuFromSize) {
  WorkloadOptions o;
  o.size_mb = 1;
  const Workload w = build_workload(nullptr, small_model(16, 2, 2048), cluster(2, 4), o);
  EXPECT_EQ(w.tokens_per_gpu, 256);  // 2^20 B / (2048 * 2 B)
  EXPECT_EQ(w.batch.num_gpus, 8);
  EXPECT_EQ(w.batch.token_offset, (std::vector<int64_t>{0, 256, 512, 768, 1024, 1280, 1536, 1792, 2048}));
  EXPECT_EQ(w.batch.expert_ids.size(), 2048u * 2);
  o.size_mb = 4;  // 4 MiB / (5120 * 2 B) = 409.6 -> 409
  EXPECT_EQ(build_workload(nullptr, model_preset("llama4-maverick"), cluster(1, 1), o).tokens_per_gpu, 409);
  o.size_mb = 1e-9;  // below one token: an error naming the field, not a silent round-up
  try {
    build_workload(nullptr, small_model(16, 2), cluster(1, 2), o);
    ADD_FAILURE() << "expected ArgumentError";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("size_mb: 1e-09 MiB per GPU holds less than one token"), std::string::npos) << e.what();
  }
}

TEST(Workload, SplitAndSampleFromEvaluationRequests) {
  // History requests 0, 1 use experts 0..3; evaluation requests 2, 3 experts 4..7.
  const Trace t = hand_trace({{0, 0, 1}, {0, 1, 2}, {1, 3, 0}, {2, 4, 5}, {2, 6, 7}, {3, 5, 4}}, false);
  WorkloadOptions o;
  o.size_mb = 64.0 * 2048 / 1048576;  // 64 tokens per GPU at hidden 1024
  const Workload w = build_workload(&t, small_model(8, 2), cluster(1, 2), o);
  EXPECT_EQ(w.layer, 1);
  EXPECT_FALSE(w.synthetic);
  EXPECT_EQ(w.tokens_per_gpu, 64);
  EXPECT_EQ(w.history_load, (std::vector<double>{2, 2, 1, 1, 0, 0, 0, 0}));
  const float hi = 2.0f / 3, lo = 1.0f / 3;  // rank rule for k = 2
  const std::set<Selection> evaluation = {{4, 5, hi, lo}, {6, 7, hi, lo}, {5, 4, hi, lo}};
  std::set<Selection> seen;
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) {
    EXPECT_TRUE(evaluation.count(selection(w.batch, i))) << "token " << i;
    seen.insert(selection(w.batch, i));
  }
  EXPECT_EQ(seen, evaluation);  // 128 draws from 3 selections reach all of them
  // History tokens {0,1}, {1,2}, {3,0}: each pair once, both ways; evaluation tokens not counted.
  std::vector<double> co(64, 0.0);
  for (auto [a, b] : {std::pair{0, 1}, {1, 2}, {3, 0}}) co[a * 8 + b] = co[b * 8 + a] = 1;
  EXPECT_EQ(w.history_coactivation, co);
  // A load-only source has no pairs to count.
  EXPECT_TRUE(build_workload(nullptr, small_model(8, 2), cluster(1, 2), o).history_coactivation.empty());
}

TEST(Workload, SourceGateWeightsKept) {
  const Trace t = hand_trace({{0, 0, 1}, {1, 2, 3}, {2, 4, 5}, {3, 6, 7}}, true);
  WorkloadOptions o;
  o.history_fraction = 0.75;  // requests 0..2 history, 3 evaluation
  const Workload w = build_workload(&t, small_model(8, 2), cluster(1, 1), o);
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) EXPECT_EQ(selection(w.batch, i), (Selection{6, 7, 0.75f, 0.25f}));
  EXPECT_EQ(w.history_load, (std::vector<double>{1, 1, 1, 1, 1, 1, 0, 0}));
}

TEST(Workload, Deterministic) {
  const Trace t = hand_trace({{0, 0, 1}, {1, 1, 2}, {2, 3, 4}, {2, 5, 6}, {3, 7, 0}, {3, 2, 1}}, false);
  WorkloadOptions o;
  for (const Trace* trace : {&t, static_cast<const Trace*>(nullptr)}) {
    const Workload a = build_workload(trace, small_model(8, 2), cluster(2, 2), o);
    const Workload b = build_workload(trace, small_model(8, 2), cluster(2, 2), o);
    EXPECT_EQ(a.batch.expert_ids, b.batch.expert_ids);
    EXPECT_EQ(a.batch.gate_weights, b.batch.gate_weights);
    EXPECT_EQ(a.history_load, b.history_load);
    WorkloadOptions other = o;
    other.seed = 2;
    EXPECT_NE(build_workload(trace, small_model(8, 2), cluster(2, 2), other).batch.expert_ids, a.batch.expert_ids);
  }
}

TEST(Workload, SyntheticFollowsPowerLaw) {
  const int E = 16;
  WorkloadOptions o;
  o.zipf = 1.2;
  o.size_mb = 40000.0 * 2048 / 1048576;  // 40,000 tokens at hidden 1024
  const Workload w = build_workload(nullptr, small_model(E, 1), cluster(1, 1), o);
  EXPECT_TRUE(w.synthetic);
  std::vector<double> count(E, 0);
  for (int32_t e : w.batch.expert_ids) count[e] += 1;
  std::vector<int> by_rank(E);
  std::iota(by_rank.begin(), by_rank.end(), 0);
  std::sort(by_rank.begin(), by_rank.end(), [&](int a, int b) { return count[a] > count[b]; });
  double harmonic = 0;
  for (int r = 1; r <= E; ++r) harmonic += std::pow(r, -1.2);
  const double n = double(w.batch.num_tokens());
  for (int r = 1; r <= 4; ++r) {  // the head, where ranks are well separated
    const double p = std::pow(r, -1.2) / harmonic;
    EXPECT_NEAR(count[by_rank[r - 1]] / n, p, 6 * std::sqrt(p * (1 - p) / n)) << "rank " << r;
  }
  // History is an independent draw from the same law: same most popular expert.
  EXPECT_EQ(std::max_element(w.history_load.begin(), w.history_load.end()) - w.history_load.begin(), by_rank[0]);
  EXPECT_DOUBLE_EQ(std::accumulate(w.history_load.begin(), w.history_load.end(), 0.0), n);
  EXPECT_NE(w.history_load, count);
  // The seed shuffles which expert is most popular.
  std::set<int> top;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    WorkloadOptions s = o;
    s.seed = seed;
    s.size_mb = 0.2;
    const Workload ws = build_workload(nullptr, small_model(E, 1), cluster(1, 1), s);
    top.insert(std::max_element(ws.history_load.begin(), ws.history_load.end()) - ws.history_load.begin());
  }
  EXPECT_GT(top.size(), 1u);
}

TEST(Workload, SyntheticTopKDistinct) {
  WorkloadOptions o;
  o.zipf = 3;  // steep: the head holds most mass, so distinct draws take the fallback path too
  const Workload w = build_workload(nullptr, small_model(10, 8), cluster(1, 4), o);
  for (int64_t t = 0; t < w.batch.num_tokens(); ++t) {
    std::set<int32_t> ids(w.batch.expert_ids.begin() + t * 8, w.batch.expert_ids.begin() + (t + 1) * 8);
    ASSERT_EQ(ids.size(), 8u);
    ASSERT_TRUE(*ids.begin() >= 0 && *ids.rbegin() < 10);
  }
}

Trace load_trace() {
  Trace t;
  t.path = "loads";
  t.format = "load-csv";
  t.num_experts = 6;
  t.loads = {{"arc/English", {{0, {3, 0, 2, 1, 0, 2}}, {1, {1, 1, 1, 1, 1, 1}}}},
             {"arc/Hebrew", {{0, {1, 0, 2, 3, 0, 2}}}},
             {"gsm/English", {{0, {0, 0, 1, 1, 0, 1}}}}};
  return t;
}

TEST(Workload, LoadOnlySamplesDistinctByLoad) {
  const Trace t = load_trace();
  WorkloadOptions o;
  o.dataset = "arc";  // mean of arc/English and arc/Hebrew at layer 0: {2, 0, 2, 2, 0, 2}
  const Workload w = build_workload(&t, small_model(6, 3), cluster(1, 2), o);
  EXPECT_TRUE(w.synthetic);
  EXPECT_EQ(w.layer, 0);
  EXPECT_NE(w.description.find("sampled from real per-expert load"), std::string::npos) << w.description;
  const double pairs = double(w.batch.num_tokens()) * 3;
  EXPECT_EQ(w.history_load, (std::vector<double>{pairs / 4, 0, pairs / 4, pairs / 4, 0, pairs / 4}));
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) {
    std::set<int32_t> ids(w.batch.expert_ids.begin() + i * 3, w.batch.expert_ids.begin() + (i + 1) * 3);
    ASSERT_EQ(ids.size(), 3u);
    ASSERT_FALSE(ids.count(1) || ids.count(4)) << "an expert without load was drawn";
    EXPECT_FLOAT_EQ(w.batch.gate_weights[i * 3], 0.5f);
  }
  o.dataset = "gsm/English";  // exactly three experts with load: every token is {2, 3, 5}
  const Workload g = build_workload(&t, small_model(6, 3), cluster(1, 1), o);
  for (int64_t i = 0; i < g.batch.num_tokens(); ++i) {
    std::set<int32_t> ids(g.batch.expert_ids.begin() + i * 3, g.batch.expert_ids.begin() + (i + 1) * 3);
    ASSERT_EQ(ids, (std::set<int32_t>{2, 3, 5}));
  }
}

TEST(Workload, RealQwenLoad) {
  const std::string dir = std::string(ZEPP_SHARED_DIR) + "/data/traces/qwen3-30b-a3b-load";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "real traces not found at " << dir;
  const Trace t = read_trace(dir);
  WorkloadOptions o;
  o.dataset = "arc/Hebrew";
  o.layer = 7;
  const Workload w = build_workload(&t, model_preset("qwen3-30b-a3b"), topology_preset("a100", 2), o);
  EXPECT_EQ(w.tokens_per_gpu, 256);
  EXPECT_EQ(w.batch.num_tokens(), 8 * 256);
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) {
    std::set<int32_t> ids(w.batch.expert_ids.begin() + i * 8, w.batch.expert_ids.begin() + (i + 1) * 8);
    ASSERT_EQ(ids.size(), 8u);
  }
  const std::vector<double>& row = t.loads[1].per_layer.at(7);  // arc/Hebrew
  const double sum = std::accumulate(row.begin(), row.end(), 0.0);
  for (int e = 0; e < 128; ++e) EXPECT_NEAR(w.history_load[e], row[e] / sum * 8 * 2048, 1e-6);
}

TEST(Workload, RealMixtralSplitsProblems) {
  const std::string dir = std::string(ZEPP_SHARED_DIR) + "/data/traces/mixtral-8x7b-gsm8k";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "real traces not found at " << dir;
  const Trace t = read_trace(dir);
  const Workload w = build_workload(&t, model_preset("mixtral-8x7b"), topology_preset("h100", 1), WorkloadOptions{});
  EXPECT_EQ(w.layer, 0);
  EXPECT_EQ(w.tokens_per_gpu, 128);  // 2^20 / (4096 * 2)
  const LayerTrace& lt = t.layers.at(0);
  std::set<Selection> evaluation;  // problem 1
  for (int64_t i = 0; i < lt.num_tokens(); ++i)
    if (lt.request[i] == 1)
      evaluation.insert({float(lt.expert_ids[2 * i]), float(lt.expert_ids[2 * i + 1]), lt.gate_weights[2 * i],
                         lt.gate_weights[2 * i + 1]});
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i) ASSERT_TRUE(evaluation.count(selection(w.batch, i)));
  EXPECT_DOUBLE_EQ(std::accumulate(w.history_load.begin(), w.history_load.end(), 0.0), 167 * 2);  // problem 0
}

TEST(Workload, ArgumentErrorsNameTheField) {
  const Trace t = hand_trace({{0, 0, 1}, {1, 1, 2}, {2, 3, 4}, {3, 5, 6}}, false);
  const ModelShape m = small_model(8, 2);
  const Topology c = cluster(1, 2);
  auto with = [](auto set) {
    WorkloadOptions o;
    set(o);
    return o;
  };
  auto starts = [](const std::string& message, const std::string& prefix) { return message.rfind(prefix, 0) == 0; };
  for (double size : {0.0, -1.0, double(NAN), double(INFINITY), 1e12})
    EXPECT_TRUE(starts(argument_error(&t, m, c, with([&](auto& o) { o.size_mb = size; })), "size_mb: ")) << size;
  for (double f : {0.0, 1.0, -0.5, double(NAN), 0.1})  // 0.1 of 4 requests: no history
    EXPECT_TRUE(starts(argument_error(&t, m, c, with([&](auto& o) { o.history_fraction = f; })), "history_fraction: ")) << f;
  EXPECT_TRUE(starts(argument_error(nullptr, m, c, with([](auto& o) { o.zipf = -1; })), "zipf: "));
  EXPECT_TRUE(starts(argument_error(&t, m, c, with([](auto& o) { o.layer = -2; })), "layer: "));
  EXPECT_EQ(argument_error(&t, m, c, with([](auto& o) { o.layer = 3; })),
            "layer: layer 3 is not in trace hand; layers present: 1");
  EXPECT_TRUE(starts(argument_error(&t, m, c, with([](auto& o) { o.dataset = "arc"; })), "dataset: "));
  const Trace loads = load_trace();
  EXPECT_EQ(argument_error(&loads, small_model(6, 3), c, with([](auto& o) { o.dataset = "mmlu"; })),
            "dataset: no load table of loads matches 'mmlu'; tables: arc/English, arc/Hebrew, gsm/English");
  EXPECT_TRUE(starts(argument_error(&loads, small_model(6, 4), c, with([](auto& o) { o.dataset = "gsm"; })), "dataset: "));
  EXPECT_EQ(argument_error(&loads, small_model(6, 3), c, with([](auto& o) { o.layer = 1; })),
            "layer: layer 1 is not in load table arc/Hebrew of loads; layers present: 0");
  EXPECT_TRUE(starts(argument_error(&t, small_model(4, 2), c, WorkloadOptions{}), "trace: "));
  Trace one = hand_trace({{0, 0, 1}}, false);
  one.requests = {"only"};
  EXPECT_TRUE(starts(argument_error(&one, m, c, WorkloadOptions{}), "history_fraction: "));
}

// Issue 15: --zipf 360 crashed: r^-zipf underflowed for all but 7 of 384 experts and the sampler
// wrote id -1. Now the generator refuses parameters that leave fewer than top-k experts.
TEST(Workload, ZipfThatUnderflowsBelowTopKExpertsIsRefused) {
  const ModelShape k2 = small_model(384, 8, 7168);
  for (double zipf : {360.0, 400.0, 1e300}) {
    WorkloadOptions o;
    o.zipf = zipf;
    const std::string msg = argument_error(nullptr, k2, cluster(1, 4), o);
    EXPECT_EQ(msg.rfind("zipf: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("fewer than top-k 8"), std::string::npos) << msg;
  }
  WorkloadOptions o;
  o.zipf = 100;  // 2^-100 ... 8^-100 are all far above the smallest double
  const Workload w = build_workload(nullptr, k2, cluster(1, 4), o);
  for (int32_t id : w.batch.expert_ids) ASSERT_TRUE(id >= 0 && id < 384);
}

// What the planner assumes is checked on every result, whatever the source: a hand-made trace
// (read_trace would have refused it) with a gate weight above 1, or a negative id, is an error.
TEST(Workload, EveryResultIsCheckedAtTheBoundary) {
  const ModelShape m = small_model(8, 2);
  Trace t = hand_trace({{0, 0, 1}, {1, 1, 2}, {2, 3, 4}, {3, 5, 6}}, true);
  t.layers[1].gate_weights[5] = 1.5f;  // token 2's second weight
  WorkloadOptions o;
  o.size_mb = 0.01;
  std::string msg = argument_error(&t, m, cluster(1, 2), o);
  EXPECT_EQ(msg.rfind("workload: token ", 0), 0u) << msg;
  EXPECT_NE(msg.find("outside [0, 1]"), std::string::npos) << msg;
  t.layers[1].gate_weights[5] = 0.5f;  // 0.75 + 0.5 > 1
  msg = argument_error(&t, m, cluster(1, 2), o);
  EXPECT_NE(msg.find("gate weights sum to 1.25"), std::string::npos) << msg;
  t = hand_trace({{0, 0, 1}, {1, 1, 2}, {2, 3, 4}, {3, 5, 6}}, false);
  t.layers[1].expert_ids[0] = -1;
  msg = argument_error(&t, m, cluster(1, 2), o);
  EXPECT_NE(msg.find("selects expert -1"), std::string::npos) << msg;
  t = hand_trace({{0, 0, 1}, {1, 1, 2}, {2, 3, 4}, {3, 5, 6}}, false);
  t.layers[1].request[0] = 9;
  msg = argument_error(&t, m, cluster(1, 2), o);
  EXPECT_NE(msg.find("names request 9 of 4"), std::string::npos) << msg;
}

// Random small traces: each GPU gets tokens_per_gpu selections, all from evaluation requests.
RC_GTEST_PROP(WorkloadProperty, SamplesOnlyEvaluationSelections, ()) {
  const int requests = *rc::gen::inRange(2, 8);
  const int k = *rc::gen::inRange(1, 4);
  const int E = 8;
  Trace t;
  t.path = "random";
  for (int r = 0; r < requests; ++r) t.requests.push_back("r" + std::to_string(r));
  LayerTrace& lt = t.layers[5];
  lt.layer = 5;
  lt.top_k = k;
  for (int r = 0; r < requests; ++r) {
    const int tokens = *rc::gen::inRange(1, 5);
    for (int i = 0; i < tokens; ++i) {
      std::vector<int32_t> ids(E);
      std::iota(ids.begin(), ids.end(), 0);
      for (int j = 0; j < k; ++j) std::swap(ids[j], ids[j + *rc::gen::inRange(0, E - j)]);
      lt.expert_ids.insert(lt.expert_ids.end(), ids.begin(), ids.begin() + k);
      lt.request.push_back(r);
      lt.step.push_back(i);
    }
  }
  t.num_experts = E;
  WorkloadOptions o;
  o.history_fraction = *rc::gen::inRange(1, requests) / double(requests) + 1e-9;
  o.seed = *rc::gen::arbitrary<uint64_t>();
  o.size_mb = *rc::gen::inRange(1, 50) * 2048.0 / 1048576;
  const int gpus = *rc::gen::inRange(1, 5);
  const Workload w = build_workload(&t, small_model(E, k), cluster(1, gpus), o);
  const int64_t history = int64_t(std::floor(o.history_fraction * requests));
  std::set<std::vector<int32_t>> evaluation;
  std::vector<double> history_load(E, 0);
  for (int64_t i = 0; i < lt.num_tokens(); ++i) {
    std::vector<int32_t> ids(lt.expert_ids.begin() + i * k, lt.expert_ids.begin() + (i + 1) * k);
    if (lt.request[i] >= history)
      evaluation.insert(ids);
    else
      for (int32_t e : ids) history_load[e] += 1;
  }
  RC_ASSERT(w.history_load == history_load);
  for (int g = 0; g <= gpus; ++g) RC_ASSERT(w.batch.token_offset[g] == g * w.tokens_per_gpu);
  for (int64_t i = 0; i < w.batch.num_tokens(); ++i)
    RC_ASSERT(evaluation.count(std::vector<int32_t>(w.batch.expert_ids.begin() + i * k,
                                                    w.batch.expert_ids.begin() + (i + 1) * k)) == 1u);
}

}  // namespace
}  // namespace zepp
