#include "mpi/rank_plan.hpp"

#include <chrono>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

namespace zepp::mpi {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

RankPlanner::RankPlanner(const Placement& placement, const Topology& topo, double balance_slack,
                         const RoutingBatch& batch, int me)
    : router_(placement, topo, balance_slack), me_(me), G_(topo.num_gpus()), E_(placement.num_experts) {
  require(batch.num_gpus == G_ && me >= 0 && me < G_, "batch", "GPU count differs from the topology's");
  const int64_t b = batch.token_offset[size_t(me)], e = batch.token_offset[size_t(me) + 1];
  require((e - b) * batch.top_k <= std::numeric_limits<int32_t>::max(), "batch",
          "rank " + std::to_string(me) + " holds more pairs than int32 counts hold");
  mine_.num_gpus = G_;
  mine_.num_experts = batch.num_experts;
  mine_.top_k = batch.top_k;
  mine_.token_offset.assign(size_t(G_) + 1, 0);
  for (int g = me + 1; g <= G_; ++g) mine_.token_offset[size_t(g)] = e - b;
  mine_.expert_ids.assign(batch.expert_ids.begin() + b * batch.top_k, batch.expert_ids.begin() + e * batch.top_k);
  mine_.gate_weights.assign(batch.gate_weights.begin() + b * batch.top_k, batch.gate_weights.begin() + e * batch.top_k);
  own_.resize(size_t(E_));
  all_.resize(size_t(G_) * E_);
  demand_.resize(size_t(E_) * G_);
  m_.resize(size_t(placement.num_slots()) * G_);
  slots_.resize(mine_.expert_ids.size());
}

void RankPlanner::plan(MPI_Comm comm) {
  const auto t0 = std::chrono::steady_clock::now();
  std::fill(own_.begin(), own_.end(), 0);
  for (int32_t e : mine_.expert_ids) ++own_[size_t(e)];
  MPI_Allgather(own_.data(), E_, MPI_INT32_T, all_.data(), E_, MPI_INT32_T, comm);
  metadata_s = since(t0);

  const auto t1 = std::chrono::steady_clock::now();
  for (int i = 0; i < G_; ++i)  // rank-major rows -> Router's expert-major demand
    for (int e = 0; e < E_; ++e) demand_[size_t(e) * G_ + i] = all_[size_t(i) * E_ + e];
  router_.route_counts(demand_, m_);
  for (size_t p = 0; p < m_.size(); p += size_t(G_))  // keep column me_ only: my tokens alone
    for (int i = 0; i < G_; ++i)
      if (i != me_) m_[p + size_t(i)] = 0;
  router_.assign(mine_, m_, slots_);
  planning_s = since(t1);
}

}  // namespace zepp::mpi
