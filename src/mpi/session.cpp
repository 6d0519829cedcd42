#include "mpi/session.hpp"

#include <algorithm>
#include <climits>
#include <optional>
#include <cstdio>
#include <stdexcept>

#include "core/error.hpp"
#include "mpi/hash.hpp"
#include "mpi/rank_plan.hpp"
#include "mpi/reference.hpp"
#include "pipeline/swap_line.hpp"

namespace zepp::mpi {

uint64_t plan_hash(const CommPlan& plan) {
  uint64_t h = kFnvBasis;
  auto vec = [&h](std::span<const int32_t> v) {
    const uint64_t size = v.size();
    h = fnv1a(v.data(), v.size() * sizeof(v[0]), fnv1a(&size, sizeof size, h));
  };
  for (const Task& t : plan.tasks) {
    const int64_t head[] = {int64_t(t.kind), int64_t(t.phase), t.gpu, t.dst_gpu, int64_t(t.link), t.slot, t.expert, t.priority};
    h = fnv1a(head, sizeof head, h);
    h = fnv1a(&t.bytes, sizeof t.bytes, h);
    vec(plan.tokens(t)), vec(plan.pair_begin(t)), vec(plan.pairs(t)), vec(plan.deps(t));
  }
  return h;
}

// Every rank must hold the same value; throws naming `what` otherwise.
void require_same(uint64_t v, const char* what, MPI_Comm comm) {
  uint64_t lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(&v, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
  if (lo != hi) throw std::logic_error(std::string("ranks disagree on ") + what);
}

namespace {

uint64_t fold_over_ranks(uint64_t mine, MPI_Comm comm) {
  int n = 0;
  MPI_Comm_size(comm, &n);
  std::vector<uint64_t> all(n);
  MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
  return fnv1a(all.data(), all.size() * sizeof(uint64_t));
}

// Every rank's events, on rank 0 in rank order (empty elsewhere).
std::vector<TimelineEvent> gather_timeline(const std::vector<TimelineEvent>& mine, MPI_Comm comm) {
  int me = 0, n = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  nlohmann::json rows = nlohmann::json::array();
  for (const TimelineEvent& e : mine)
    rows.push_back({e.gpu, e.track, e.name, e.start_s, e.end_s, e.rows, e.bytes, e.expert, e.peer, e.node, e.round});
  const std::string text = rows.dump();
  int len = int(text.size());
  std::vector<int> lens(n), displs(n);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  int64_t total = 0;
  for (int r = 0; r < n; ++r) displs[r] = int(total), total += lens[r];
  require(total <= INT_MAX, "timeline", "too many events to gather in one message");
  std::string all(me == 0 ? size_t(total) : 0, '\0');
  MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);
  std::vector<TimelineEvent> out;
  if (me != 0) return out;
  for (int r = 0; r < n; ++r)
    for (const auto& e : nlohmann::json::parse(all.substr(size_t(displs[r]), size_t(lens[r]))))
      out.push_back({e[0].get<int>(), e[1].get<std::string>(), e[2].get<std::string>(), e[3].get<double>(), e[4].get<double>(),
                     e[5].get<int64_t>(), e[6].get<double>(), e[7].get<int>(), e[8].get<int>(), e[9].get<int>(), e[10].get<int>()});
  return out;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

double StrategyRun::nvlink_bytes() const {
  double s = 0;
  for (const RankStats& r : ranks) s += r.nvlink_bytes;
  return s;
}
double StrategyRun::nic_bytes() const {
  double s = 0;
  for (const RankStats& r : ranks) s += r.nic_bytes;
  return s;
}

StrategyRun run_strategy_mpi(const std::string& strategy, const Workload& workload, const ModelShape& model,
                             const Topology& topo, const SessionOptions& opt, MPI_Comm comm) {
  int me = 0, n = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  require(n == topo.num_gpus(), "comm", "size differs from the topology's GPU count");
  require(opt.repeat >= 1, "repeat", "must be >= 1");
  const StrategyEntry* entry = &find_strategy(strategy);

  ModelShape fp32 = model;
  fp32.bytes_per_elem = 4;  // rows travel as fp32: the plan's bytes are what moves
  const StrategyDecision d = entry->decide(StrategyInput{workload, fp32, topo, opt.strategy});
  const CommPlan plan = d.make_plan(d.placement, d.routing);
  require_same(plan_hash(plan), "the comm plan (nondeterministic planning?)", comm);

  StrategyRun run;
  run.strategy = strategy;
  run.executor = strategy == "a2av" ? "alltoallv" : "plan";
  run.plan_tasks = int64_t(plan.tasks.size());
  for (const Task& t : plan.tasks) run.plan_transfers += t.kind == TaskKind::Transfer;
  const std::vector<float> ref = reference_outputs(workload.batch, me, fp32, opt.exec.data_seed);
  // Zepp's routing per rank: counts all-gathered, the count-level plan, the rank's own tokens.
  std::optional<RankPlanner> planner;
  if (d.locality_routing) planner.emplace(d.placement, topo, opt.strategy.balance_slack, d.routing_gemm, workload.batch, me);
  run.rank_routing = planner.has_value();
  run.swap = d.swap;

  for (int rep = 0; rep < opt.repeat; ++rep) {
    if (planner) {
      MPI_Barrier(comm);
      planner->plan(comm);
      // Its own routing must be the global decision's for its tokens (the plan executed below).
      const auto first = d.routing.slot_of_pair.begin() + workload.batch.token_offset[size_t(me)] * workload.batch.top_k;
      int same = std::equal(planner->slots().begin(), planner->slots().end(), first) ? 1 : 0, all_same = 0;
      MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, comm);
      if (!all_same)
        throw std::logic_error(strategy + ": rank " + std::to_string(me) + "'s own routing " +
                               (same ? "agrees, another rank's differs" : "differs") + " from the global routing");
    }
    RankOutput out = strategy == "a2av"
                         ? execute_alltoallv(workload.batch, d.placement, d.routing, fp32, topo.gpus_per_node, opt.exec, comm)
                         : execute_plan(plan, workload.batch, opt.exec, comm);
    std::tie(out.stats.plan_nvlink_bytes, out.stats.plan_nic_bytes) = plan_sent_bytes(plan, me);
    if (planner) out.stats.metadata_s = planner->metadata_s, out.stats.planning_s = planner->planning_s;
    // Bytes checked on every rank before anyone reports (the a2av executor counts without a plan).
    const bool match = out.stats.nvlink_bytes == out.stats.plan_nvlink_bytes && out.stats.nic_bytes == out.stats.plan_nic_bytes;
    int all_match = 0, mine = match ? 1 : 0;
    MPI_Allreduce(&mine, &all_match, 1, MPI_INT, MPI_MIN, comm);
    if (!all_match)
      throw std::logic_error(strategy + ": rank " + std::to_string(me) + " sent " + std::to_string(out.stats.nvlink_bytes) +
                             " NVLink / " + std::to_string(out.stats.nic_bytes) + " NIC bytes, its comm plan says " +
                             std::to_string(out.stats.plan_nvlink_bytes) + " / " + std::to_string(out.stats.plan_nic_bytes) +
                             (match ? " (another rank differs)" : ""));
    const uint64_t out_sum = fold_over_ranks(fnv1a(out.y.data(), out.y.size() * sizeof(float)), comm);
    const uint64_t wire_sum = fold_over_ranks(out.stats.wire_hash, comm);
    if (rep > 0 && (out_sum != run.output_checksum || wire_sum != run.wire_checksum))
      throw std::logic_error(strategy + ": repeat " + std::to_string(rep) + " changed the outputs or the bytes on the wire");
    run.output_checksum = out_sum, run.wire_checksum = wire_sum;

    double err = max_relative_error(out.y, ref, model.hidden), worst = 0;
    MPI_Allreduce(&err, &worst, 1, MPI_DOUBLE, MPI_MAX, comm);
    run.max_rel_error = worst;
    std::vector<RankStats> ranks(n);
    MPI_Allgather(&out.stats, sizeof(RankStats), MPI_BYTE, ranks.data(), sizeof(RankStats), MPI_BYTE, comm);
    double wall = 0;
    for (const RankStats& r : ranks) wall = std::max(wall, r.total_s);
    std::vector<TimelineEvent> timeline = opt.exec.timeline ? gather_timeline(out.timeline, comm) : std::vector<TimelineEvent>{};
    if (rep == 0 || wall < run.wall_s) {  // the fastest repeat's figures, so they add up to wall_s
      run.wall_s = wall;
      run.ranks = std::move(ranks);
      run.timeline = std::move(timeline);
    }
  }
  run.plan = plan;
  return run;
}

nlohmann::json to_json(const StrategyRun& run, int gpus_per_node) {
  nlohmann::json ranks = nlohmann::json::array();
  double plan_nvlink = 0, plan_nic = 0;
  int64_t pairs = 0, messages = 0;
  double metadata = 0, planning = 0;
  for (size_t r = 0; r < run.ranks.size(); ++r) {
    const RankStats& s = run.ranks[r];
    plan_nvlink += s.plan_nvlink_bytes, plan_nic += s.plan_nic_bytes, pairs += s.pairs_computed, messages += s.messages;
    ranks.push_back({{"rank", r}, {"node", int(r) / gpus_per_node}, {"dispatch_s", s.dispatch_s}, {"compute_s", s.compute_s},
                     {"combine_s", s.combine_s}, {"total_s", s.total_s}, {"nvlink_bytes", s.nvlink_bytes},
                     {"nic_bytes", s.nic_bytes}, {"pairs_computed", s.pairs_computed}, {"messages", s.messages},
                     {"metadata_s", s.metadata_s}, {"planning_s", s.planning_s}});
    metadata = std::max(metadata, s.metadata_s), planning = std::max(planning, s.planning_s);
  }
  nlohmann::json j = {{"strategy", run.strategy}, {"executor", run.executor}, {"wall_s", run.wall_s},
          {"max_rel_error", run.max_rel_error}, {"output_checksum", hex(run.output_checksum)},
          {"wire_checksum", hex(run.wire_checksum)}, {"nvlink_bytes", run.nvlink_bytes()}, {"nic_bytes", run.nic_bytes()},
          {"plan_nvlink_bytes", plan_nvlink}, {"plan_nic_bytes", plan_nic},
          {"bytes_match_plan", plan_nvlink == run.nvlink_bytes() && plan_nic == run.nic_bytes()},
          {"pairs_computed", pairs}, {"messages", messages}, {"plan_tasks", run.plan_tasks},
          {"plan_transfers", run.plan_transfers}, {"rank_routing", run.rank_routing},
          {"metadata_s", metadata}, {"planning_s", planning}, {"ranks", ranks}};
  if (run.swap) j["swaps"] = swap_json(*run.swap);
  return j;
}

}  // namespace zepp::mpi
