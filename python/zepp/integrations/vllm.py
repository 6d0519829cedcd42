"""vLLM EPLB policy backed by Zepp's placement (paper §4.1); docs/vllm.md says how to install it.

What this follows in vLLM (vllm/distributed/eplb/policy/abstract.py, looked up for issue 22):
- The current interface is an instance method plan_rebalance(context, policy_state) -> EplbPlan.
  context (EplbRebalanceContext) holds load_window_cpu [samples, layers, E] (oldest first),
  physical_to_logical_map_cpu [layers, P] (the placement now installed), topology (num_groups,
  num_nodes, num_ranks), num_replicas and cpu_group; EplbPlan holds physical_to_logical_map, a
  CPU integer [layers, P] tensor. create_state(num_moe_layers) makes per-model state and
  on_layer_committed(state, plan, layer) advances it. Earlier releases call plan_rebalance(context)
  without the state.
- The legacy classmethod rebalance_experts(weight, num_replicas, num_groups, num_nodes, num_ranks,
  old_global_expert_indices=None) returns physical_to_logical_map [layers, P] only; older vLLM
  releases took back (phy2log, log2phy, logcnt) from it: `maps=True` gives that 3-tuple.
- Policies are classes in vllm.distributed.eplb.policy.EPLB_POLICIES, keyed by the name that
  --eplb-config '{"policy": ...}' selects; `register()` below installs Zepp's under a key.
ZeppEplbPolicy subclasses vLLM's AbstractEplbPolicy when vLLM is importable.
"""

from dataclasses import dataclass

import numpy as np

from .._args import array, flag, loads, summed
from .._placement import placement_maps, rebalance_experts
from .._tensors import Caller, host

try:
    from vllm.distributed.eplb.policy.abstract import AbstractEplbPolicy as _Base
except ImportError:  # vLLM absent (tests, offline use): the same contract on a plain class
    _Base = object

try:
    from vllm.distributed.eplb.policy.abstract import EplbPlan
except ImportError:
    @dataclass(frozen=True)
    class EplbPlan:
        """vLLM's EplbPlan where vLLM is absent: the CPU integer [layers, P] target placement."""

        physical_to_logical_map: object


# What plan_rebalance reads of vLLM's EplbRebalanceContext.
_CONTEXT_FIELDS = ("load_window_cpu", "physical_to_logical_map_cpu", "topology", "num_replicas")


def _num_ranks_error(e):
    """zepp.rebalance_experts' ValueError or TypeError under vLLM's argument name (num_ranks, not num_gpus)."""
    message = str(e)
    return type(e)("num_ranks" + message[len("num_gpus"):] if message.startswith("num_gpus") else message)


