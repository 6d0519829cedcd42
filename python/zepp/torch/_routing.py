"""Which slot serves each (token, k) pair of this rank's tokens, per strategy, planned per rank.

- "zepp": Zepp's locality-preferred routing (paper §4.1 eq. (1), §5) planned per rank as a
  deployment runs it (issue 20): the ranks all-gather their per-expert token counts
  (Router.count), every rank computes the same count-level plan from them (Router.plan) and
  routes only its own tokens (Router.route_rank). `zepp_slots` is the one function that does it.
  With gemm (zepp.gemm_cost) the plan is consolidated by GEMM time, as the simulator's.
- "a2av" and "eplb": route_even of docs/baselines/eplb.md: rank i's j-th request for expert e goes
  to replica (i + j) mod r_e, replicas in ascending slot order (with one replica per expert, as
  a2av's placement, every request goes to the expert's home GPU).
"""

import numpy as np
import torch

from .._routing import Router


def even_slots(phy2log, topk_ids, rank):
    """route_even for this rank's topk_ids [T, k] (numpy int64, -1 for padding): slots [T, k]
    int64, -1 for padding."""
    E = int(phy2log.max()) + 1
    replicas = [np.flatnonzero(phy2log == e) for e in range(E)]
    flat = topk_ids.reshape(-1)
    order = np.argsort(flat, kind="stable")          # pairs grouped by expert, in token order
    sorted_ids = flat[order]
    first = np.searchsorted(sorted_ids, sorted_ids)  # index of each group's first pair
    occurrence = np.empty_like(flat)
    occurrence[order] = np.arange(flat.size) - first  # j: this rank's j-th request for the expert
    slots = np.full_like(flat, -1)
    for e in np.unique(flat[flat >= 0]):
        at = flat == e
        r = replicas[e]
        slots[at] = r[(rank + occurrence[at]) % r.size]
    return slots.reshape(topk_ids.shape)


def zepp_slots(router, topk_ids, exchange):
    """Zepp's per-rank planning (issue 20): this rank's per-expert counts all-gathered into
    [ranks, E], the count-level plan every rank computes alike from them, and this rank's own
    pairs routed along it. topk_ids: [T, k] numpy int64. Returns slots [T, k] int64 numpy."""
    counts = exchange.all_gather(torch.from_numpy(router.count(topk_ids))).numpy()
    return router.route_rank(topk_ids, exchange.rank, router.plan(counts))


def make_router(phy2log, num_nodes, world, balance_slack, gemm=None):
    """The rank's Router; with `gemm` its plans are consolidated by GEMM time (zepp.route)."""
    return Router(phy2log, num_nodes, world, balance_slack, gemm=gemm)
