// Shared test fixtures for comm plans (plan, exec and baselines tests): check_plan, the
// invariants every CommPlan must hold (DESIGN.md §5), and a tiny cluster with hand-checkable
// units for strategy-level tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/types.hpp"
#include "plan/comm_plan.hpp"
#include "plan/split.hpp"
#include "workload/workload.hpp"

namespace zepp::test {

// A task's lists as vectors, for EXPECT_EQ (tokens, pair_begin and pairs widened to int64_t).
inline std::vector<int64_t> tokens_of(const CommPlan& p, const Task& t) {
  const auto s = p.tokens(t);
  return {s.begin(), s.end()};
}
inline std::vector<int64_t> pair_begin_of(const CommPlan& p, const Task& t) {
  const auto s = p.pair_begin(t);
  return {s.begin(), s.end()};
}
inline std::vector<int64_t> pairs_of(const CommPlan& p, const Task& t) {
  const auto s = p.pairs(t);
  return {s.begin(), s.end()};
}
inline std::vector<int32_t> deps_of(const CommPlan& p, const Task& t) {
  const auto s = p.deps(t);
  return {s.begin(), s.end()};
}

// A task's dependencies with barriers replaced by what they wait for.
inline std::set<int32_t> effective_deps(const CommPlan& plan, const Task& t) {
  std::set<int32_t> out;
  std::vector<int32_t> pending = deps_of(plan, t);
  while (!pending.empty()) {
    const int32_t d = pending.back();
    pending.pop_back();
    if (plan.tasks[d].kind == TaskKind::Barrier) {
      const auto more = plan.deps(plan.tasks[d]);
      pending.insert(pending.end(), more.begin(), more.end());
    } else {
      out.insert(d);
    }
  }
  return out;
}

// Checked task by task, looking through barriers at what a task's dependencies bring. Returns
// the first violation as text, or "" when the plan is sound.

inline std::string check_plan(const CommPlan& plan, const RoutingBatch& batch, const Placement& placement,
                              const Routing& routing) {
  const auto& tasks = plan.tasks;
  const int K = batch.top_k;
  const int G = plan.gpus_per_node;
  const int64_t T = batch.num_tokens();
  std::vector<int> src_of(T);
  for (int i = 0; i < batch.num_gpus; ++i)
    for (int64_t t = batch.token_offset[i]; t < batch.token_offset[i + 1]; ++t) src_of[t] = i;
  auto node = [&](int gpu) { return gpu / G; };
  auto where = [](size_t i) { return "task " + std::to_string(i) + ": "; };

  // Dependencies: in range and acyclic (Kahn).
  std::vector<int> indeg(tasks.size(), 0);
  std::vector<std::vector<int>> out(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i)
    for (int32_t d : plan.deps(tasks[i])) {
      if (d < 0 || size_t(d) >= tasks.size() || size_t(d) == i) return where(i) + "dep out of range";
      ++indeg[i];
      out[d].push_back(int(i));
    }
  std::vector<int> ready;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (indeg[i] == 0) ready.push_back(int(i));
  size_t done = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++done;
    for (int j : out[i])
      if (--indeg[j] == 0) ready.push_back(j);
  }
  if (done != tasks.size()) return "dependency cycle";

  // What each task leaves on a GPU: tokens (dispatch) and (token, pair) contributions.
  auto carries_token = [&](const Task& t, int gpu, int64_t token) {
    return t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch && t.dst_gpu == gpu &&
           std::ranges::find(plan.tokens(t), token) != plan.tokens(t).end();
  };
  auto holds_pair = [&](const Task& t, int gpu, int64_t token, int64_t pair) {
    if (t.kind == TaskKind::Compute)
      return t.gpu == gpu && std::ranges::binary_search(plan.pairs(t), pair);
    const bool combine_in = t.kind == TaskKind::Transfer && t.phase == Phase::Combine && t.dst_gpu == gpu;
    if (!combine_in && !(t.kind == TaskKind::PreReduce && t.gpu == gpu)) return false;
    const auto tokens = plan.tokens(t);
    for (size_t r = 0; r < tokens.size(); ++r)
      if (tokens[r] == token && std::ranges::find(plan.row_pairs_of(t, int64_t(r)), pair) != plan.row_pairs_of(t, int64_t(r)).end())
        return true;
    return false;
  };
  auto none_carries = [&](const Task& t, int64_t token) {
    for (int32_t d : effective_deps(plan, t))
      if (carries_token(tasks[d], t.gpu, token)) return false;
    return true;
  };
  auto available = [&](const Task& t, int gpu, int64_t token, int64_t pair) {
    for (int32_t d : effective_deps(plan, t))
      if (holds_pair(tasks[d], gpu, token, pair)) return true;
    return false;
  };

