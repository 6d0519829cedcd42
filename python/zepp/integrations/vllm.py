"""vLLM EPLB policy backed by Zepp's placement (paper §4.1).

vLLM looks up a policy class with a classmethod
rebalance_experts(weight, num_replicas, num_groups, num_nodes, num_ranks) returning
(physical_to_logical_map, logical_to_physical_map, expert_count) as int64 tensors
(vllm/distributed/eplb/policy/abstract.py). ZeppEplbPolicy subclasses vLLM's
AbstractEplbPolicy when vLLM is importable, so it can be registered beside vLLM's default.
"""

import numpy as np

from .._placement import placement_maps, rebalance_experts
from ._tensors import like, to_numpy

try:
    from vllm.distributed.eplb.policy.abstract import AbstractEplbPolicy as _Base
except ImportError:  # vLLM absent (tests, offline use): same contract, plain class
    _Base = object


class ZeppEplbPolicy(_Base):
    """Zepp's expert replication and placement as a vLLM EPLB policy.

    Stable rebalancing: vLLM installs the map a policy returns, so the last map returned for a
    model shape is its current placement. With `stable = True` (the default) each call rebalances
    from it with the fewest weight moves that stay within 1% of a from-scratch placement's balance
    (zepp.rebalance_experts(previous=...)); `reset()` forgets it (e.g. after vLLM restarts EP).
    """

    stable = True
    _current = {}  # (layers, experts, num_replicas, num_ranks) -> the last phy2log returned

    @classmethod
    def reset(cls):
        cls._current = {}

    @classmethod
    def rebalance_experts(cls, weight, num_replicas, num_groups, num_nodes, num_ranks, previous=None):
        """Entry point of vLLM's EPLB policy contract, computed with Zepp's placement.

        Args:
            weight: [layers, num_logical_experts] load statistics (torch tensor on any device,
                or any array-like).
            num_replicas: physical experts per layer P, a multiple of num_ranks.
            num_groups: expert groups; unused by Zepp's placement (accepted for the contract).
            num_nodes: server nodes.
            num_ranks: EP ranks, a multiple of num_nodes. Each rank gets S = P / num_ranks slots,
                ceil(E / num_ranks) <= S <= E (see zepp.rebalance_experts, policy "zepp").
            previous: the current physical_to_logical_map [layers, P]; default: the last map this
                class returned for the same shape (when `stable`), else a from-scratch placement.

        Returns:
            (physical_to_logical_map [layers, P], logical_to_physical_map [layers, E, P - E + 1]
            (slots ascending, -1 padded: the width vLLM's own policy uses), expert_count
            [layers, E]), int64 CPU torch tensors when weight is a tensor, numpy arrays otherwise.

        Raises:
            ValueError naming the argument (see zepp.rebalance_experts).
        """
        w = to_numpy(weight)
        key = (tuple(np.shape(w)), num_replicas, num_ranks)
        if previous is None and cls.stable:
            previous = cls._current.get(key)
        elif previous is not None:
            previous = to_numpy(previous)
        try:
            if previous is None:
                phy2log, log2phy, logcnt = placement_maps(w, num_replicas, num_groups, num_nodes, num_ranks, "zepp")
            else:
                phy2log, log2phy, logcnt = rebalance_experts(w, num_replicas, num_groups, num_nodes, num_ranks,
                                                             policy="zepp", previous=previous)
        except ValueError as e:  # name vLLM's argument, not zepp.rebalance_experts' num_gpus
            message = str(e)
            raise ValueError("num_ranks" + message[len("num_gpus"):] if message.startswith("num_gpus") else message) from None
        if cls.stable:
            cls._current[key] = phy2log.copy()
        L, E, X = log2phy.shape
        width = phy2log.shape[1] - E + 1
        padded = np.full((L, E, width), -1, dtype=np.int64)
        padded[:, :, :X] = log2phy
        return like(weight, (phy2log, padded, logcnt))
