#include "mpi/stack.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "core/error.hpp"
#include "mpi/executor.hpp"
#include "mpi/hash.hpp"
#include "mpi/rank_plan.hpp"
#include "mpi/reference.hpp"
#include "mpi/seeded.hpp"
#include "pipeline/swap_line.hpp"

namespace zepp::mpi {
namespace {

double max_over_ranks(double v, MPI_Comm comm) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
  return out;
}
double sum_over_ranks(double v, MPI_Comm comm) {
  double out = 0;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, comm);
  return out;
}

}  // namespace

std::vector<float> residual_norm(const std::vector<float>& x, const std::vector<float>& y, int hidden) {
  require(hidden > 0 && x.size() == y.size() && x.size() % size_t(hidden) == 0, "y", "must match x in size, rows of hidden");
  std::vector<float> out(x.size());
  for (size_t r = 0; r < x.size(); r += size_t(hidden)) {
    double sq = 0;
    for (int h = 0; h < hidden; ++h) {
      out[r + h] = x[r + h] + y[r + h];
      sq += double(out[r + h]) * out[r + h];
    }
    const float inv = float(1.0 / std::sqrt(sq / hidden + 1e-6));
    for (int h = 0; h < hidden; ++h) out[r + h] *= inv;
  }
  return out;
}

uint64_t layer_seed(uint64_t data_seed, int layer) { return fnv1a(&layer, sizeof layer, data_seed); }

StackRun run_stack_mpi(const std::string& strategy, const std::vector<Workload>& layers, const std::vector<int>& layer_ids,
                       const ModelShape& model, const Topology& topo, const SessionOptions& opt, MPI_Comm comm) {
  int me = 0, n = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  require(!layers.empty() && layers.size() == layer_ids.size(), "layers", "one workload per layer id, at least one");
  require(n == topo.num_gpus(), "comm", "size differs from the topology's GPU count");
  const StrategyEntry* entry = &find_strategy(strategy);
  ModelShape fp32 = model;
  fp32.bytes_per_elem = 4;  // rows travel as fp32: the plan's bytes are what moves
  const int hidden = model.hidden;

  const RoutingBatch& first = layers[0].batch;
  const int64_t mine = first.token_offset[me + 1] - first.token_offset[me];
  std::vector<float> x(size_t(mine) * hidden);
  for (int64_t t = 0; t < mine; ++t) token_activation(opt.exec.data_seed, first.token_offset[me] + t, hidden, x.data() + t * hidden);
  std::vector<float> ref_x = x;

  StackRun run;
  run.strategy = strategy;
  for (size_t l = 0; l < layers.size(); ++l) {
    const Workload& w = layers[l];
    require(w.batch.token_offset == first.token_offset, "layers", "every layer must hold the same tokens per GPU");
    const StrategyDecision d = entry->decide(StrategyInput{w, fp32, topo, opt.strategy});
    const CommPlan plan = d.make_plan(d.placement, d.routing);
    require_same(plan_hash(plan), "the comm plan (nondeterministic planning?)", comm);
    StackLayer s;
    s.swap = d.swap;
    if (d.locality_routing) {  // each rank routes its own tokens from the all-gathered counts
      RankPlanner planner(d.placement, topo, opt.strategy.balance_slack, d.routing_gemm, w.batch, me);
      MPI_Barrier(comm);
      planner.plan(comm);
      const auto first_pair = d.routing.slot_of_pair.begin() + w.batch.token_offset[size_t(me)] * w.batch.top_k;
      const bool same = std::equal(planner.slots().begin(), planner.slots().end(), first_pair);
      if (max_over_ranks(same ? 0.0 : 1.0, comm) > 0)
        throw std::logic_error(strategy + ": layer " + std::to_string(layer_ids[l]) +
                               ": a rank's own routing differs from the global routing");
      s.metadata_s = max_over_ranks(planner.metadata_s, comm);
      s.planning_s = max_over_ranks(planner.planning_s, comm);
    }
    ExecConfig cfg = opt.exec;
    cfg.data_seed = layer_seed(opt.exec.data_seed, layer_ids[l]);
    cfg.input = &x;
    RankOutput out = strategy == "a2av"
                         ? execute_alltoallv(w.batch, d.placement, d.routing, fp32, topo.gpus_per_node, cfg, comm)
                         : execute_plan(plan, w.batch, cfg, comm);
    const auto [plan_nvlink, plan_nic] = plan_sent_bytes(plan, me);
    const bool match = out.stats.nvlink_bytes == plan_nvlink && out.stats.nic_bytes == plan_nic;
    int all_match = 0, ok = match ? 1 : 0;
    MPI_Allreduce(&ok, &all_match, 1, MPI_INT, MPI_MIN, comm);
    if (!all_match)
      throw std::logic_error(strategy + ": layer " + std::to_string(layer_ids[l]) + ": bytes sent differ from the comm plan's");

    const std::vector<float> ref_y = reference_outputs_from(w.batch, me, fp32, cfg.data_seed, ref_x);
    s.layer = layer_ids[l];
    s.wall_s = max_over_ranks(out.stats.total_s, comm);
    s.nvlink_bytes = sum_over_ranks(out.stats.nvlink_bytes, comm);
    s.nic_bytes = sum_over_ranks(out.stats.nic_bytes, comm);
    s.max_rel_error = max_over_ranks(max_relative_error(out.y, ref_y, hidden), comm);
    const double t0 = MPI_Wtime();
    x = residual_norm(x, out.y, hidden);
    s.norm_s = max_over_ranks(MPI_Wtime() - t0, comm);
    ref_x = residual_norm(ref_x, ref_y, hidden);
    run.total_s += s.metadata_s + s.planning_s + s.wall_s + s.norm_s;
    run.layers.push_back(s);
  }
  const double err = max_relative_error(x, ref_x, hidden);
  run.max_rel_error = std::isnan(err) ? err : max_over_ranks(err, comm);
  const uint64_t h = fnv1a(x.data(), x.size() * sizeof(float));
  std::vector<uint64_t> all(static_cast<size_t>(n));
  MPI_Allgather(&h, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
  run.output_checksum = fnv1a(all.data(), all.size() * sizeof(uint64_t));
  return run;
}

nlohmann::json to_json(const StackRun& run) {
  nlohmann::json layers = nlohmann::json::array();
  for (const StackLayer& s : run.layers) {
    layers.push_back({{"layer", s.layer}, {"metadata_s", s.metadata_s}, {"planning_s", s.planning_s}, {"wall_s", s.wall_s},
                      {"norm_s", s.norm_s}, {"nvlink_bytes", s.nvlink_bytes},
                      {"nic_bytes", s.nic_bytes}, {"max_rel_error", s.max_rel_error}});
    if (s.swap) layers.back()["swaps"] = swap_json(*s.swap);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(run.output_checksum));
  return {{"strategy", run.strategy}, {"total_s", run.total_s}, {"max_rel_error", run.max_rel_error},
          {"output_checksum", hex}, {"layers", layers}};
}

}  // namespace zepp::mpi