  std::vector<int> computed(size_t(T) * K, 0), reduced(size_t(T) * K, 0);
  std::vector<double> weight_sum(T, 0.0);
  std::map<std::tuple<int, int, int, int>, int64_t> nic_rows;      // (phase, src node, dst node, nic) -> rows
  std::map<std::tuple<int, int64_t, int, int>, int> token_to_node;  // (phase, token, src, dst node) -> puts
  std::set<std::tuple<int, int, int>> split_flows;                  // (phase, src node, dst node) with relays
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    const auto tokens = plan.tokens(t), pairs = plan.pairs(t), pair_begin = plan.pair_begin(t);
    if (t.kind == TaskKind::Compute) {
      for (int64_t p : pairs) {
        ++computed[p];
        if (routing.slot_of_pair[p] != t.slot || placement.gpu_of_slot(t.slot) != t.gpu || batch.expert_ids[p] != t.expert)
          return where(i) + "pair " + std::to_string(p) + " computed on the wrong slot/GPU/expert";
        const int64_t tok = p / K;
        if (src_of[tok] != t.gpu &&
            none_carries(t, tok))
          return where(i) + "computes pair " + std::to_string(p) + " before its token arrives";
      }
      continue;
    }
    if (t.kind == TaskKind::Transfer) {
      if (t.gpu == t.dst_gpu) return where(i) + "transfer to itself";
      if ((t.link == Link::NVLink) != (node(t.gpu) == node(t.dst_gpu))) return where(i) + "wrong link class";
      if (t.phase != Phase::Weights && t.bytes != double(tokens.size()) * plan.token_bytes)
        return where(i) + "bytes differ from rows * token_bytes";
      if (t.hop == Hop::Relay) {  // round r of node n goes to n - r (dispatch) or n + r (combine)
        const int n = node(t.gpu), N = plan.nodes;
        split_flows.insert({int(t.phase), n, t.phase == Phase::Dispatch ? (n - t.round + N) % N : (n + t.round) % N});
      }
      if (t.link == Link::NIC) {
        nic_rows[{int(t.phase), node(t.gpu), node(t.dst_gpu), t.gpu}] += int64_t(tokens.size());
        for (int64_t tok : tokens) ++token_to_node[{int(t.phase), tok, node(t.gpu), node(t.dst_gpu)}];
      }
    }
    if (t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch) {
      for (int64_t tok : tokens)
        if (src_of[tok] != t.gpu &&
            none_carries(t, tok))
          return where(i) + "sends token " + std::to_string(tok) + " it does not hold";
      continue;
    }
    const bool has_rows = (t.kind == TaskKind::Transfer && t.phase == Phase::Combine) || t.kind == TaskKind::PreReduce ||
                          t.kind == TaskKind::FinalReduce;
    if (!has_rows) continue;
    if (pair_begin.size() != tokens.size() + 1) return where(i) + "pair_begin shape";
    for (size_t r = 0; r < tokens.size(); ++r) {
      const int64_t tok = tokens[r];
      for (int64_t q = pair_begin[r]; q < pair_begin[r + 1]; ++q) {
        const int64_t p = pairs[q];
        if (p / K != tok) return where(i) + "row of token " + std::to_string(tok) + " holds pair " + std::to_string(p);
        if (!available(t, t.gpu, tok, p))
          return where(i) + "uses pair " + std::to_string(p) + " before it is on GPU " + std::to_string(t.gpu);
        if (t.kind == TaskKind::FinalReduce) {
          if (src_of[tok] != t.gpu) return where(i) + "final reduction off the token's GPU";
          ++reduced[p];
          weight_sum[tok] += batch.gate_weights[p];
        }
      }
    }
  }
  for (int64_t p = 0; p < T * K; ++p) {
    if (computed[p] != 1) return "pair " + std::to_string(p) + " computed " + std::to_string(computed[p]) + " times";
    if (reduced[p] != 1) return "pair " + std::to_string(p) + " reduced " + std::to_string(reduced[p]) + " times";
  }
  for (int64_t tok = 0; tok < T; ++tok) {
    double w = 0;
    for (int k = 0; k < K; ++k) w += batch.gate_weights[tok * K + k];
    if (std::abs(w - weight_sum[tok]) > 1e-5) return "token " + std::to_string(tok) + " output weights differ";
  }

  // Merge: a token crosses between two nodes at most once per phase (combine: only with
  // node-level pre-reduction).
  if (plan.options.merge)
    for (const auto& [key, n] : token_to_node)
      if (n != 1 && (std::get<0>(key) == int(Phase::Dispatch) || plan.options.pre_reduce)) return "token " + std::to_string(std::get<1>(key)) + " crosses to a node " + std::to_string(n) + " times";
  // Split: each NIC within the bound of eq. (2) for its flow; with split_if_it_pays only the
  // flows that were split (that have relays) must be.
  if (plan.options.split) {
    std::map<std::tuple<int, int, int>, int64_t> flow_rows;
    for (const auto& [key, rows] : nic_rows) flow_rows[{std::get<0>(key), std::get<1>(key), std::get<2>(key)}] += rows;
    for (const auto& [key, rows] : nic_rows) {
      const std::tuple<int, int, int> flow{std::get<0>(key), std::get<1>(key), std::get<2>(key)};
      if (plan.options.split_if_it_pays && !split_flows.count(flow)) continue;
      const int64_t total = flow_rows[flow];
      if (rows > nic_capacity(total, G, plan.options.nic_slack))
        return "NIC of GPU " + std::to_string(std::get<3>(key)) + " carries " + std::to_string(rows) + " of " +
               std::to_string(total) + " rows";
    }
  }
  return "";
}

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

// Dispatch NIC puts carrying `token`, by destination node.
inline std::map<int, int> puts_of_token(const CommPlan& plan, int64_t token) {
  std::map<int, int> n;
  for (const Task& t : plan.tasks)
    if (t.kind == TaskKind::Transfer && t.phase == Phase::Dispatch && t.link == Link::NIC)
      if (const auto c = std::ranges::count(plan.tokens(t), token)) n[t.dst_gpu / plan.gpus_per_node] += int(c);
  return n;
}

}  // namespace zepp::test
