// DeepSeek's public EPLB rule (deepseek-ai/EPLB eplb.py), re-implemented layer by layer in its
// float32 arithmetic. Ties go to the lowest index (shared/data/eplb/reference-cases.json):
// sorts are stable, argmax takes the first maximum, argmin over packs the first minimum.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "placement/placement.hpp"

namespace zepp {
namespace {

// eplb.py balanced_packing: n items into m packs of n / m items each; items in descending
// weight go to the lightest pack that still has room. Pack weights accumulate in float32.
void balanced_packing(const std::vector<float>& w, int m, std::vector<int>& pack, std::vector<int>& rank) {
  const int n = int(w.size()), per_pack = n / m;
  pack.assign(n, 0);
  rank.assign(n, 0);
  if (per_pack == 1) {  // the reference returns the identity here without sorting
    std::iota(pack.begin(), pack.end(), 0);
    return;
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return w[a] > w[b]; });
  std::vector<float> pack_weight(m, 0.0f);
  std::vector<int> pack_items(m, 0);
  for (int item : order) {
    int best = -1;
    for (int p = 0; p < m; ++p)
      if (pack_items[p] < per_pack && (best < 0 || pack_weight[p] < pack_weight[best])) best = p;
    pack[item] = best;
    rank[item] = pack_items[best]++;
    pack_weight[best] += w[item];
  }
}

// eplb.py replicate_experts: each extra physical expert goes to the logical expert with the
// highest load per replica (float32 division). phy2log/rank: [num_phy], cnt: [num_log].
void replicate_experts(const std::vector<float>& w, int num_phy, std::vector<int>& phy2log, std::vector<int>& rank,
                       std::vector<int>& cnt) {
  const int num_log = int(w.size());
  phy2log.resize(num_phy);
  rank.assign(num_phy, 0);
  cnt.assign(num_log, 1);
  std::iota(phy2log.begin(), phy2log.begin() + num_log, 0);
  for (int i = num_log; i < num_phy; ++i) {
    int best = 0;
    float best_v = w[0] / float(cnt[0]);
    for (int j = 1; j < num_log; ++j) {
      const float v = w[j] / float(cnt[j]);
      if (v > best_v) best = j, best_v = v;
    }
    phy2log[i] = best;
    rank[i] = cnt[best]++;
  }
}

// eplb.py rebalance_experts_hierarchical for one layer: groups packed onto nodes, experts
// replicated within each node, physical experts packed onto the node's GPUs. w: [E].
// Writes phy2log and the replica rank of every physical expert ([P]) and logcnt ([E]).
void hierarchical_layer(const float* w, int E, int P, int num_groups, int num_nodes, int num_gpus, int64_t* phy2log,
                        int* phy_rank, int64_t* logcnt) {
  const int group_size = E / num_groups, groups_per_node = num_groups / num_nodes;
  const int log_per_node = E / num_nodes, phy_per_node = P / num_nodes, phy_per_gpu = P / num_gpus;

  // Step 1: groups onto nodes. "mlog" numbers experts node by node after the packing.
  std::vector<float> group_load(num_groups, 0.0f);
  for (int g = 0; g < num_groups; ++g)
    for (int k = 0; k < group_size; ++k) group_load[g] += w[g * group_size + k];
  std::vector<int> group_pack, group_rank;
  balanced_packing(group_load, num_nodes, group_pack, group_rank);
  std::vector<int> log2mlog(E), mlog2log(E);
  for (int e = 0; e < E; ++e) {
    const int g = e / group_size;
    log2mlog[e] = (group_pack[g] * groups_per_node + group_rank[g]) * group_size + e % group_size;
    mlog2log[log2mlog[e]] = e;
  }

  std::vector<int> mlogcnt(E);
  std::vector<float> node_load(log_per_node), phy_load(phy_per_node);
  std::vector<int> phy2mlog, rank, cnt, gpu, rank_in_gpu;
  for (int node = 0; node < num_nodes; ++node) {
    const int mlog0 = node * log_per_node;
    // Step 2: replicate within the node.
    for (int j = 0; j < log_per_node; ++j) node_load[j] = w[mlog2log[mlog0 + j]];
    replicate_experts(node_load, phy_per_node, phy2mlog, rank, cnt);
    for (int j = 0; j < log_per_node; ++j) mlogcnt[mlog0 + j] = cnt[j];
    // Step 3: pack the node's physical experts onto its GPUs by load per replica.
    for (int i = 0; i < phy_per_node; ++i) phy_load[i] = node_load[phy2mlog[i]] / float(cnt[phy2mlog[i]]);
    balanced_packing(phy_load, num_gpus / num_nodes, gpu, rank_in_gpu);
    for (int i = 0; i < phy_per_node; ++i) {
      const int p = node * phy_per_node + gpu[i] * phy_per_gpu + rank_in_gpu[i];
      phy2log[p] = mlog2log[mlog0 + phy2mlog[i]];
      phy_rank[p] = rank[i];
    }
  }
  for (int e = 0; e < E; ++e) logcnt[e] = mlogcnt[log2mlog[e]];
}

}  // namespace

