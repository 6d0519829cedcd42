// The SimGrid side of the `sim` executor: the platform (sim.hpp) and a list scheduler that
// starts each task when its dependencies are done and, for tasks that hold a resource, the
// resource is free.
//
// What serialises. A GPU's compute stream runs one task at a time: expert GEMMs and reductions
// are kernels on one CUDA stream, and kernels of one stream run in issue order (CUDA C++
// Programming Guide, "Streams"). Links do not: an RDMA NIC and an NVLink port carry many
// messages at once and share their bandwidth between them, which SimGrid's CM02 model
// computes max-min fairly (LinkSharing::Fair, the default). Any order among transfers that a
// strategy wants (Algorithm 1's rounds) is a dependency in its plan, not a property of the
// link. LinkSharing::Serial keeps the executor's earlier model, one transfer at a time per NIC
// egress and per NVLink pair in priority order, for comparison. LinkSharing::Pair sits between:
// one transfer in flight per (sender, receiver) GPU pair, in priority order, as an RDMA queue
// pair processes its messages in order; pairs share links max-min. Plans that send many
// messages per pair (Zepp's completion waves and dispatch chunks) then keep far fewer flows in
// the max-min system, whose re-solve at every completion dominates large simulations.
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <cmath>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>

#include "core/roofline.hpp"
#include "exec/sim_detail.hpp"
#include "exec/sim_progress.hpp"

namespace sg4 = simgrid::s4u;

namespace zepp::sim_detail {

// Host speed: an Exec of s seconds is s * kSpeed flops (seconds are the unit of work).
constexpr double kSpeed = 1e9;

double stream_task_seconds(const Task& t, const CommPlan& plan, const Topology& topo, const std::vector<GemmCurve>* measured) {
  switch (t.kind) {
    case TaskKind::Compute:
      if (measured) return measured_time(*measured, t.pairs_at.size(), plan.model.hidden, plan.model.ffn);
      return expert_compute_time(t.pairs_at.size(), plan.model, topo);
    case TaskKind::PreReduce:
    case TaskKind::FinalReduce: return t.bytes / topo.compute.hbm_bw;
    case TaskKind::Planning: return t.seconds;
    case TaskKind::SharedExpert: return shared_expert_time(int64_t(std::llround(t.bytes / plan.token_bytes)), plan.model, topo);
    default: return 0.0;
  }
}

namespace {

// One host per GPU. NVLink: a link per ordered GPU pair (NvlinkModel::PerPair), or on an
// NVSwitch node (NvlinkModel::Switch) one egress and one ingress port per GPU, each nvlink_bw,
// so every flow leaving (entering) a GPU shares its port; the switch itself is non-blocking.
// NICs: one egress and one ingress link per GPU; an inter-node flow crosses the sender's egress
// and the receiver's ingress. Latencies sit on the sending side's link.
//
// In-switch multicast (CommPlan::multicast, iser-moe.txt §2.1, §3.3): a store from GPU s into group
// M is one flow from s to a host of its own for (s, M), routed over s's egress port, a link of
// multicast_port_output / |M| (one injecting port's replication rate, shared by that port's
// stores into M) and every member's ingress port: the payload leaves s once and enters each
// member once, at the rate of the tightest of these. (Stores of one port into different groups
// each get their own replication link: we have no measurement of how they share it.)
struct Platform {
  std::vector<sg4::Host*> hosts;      // [GPUs]
  std::vector<sg4::Host*> multicast;  // [tasks] a multicast store's target host, else nullptr
};

Platform build_platform(const Topology& topo, const CommPlan& plan) {
  const int n = topo.num_gpus();
  const bool nvswitch = topo.nvlink_model == NvlinkModel::Switch;
  auto* zone = sg4::create_full_zone("cluster");
  std::vector<sg4::Host*> hosts(n);
  std::vector<sg4::Link*> nic_out(n), nic_in(n), nvl_out(nvswitch ? n : 0), nvl_in(nvswitch ? n : 0);
  for (int g = 0; g < n; ++g) {
    const std::string id = std::to_string(g);
    hosts[g] = zone->create_host("gpu" + id, kSpeed)->seal();
    nic_out[g] = zone->create_link("nic-out" + id, topo.nic_bw)->set_latency(topo.nic_latency)->seal();
    nic_in[g] = zone->create_link("nic-in" + id, topo.nic_bw)->seal();
    if (nvswitch) {
      nvl_out[g] = zone->create_link("nvswitch-out" + id, topo.nvlink_bw)->set_latency(topo.nvlink_latency)->seal();
      nvl_in[g] = zone->create_link("nvswitch-in" + id, topo.nvlink_bw)->seal();
    }
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      std::vector<sg4::LinkInRoute> route;
      if (topo.node_of(a) != topo.node_of(b)) {
        route = {sg4::LinkInRoute(nic_out[a]), sg4::LinkInRoute(nic_in[b])};
      } else if (nvswitch) {
        route = {sg4::LinkInRoute(nvl_out[a]), sg4::LinkInRoute(nvl_in[b])};
      } else {
        auto* nvlink = zone->create_link("nvlink" + std::to_string(a) + "-" + std::to_string(b), topo.nvlink_bw)
                           ->set_latency(topo.nvlink_latency)
                           ->seal();
        route = {sg4::LinkInRoute(nvlink)};
      }
      zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr, route, false);
    }
  std::vector<sg4::Host*> multicast(plan.tasks.size(), nullptr);
  std::map<std::pair<int, std::vector<int32_t>>, sg4::Host*> groups;  // (sender, members) -> host
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Transfer || t.multicast_at.empty()) continue;
    const auto members = plan.multicast(t);
    auto [it, fresh] = groups.emplace(std::pair{int(t.gpu), std::vector<int32_t>(members.begin(), members.end())}, nullptr);
    if (fresh) {
      const std::string id = "mc" + std::to_string(groups.size());
      it->second = zone->create_host(id, kSpeed)->seal();
      auto* port = zone->create_link(id + "-port", topo.multicast_port_output / double(members.size()))->seal();
      std::vector<sg4::LinkInRoute> route = {sg4::LinkInRoute(nvl_out[t.gpu]), sg4::LinkInRoute(port)};
      for (int32_t m : members) route.emplace_back(nvl_in[m]);
      zone->add_route(hosts[t.gpu]->get_netpoint(), it->second->get_netpoint(), nullptr, nullptr, route, false);
    }
    multicast[i] = it->second;
  }
  zone->seal();
  return {hosts, multicast};
}

