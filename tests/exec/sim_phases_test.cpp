// Per-GPU phases read from the `sim` executor's timeline (exec/phases.hpp), defined as the `mpi`
// executor measures them so `zepp run --predict` compares like with like (issue 16).
// Topology of tests/plan/fixture.hpp: NIC 10 B/s, HBM 100 B/s, no latency; an expert GEMM of the
// small model (hidden 8, ffn 1) over 4 tokens is bound by its 48 weight bytes: 0.48 s.
#include <gtest/gtest.h>

#include "../plan/fixture.hpp"
#include "core/error.hpp"
#include "exec/phases.hpp"
#include "exec/sim.hpp"
#include "exec/task_label.hpp"

namespace zepp {
namespace {

// Appends a task to `plan`; returns it.
Task& make(CommPlan& plan, TaskKind kind, Phase phase, int gpu, double bytes, const std::vector<int32_t>& deps) {
  Task t;
  t.kind = kind;
  t.phase = phase;
  t.gpu = gpu;
  t.bytes = bytes;
  const int32_t id = plan.add_task(t);
  plan.set_deps(id, deps);
  return plan.tasks[size_t(id)];
}

TEST(SimPhases, DispatchEndAndCombineSpanAsTheMpiExecutorMeasuresThem) {
  const Topology topo = test::small_topology(2, 1);
  CommPlan plan;
  plan.nodes = 2, plan.gpus_per_node = 1, plan.num_gpus = 2, plan.top_k = 1;
  plan.model = test::small_model(2, 1);
  plan.token_bytes = plan.model.token_bytes();
  plan.tasks.reserve(5);  // make returns references into it
  Task& dispatch = make(plan, TaskKind::Transfer, Phase::Dispatch, 0, 20, {});  // 20 B / 10 B/s: [0, 2]
  dispatch.dst_gpu = 1, dispatch.link = Link::NIC;
  make(plan, TaskKind::Compute, Phase::Compute, 1, 0, {0});  // [2, 2.48]
  plan.set_rows(1, {}, {}, {0, 1, 2, 3});
  make(plan, TaskKind::PreReduce, Phase::Combine, 1, 10, {1});       // 10 B / 100 B/s: [2.48, 2.58]
  Task& back = make(plan, TaskKind::Transfer, Phase::Combine, 1, 30, {2});  // [2.58, 5.58]
  back.dst_gpu = 0, back.link = Link::NIC;
  make(plan, TaskKind::FinalReduce, Phase::Combine, 0, 20, {3});  // [5.58, 5.78]

  const LayerResult r = simulate_plan(plan, topo, true);
  const std::vector<PhaseTimes> p = phase_times(r, 2);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NEAR(p[0].dispatch_end_s, 2.0, 1e-9);  // sender and receiver both see it end
  EXPECT_NEAR(p[1].dispatch_end_s, 2.0, 1e-9);
  EXPECT_NEAR(p[1].compute_s, 0.48, 1e-9);
  EXPECT_EQ(p[0].compute_s, 0.0);
  EXPECT_NEAR(p[1].combine_s, 5.58 - 2.48, 1e-9);  // its pre-reduction starts, its return send ends
  EXPECT_NEAR(p[0].combine_s, 0.2, 1e-9);          // only its final reduction runs there
  EXPECT_NEAR(r.latency_s, 5.78, 1e-9);
  EXPECT_THROW(phase_times(r, 1), ArgumentError);  // the timeline names GPU 1
}

TEST(SimPhases, TaskLabelsNameWhatTheTimelineShows) {
  CommPlan plan;
  plan.tasks.reserve(2);
  Task& t = make(plan, TaskKind::Compute, Phase::Compute, 0, 0, {});
  t.expert = 17;
  plan.set_rows(0, {}, {}, {1, 2, 3});
  EXPECT_EQ(task_label(t), "expert GEMM");
  const TimelineEvent te = task_event(t, "compute", 1, 2);
  EXPECT_EQ(te.rows, 3);
  EXPECT_EQ(te.expert, 17);
  EXPECT_EQ(te.peer, -1);
  Task& f = make(plan, TaskKind::FinalReduce, Phase::Combine, 0, 0, {});
  plan.set_rows(1, {4, 5});
  EXPECT_EQ(task_label(f), "final reduce");
  EXPECT_EQ(task_event(f, "compute", 0, 1).rows, 2);
}

}  // namespace
}  // namespace zepp
