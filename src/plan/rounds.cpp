// Algorithm 1's round order as dependencies (comm_plan.hpp, keep_round_order).
//
// Why dependencies. Links carry concurrent flows (exec/sim.hpp, LinkSharing::Fair), so a put
// that is ready early would otherwise start beside the NIC's earlier-round put, land on a
// receiver still taking that earlier round, and both would run at a fraction of the rate.
// Algorithm 1 (paper §4.2, lines 3 and 17) sends one round after the other; this edit states it.
//
// Invariants, for every phase P in {dispatch, combine}:
//  (1) NIC order: for every sending GPU g and rounds r < r' that both have puts of P from g,
//      every put of round r' depends (transitively) on every put of round r. Proof: the
//      rounds present at g are chained in increasing order, each put of the next present round
//      depending directly on every put of the one before; dependency is transitive.
//  (2) Relay order: the same holds for the relays of P on each ordered NVLink pair (i, j), so a
//      round's relays never share that pair with a later round's relays and the round's put
//      waits only for its own round's relays at full NVLink rate.
//  (3) No cycle is added: every new edge goes from a task of round r to a task of round r' > r
//      of the same phase, hop and sender (and receiver for relays). A cycle would need a path
//      back from round r' to round r; existing dependencies inside a phase go from relay to put
//      to forward of the same round, from compute to combine, and never from a later round's
//      put or relay to an earlier round's put or relay of the same phase.
#include <algorithm>
#include <map>
#include <tuple>

#include "plan/comm_plan.hpp"

namespace zepp {

void keep_round_order(CommPlan& plan) {
  // (phase, hop, sender, receiver or -1 for puts) -> round -> tasks
  using Key = std::tuple<Phase, Hop, int32_t, int32_t>;
  std::map<Key, std::map<int32_t, std::vector<int32_t>>> chains;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Transfer || (t.phase != Phase::Dispatch && t.phase != Phase::Combine) || t.round <= 0)
      continue;
    if (t.hop == Hop::Put)
      chains[{t.phase, t.hop, t.gpu, -1}][t.round].push_back(int32_t(i));
    else if (t.hop == Hop::Relay)
      chains[{t.phase, t.hop, t.gpu, t.dst_gpu}][t.round].push_back(int32_t(i));
  }
  for (const auto& [key, rounds] : chains) {
    const std::vector<int32_t>* previous = nullptr;
    for (const auto& [round, tasks] : rounds) {
      if (previous)
        for (int32_t id : tasks) {
          auto& deps = plan.tasks[id].deps;
          deps.insert(deps.end(), previous->begin(), previous->end());
          std::sort(deps.begin(), deps.end());
          deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        }
      previous = &tasks;
    }
  }
}

}  // namespace zepp