// The list scheduler, without an actor per task: it starts each task as an asynchronous S4U
// activity (a Comm between two hosts, an Exec on one) from SimGrid's maestro, and
// Activity::on_completion calls back into it when one finishes, still at the finishing instant,
// where it records the time, releases the task's resource and starts what became ready. A
// stream task of zero seconds completes on the spot. Activity handles are kept until the next
// completion (SimGrid still touches the finished one after the callback returns).
class Scheduler {
 public:
  Scheduler(const CommPlan& plan, const Topology& topo, const std::vector<GemmCurve>* measured, Platform platform)
      : plan_(plan), topo_(topo), measured_(measured), hosts_(std::move(platform.hosts)),
        multicast_(std::move(platform.multicast)), n_(topo.num_gpus()),
        progress_(SimProgress::for_stderr(int64_t(plan.tasks.size()))) {
    const size_t T = plan.tasks.size();
    times_.start.assign(T, -1);
    times_.end.assign(T, -1);
    waiting_.resize(T);
    resource_.resize(T);
    activity_.resize(T);
    succ_begin_.assign(T + 1, 0);
    for (size_t i = 0; i < T; ++i) {
      waiting_[i] = int32_t(plan.tasks[i].deps_at.size());
      resource_[i] = resource(plan.tasks[i]);
      for (int32_t d : plan.deps(plan.tasks[i])) ++succ_begin_[size_t(d) + 1];
    }
    for (size_t i = 0; i < T; ++i) succ_begin_[i + 1] += succ_begin_[i];
    successors_.resize(succ_begin_[T]);
    std::vector<size_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (size_t i = 0; i < T; ++i)
      for (int32_t d : plan.deps(plan.tasks[i])) successors_[fill[size_t(d)]++] = int32_t(i);
    queues_.resize(size_t(n_) * (2 + n_));
    busy_.assign(queues_.size(), false);
  }

