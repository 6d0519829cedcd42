"""Expert replication and placement for every layer, with DeepSeek EPLB's contract."""

import numpy as np

import _zepp

from ._args import array, count, fits


def _checked(weight, num_replicas, num_groups, num_nodes, num_gpus):
    w = array(weight, "weight", 2, integer=False)
    if w.shape[0] == 0 or w.shape[1] == 0:
        raise ValueError(f"weight: expected at least one layer and one expert, got shape {w.shape}")
    if np.any(w < 0):
        raise ValueError("weight: expected loads >= 0")
    return (w, count(num_replicas, "num_replicas"), count(num_groups, "num_groups"),
            count(num_nodes, "num_nodes"), count(num_gpus, "num_gpus"))


def placement_maps(weight, num_replicas, num_groups, num_nodes, num_gpus, policy):
    """(phy2log [L,P], log2phy [L,E,P-E+1], logcnt [L,E]) as int64; the shared core of
    rebalance_experts and the vLLM policy (which keeps log2phy P-E+1 wide)."""
    w, P, groups, nodes, gpus = _checked(weight, num_replicas, num_groups, num_nodes, num_gpus)
    L, E = w.shape
    # phy2log [L, P], logcnt [L, E] and log2phy [L, E, P - E + 1] as int64, in C++ and handed to numpy.
    fits(16 * L * (P + E + E * max(1, P - E + 1)), "num_replicas", f"placing {P} slots for {E} experts on {L} layers")
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


def rebalance_experts(weight, num_replicas, num_groups, num_nodes, num_gpus, policy="eplb"):
    """Replicate and place the experts of every MoE layer (DeepSeek EPLB's entry point and contract).

    Args:
        weight: [layers, num_logical_experts] load per expert (tokens, or any non-negative
            measure), anything numpy.asarray accepts: numpy array, nested list, CPU torch tensor.
            Must be 2-D like EPLB's (one layer is weight[None, :]).
        num_replicas: physical experts (slots) per layer P, all GPUs together; a multiple of
            num_gpus and at least num_logical_experts.
        num_groups: expert groups. policy="eplb": hierarchical when num_groups % num_nodes == 0
            (groups packed onto nodes, then replicas within each node), else EPLB's global policy.
            policy="zepp" ignores it.
        num_nodes: server nodes; GPUs of a node share a fast interconnect (NVLink).
        num_gpus: GPUs (EP ranks), a multiple of num_nodes. Slot p sits on GPU p // (P / num_gpus).
        policy: "eplb" -- DeepSeek's public EPLB rule, exact to its float32 arithmetic (ties to the
            lowest index). "zepp" -- Zepp's placement (paper §4.1), layer by layer: each GPU's
            R extra slots (beyond those holding every expert once) go to
            the experts with the highest load per replica; replicas spread round-robin over nodes,
            then balanced over the GPUs of each node. S = num_replicas / num_gpus slots per GPU,
            R = S - ceil(E / num_gpus) extra slots, each expert at most one replica per GPU.

    Returns:
        (phy2log, log2phy, logcnt), int64 numpy arrays, as EPLB returns them:
        phy2log [layers, num_replicas]: logical expert held by each slot.
        log2phy [layers, num_logical_experts, X]: slots of each expert, -1 padded, with X the most
            replicas any expert has (EPLB's maxlogcnt). Order: EPLB's replica ranks for "eplb",
            ascending slots for "zepp".
        logcnt [layers, num_logical_experts]: replicas of each expert.

    Raises:
        ValueError naming the argument: weight not 2-D, empty, negative, NaN/inf or not numeric;
        counts that are not positive integers or do not divide as required; an unknown policy.
    """
    phy2log, log2phy, logcnt = placement_maps(weight, num_replicas, num_groups, num_nodes, num_gpus, policy)
    return phy2log, log2phy[:, :, : int(logcnt.max())].copy(), logcnt
