#include "mpi/rank_plan.hpp"

#include <chrono>
#include <limits>
#include <string>

#include "core/error.hpp"

namespace zepp::mpi {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

RankPlanner::RankPlanner(const Placement& placement, const Topology& topo, double balance_slack,
                         const GemmCost& gemm, const RoutingBatch& batch, int me)
    : router_(placement, topo, balance_slack, gemm), topo_(topo), me_(me), G_(topo.num_gpus()), E_(placement.num_experts),
      k_(batch.top_k) {
  require(batch.num_gpus == G_ && me >= 0 && me < G_, "batch", "GPU count differs from the topology's");
  const int64_t b = batch.token_offset[size_t(me)];
  T_ = batch.token_offset[size_t(me) + 1] - b;
  require(T_ * k_ <= std::numeric_limits<int32_t>::max(), "batch",
          "rank " + std::to_string(me) + " holds more pairs than int32 counts hold");
  topk_ = batch.expert_ids.data() + b * k_;
  own_.resize(size_t(E_));
  own32_.resize(size_t(E_));
  all32_.resize(size_t(G_) * E_);
  counts_.resize(size_t(G_) * E_);
  m_.resize(size_t(placement.num_slots()) * G_);
  slots_.resize(size_t(T_ * k_));
}

void RankPlanner::plan(MPI_Comm comm) {
  const auto t0 = std::chrono::steady_clock::now();
  router_.count_rank(topk_, T_, k_, own_);
  for (int e = 0; e < E_; ++e) own32_[size_t(e)] = int32_t(own_[size_t(e)]);
  MPI_Allgather(own32_.data(), E_, MPI_INT32_T, all32_.data(), E_, MPI_INT32_T, comm);
  metadata_s = since(t0);

  const auto t1 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] = all32_[i];
  router_.plan(counts_, m_);
  router_.route_rank(topk_, T_, k_, me_, m_, slots_.data());
  rank_layout(router_.placement(), topo_, m_, me_, slots_.data(), T_, k_, layout_);
  planning_s = since(t1);
}

}  // namespace zepp::mpi
