"""Expert replication and placement for every layer, with DeepSeek EPLB's contract."""

import numpy as np

import _zepp

from ._args import array, check_placement, count, flag, loads, shape_of
from ._tensors import Caller


def _checked(weight, num_replicas, num_groups, num_nodes, num_gpus, policy):
    P, groups = count(num_replicas, "num_replicas"), count(num_groups, "num_groups")
    nodes, gpus = count(num_nodes, "num_nodes"), count(num_gpus, "num_gpus")
    shape = shape_of(weight)  # sizes checked before numpy copies anything (a broadcast view may be huge)
    if shape is not None and len(shape) == 2:  # weight alone (one slot per expert), then with the replicas
        check_placement(shape[0], shape[1], shape[1], gpus, policy == "zepp", "weight")
        check_placement(shape[0], shape[1], P, gpus, policy == "zepp", "num_replicas")
    w = loads(weight, "weight", 2)
    if w.shape[0] == 0 or w.shape[1] == 0:
        raise ValueError(f"weight: expected at least one layer and one expert, got shape {w.shape}")
    check_placement(w.shape[0], w.shape[1], w.shape[1], gpus, policy == "zepp", "weight")
    check_placement(w.shape[0], w.shape[1], P, gpus, policy == "zepp", "num_replicas")
    return w, P, groups, nodes, gpus