EplbResult eplb_rebalance(const std::vector<float>& weight, int layers, int experts, int num_replicas,
                          int num_groups, int num_nodes, int num_gpus) {
  require(layers >= 1, "layers", "must be >= 1, got " + std::to_string(layers));
  require(experts >= 1, "experts", "must be >= 1, got " + std::to_string(experts));
  require(weight.size() == size_t(layers) * size_t(experts), "weight",
          "has " + std::to_string(weight.size()) + " values, expected layers * experts = " +
              std::to_string(int64_t(layers) * experts));
  require(num_groups >= 1, "num_groups", "must be >= 1, got " + std::to_string(num_groups));
  require(num_nodes >= 1, "num_nodes", "must be >= 1, got " + std::to_string(num_nodes));
  require(num_gpus >= 1, "num_gpus", "must be >= 1, got " + std::to_string(num_gpus));
  require(num_replicas >= experts, "num_replicas",
          std::to_string(num_replicas) + " is fewer than the " + std::to_string(experts) + " experts");
  require(num_replicas % num_gpus == 0, "num_replicas",
          std::to_string(num_replicas) + " is not a multiple of num_gpus = " + std::to_string(num_gpus));
  for (size_t i = 0; i < weight.size(); ++i)
    if (!(std::isfinite(weight[i]) && weight[i] >= 0))  // message built only on failure: this loop is hot
      throw ArgumentError("weight: layer " + std::to_string(i / experts) + " expert " + std::to_string(i % experts) +
                          " is " + std::to_string(weight[i]) + ", expected a finite value >= 0");
  // The reference's policy switch: hierarchical only when groups split evenly over nodes.
  const bool hierarchical = num_groups % num_nodes == 0;
  if (hierarchical) {
    require(num_gpus % num_nodes == 0, "num_gpus",
            std::to_string(num_gpus) + " is not a multiple of num_nodes = " + std::to_string(num_nodes) +
                " (the hierarchical policy, num_groups % num_nodes == 0, needs it)");
    require(experts % num_groups == 0, "num_groups",
            std::to_string(num_groups) + " does not divide the " + std::to_string(experts) + " experts");
  } else
    num_groups = num_nodes = 1;

  EplbResult r;
  r.layers = layers;
  r.experts = experts;
  r.replicas = num_replicas;
  r.phy2log.assign(size_t(layers) * num_replicas, 0);
  r.logcnt.assign(size_t(layers) * experts, 0);
  std::vector<int> phy_rank(size_t(layers) * num_replicas);
  for (int l = 0; l < layers; ++l)
    hierarchical_layer(&weight[size_t(l) * experts], experts, num_replicas, num_groups, num_nodes, num_gpus,
                       &r.phy2log[size_t(l) * num_replicas], &phy_rank[size_t(l) * num_replicas],
                       &r.logcnt[size_t(l) * experts]);
  r.max_replicas = int(*std::max_element(r.logcnt.begin(), r.logcnt.end()));
  r.log2phy.assign(size_t(layers) * experts * r.max_replicas, -1);
  // log2phy[l][e][rank] = physical expert holding replica `rank` of e (the reference's scatter).
  for (int l = 0; l < layers; ++l)
    for (int p = 0; p < num_replicas; ++p) {
      const size_t i = size_t(l) * num_replicas + p;
      r.log2phy[(size_t(l) * experts + r.phy2log[i]) * r.max_replicas + phy_rank[i]] = p;
    }
  return r;
}

}  // namespace zepp
