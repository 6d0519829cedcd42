// Zepp's locality-preferred routing (paper §4.1 equation (1), §5): a Router bound to one
// layer's placement, called with the serving engine's arrays as they are.
#include "routing/router.hpp"

#include <pybind11/stl.h>

#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>

#include "bindings.hpp"
#include "core/error.hpp"
#include "core/presets.hpp"
#include "core/topology_file.hpp"

namespace zepp::py {

namespace {

// C-contiguous arrays of exactly T: pybind11 passes numpy's buffer without a copy and refuses
// anything else (the Python wrapper converts other inputs first).
template <class T>
using Exact = pb::array_t<T, pb::array::c_style>;

// ArgumentError("out: must not overlap <in_name>") when `out` shares memory with an input: the
// core reads its inputs while it writes `out` (check_apart, routing/router.hpp).
void apart(const pb::array& out, const pb::array& in, const char* in_name) {
  check_apart(out.data(), size_t(out.nbytes()), in.data(), size_t(in.nbytes()), "out", in_name);
}

// GemmCost's five figures (hidden, ffn, peak_flops, read_s, launch_s) as a tuple, the form
// gemm_cost returns and PyRouter takes.
using GemmFields = std::tuple<double, double, double, double, double>;

GemmCost gemm_of(const std::optional<GemmFields>& f) {
  if (!f) return {};
  const auto& [hidden, ffn, peak_flops, read_s, launch_s] = *f;
  return GemmCost(hidden, ffn, peak_flops, read_s, launch_s);  // ArgumentError("gemm: ...") when out of range
}

class PyRouter {
 public:
  // phy2log [P] (validated by the Python wrapper), E experts, num_nodes x num_gpus / num_nodes;
  // gemm: None (rows only) or GemmCost's figures (consolidation by GEMM time, consolidate.cpp).
  PyRouter(Array<int32_t> phy2log, int num_experts, int num_nodes, int num_gpus, double balance_slack,
           const std::optional<GemmFields>& gemm)
      : router_(placement(phy2log, num_experts, num_gpus), cluster(num_nodes, num_gpus / num_nodes), balance_slack,
                gemm_of(gemm)) {}

  // Replicas the last count plan (route or plan) emptied by consolidation; 0 without gemm.
  int consolidated() {
    std::lock_guard<std::mutex> one_at_a_time(mutex_);
    return router_.consolidated();
  }

  // topk_ids [T, k] and src_rank [T] -> slots [T, k] written into `out` (topk_ids' dtype and
  // shape), which is returned. Runs without the GIL; calls on one Router from several Python
  // threads take turns.
  template <class Id, class Src>
  Exact<Id> route(Exact<Id> topk_ids, Exact<Src> src_rank, Exact<Id> out, int threads) {
    if (topk_ids.ndim() != 2) throw ArgumentError("topk_ids: expected a 2-D array");
    if (src_rank.ndim() != 1 || src_rank.shape(0) != topk_ids.shape(0))
      throw ArgumentError("src_rank: expected one rank per token");
    if (out.ndim() != 2 || out.shape(0) != topk_ids.shape(0) || out.shape(1) != topk_ids.shape(1))
      throw ArgumentError("out: expected the shape of topk_ids");
    apart(out, topk_ids, "topk_ids");
    apart(out, src_rank, "src_rank");
    const int64_t T = topk_ids.shape(0);
    const int k = int(topk_ids.shape(1));
    const Id* ids = topk_ids.data();
    const Src* src = src_rank.data();
    Id* slots = out.mutable_data();
    {
      pb::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mutex_);
      router_.route_tokens(ids, src, T, k, slots, threads);
    }
    return out;
  }

  // The rank's pairs per expert: topk_ids [T, k] -> out [E].
  template <class Id>
  Exact<int64_t> count(Exact<Id> topk_ids, Exact<int64_t> out) {
    if (topk_ids.ndim() != 2) throw ArgumentError("topk_ids: expected a 2-D array");
    if (out.ndim() != 1 || out.shape(0) != router_.num_experts()) throw ArgumentError("out: expected [num_experts]");
    apart(out, topk_ids, "topk_ids");
    const Id* ids = topk_ids.data();
    const int64_t T = topk_ids.shape(0);
    const int k = int(topk_ids.shape(1));
    std::span<int64_t> row(out.mutable_data(), size_t(out.shape(0)));
    {
      pb::gil_scoped_release unlocked;
      router_.count_rank(ids, T, k, row);
    }
    return out;
  }

