"""Dispatch and combine of one MoE layer's activations between EP ranks, along a placement.

Every rank calls `dispatch` with its own tokens, computes the experts of its slots on the rows it
received (`Batch`), and calls `combine` with those partial outputs; every rank makes the same
sequence of collective calls whatever its tokens, so ranks with no tokens take part too.

Flat (a2av, eplb; docs/baselines/a2av.md): one row per (token, k) pair, sent from the token's rank
straight to the serving rank; the weighted expert output of each pair returns the same way.

Zepp (paper §5, "locality-preferred dispatch" with hierarchical forwarding and per-node
pre-reduction), with the slots of `_routing.zepp_slots`:
  A. A token goes once to each rank of its own node that serves some of its pairs, and once to
     each other node that serves some of them: to that node's entry rank, the rank with the same
     local index as the token's rank (rail-aligned, one NIC crossing). The row carries the token,
     the gate weights and the global slots of the pairs it covers (-1 for the others).
  B. An entry rank keeps the pairs on its own slots and forwards the token, once per rank, to the
     other ranks of its node serving the rest (intra-node link).
  C. Every rank sends back, per row, the gate-weighted sum of its pairs' expert outputs: to the
     token's rank for rows from its own node, to the entry rank for forwarded rows.
  D. An entry rank adds the partial sums of its node for each remote token (its own included) and
     sends one row per (token, node) back across nodes.
Invariant (why the output is exact up to float addition order): every (token, k) pair is counted
in exactly one row's slot columns at exactly one compute rank: A splits a token's pairs by
serving rank (own node) or serving node (others) and masks each row to its part; B splits an
entry row's pairs by serving rank of the node and masks likewise; C and D return each pair's
weighted output along the reverse of the path it came, added once at each hop.

Tensors stay on the hidden states' device; only the routing (integer ids) is planned on the CPU.
"""

import zlib
from collections import namedtuple

import numpy as np
import torch
import torch.distributed as dist

from .._args import array, count
from ._exchange import Exchange
from ._routing import even_slots, make_router, zepp_slots

STRATEGIES = ("a2av", "eplb", "zepp")
# The hidden states' dtypes dispatch moves, numbered for the agreement all_gather (their index).
DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
CALLS = ("route", "dispatch")


def _named(names):
    return lambda v: "none" if v < 0 else repr(names[v]) if isinstance(names[v], str) else str(names[v])


# What every rank must agree on before rows move, in the order of the agreement all_gather's
# int64 vector: (argument it comes from, what it is, how a value reads). A mismatch would otherwise
# size a collective differently on two ranks (gloo aborts the process, the others wait forever)
# or route rows to ranks that serve other experts.
AGREED = (("call", "call (route or dispatch)", _named(CALLS)), ("strategy", "strategy", _named(STRATEGIES)),
          ("hidden", "dtype", _named(DTYPES)), ("hidden", "hidden size", lambda v: "none" if v < 0 else str(v)),
          ("topk_ids", "top-k", str), ("num_nodes", "number of nodes", str),
          ("phy2log", "placement (CRC-32 of phy2log)", lambda v: f"{v:#010x}"))

Batch = namedtuple("Batch", "hidden gates local_slots state")
Batch.__doc__ = """Rows this rank computes: hidden [n, H], gates [n, c] and local_slots [n, c] (slot of
this rank in [0, S) serving the pair, -1 for a column this rank does not serve); state: what
combine needs (return addresses)."""