class ZeppEplbPolicy(_Base):
    """Zepp's expert replication and placement as a vLLM EPLB policy.

    Stable rebalancing: each rebalance starts from the placement installed now (vLLM passes it as
    context.physical_to_logical_map_cpu, or old_global_expert_indices to the legacy method) and
    makes the fewest weight moves that keep the expected max GPU load within 1% of a from-scratch
    placement's, preferring moves within a node (zepp.rebalance_experts(previous=...)). The legacy
    classmethod without old_global_expert_indices falls back to the last map it returned for the
    same shape when `stable` (`reset()` forgets them).
    """

    stable = True
    _current = {}  # (layers, experts, num_replicas, num_ranks) -> the last phy2log returned

    @classmethod
    def reset(cls):
        cls._current = {}

    def create_state(self, num_moe_layers):
        """vLLM's per-model policy state. Zepp keeps none: the installed placement arrives in
        every context."""
        return super().create_state(num_moe_layers) if _Base is not object else None

    def on_layer_committed(self, policy_state, plan, layer_idx):
        """Nothing to advance (see create_state)."""
        return None

    def plan_rebalance(self, context, policy_state=None):
        """vLLM's policy interface: the target placement for the load window in `context`.

        Args:
            context: vLLM's EplbRebalanceContext (or any object with the same attributes):
                load_window_cpu [samples, layers, E] tokens per logical expert (summed over
                samples), physical_to_logical_map_cpu [layers, P] the installed placement (moves
                are counted from it), topology.num_nodes / num_ranks (num_groups is unused),
                num_replicas P, a multiple of num_ranks with ceil(E / num_ranks) <= P / num_ranks <= E.
            policy_state: vLLM's per-model state; unused (accepted for the interface).

        Returns:
            EplbPlan(physical_to_logical_map): an int64 CPU torch tensor [layers, P] when the
            window is a tensor (numpy otherwise).

        Raises:
            TypeError naming context when it lacks one of those attributes (None included).
            ValueError naming the field: a window that is not [samples, layers, E], has no
            samples, or has loads negative, not finite or above 1e15 (named by index; also their
            sums over the samples), a placement of the wrong shape or with ids outside [0, E),
            counts that do not divide (see zepp.rebalance_experts, policy "zepp").
        """
        for field in _CONTEXT_FIELDS:  # an AttributeError named neither the argument nor what it lacks
            if not hasattr(context, field):
                raise TypeError(f"context: expected vLLM's EplbRebalanceContext (with {', '.join(_CONTEXT_FIELDS)}), "
                                f"got {type(context).__name__} without {field}")
        window = summed(loads(context.load_window_cpu, "load_window_cpu", 3), "load_window_cpu", "sample")
        topology = context.topology
        phy2log = self._place(window, context.num_replicas, topology.num_groups, topology.num_nodes,
                              topology.num_ranks, context.physical_to_logical_map_cpu, "physical_to_logical_map_cpu")
        return EplbPlan(Caller(context.load_window_cpu).give(phy2log))

    @classmethod
    def _place(cls, weight, num_replicas, num_groups, num_nodes, num_ranks, previous, previous_name):
        """phy2log [layers, P] int64 numpy: from previous when given, else from the last map
        returned for the shape (when stable), else from scratch."""
        w = loads(weight, "weight", 2)  # zepp.rebalance_experts' check: a bad entry named by its index
        key = (w.shape, num_replicas, num_ranks)
        if previous is None and cls.stable:
            previous = cls._current.get(key)
        try:
            if previous is None:
                phy2log = placement_maps(w, num_replicas, num_groups, num_nodes, num_ranks, "zepp")[0]
            else:
                previous = host(previous)
                try:
                    phy2log = rebalance_experts(w, num_replicas, num_groups, num_nodes, num_ranks, policy="zepp",
                                                previous=previous)[0]
                except ValueError as e:
                    message = str(e)
                    if message.startswith("previous"):
                        raise ValueError(previous_name + message[len("previous"):]) from None
                    raise
        except (ValueError, TypeError) as e:
            raise _num_ranks_error(e) from None
        if cls.stable:
            cls._current[key] = phy2log.copy()
        return phy2log

    @classmethod
    def rebalance_experts(cls, weight, num_replicas, num_groups, num_nodes, num_ranks,
                          old_global_expert_indices=None, *, maps=False):
        """vLLM's legacy policy entry point, computed with Zepp's placement.

        Args:
            weight: [layers, E] load statistics (torch tensor on any device, numpy, lists).
            num_replicas: physical experts per layer P, a multiple of num_ranks.
            num_groups: expert groups; unused by Zepp's placement (accepted for the contract).
            num_nodes: server nodes.
            num_ranks: EP ranks, a multiple of num_nodes. Each rank gets S = P / num_ranks slots,
                ceil(E / num_ranks) <= S <= E.
            old_global_expert_indices: the installed physical_to_logical_map [layers, P], as vLLM
                passes it; rebalancing starts from it. Default: the last map this class returned
                for the shape when `stable`, else a from-scratch placement.
            maps: return the 3-tuple older vLLM releases expected instead of phy2log alone.

        Torch: a CPU weight is read without a copy; a GPU weight is copied to the host and the
        results are copied back to its device.

        Returns:
            physical_to_logical_map [layers, P], int64, a torch tensor on weight's device for a
            tensor. With maps=True: (physical_to_logical_map, logical_to_physical_map
            [layers, E, P - E + 1] (slots ascending, -1 padded: the width vLLM's own policy
            uses), expert_count [layers, E]).

        Raises:
            ValueError naming the argument (see zepp.rebalance_experts): an entry of weight
            negative, NaN/inf or above 1e15 named by its index, as there.
        """
        caller = Caller(weight)
        maps = flag(maps, "maps")
        phy2log = cls._place(weight, num_replicas, num_groups, num_nodes, num_ranks, old_global_expert_indices,
                             "old_global_expert_indices")
        if not maps:
            return caller.give(phy2log)
        L, P = phy2log.shape
        E = array(weight, "weight", 2, integer=False).shape[1]
        logcnt = np.stack([np.bincount(row, minlength=E) for row in phy2log]).astype(np.int64)
        log2phy = np.full((L, E, P - E + 1), -1, dtype=np.int64)
        for layer in range(L):
            for e in range(E):
                slots = np.flatnonzero(phy2log[layer] == e)
                log2phy[layer, e, : slots.size] = slots
        return caller.give_all((phy2log, log2phy, logcnt))


def register(name="default"):
    """Install ZeppEplbPolicy in vLLM's policy table under `name` (default: "default", the key
    --eplb-config selects when it names no policy; vLLM checks the key against its own option
    list, so a new name needs vLLM to accept it). Call it in every vLLM process before the engine
    starts, e.g. from a vLLM general plugin (docs/vllm.md). Returns the class it replaced.

    Raises ImportError when vLLM is not installed."""
    from vllm.distributed.eplb import policy

    table = getattr(policy, "EPLB_POLICIES", None)
    if not isinstance(table, dict):
        raise RuntimeError("zepp: this vLLM has no vllm.distributed.eplb.policy.EPLB_POLICIES table; "
                           "see docs/vllm.md for installing the policy in older releases")
    replaced = table.get(name)
    table[name] = ZeppEplbPolicy
    return replaced
