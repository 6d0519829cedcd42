"""Zepp's locality-preferred token routing for one MoE layer."""

import math

import numpy as np

import _zepp

from ._args import array, count


def route(topk_ids, src_rank, phy2log, num_nodes, num_gpus, balance_slack=0.1):
    """Choose the replica (slot) that serves every (token, k) pair, preferring local replicas.

    Zepp's routing (paper §4.1 equation (1), §5): for each expert, a token's request goes to a
    replica on its own GPU, else on another GPU of its node, else on a remote node, while every
    replica's load stays within [floor((1 - C) q), ceil((1 + C) q)] tokens, q being the expert's
    total requests divided by its replicas (greedy water-filling). Each token's remote requests
    are then consolidated onto as few nodes as those bounds allow. Only the cluster's shape
    matters: same GPU < same node < remote. Deterministic for the same inputs.

    Args:
        topk_ids: [T, k] integer logical expert ids selected by the gate, in [0, E) where
            E = phy2log.max() + 1. Anything numpy.asarray accepts (a CPU torch tensor included).
        src_rank: [T] integer EP rank (GPU) each token is on, in [0, num_gpus).
        phy2log: [P] integer logical expert held by each slot of this layer (one row of
            rebalance_experts' phy2log); slot p sits on GPU p // (P / num_gpus). Every expert of
            [0, E) needs at least one slot.
        num_nodes: server nodes; num_gpus must be a multiple of it.
        num_gpus: GPUs (EP ranks); must divide P.
        balance_slack: C of equation (1), in [0, 1): 0 forces exactly balanced replicas (up to
            integer rounding), larger values allow more local routing.

    Returns:
        [T, k] int64 numpy array: the slot serving each (token, k) pair; its GPU is
        slot // (P / num_gpus). phy2log[slot] == topk_ids[t, j] always.

    Raises:
        ValueError naming the argument: wrong dimensions or lengths, non-integer ids, ids or ranks
        out of range, an expert without a slot, counts that do not divide, slack outside [0, 1).
    """
    ids = array(topk_ids, "topk_ids", 2, integer=True)
    src = array(src_rank, "src_rank", 1, integer=True)
    phy = array(phy2log, "phy2log", 1, integer=True)
    nodes, gpus = count(num_nodes, "num_nodes"), count(num_gpus, "num_gpus")
    try:
        slack = float(balance_slack)
    except (TypeError, ValueError):
        raise ValueError(f"balance_slack: expected a number, got {balance_slack!r}") from None
    if not (math.isfinite(slack) and 0 <= slack < 1):
        raise ValueError(f"balance_slack: expected a value in [0, 1), got {balance_slack!r}")
    if gpus % nodes:
        raise ValueError(f"num_gpus: expected a multiple of num_nodes = {nodes}, got {gpus}")
    P = phy.shape[0]
    if P == 0 or P % gpus:
        raise ValueError(f"phy2log: expected a positive multiple of num_gpus = {gpus} slots, got {P}")
    if phy.min() < 0 or phy.max() >= P:
        raise ValueError(f"phy2log: expected expert ids in [0, {P}), got [{phy.min()}, {phy.max()}]")
    E = int(phy.max()) + 1
    missing = np.setdiff1d(np.arange(E), phy)
    if missing.size:
        raise ValueError(f"phy2log: expert {missing[0]} has no slot; every expert of [0, {E}) needs one")
    T, k = ids.shape
    if k == 0:
        raise ValueError("topk_ids: expected k >= 1 columns, got shape (T, 0)")
    if src.shape[0] != T:
        raise ValueError(f"src_rank: expected one rank per token ({T}), got {src.shape[0]}")
    if T == 0:
        return np.zeros((0, k), dtype=np.int64)
    if ids.min() < 0 or ids.max() >= E:
        raise ValueError(f"topk_ids: expected expert ids in [0, {E}) (E from phy2log), got [{ids.min()}, {ids.max()}]")
    if src.min() < 0 or src.max() >= gpus:
        raise ValueError(f"src_rank: expected ranks in [0, {gpus}), got [{src.min()}, {src.max()}]")
    return _zepp.route(ids.astype(np.int32), src.astype(np.int32), phy.astype(np.int32), E, nodes, gpus, slack)
