// Zepp's locality-preferred routing (paper §4.1 equation (1), §5) for one layer's tokens.
#include "routing/routing.hpp"

#include "bindings.hpp"

namespace zepp::py {

namespace {

// topk_ids [T, k] (experts < num_experts), src_rank [T] (< num_gpus), phy2log [P] -> slot of every
// (token, k) pair, [T, k] int64, in the caller's token order.
Array<int64_t> route(Array<int32_t> topk_ids, Array<int32_t> src_rank, Array<int32_t> phy2log, int num_experts,
                     int num_nodes, int num_gpus, double balance_slack) {
  const int64_t T = topk_ids.shape(0);
  const int k = int(topk_ids.shape(1));
  const int32_t* ids = topk_ids.data();
  const int32_t* src = src_rank.data();

  Placement placement;
  placement.num_gpus = num_gpus;
  placement.num_experts = num_experts;
  placement.slots_per_gpu = int(phy2log.size()) / num_gpus;
  placement.phy2log.assign(phy2log.data(), phy2log.data() + phy2log.size());

  std::vector<int32_t> slots(size_t(T) * k);
  {
    pb::gil_scoped_release unlocked;
    // RoutingBatch groups tokens by source GPU: a stable counting sort, remembered to undo it.
    RoutingBatch batch;
    batch.num_gpus = num_gpus;
    batch.num_experts = num_experts;
    batch.top_k = k;
    batch.token_offset.assign(num_gpus + 1, 0);
    for (int64_t t = 0; t < T; ++t) ++batch.token_offset[src[t] + 1];
    for (int g = 0; g < num_gpus; ++g) batch.token_offset[g + 1] += batch.token_offset[g];
    std::vector<int64_t> next(batch.token_offset.begin(), batch.token_offset.end() - 1), position(T);
    for (int64_t t = 0; t < T; ++t) position[t] = next[src[t]]++;
    batch.expert_ids.resize(size_t(T) * k);
    for (int64_t t = 0; t < T; ++t)
      std::copy_n(ids + t * k, k, batch.expert_ids.begin() + position[t] * k);
    batch.gate_weights.assign(size_t(T) * k, 1.0f / float(k));  // routing reads only the ids

    Routing r = route_locality(batch, placement, cluster(num_nodes, num_gpus / num_nodes), balance_slack, true);
    for (int64_t t = 0; t < T; ++t)
      std::copy_n(r.slot_of_pair.begin() + position[t] * k, k, slots.begin() + t * k);
  }
  return to_numpy(std::vector<int64_t>(slots.begin(), slots.end()), {pb::ssize_t(T), k});
}

}  // namespace

void bind_routing(pb::module_& m) { m.def("route", &route); }

}  // namespace zepp::py