  void start_roots() {
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) {
      if (a.get_state() != sg4::Activity::State::FINISHED) return;
      const auto id = int32_t(reinterpret_cast<intptr_t>(a.get_data<void>()));
      released_.clear();  // handles of earlier completions, safe to drop now
      released_.push_back(std::move(activity_[id]));
      finished(id);
    });
    // Queue every root before starting any, so each resource starts its lowest-priority root
    // (not the lowest-index one) at time zero.
    starting_ = true;
    for (size_t i = 0; i < plan_.tasks.size(); ++i)
      if (waiting_[i] == 0) make_ready(int32_t(i));
    starting_ = false;
    for (size_t r = 0; r < queues_.size(); ++r) try_start(r);
    start_touched();
  }
  TaskTimes times() const { return times_; }
  void end_progress() { progress_.finish(); }

 private:
  // Resource index: compute stream g, NIC egress n + g, GPU pair a -> b: 2n + a * n + b (an
  // NVLink pair under Serial, any transfer of the pair under Pair: a pair is either on one
  // node or on two, so its transfers use one link kind). kNone: a transfer under fair sharing,
  // which starts as soon as its dependencies are done.
  static constexpr size_t kNone = size_t(-1);
  size_t resource(const Task& t) const {
    if (t.kind != TaskKind::Transfer) return size_t(t.gpu);
    if (topo_.link_sharing == LinkSharing::Fair) return kNone;
    if (t.link == Link::NIC && topo_.link_sharing == LinkSharing::Serial) return size_t(n_ + t.gpu);
    return size_t(2 * n_) + size_t(t.gpu) * n_ + t.dst_gpu;
  }

  void make_ready(int32_t id) {
    const Task& t = plan_.tasks[id];
    if (t.kind == TaskKind::Barrier) {
      times_.start[id] = times_.end[id] = sg4::Engine::get_clock();
      complete(id);
      return;
    }
    const size_t r = resource_[id];
    if (r == kNone) {
      start(id);
      return;
    }
    queues_[r].push({t.priority, id});
    touched_.push_back(r);
  }

  // Starts idle resources only after every task that became ready at this instant (by one
  // completion, or at time 0) is queued, so the lowest priority among them goes first.
  void start_touched() {
    while (!touched_.empty()) {
      std::vector<size_t> touched;
      touched.swap(touched_);
      for (size_t r : touched) try_start(r);
    }
  }

  void try_start(size_t r) {
    if (starting_ || busy_[r] || queues_[r].empty()) return;
    const int32_t id = queues_[r].top().second;
    queues_[r].pop();
    busy_[r] = true;
    start(id);
  }

  // Starts task `id` as an asynchronous activity; a stream task of zero seconds ends here.
  void start(int32_t id) {
    const Task& t = plan_.tasks[id];
    times_.start[id] = sg4::Engine::get_clock();
    sg4::ActivityPtr a;
    if (t.kind == TaskKind::Transfer) {
      auto comm = sg4::Comm::sendto_init(hosts_[t.gpu], multicast_[id] ? multicast_[id] : hosts_[t.dst_gpu]);
      comm->set_payload_size(uint64_t(t.bytes));
      a = comm;
    } else if (const double s = stream_task_seconds(t, plan_, topo_, measured_); s > 0) {
      auto exec = sg4::Exec::init();  // not Host::exec_init: that one needs a calling actor
      exec->set_host(hosts_[t.gpu])->set_flops_amount(s * kSpeed);
      a = exec;
    } else {
      finished(id);
      return;
    }
    a->set_data(reinterpret_cast<void*>(intptr_t(id)));
    activity_[id] = a;
    a->start();
  }

  void finished(int32_t id) {
    times_.end[id] = sg4::Engine::get_clock();
    if (const size_t r = resource_[id]; r != kNone) {
      busy_[r] = false;
      touched_.push_back(r);
    }
    complete(id);
    start_touched();
  }

  void complete(int32_t id) {
    progress_.task_done(sg4::Engine::get_clock());
    for (size_t k = succ_begin_[id]; k < succ_begin_[size_t(id) + 1]; ++k)
      if (const int32_t s = successors_[k]; --waiting_[s] == 0) make_ready(s);
  }

  const CommPlan& plan_;
  const Topology& topo_;
  const std::vector<GemmCurve>* measured_;
  std::vector<sg4::Host*> hosts_;
  std::vector<sg4::Host*> multicast_;  // [tasks] multicast stores' target hosts
  int n_;
  bool starting_ = false;
  TaskTimes times_;
  std::vector<int32_t> waiting_;
  std::vector<size_t> resource_;                  // [tasks] resource(task)
  std::vector<size_t> succ_begin_;                // [tasks + 1] CSR into successors_
  std::vector<int32_t> successors_;               // tasks that depend on each task
  std::vector<sg4::ActivityPtr> activity_;        // [tasks] the running activity
  std::vector<sg4::ActivityPtr> released_;        // finished, dropped at the next completion
  using Entry = std::pair<int64_t, int32_t>;  // (priority, task): lowest first, ties by index
  std::vector<std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>> queues_;
  std::vector<bool> busy_;
  std::vector<size_t> touched_;  // resources with newly queued tasks
  SimProgress progress_;         // a line on stderr when it is a terminal and the run is long
};

}  // namespace

TaskTimes run_engine(const CommPlan& plan, const Topology& topo, const std::vector<GemmCurve>* measured) {
  xbt_log_control_set("root.thresh:warning");
  int argc = 1;
  char name[] = "zepp-sim";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  // Plain max-min fluid sharing, no correction factors (DESIGN.md §4); timing precision far
  // below the microsecond-scale kernels and messages simulated here.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("surf/precision:1e-12");
  Scheduler scheduler(plan, topo, measured, build_platform(topo, plan));
  scheduler.start_roots();
  engine.run();
  scheduler.end_progress();
  TaskTimes times = scheduler.times();
  for (size_t i = 0; i < times.end.size(); ++i)
    if (times.end[i] < 0) throw std::runtime_error("sim: task " + std::to_string(i) + " never ran (dependency cycle?)");
  return times;
}

}  // namespace zepp::sim_detail
