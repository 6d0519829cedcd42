// The `sim` executor's report, computed from when each task ran (sim.hpp documents the fields).
#include <algorithm>
#include <string>

#include "exec/sim_detail.hpp"
#include "exec/task_label.hpp"

namespace zepp {

std::string task_label(const Task& t) {
  switch (t.kind) {
    case TaskKind::Compute: return "expert GEMM";
    case TaskKind::PreReduce: return "pre-reduce";
    case TaskKind::FinalReduce: return "final reduce";
    case TaskKind::Planning: return "planning";
    case TaskKind::SharedExpert: return "shared expert";
    case TaskKind::Transfer:
      if (t.phase == Phase::Planning) return "counts all-gather";
      if (t.phase == Phase::Weights) return t.multicast_at.empty() ? "weights" : "weights multicast";
      return std::string(to_string(t.phase)) + " " + to_string(t.hop);
    case TaskKind::Barrier: break;
  }
  return "barrier";
}

TimelineEvent task_event(const Task& t, const std::string& track, double start_s, double end_s) {
  TimelineEvent e{t.gpu, track, task_label(t), start_s, end_s};
  if (t.phase != Phase::Weights) e.rows = t.rows();
  if (t.kind != TaskKind::Compute) e.bytes = t.bytes;
  if (t.kind == TaskKind::Compute || t.phase == Phase::Weights) e.expert = t.expert;
  if (t.kind == TaskKind::Transfer) e.peer = t.dst_gpu;
  if (t.kind == TaskKind::PreReduce) e.node = t.node;
  if (t.kind == TaskKind::Transfer && t.phase != Phase::Weights && t.round > 0) e.round = t.round;
  return e;
}

}  // namespace zepp

namespace zepp::sim_detail {

namespace {

using Intervals = std::vector<std::pair<double, double>>;

// Sorted, disjoint union of intervals.
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [s, e] : v) {
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().second)
      out.back().second = std::max(out.back().second, e);
    else
      out.emplace_back(s, e);
  }
  return out;
}

double length(const Intervals& v) {
  double sum = 0;
  for (const auto& [s, e] : v) sum += e - s;
  return sum;
}

// Length of the intersection of two sorted disjoint unions.
double overlap(const Intervals& a, const Intervals& b) {
  double sum = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    sum += std::max(0.0, std::min(a[i].second, b[j].second) - std::max(a[i].first, b[j].first));
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return sum;
}

}  // namespace

LayerResult summarize(const CommPlan& plan, const TaskTimes& times, bool want_timeline) {
  const int n = plan.num_gpus;
  LayerResult r;
  r.gpus.resize(n);
  std::vector<Intervals> comm(n), busy(n);
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind == TaskKind::Barrier) continue;
    const double s = times.start[i], e = times.end[i];
    GpuStats& g = r.gpus[t.gpu];
    g.finish_s = std::max(g.finish_s, e);
    std::string track = "compute";
    if (t.phase == Phase::Planning) {  // the metadata exchange and planning: own figures, no bytes
      if (t.kind == TaskKind::Transfer) {
        r.gpus[t.dst_gpu].finish_s = std::max(r.gpus[t.dst_gpu].finish_s, e);
        r.metadata_s = std::max(r.metadata_s, e);
        track = t.link == Link::NIC ? "nic-out" : "nvlink-out";
      } else {
        r.planning_s = std::max(r.planning_s, e - s);
      }
    } else if (t.kind == TaskKind::Transfer) {
      GpuStats& d = r.gpus[t.dst_gpu];
      d.finish_s = std::max(d.finish_s, e);
      for (int32_t m : plan.multicast(t)) r.gpus[m].finish_s = std::max(r.gpus[m].finish_s, e);
      comm[t.gpu].emplace_back(s, e);  // once, at its sender (sim.hpp)
      if (t.link == Link::NIC) {
        g.nic_out_bytes += t.bytes;
        d.nic_in_bytes += t.bytes;
        r.inter_node_bytes += t.bytes;
        track = "nic-out";
      } else {
        g.nvlink_out_bytes += t.bytes;
        r.nvlink_bytes += t.bytes;
        track = "nvlink-out";
      }
    } else {
      busy[t.gpu].emplace_back(s, e);
      if (t.kind == TaskKind::Compute) {
        g.tokens_computed += t.pairs_at.size();
        g.compute_s += e - s;
      }
    }
    if (want_timeline) r.timeline.push_back(task_event(t, track, s, e));
  }
  double comm_total = 0, hidden = 0;
  for (int g = 0; g < n; ++g) {
    const Intervals c = merged(std::move(comm[g])), b = merged(std::move(busy[g]));
    comm_total += length(c);
    hidden += overlap(c, b);
    r.latency_s = std::max(r.latency_s, r.gpus[g].finish_s - plan.shared_expert_s);  // from the window's end
    r.max_nic_bytes = std::max({r.max_nic_bytes, r.gpus[g].nic_out_bytes, r.gpus[g].nic_in_bytes});
  }
  r.comm_hidden_fraction = comm_total > 0 ? hidden / comm_total : 0.0;
  std::stable_sort(r.timeline.begin(), r.timeline.end(),
                   [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_s < b.start_s; });
  return r;
}

}  // namespace zepp::sim_detail
