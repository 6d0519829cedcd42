// simulate_plan: argument checks, then the simulation in a forked child process (SimGrid
// allows one engine per process), its result or error sent back over a pipe.
#include "exec/sim.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "core/child_process.hpp"
#include "core/error.hpp"
#include "core/gemm_curve.hpp"
#include "exec/sim_detail.hpp"
#include "exec/sim_measured.hpp"

namespace zepp {

namespace {

void check(const CommPlan& plan, const Topology& topo) {
  require(topo.nodes == plan.nodes && topo.gpus_per_node == plan.gpus_per_node, "topo",
          "has " + std::to_string(topo.nodes) + " x " + std::to_string(topo.gpus_per_node) +
              " GPUs, the plan was built for " + std::to_string(plan.nodes) + " x " + std::to_string(plan.gpus_per_node));
  for (const auto& [value, name] : {std::pair{topo.nvlink_bw, "nvlink_bw"}, {topo.nic_bw, "nic_bw"},
                                    {topo.compute.peak_flops, "peak_flops"}, {topo.compute.hbm_bw, "hbm_bw"}})
    require(value > 0 && std::isfinite(value), "topo", std::string(name) + " must be positive");
  for (const auto& [value, name] : {std::pair{topo.nvlink_latency, "nvlink_latency"}, {topo.nic_latency, "nic_latency"},
                                    {topo.compute.kernel_launch, "kernel_launch"}})
    require(value >= 0 && std::isfinite(value), "topo", std::string(name) + " must be >= 0");
  const int n = plan.num_gpus;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    const std::string what = "task " + std::to_string(i);
    require(t.gpu >= 0 && t.gpu < n, "plan", what + " runs on GPU " + std::to_string(t.gpu) + " outside the topology");
    if (t.kind == TaskKind::Transfer)
      require(t.dst_gpu >= 0 && t.dst_gpu < n && t.dst_gpu != t.gpu && t.bytes > 0, "plan",
              what + " needs a destination GPU other than its source and bytes > 0");
    if (!t.multicast_at.empty()) {
      require(topo.nvlink_model == NvlinkModel::Switch && topo.multicast_port_output > 0, "topo",
              "cannot multicast (" + what + "): needs NVSwitch with multicast_port_output > 0");
      for (int32_t m : plan.multicast(t))
        require(m >= 0 && m < n && topo.node_of(m) == topo.node_of(t.gpu), "plan",
                what + " multicasts to GPU " + std::to_string(m) + " outside its sender's node");
    }
    for (int32_t d : plan.deps(t))
      require(d >= 0 && size_t(d) < plan.tasks.size() && size_t(d) != i, "plan", what + " has a dependency out of range");
  }
}

void write_all(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the parent went away; nothing left to tell
    done += size_t(w);
  }
}

std::string read_all(int fd) {
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    data.append(buf, size_t(r));
  }
  return data;
}

// Runs the simulation in a forked child; `measured`: expert GEMM curves instead of the roofline.
LayerResult simulate(const CommPlan& plan, const Topology& topo, const std::vector<GemmCurve>* measured, bool want_timeline) {
  check(plan, topo);
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("sim: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // or buffered output would be written twice
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("sim: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {  // child: first byte 'R' + result, or 'E' + error message
    die_with_parent(parent);
    ::close(fds[0]);
    std::string msg = "R";
    try {
      msg += sim_detail::encode(sim_detail::summarize(plan, sim_detail::run_engine(plan, topo, measured), want_timeline));
    } catch (const std::exception& e) {
      msg = "E";
      msg += e.what();
    }
    write_all(fds[1], msg);
    ::_exit(0);  // skip the parent's atexit handlers and destructors
  }
  ::close(fds[1]);
  const std::string msg = read_all(fds[0]);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw std::runtime_error("sim: the simulation process died with signal " + std::to_string(WTERMSIG(status)));
  if (msg.empty() || (msg[0] != 'R' && msg[0] != 'E'))
    throw std::runtime_error("sim: the simulation process exited without a result");
  if (msg[0] == 'E') throw std::runtime_error("sim: " + msg.substr(1));
  return sim_detail::decode(msg.substr(1));
}

}  // namespace

LayerResult simulate_plan(const CommPlan& plan, const Topology& topo, bool want_timeline) {
  return simulate(plan, topo, nullptr, want_timeline);
}

LayerResult simulate_plan_measured(const CommPlan& plan, const Topology& topo, const std::vector<GemmCurve>& gemm,
                                   bool want_timeline) {
  measured_time(gemm, 1, plan.model.hidden, plan.model.ffn);  // throws unless the plan's shape was measured
  return simulate(plan, topo, &gemm, want_timeline);
}

}  // namespace zepp
