// The `sim` executor: runs a CommPlan on a simulated cluster with SimGrid S4U (DESIGN.md §1,
// §4) and reports what happened (exec/result.hpp).
//
// Cluster: one host per GPU; one NVLink link per ordered GPU pair inside a node (nvlink_bw,
// nvlink_latency), or on an NVSwitch node one NVLink egress and one ingress port per GPU shared
// by all of its flows (NvlinkModel::Switch); per GPU one NIC egress and one NIC ingress link (nic_bw; the put's
// nic_latency sits on the egress link). An inter-node transfer crosses the sender's egress
// and the receiver's ingress link. Flows share links max-min fairly (`network/model:CM02`,
// `network/crosstraffic:0`: no correction factors, 1 GB over 1 GB/s takes 1 s).
//
// Tasks run when their dependencies are done. A GPU's compute stream runs one task at a time,
// starting its ready task of lowest priority when idle. Transfers, with topo.link_sharing =
// Fair (the default), start as soon as they are ready and run concurrently, each paying its
// link's per-message latency once and sharing bandwidth max-min with the flows on the same
// links; with Serial each NIC egress and each NVLink pair is a resource like a compute stream
// (one transfer at a time, lowest priority first: the model before issue 10); with Pair each
// (sender, receiver) GPU pair is such a resource and different pairs share links max-min (one
// message in flight per queue pair). Durations: Compute = expert_compute_time(pairs, model, topo)
// (core/roofline.hpp); PreReduce/FinalReduce = bytes / hbm_bw; transfers as simulated; Barrier
// = 0.
//
// SimGrid allows one engine per process, so every call runs in a forked child process that
// sends the result back over a pipe; callers may simulate any number of plans in one program.
// The caller must be single-threaded when it calls (fork).
#pragma once
#include <string>
#include <vector>

#include "core/types.hpp"
#include "exec/result.hpp"
#include "plan/comm_plan.hpp"

namespace zepp {

// Simulates one layer invocation. Result: latency = slowest GPU's finish (a GPU finishes with
// the last task it runs, sends or receives); per-GPU stats; bytes per link class (weights
// included in nvlink_bytes); max_nic_bytes over egress and ingress; comm_hidden_fraction =
// sum over GPUs of the time the transfers it sends overlap its compute stream being busy,
// divided by the sum over GPUs of the time any transfer it sends is in flight (0 when no
// transfers): each transfer counts once, at its sender, and concurrent ones once together; timeline (want_timeline): one event per task on tracks "compute" (compute and
// reductions), "nvlink-out" and "nic-out" (sender's side), ordered by start time.
// Throws ArgumentError ("topo", "plan") when the topology does not match the plan or has a
// non-positive bandwidth/compute rate, or a task names a GPU outside it; std::runtime_error
// when the simulation itself fails (message from the child process).
LayerResult simulate_plan(const CommPlan& plan, const Topology& topo, bool want_timeline = false);

}  // namespace zepp