def placement_maps(weight, num_replicas, num_groups, num_nodes, num_gpus, policy):
    """(phy2log [L,P], log2phy [L,E,X], logcnt [L,E]) as int64, X the most replicas; the shared core
    of rebalance_experts and the vLLM policy (which pads log2phy to P-E+1)."""
    w, P, groups, nodes, gpus = _checked(weight, num_replicas, num_groups, num_nodes, num_gpus, policy)
    E = w.shape[1]
    if policy == "eplb":
        # EPLB computes in float32 (weight.float()); so does the C++ rule, for identical ties.
        return _zepp.eplb_rebalance(w.astype(np.float32), P, groups, nodes, gpus)
    if policy != "zepp":
        raise ValueError(f"policy: expected 'eplb' or 'zepp', got {policy!r}")
    if gpus % nodes:
        raise ValueError(f"num_gpus: expected a multiple of num_nodes = {nodes}, got {gpus}")
    base = -(-E // gpus)  # ceil(E / num_gpus) slots per GPU hold every expert once
    if P % gpus or not base <= P // gpus <= E:
        raise ValueError(f"num_replicas: expected num_gpus x S slots with {base} <= S <= E = {E} "
                         f"(an expert has at most one replica per GPU), got {P} on {gpus} GPUs")
    return _zepp.place_zepp_layers(w, nodes, gpus // nodes, P // gpus - base)


# Bytes of one expert or of one layer's moves: at most a petabyte (as `zepp place --max-moved-mb`,
# src/core/flag_ranges.cpp), so that moves x expert_bytes cannot overflow to inf.
MAX_BYTES = 1e15


def _bytes(value, name, expected):
    """`value` as a float in [0, MAX_BYTES], else TypeError (not a number) or ValueError naming `name`."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected {expected}, got {value!r}")
    if not (np.isfinite(float(value)) and 0 <= value <= MAX_BYTES):
        raise ValueError(f"{name}: expected {expected}, got {value!r}")
    return float(value)


def _ranks(value, num_gpus):
    """failed_ranks as a sorted list of distinct rank ids in [0, num_gpus)."""
    if value is None:
        return []
    ids = array(value, "failed_ranks", 1, integer=True)
    if ids.size and (ids.min() < 0 or ids.max() >= num_gpus):
        raise ValueError(f"failed_ranks: expected rank ids in [0, {num_gpus}), got {ids.tolist()}")
    if np.unique(ids).size != ids.size:
        raise ValueError(f"failed_ranks: expected distinct ranks, got {ids.tolist()}")
    return sorted(int(i) for i in ids)


def _rebalance_zepp(w, P, nodes, gpus, previous, failed_ranks, expert_bytes, max_moved_bytes):
    """Zepp's rebalancing over all layers: (phy2log [L, P] with -1 in lost ranks' slots, survivors,
    moves [L, 6], imbalance [L, 2])."""
    L, E = w.shape
    if gpus % nodes:
        raise ValueError(f"num_gpus: expected a multiple of num_nodes = {nodes}, got {gpus}")
    if P % gpus or not -(-E // gpus) <= P // gpus <= E:
        raise ValueError(f"num_replicas: expected num_gpus x S slots with ceil(E / num_gpus) <= S <= E = {E}, "
                         f"got {P} on {gpus} GPUs")
    S = P // gpus
    if previous is None:
        prev = np.zeros((0, 0), dtype=np.int32)
    else:
        prev = array(previous, "previous", 2, integer=True)
        if prev.shape != (L, P):
            raise ValueError(f"previous: expected phy2log of shape [{L}, {P}] (layers, num_replicas), got {prev.shape}")
        if prev.min() < -1 or prev.max() >= E:  # the core checks that -1 is only in failed ranks' slots
            raise ValueError(f"previous: expected expert ids in [0, {E}) (-1 in failed ranks' slots), "
                             f"got [{prev.min()}, {prev.max()}]")
        prev = prev.astype(np.int32)
    failed = _ranks(failed_ranks, gpus)
    bytes_ = _bytes(expert_bytes, "expert_bytes", "a number of bytes in [0, 1e15]")
    if max_moved_bytes is None:
        budget = -1.0
    else:
        budget = _bytes(max_moved_bytes, "max_moved_bytes", "bytes in [0, 1e15] or None")
        if previous is None:
            raise ValueError("max_moved_bytes: needs previous (the placement moves are counted from)")
    try:
        phy, survivors, moves, imbalance = _zepp.rebalance_zepp_layers(w, nodes, gpus // nodes, S, prev, failed,
                                                                       bytes_, budget)
    except ValueError as e:  # the core names its own argument; name this function's
        message = str(e)
        if message.startswith("failed_gpus"):
            raise ValueError("failed_ranks" + message[len("failed_gpus"):]) from None
        raise
    full = np.full((L, P), -1, dtype=np.int64)  # slot p stays on rank p // S; lost ranks' slots hold -1
    for i, rank in enumerate(survivors):
        full[:, rank * S:(rank + 1) * S] = phy[:, i * S:(i + 1) * S]
    return full, survivors, moves, imbalance


def _maps(phy2log, E):
    """log2phy [L, E, X] (slots ascending, X = the most replicas) and logcnt [L, E] of phy2log,
    ignoring -1 slots."""
    L, P = phy2log.shape
    layer, slot = np.nonzero(phy2log >= 0)  # row-major: slots ascending within each layer
    expert = phy2log[layer, slot]
    logcnt = np.bincount(layer * E + expert, minlength=L * E).reshape(L, E).astype(np.int64)
    X = int(logcnt.max())
    # Replica rank of each slot: its place among the slots of (layer, expert), in slot order.
    order = np.argsort(layer * E + expert, kind="stable")
    first = np.concatenate(([0], np.cumsum(logcnt.ravel())[:-1]))
    key = (layer * E + expert)[order]
    rank = np.arange(order.size) - first[key]
    log2phy = np.full((L, E, X), -1, dtype=np.int64)
    log2phy.reshape(L * E, X)[key, rank] = slot[order]
    return log2phy, logcnt


def rebalance_experts(weight, num_replicas, num_groups, num_nodes, num_gpus, policy="eplb", previous=None,
                      failed_ranks=None, expert_bytes=0, max_moved_bytes=None, return_moves=False):
    """Replicate and place the experts of every MoE layer (DeepSeek EPLB's entry point and contract).

    Args:
        weight: [layers, num_logical_experts] load per expert (tokens, or any non-negative
            measure), anything numpy.asarray accepts: numpy array, nested list, CPU torch tensor.
            Must be 2-D like EPLB's (one layer is weight[None, :]).
        num_replicas: physical experts (slots) per layer P, all GPUs together; a multiple of
            num_gpus and at least num_logical_experts.
        num_groups: expert groups. policy="eplb": hierarchical when num_groups % num_nodes == 0
            (groups packed onto nodes, then replicas within each node; num_gpus must then be a
            multiple of num_nodes), else EPLB's global policy, which accepts any num_nodes and
            num_gpus. policy="zepp" ignores it.
        num_nodes: server nodes; GPUs of a node share a fast interconnect (NVLink).
        num_gpus: GPUs (EP ranks). Slot p sits on GPU p // (P / num_gpus). policy="zepp" needs a
            multiple of num_nodes.
        policy: "eplb" -- DeepSeek's public EPLB rule, exact to its float32 arithmetic. Ties (equal
            loads, which real load counts contain) follow ../shared/data/eplb/reference-cases.json:
            equal loads keep ascending index when sorted, the next replica goes to the lowest-index
            expert among equal load per replica, the lowest-index pack wins among equally loaded
            packs. eplb.py sorts with PyTorch's unstable sort, so its own output for ties can
            differ between PyTorch versions. "zepp" -- Zepp's placement (paper §4.1), layer by
            layer: replica counts and a node-spreading LPT packing within 1% of a plain LPT one
            (src/placement/zepp.cpp); S = num_replicas / num_gpus slots per GPU,
            ceil(E / num_gpus) <= S <= E, each expert at most one replica per GPU.
        previous: policy "zepp" only: the current phy2log [layers, num_replicas], holding every
            expert in every row (-1 only in the slots of failed_ranks, as this function returns
            a placement made under the same failure). The result is
            the placement with the fewest weight moves whose expected max GPU load is within 1% of
            a from-scratch placement's, preferring moves within a node (src/placement/rebalance.cpp);
            slots keep their expert where it is still wanted.
        failed_ranks: policy "zepp" only: lost EP ranks (GPU ids). Placement on the survivors, each
            keeping its S slots; every expert keeps a replica; the lost ranks' slots hold -1 in
            phy2log and appear nowhere in log2phy.
        expert_bytes: weights of one expert in bytes (3 x hidden x ffn x 2 in BF16), for the moves
            report and max_moved_bytes. 0: size unknown; moves are then weighed as one expert copy
            each (still NVLink before NIC), the report's bytes are 0 and max_moved_bytes binds
            nothing.
        max_moved_bytes: with previous: per-layer budget for weight moves (bytes), trading balance
            for churn; restoring experts of lost ranks may exceed it. None: no budget.
        return_moves: also return a dict of per-layer arrays (weight's kind): slots_changed, local, nvlink,
            nic (slot counts by where the new expert's weights come from), nvlink_bytes, nic_bytes,
            imbalance (expected max / mean GPU load), from_scratch_imbalance, survivors [G'].

    Torch: every array argument may be a torch tensor. A CPU tensor is read in place (no copy); a
    tensor on a GPU is copied to the host, planned on the CPU, and the results are copied back to
    its device. Results are then int64 torch tensors on weight's device (numpy arrays for numpy or
    list input), as DeepSeek's eplb.py returns int64 tensors.

    Returns:
        (phy2log, log2phy, logcnt), int64 arrays of weight's kind (above), as EPLB returns them:
        phy2log [layers, num_replicas]: logical expert held by each slot (-1: a lost rank's slot).
        log2phy [layers, num_logical_experts, X]: slots of each expert, -1 padded, with X the most
            replicas any expert has (as SGLang's EPLB; DeepSeek's eplb.py pads to P - E + 1, the
            extra columns all -1). Order: EPLB's replica ranks for "eplb", ascending slots for "zepp".
        logcnt [layers, num_logical_experts]: replicas of each expert.
        With return_moves, a fourth element: the dict above.

    Raises:
        ValueError naming the argument: weight not 2-D, empty or not numeric; an entry of weight
            negative, NaN/inf or above 1e15 (as the load file readers refuse), named by its index;
        counts that are not positive integers or do not divide as required; an unknown policy;
        previous / failed_ranks with policy "eplb", of the wrong shape or out of range; a row of
        previous without a slot for some expert, or with -1 outside failed ranks' slots; too few
        surviving ranks for every expert.
        TypeError naming a count that is not an integer, a policy that is not a string, or
        return_moves that is not a bool.
    """
    caller = Caller(weight)
    if not isinstance(policy, str):  # None compared unequal to both names and read as a bad value
        raise TypeError(f"policy: expected 'eplb' or 'zepp', got {policy!r}")
    return_moves = flag(return_moves, "return_moves")
    _bytes(expert_bytes, "expert_bytes", "a number of bytes in [0, 1e15]")
    if max_moved_bytes is not None:
        _bytes(max_moved_bytes, "max_moved_bytes", "bytes in [0, 1e15] or None")
    stable = previous is not None or failed_ranks is not None or return_moves
    if not stable and (expert_bytes != 0 or max_moved_bytes is not None):
        raise ValueError("expert_bytes, max_moved_bytes: only act with policy 'zepp' and previous, failed_ranks or "
                         "return_moves (they weigh moves from a placement); leave them out or add those")
    if not stable or policy != "zepp":
        if stable:
            raise ValueError(f"policy: previous, failed_ranks and return_moves need policy 'zepp', got {policy!r}")
        phy2log, log2phy, logcnt = placement_maps(weight, num_replicas, num_groups, num_nodes, num_gpus, policy)
        X = int(logcnt.max())  # placement_maps' X already (the copy is for other callers' wider maps)
        return caller.give_all((phy2log, log2phy if log2phy.shape[2] == X else log2phy[:, :, :X].copy(), logcnt))
    w, P, _, nodes, gpus = _checked(weight, num_replicas, num_groups, num_nodes, num_gpus, policy)
    phy2log, survivors, moves, imbalance = _rebalance_zepp(w, P, nodes, gpus, previous, failed_ranks, expert_bytes,
                                                           max_moved_bytes)
    log2phy, logcnt = _maps(phy2log, w.shape[1])
    maps = caller.give_all((phy2log, log2phy, logcnt))
    if not return_moves:
        return maps
    report = {
        "slots_changed": moves[:, 0].astype(np.int64),
        "local": moves[:, 1].astype(np.int64),
        "nvlink": moves[:, 2].astype(np.int64),
        "nic": moves[:, 3].astype(np.int64),
        "nvlink_bytes": moves[:, 4],
        "nic_bytes": moves[:, 5],
        "imbalance": imbalance[:, 0],
        "from_scratch_imbalance": imbalance[:, 1],
        "survivors": np.asarray(survivors, dtype=np.int64),
    }
    return (*maps, {name: caller.give(value) for name, value in report.items()})
