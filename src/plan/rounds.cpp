// Algorithm 1's round order as dependencies (comm_plan.hpp, keep_round_order).
//
// Why dependencies. Links carry concurrent flows (exec/sim.hpp, LinkSharing::Fair), and a
// transfer starts as soon as its dependencies are done. A NIC's round-(r+1) put whose rows are
// ready at once would otherwise start before its round-r put that waits for a split relay,
// out of Algorithm 1's order (paper §4.2, lines 3 and 17: round after round).
//
// What is kept: issue order. Each put of round r+1 depends on everything the NIC's round-r
// puts depend on, so it is ready, and starts, no earlier than they are; once started, puts of
// consecutive rounds may share the NIC. Waiting for the round-r put to *end* instead was
// measured on the fair model (docs/reproduction.md, "Round order"): it leaves a NIC at a
// fraction of its rate whenever its current put shares a receiver with another node's put of a
// different round, and made full zepp lose to its own ablations by up to 18%.
//
// Where Zepp keeps it: nowhere as dependencies (its rule, StrategyOptions::round_order_rule;
// `zepp/round-order-always` is the ablation that keeps it in both phases). Transfers of later
// rounds still get later priorities (transfer_priority), which order them wherever a link is a
// resource (LinkSharing::Serial). Rule: a dependency is kept only where it pays on the issue's
// configurations, and it paid in none. In combine rows become ready as GEMMs finish, already in
// Algorithm 1's return order (compute groups by delivery rank, line 14), so the dependency can
// only hold a ready partial sum behind an earlier round's slower one; with completion waves
// every wave of round r + 1 waits for all waves of round r. In dispatch every row is ready at
// once and fair links share the NICs anyway. Measured (issue 24, one build, 4 completion waves,
// us; both phases / dispatch only / none): DeepSeek 4 x 4 1 MB 335.7 / 299.9 / 299.9; Kimi-K2
// 4 nodes 4 MB 2544.5 / 2381.2 / 2379.1, 16 MB 5336.4 / 4548.3 / 4535.3; 16 nodes 4 MB 2375.7 /
// 1890.0 / 1887.3, 16 MB 8273.8 / 6977.8 / 6847.7; Llama-4 4 nodes 16 MB 3774.8 / 3537.2 /
// 3537.2. PlanOptions::round_order_combine = false keeps the dispatch-only variant measured here.
//
// Invariants, for every phase P in {dispatch, combine} the order is kept in:
//  (1) Issue order: for every sending GPU g and rounds r < r' with puts of P from g, every
//      put of round r' becomes ready no earlier than every put of round r. Proof by induction
//      over the rounds present at g in increasing order: each put of the next round gets the
//      dependencies of every put of the previous round, and so (by induction) those of all
//      earlier rounds; a task is ready only when all its dependencies are done.
//      Under fair sharing a ready transfer starts at once, so it also starts no earlier.
//  (2) Relay order: for each ordered NVLink pair (i, j), every relay of P of round r' waits
//      for the end of every relay of P of an earlier round r on that pair (direct chain, as in
//      (1) but on the relays themselves), so a round's relays never share the pair with later
//      rounds' relays and the round's put waits only for its own relays at full NVLink rate.
//  (3) No cycle is added: a new edge into a put of round r' comes from a task that some put of
//      an earlier round r of the same NIC and phase already depended on, and a new edge into a
//      relay from a relay of an earlier round of the same pair and phase. Inside a phase, no
//      task a put or relay of round r depends on depends on a put or relay of a later round of
//      the same NIC or pair (dispatch relays have no other dependencies; combine ones depend on
//      compute and pre-reductions, which depend on dispatch), so no path leads back.
#include <algorithm>
#include <map>
#include <tuple>

#include "plan/comm_plan.hpp"

namespace zepp {

void keep_round_order(CommPlan& plan, bool dispatch, bool combine) {
  // (phase, hop, sender, receiver or -1 for puts) -> round -> tasks
  using Key = std::tuple<Phase, Hop, int32_t, int32_t>;
  std::map<Key, std::map<int32_t, std::vector<int32_t>>> chains;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const Task& t = plan.tasks[i];
    if (t.kind != TaskKind::Transfer || t.round <= 0 || !((t.phase == Phase::Dispatch && dispatch) ||
                                                          (t.phase == Phase::Combine && combine)))
      continue;
    if (t.hop == Hop::Put)
      chains[{t.phase, t.hop, t.gpu, -1}][t.round].push_back(int32_t(i));
    else if (t.hop == Hop::Relay)
      chains[{t.phase, t.hop, t.gpu, t.dst_gpu}][t.round].push_back(int32_t(i));
  }
  for (const auto& [key, rounds] : chains) {
    const bool puts = std::get<1>(key) == Hop::Put;
    std::vector<int32_t> before;  // puts: the previous round's dependencies; relays: its relays
    for (const auto& [round, tasks] : rounds) {
      std::vector<int32_t> next;
      for (int32_t id : tasks) {
        const auto own = plan.deps(plan.tasks[id]);
        std::vector<int32_t> deps(own.begin(), own.end());
        deps.insert(deps.end(), before.begin(), before.end());
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        if (puts) next.insert(next.end(), deps.begin(), deps.end());
        else next.push_back(id);
        plan.set_deps(id, deps);  // the old list's range is left unused
      }
      std::sort(next.begin(), next.end());
      next.erase(std::unique(next.begin(), next.end()), next.end());
      before = std::move(next);
    }
  }
}

}  // namespace zepp
