"""Which slot serves each (token, k) pair of this rank's tokens, per strategy, planned per rank.

- "zepp": Zepp's locality-preferred routing (paper §4.1 eq. (1), §5) planned per rank as a
  deployment runs it (issue 20): the ranks all-gather their per-expert token counts, every rank
  computes the same count-level plan from them (Router.plan) and routes only its own tokens
  (Router.route_rank). `zepp_slots` is the one function that does it.
- "a2av" and "eplb": route_even of docs/baselines/eplb.md: rank i's j-th request for expert e goes
  to replica (i + j) mod r_e, replicas in ascending slot order (with one replica per expert, as
  a2av's placement, every request goes to the expert's home GPU).
"""

import numpy as np
import torch

from .._routing import Router


def even_slots(phy2log, topk_ids, rank):
    """route_even for this rank's topk_ids [T, k] (numpy int64): slots [T, k] int64."""
    E = int(phy2log.max()) + 1
    replicas = [np.flatnonzero(phy2log == e) for e in range(E)]
    flat = topk_ids.reshape(-1)
    order = np.argsort(flat, kind="stable")          # pairs grouped by expert, in token order
    sorted_ids = flat[order]
    first = np.searchsorted(sorted_ids, sorted_ids)  # index of each group's first pair
    occurrence = np.empty_like(flat)
    occurrence[order] = np.arange(flat.size) - first  # j: this rank's j-th request for the expert
    slots = np.empty_like(flat)
    for e in np.unique(flat):
        at = flat == e
        r = replicas[e]
        slots[at] = r[(rank + occurrence[at]) % r.size]
    return slots.reshape(topk_ids.shape)


def zepp_slots(router, topk_ids, exchange):
    """Zepp's per-rank planning: all-gather counts [ranks, E], the count-level plan, this rank's
    own pairs routed along it. topk_ids: [T, k] numpy int64. Returns slots [T, k] int64 numpy."""
    E, rank = router.num_experts, exchange.rank
    count = np.bincount(topk_ids.reshape(-1), minlength=E).astype(np.int64)
    counts = exchange.all_gather(torch.from_numpy(count)).numpy()
    if hasattr(router, "plan") and hasattr(router, "route_rank"):
        return router.route_rank(topk_ids, rank, router.plan(counts))
    # Until the per-rank planner is on main (issue 20): the same global routing from every rank's
    # ids, all-gathered (padded to the longest rank), keeping this rank's rows.
    T = topk_ids.shape[0]
    lengths = counts.sum(axis=1) // topk_ids.shape[1]
    padded = np.zeros((int(lengths.max()), topk_ids.shape[1]), dtype=np.int64)
    padded[:T] = topk_ids
    everyone = exchange.all_gather(torch.from_numpy(padded)).numpy()
    ids = np.concatenate([everyone[r, :lengths[r]] for r in range(exchange.world)])
    src = np.repeat(np.arange(exchange.world), lengths)
    slots = router.route(ids, src)
    start = int(lengths[:rank].sum())
    return slots[start:start + T]


def make_router(phy2log, num_nodes, world, balance_slack):
    return Router(phy2log, num_nodes, world, balance_slack)