class Dispatcher:
    """Dispatch and combine for one MoE layer placement and strategy on the ranks of `group`.

    Args:
        phy2log: [P] logical expert of each slot (one row of rebalance_experts' phy2log, any
            array or tensor); slot p is on rank p // (P / world). For "a2av" give the contiguous
            placement (slot p holds expert p, P = E).
        num_nodes: nodes; the world size must be a multiple; rank r is on node r // (world / num_nodes).
        strategy: "a2av", "eplb" (flat dispatch, route_even over replicas) or "zepp" (locality
            routing planned per rank, hierarchical dispatch, per-node pre-reduction).
        group: torch.distributed process group (default: the world).
        balance_slack: Zepp's C of eq. (1), in [0, 1).
        gemm: "zepp" only: None (the default, rows-only routing) or the roofline cost of one
            expert GEMM, `zepp.gemm_cost(model, topology)` or a dict of its five figures, which
            makes the per-rank plan consolidate weight-bound replicas by GEMM time as the
            simulator's Zepp does (zepp.route documents it; src/routing/consolidate.cpp). Every
            rank must pass the same gemm.

    Raises:
        ValueError naming the argument: an unknown strategy, slots not dividing over the ranks,
        ranks not dividing over the nodes, an expert without a slot, gemm with another strategy
        than "zepp" or not as zepp.Router takes it. TypeError naming num_nodes when it is not an
        integer, or dispatch's hidden when it is not a torch tensor. dispatch checks its own
        arguments before its first collective call; a rank that raises there leaves the others
        waiting in that collective, as with torch.distributed's own collectives. Its first
        collective is then a fixed-size all_gather of what the ranks must agree on (strategy,
        hidden states' dtype and size, top-k, num_nodes, phy2log): where they differ, every
        rank raises the same ValueError naming the argument and which ranks passed what, before
        any collective whose sizes depend on them (route of "zepp" does the same).
    """

    def __init__(self, phy2log, num_nodes, strategy="zepp", group=None, balance_slack=0.1, gemm=None):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy: expected one of {', '.join(STRATEGIES)}, got {strategy!r}")
        if gemm is not None and strategy != "zepp":
            raise ValueError(f"gemm: only acts with strategy 'zepp' (its routing), got strategy {strategy!r}")
        phy = array(phy2log, "phy2log", 1, integer=True)
        num_nodes = count(num_nodes, "num_nodes")
        world = dist.get_world_size(group)
        if world % num_nodes:
            raise ValueError(f"num_nodes: expected a divisor of the {world} ranks, got {num_nodes}")
        if phy.size == 0 or phy.size % world:
            raise ValueError(f"phy2log: expected a positive multiple of the {world} ranks of slots, got {phy.size}")
        self.strategy, self.phy2log, self.num_nodes = strategy, phy, num_nodes
        self._crc = zlib.crc32(phy.astype("<i8").tobytes())
        self.exchange = Exchange(world // num_nodes, group)
        self.rank, self.world, self.gpn = self.exchange.rank, world, world // num_nodes
        self.slots_per_rank = phy.size // world
        self.num_experts = int(phy.max()) + 1
        self.router = make_router(phy, num_nodes, world, balance_slack, gemm) if strategy == "zepp" else None
        if self.router is None and np.setdiff1d(np.arange(self.num_experts), phy).size:
            raise ValueError(f"phy2log: every expert of [0, {self.num_experts}) needs a slot")

    @property
    def local_experts(self):
        """[S] logical expert of each of this rank's slots."""
        S = self.slots_per_rank
        return self.phy2log[self.rank * S:(self.rank + 1) * S]

    @property
    def traffic(self):
        return self.exchange.traffic

    def route(self, topk_ids):
        """[T, k] int64 numpy: the global slot serving each pair of this rank's tokens (-1 for a
        padding id, -1). With "zepp" a collective call (every rank calls it): the ranks first
        check that they agree (see the class) and then all-gather their counts; "a2av" and
        "eplb" route locally."""
        ids = self._ids(topk_ids)
        if self.strategy == "zepp":
            self._agree("route", ids.shape[1])
        return self._slots(ids)

    def _ids(self, topk_ids):
        """topk_ids checked locally: [T, k] int64 numpy of expert ids or -1."""
        ids = array(topk_ids, "topk_ids", 2, integer=True)
        if ids.size and (ids.min() < -1 or ids.max() >= self.num_experts):
            raise ValueError(f"topk_ids: expected expert ids in [0, {self.num_experts}) or -1 (padding), got "
                             f"[{ids.min()}, {ids.max()}]")
        return ids

    def _slots(self, ids):
        if self.strategy == "zepp":
            return zepp_slots(self.router, ids, self.exchange)
        return even_slots(self.phy2log, ids, self.rank)

    def _agree(self, call, k, hidden=None):
        """All-gather the AGREED fields of every rank (a fixed-size int64 vector, so it cannot
        itself mismatch) and raise ValueError on every rank alike where they differ, naming the
        argument, the field and which ranks passed which value."""
        mine = [CALLS.index(call), STRATEGIES.index(self.strategy),
                -1 if hidden is None else DTYPES.index(hidden.dtype),
                -1 if hidden is None else hidden.shape[1], k, self.num_nodes, self._crc]
        every = self.exchange.all_gather(torch.tensor(mine, dtype=torch.int64)).tolist()
        problems = []
        for field, (argument, what, shown) in enumerate(AGREED):
            ranks = {}
            for rank, values in enumerate(every):
                ranks.setdefault(values[field], []).append(rank)
            if len(ranks) > 1:  # the largest group first: the odd ranks out come last
                got = " and ".join(f"{shown(v)} on rank{'s' * (len(r) > 1)} {', '.join(map(str, r))}"
                                   for v, r in sorted(ranks.items(), key=lambda item: (-len(item[1]), item[1])))
                problems.append(f"{argument}: every rank of the group must pass the same {what}, got {got}")
                if field == 0:  # route against dispatch: the other fields do not compare
                    break
        if problems:
            raise ValueError("; ".join(problems))

    def dispatch(self, hidden, topk_ids, topk_weights):
        """Send this rank's tokens along the plan; returns the Batch of rows to compute here.

        Args:
            hidden: [T, H] floating hidden states of this rank's tokens, a torch tensor (any
                device; NCCL needs CUDA).
            topk_ids: [T, k] logical expert ids (tensor or array); -1 is padding (as SGLang pads):
                the pair goes nowhere and adds nothing to its token's output.
            topk_weights: [T, k] gate weights (tensor of hidden's dtype or convertible).

        Every argument is checked on this rank first; then the ranks check that they agree on
        the strategy, hidden's dtype and size, k, num_nodes and phy2log (one small all_gather),
        and every rank raises the same ValueError where they do not (see the class).
        """
        if not isinstance(hidden, torch.Tensor):
            raise TypeError(f"hidden: expected a torch tensor [tokens, hidden], got {type(hidden).__name__}")
        if hidden.dim() != 2:
            raise ValueError(f"hidden: expected [tokens, hidden], got shape {tuple(hidden.shape)}")
        if hidden.dtype not in DTYPES:
            raise ValueError(f"hidden: expected a floating tensor ({', '.join(str(d) for d in DTYPES)}), "
                             f"got {hidden.dtype}")
        T, H = hidden.shape
        ids = self._ids(topk_ids)
        if ids.shape[0] != T:
            raise ValueError(f"topk_ids: expected one row per token ({T}), got {ids.shape[0]}")
        weights = torch.as_tensor(topk_weights, dtype=hidden.dtype, device=hidden.device)
        if tuple(weights.shape) != ids.shape:
            raise ValueError(f"topk_weights: expected shape {ids.shape} (as topk_ids), got {tuple(weights.shape)}")
        self._agree("dispatch", ids.shape[1], hidden)
        slots = self._slots(ids)
        self._shape = (T, H, hidden.dtype, hidden.device)
        self._entry = []  # zepp: the rows this rank received as its node's entry rank (step D)
        if self.strategy == "zepp":
            return self._dispatch_zepp(hidden, weights, slots)
        return self._dispatch_flat(hidden, weights, slots)

    # Rows: float [n, H + c] = token ⊕ c gate weights; int64 [n, 2 + c] = (index, origin rank, c global slots).
    def _rows(self, hidden, gates, t, slot_cols):
        dev = hidden.device
        t_dev = torch.from_numpy(t).to(dev)
        head = np.stack([t, np.full_like(t, self.rank)], axis=1)
        meta = torch.from_numpy(np.concatenate([head, slot_cols], axis=1)).to(dev)
        return torch.cat([hidden[t_dev], gates], dim=1), meta

    def _dispatch_flat(self, hidden, weights, slots):
        T, k = slots.shape
        dst = slots // self.slots_per_rank
        rows = {}
        for d in np.unique(dst[slots >= 0]):  # padding (-1) goes nowhere
            t, j = np.nonzero(dst == d)
            gates = weights[torch.from_numpy(t).to(hidden.device), torch.from_numpy(j).to(hidden.device)]
            rows[int(d)] = self._rows(hidden, gates.unsqueeze(1), t, slots[t, j][:, None])
        received = self.exchange.send(rows, hidden.shape[1] + 1, 3, hidden.dtype, hidden.device)
        return self._batch([(src, f, i, src, 0) for src, (f, i) in sorted(received.items())], hidden.shape[1])

    def _dispatch_zepp(self, hidden, weights, slots):
        T, k = slots.shape
        S, gpn, me = self.slots_per_rank, self.gpn, self.rank
        dst = slots // S
        node = dst // gpn
        my_node = me // gpn
        rows = {}
        # A: per rank of this node, per other node (to its entry rank), the tokens with pairs there.
        for d in range(my_node * gpn, (my_node + 1) * gpn):
            rows[d] = self._masked(hidden, weights, slots, dst == d)
        for n in range(self.num_nodes):
            if n != my_node:
                rows[n * gpn + me % gpn] = self._masked(hidden, weights, slots, node == n)
        rows = {d: r for d, r in rows.items() if r is not None}
        H = hidden.shape[1]
        received = self.exchange.send(rows, H + k, 2 + k, hidden.dtype, hidden.device)
        compute, forward, entry = [], {}, []
        for src, (f, i) in sorted(received.items()):
            if src // gpn == my_node:  # from this node: every pair in the row is served here
                compute.append((src, f, i, src, 0))
                continue
            # An entry row: keep the pairs of this rank, forward the others within the node (B).
            base = sum(e[1].shape[0] for e in entry)
            entry.append((src, f, i))
            index = np.arange(base, base + f.shape[0])
            slot_cols = i[:, 2:].cpu().numpy()
            owner = np.where(slot_cols >= 0, slot_cols // S, -1)
            for d in range(my_node * gpn, (my_node + 1) * gpn):
                mine = owner == d
                has = mine.any(axis=1)
                if not has.any():
                    continue
                cols = np.where(mine, slot_cols, -1)[has]
                part_f = f[torch.from_numpy(has).to(f.device)]
                part_i = torch.cat([torch.from_numpy(np.stack([index[has], np.full(int(has.sum()), me)], axis=1)),
                                    torch.from_numpy(cols)], dim=1).to(f.device)
                if d == me:
                    compute.append((me, part_f, part_i, me, 1))
                else:
                    forward[d] = (torch.cat([forward[d][0], part_f]), torch.cat([forward[d][1], part_i])) \
                        if d in forward else (part_f, part_i)
        forwarded = self.exchange.send(forward, H + k, 2 + k, hidden.dtype, hidden.device)
        for src, (f, i) in sorted(forwarded.items()):
            compute.append((src, f, i, src, 1))
        self._entry = entry
        return self._batch(compute, H)

    def _masked(self, hidden, weights, slots, pairs):
        """Rows of the tokens with some pair in `pairs` ([T, k] bool), slot columns masked to them."""
        has = pairs.any(axis=1)
        if not has.any():
            return None
        t = np.flatnonzero(has)
        return self._rows(hidden, weights[torch.from_numpy(t).to(hidden.device)], t, np.where(pairs, slots, -1)[has])

    def _batch(self, parts, H):
        """The rows to compute and, per row, where its partial output returns: (rank, kind, index),
        kind 0 = into the token's output at its rank, 1 = into an entry rank's per-node sum."""
        dtype, device = self._shape[2], self._shape[3]
        if not parts:
            empty = torch.empty((0, H), dtype=dtype, device=device)
            return Batch(empty, empty[:, :0], torch.empty((0, 0), dtype=torch.int64, device=device), [])
        f = torch.cat([p[1] for p in parts])
        i = torch.cat([p[2] for p in parts])
        S = self.slots_per_rank
        slots = i[:, 2:]
        local = torch.where(slots >= 0, slots - self.rank * S, torch.full_like(slots, -1))
        state = [(p[3], p[4], p[2][:, 0]) for p in parts]  # per part: return rank, kind, indices
        return Batch(f[:, :H], f[:, H:], local, state)

    def combine(self, batch, partial):
        """Return the partial outputs [n, H] of `batch`'s rows (gate-weighted sums of their pairs'
        expert outputs) to the tokens' ranks; returns this rank's combined output [T, H]."""
        T, H, dtype, device = self._shape
        if tuple(partial.shape) != (batch.hidden.shape[0], H):
            raise ValueError(f"partial: expected shape {(batch.hidden.shape[0], H)}, got {tuple(partial.shape)}")
        out = torch.zeros((T, H), dtype=dtype, device=device)
        rows, start = {}, 0
        for rank, kind, index in batch.state:  # C: back to the token's rank or to the entry rank
            n = index.shape[0]
            meta = torch.stack([torch.full_like(index, kind), index], dim=1)
            f = partial[start:start + n]
            rows[rank] = (torch.cat([rows[rank][0], f]), torch.cat([rows[rank][1], meta])) if rank in rows else (f, meta)
            start += n
        received = self.exchange.send(rows, H, 2, dtype, device)
        entry_rows = sum(e[1].shape[0] for e in getattr(self, "_entry", [])) if self.strategy == "zepp" else 0
        node_sum = torch.zeros((entry_rows, H), dtype=dtype, device=device)
        for _, (f, meta) in sorted(received.items()):
            final = meta[:, 0] == 0
            out.index_add_(0, meta[final, 1], f[final])
            node_sum.index_add_(0, meta[~final, 1], f[~final])
        if self.strategy != "zepp":
            return out
        back, start = {}, 0  # D: one row per (token, node) back across nodes
        for src, f, i in self._entry:
            n = f.shape[0]
            meta = torch.stack([torch.zeros_like(i[:, 0]), i[:, 0]], dim=1)
            back[src] = (node_sum[start:start + n], meta)
            start += n
        for _, (f, meta) in sorted(self.exchange.send(back, H, 2, dtype, device).items()):
            out.index_add_(0, meta[:, 1], f)
        self._entry = []
        return out
