// Test helpers: a tiny cluster with hand-checkable units, and a validity check that any
// CommPlan must pass (every row is held by its sender, every pair computed once and summed
// once into its token's output on the source GPU).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "plan/comm_plan.hpp"
#include "workload/workload.hpp"

namespace zepp::test {

// N nodes of 2 GPUs; a token is 2 bytes; one expert per GPU unless `experts` says otherwise.
inline Topology tiny_topology(int nodes) {
  Topology t;
  t.name = "tiny";
  t.nodes = nodes;
  t.gpus_per_node = 2;
  t.nvlink_bw = 100;
  t.nic_bw = 25;
  t.nvlink_latency = t.nic_latency = 0;
  t.compute.peak_flops = 6;
  t.compute.hbm_bw = 1e30;
  t.compute.kernel_launch = 1;
  return t;
}

inline ModelShape tiny_model(int experts, int top_k) {
  ModelShape m;
  m.name = "tiny";
  m.num_experts = experts;
  m.top_k = top_k;
  m.hidden = 1;
  m.ffn = 1;
  return m;
}

// A workload from per-GPU lists of tokens, each token its top-k expert ids; equal gate weights.
inline Workload make_workload(const std::vector<std::vector<std::vector<int>>>& tokens_of_gpu, int experts,
                              std::vector<double> history = {}) {
  Workload w;
  RoutingBatch& b = w.batch;
  b.num_gpus = int(tokens_of_gpu.size());
  b.num_experts = experts;
  b.top_k = tokens_of_gpu.empty() || tokens_of_gpu[0].empty() ? 1 : int(tokens_of_gpu[0][0].size());
  b.token_offset = {0};
  for (const auto& gpu : tokens_of_gpu) {
    for (const auto& tok : gpu) {
      for (int e : tok) {
        b.expert_ids.push_back(e);
        b.gate_weights.push_back(1.0f / float(tok.size()));
      }
    }
    b.token_offset.push_back(b.token_offset.back() + int64_t(gpu.size()));
  }
  w.history_load = history.empty() ? std::vector<double>(size_t(experts), 1.0) : std::move(history);
  w.description = "hand-made";
  return w;
}

inline int src_gpu_of(const RoutingBatch& b, int64_t token) {
  return int(std::upper_bound(b.token_offset.begin(), b.token_offset.end(), token) - b.token_offset.begin()) - 1;
}

// A task's dependencies with barriers replaced by what they wait for.
inline std::set<int32_t> effective_deps(const CommPlan& plan, const Task& t) {
  std::set<int32_t> out;
  std::vector<int32_t> pending(t.deps.begin(), t.deps.end());
  while (!pending.empty()) {
    const int32_t d = pending.back();
    pending.pop_back();
    if (plan.tasks[d].kind == TaskKind::Barrier) pending.insert(pending.end(), plan.tasks[d].deps.begin(), plan.tasks[d].deps.end());
    else out.insert(d);
  }
  return out;
}

// Checks, with direct dependencies (through barriers) only, that the plan is runnable and complete.
inline void expect_valid_plan(const CommPlan& plan, const RoutingBatch& b, const std::vector<int32_t>& slot_of_pair,
                              const Placement& placement) {
  const int K = b.top_k;
  std::vector<int> computed(slot_of_pair.size(), 0), summed(slot_of_pair.size(), 0);
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    // What the direct dependencies bring to this task's GPU.
    std::set<int64_t> tokens_in, pairs_in;
    for (int32_t d : effective_deps(plan, t)) {
      const Task& u = plan.tasks[d];
      if (u.kind == TaskKind::Transfer && u.dst_gpu == t.gpu) {
        tokens_in.insert(u.tokens.begin(), u.tokens.end());
        pairs_in.insert(u.pairs.begin(), u.pairs.end());
      } else if (u.gpu == t.gpu && (u.kind == TaskKind::Compute || u.kind == TaskKind::PreReduce)) {
        pairs_in.insert(u.pairs.begin(), u.pairs.end());
      }
    }
    if (t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch) {
      for (int64_t tok : t.tokens)
        EXPECT_TRUE(src_gpu_of(b, tok) == t.gpu || tokens_in.count(tok)) << "transfer " << i << " sends token " << tok
                                                                         << " that GPU " << t.gpu << " does not hold";
      EXPECT_DOUBLE_EQ(t.bytes, double(t.tokens.size()) * plan.token_bytes);
    } else if (t.kind == TaskKind::Compute) {
      for (int64_t p : t.pairs) {
        ++computed[size_t(p)];
        EXPECT_EQ(placement.gpu_of_slot(slot_of_pair[size_t(p)]), t.gpu);
        const int64_t tok = p / K;
        EXPECT_TRUE(src_gpu_of(b, tok) == t.gpu || tokens_in.count(tok)) << "compute " << i << " lacks token " << tok;
      }
    } else if (t.kind == TaskKind::Transfer && t.phase == Phase::Combine) {
      for (int64_t p : t.pairs) EXPECT_TRUE(pairs_in.count(p)) << "combine transfer " << i << " lacks pair " << p;
      EXPECT_DOUBLE_EQ(t.bytes, double(t.tokens.size()) * plan.token_bytes);
    } else if (t.kind == TaskKind::PreReduce) {
      for (int64_t p : t.pairs) EXPECT_TRUE(pairs_in.count(p)) << "pre-reduce " << i << " lacks pair " << p;
    } else if (t.kind == TaskKind::FinalReduce) {
      for (size_t r = 0; r < t.tokens.size(); ++r) {
        EXPECT_EQ(src_gpu_of(b, t.tokens[r]), t.gpu);
        for (int64_t q = t.pair_begin[r]; q < t.pair_begin[r + 1]; ++q) {
          const int64_t p = t.pairs[size_t(q)];
          EXPECT_EQ(p / K, t.tokens[r]);
          EXPECT_TRUE(pairs_in.count(p)) << "final reduce " << i << " lacks pair " << p;
          ++summed[size_t(p)];
        }
      }
    }
  }
  // Dependencies are acyclic (Kahn's algorithm visits every task).
  std::vector<int> indeg(plan.tasks.size(), 0);
  std::vector<std::vector<int32_t>> users(plan.tasks.size());
  for (size_t i = 0; i < plan.tasks.size(); ++i)
    for (int32_t d : plan.tasks[i].deps) {
      ASSERT_TRUE(d >= 0 && size_t(d) < plan.tasks.size());
      ++indeg[i];
      users[size_t(d)].push_back(int32_t(i));
    }
  std::vector<int32_t> ready;
  for (size_t i = 0; i < indeg.size(); ++i)
    if (indeg[i] == 0) ready.push_back(int32_t(i));
  size_t visited = 0;
  while (!ready.empty()) {
    const int32_t i = ready.back();
    ready.pop_back();
    ++visited;
    for (int32_t u : users[size_t(i)])
      if (--indeg[size_t(u)] == 0) ready.push_back(u);
  }
  EXPECT_EQ(visited, plan.tasks.size()) << "dependency cycle";
  for (size_t p = 0; p < computed.size(); ++p) {
    EXPECT_EQ(computed[p], 1) << "pair " << p;
    EXPECT_EQ(summed[p], 1) << "pair " << p;
  }
}

// Dispatch NIC puts carrying `token`, by destination node.
inline std::map<int, int> puts_of_token(const CommPlan& plan, int64_t token) {
  std::map<int, int> n;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch && t.link == Link::NIC)
      if (const auto c = std::count(t.tokens.begin(), t.tokens.end(), token)) n[t.dst_gpu / plan.gpus_per_node] += int(c);
  return n;
}

}  // namespace zepp::test