  // counts [G, E] -> out [S, G], the count-level plan.
  Exact<int64_t> plan(Exact<int64_t> counts, Exact<int64_t> out) {
    if (counts.ndim() != 2 || counts.shape(0) != router_.num_gpus() || counts.shape(1) != router_.num_experts())
      throw ArgumentError("counts: expected shape [num_gpus, num_experts] = [" + std::to_string(router_.num_gpus()) +
                          ", " + std::to_string(router_.num_experts()) + "]");
    if (out.ndim() != 2 || out.shape(0) != router_.num_slots() || out.shape(1) != router_.num_gpus())
      throw ArgumentError("out: expected shape [num_slots, num_gpus]");
    apart(out, counts, "counts");
    std::span<const int64_t> c(counts.data(), size_t(counts.size()));
    std::span<int64_t> m(out.mutable_data(), size_t(out.size()));
    {
      pb::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mutex_);
      router_.plan(c, m);
    }
    return out;
  }

  // One rank's tokens: topk_ids [T, k] -> out [T, k] (topk_ids' dtype), from plan [S, G].
  template <class Id>
  Exact<Id> route_rank(Exact<Id> topk_ids, int rank, Exact<int64_t> plan, Exact<Id> out) {
    if (topk_ids.ndim() != 2) throw ArgumentError("topk_ids: expected a 2-D array");
    if (plan.ndim() != 2 || plan.shape(0) != router_.num_slots() || plan.shape(1) != router_.num_gpus())
      throw ArgumentError("plan: expected shape [num_slots, num_gpus] = [" + std::to_string(router_.num_slots()) +
                          ", " + std::to_string(router_.num_gpus()) + "]");
    if (out.ndim() != 2 || out.shape(0) != topk_ids.shape(0) || out.shape(1) != topk_ids.shape(1))
      throw ArgumentError("out: expected the shape of topk_ids");
    apart(out, topk_ids, "topk_ids");
    apart(out, plan, "plan");
    const Id* ids = topk_ids.data();
    const int64_t T = topk_ids.shape(0);
    const int k = int(topk_ids.shape(1));
    std::span<const int64_t> m(plan.data(), size_t(plan.size()));
    Id* slots = out.mutable_data();
    {
      pb::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mutex_);
      router_.route_rank(ids, T, k, rank, m, slots);
    }
    return out;
  }

 private:
  static Placement placement(Array<int32_t>& phy2log, int num_experts, int num_gpus) {
    Placement p;
    p.num_gpus = num_gpus;
    p.num_experts = num_experts;
    p.slots_per_gpu = int(phy2log.size()) / num_gpus;
    p.phy2log.assign(phy2log.data(), phy2log.data() + phy2log.size());
    return p;
  }

  Router router_;
  std::mutex mutex_;
};

}  // namespace

void bind_routing(pb::module_& m) {
  // The GemmCost the simulator's routing uses for model preset `model` on cluster `topology` (a
  // preset or topology file, as `zepp simulate --model/--topology`): gemm_cost(model, topo),
  // as the tuple (hidden, ffn, peak_flops FLOP/s, read_s s, launch_s s).
  m.def("gemm_cost", [](const std::string& model, const std::string& topology) {
    const GemmCost g = gemm_cost(model_preset(model, "model"), cluster_topology(topology, 1, "topology"));
    return GemmFields{g.hidden, g.ffn, g.peak_flops, g.read_s, g.launch_s};
  });
  pb::class_<PyRouter>(m, "Router")
      .def(pb::init<Array<int32_t>, int, int, int, double, const std::optional<GemmFields>&>())
      .def("consolidated", &PyRouter::consolidated)
      .def("route", &PyRouter::route<int32_t, int32_t>)
      .def("route", &PyRouter::route<int32_t, int64_t>)
      .def("route", &PyRouter::route<int64_t, int32_t>)
      .def("route", &PyRouter::route<int64_t, int64_t>)
      .def("count", &PyRouter::count<int32_t>)
      .def("count", &PyRouter::count<int64_t>)
      .def("plan", &PyRouter::plan)
      .def("route_rank", &PyRouter::route_rank<int32_t>)
      .def("route_rank", &PyRouter::route_rank<int64_t>);
}

}  // namespace zepp::py
