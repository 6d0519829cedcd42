"""One MoE layer invocation under each strategy: `zepp simulate` as a function."""

import inspect
import json
import math
import os

import _zepp

from ._args import INT32_MAX, count, flag, seconds_budget

_OVERRIDES = {  # optional model and cluster overrides, as `zepp simulate --<name>` (dashes there)
    "gpus_per_node": int,
    "num_experts": int,
    "top_k": int,
    "hidden": int,
    "ffn": int,
    "nvlink_gbps": float,
    "nic_gbps": float,
    "nvlink_latency_us": float,
    "nic_latency_us": float,
    "peak_tflops": float,
    "hbm_tbps": float,
    "kernel_launch_us": float,
}


def _path(value, name, optional):
    """A file path (str or os.PathLike; a preset name for topology), or TypeError naming `name`."""
    if value is None and optional:
        return ""
    if isinstance(value, (str, os.PathLike)):
        return os.fsencode(value)  # bytes: a name that is not UTF-8 reaches the file system as it is
    raise TypeError(f"{name}: expected a {'path or None' if optional else 'preset name or path'}, got {value!r}")


def _number(value, name, kind):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
        raise TypeError(f"{name}: expected {'an integer' if kind is int else 'a number'}, got {value!r}")
    if kind is float and not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    if kind is int and abs(value) > INT32_MAX:
        raise ValueError(f"{name}: expected an integer <= {INT32_MAX}, got {value!r}")
    return kind(value)


def simulate(trace=None, model=None, topology="a100", nodes=4, strategies=("a2av", "eplb", "zepp"),
             executor="sim", *, history=None, size_mb=1.0, seed=1, layer=-1, history_fraction=0.5, zipf=0.73, dataset="",
             extra_slots=2, balance_slack=0.1, nic_slack=0.0, eplb_groups=0, split=True, merge=True,
             overlap=True, locality=True, waves=True, round_order_always=False, local_first=True, swap_horizon=None,
             planning="model", roofline_placement=False, **overrides):
    """Place, route and time one MoE layer under each strategy; the figures `zepp simulate --format json` prints.

    Each keyword is the `zepp simulate` flag of the same name (underscores for dashes); defaults
    are the program's. The workload follows paper §6.1: evaluation tokens sampled with replacement
    from the trace (or a synthetic power-law workload without one) until each GPU holds size_mb
    MiB of BF16 activations; placement uses the history share of requests.

    Args:
        trace: trace file or folder (shared/data/traces/...), or None for the synthetic workload.
        history: a trace file or folder whose tokens are the placement history; `trace` is then
            evaluation only (history_fraction unused). None: history = the first requests of `trace`.
        model: model preset name (required with a trace; default kimi-k2 without one).
        topology: cluster preset ("a100", "h100" of paper §6.1; "dgx-h100", "gb200-nvl72", ...:
            `zepp presets`) or the path of a topology file (docs/topology.md); nodes: node count N.
        strategies: names to run, e.g. ("a2av", "eplb", "zepp") or "a2av, eplb, zepp" (entries are
            trimmed; an empty, repeated or unknown one is refused, as `--strategies` refuses it), or
            a variant with one stage switched, as the sweeps name it ("zepp/no-waves",
            "epic/zepp-placement"; pipeline/variants.hpp), side by side with its base.
        executor: "sim" (SimGrid cluster, the default, as `zepp simulate`) or "estimate" (closed form).
        size_mb, seed, layer, history_fraction, zipf, dataset: workload (see `zepp simulate --help`).
        extra_slots: R extra slots per GPU (§4.1); balance_slack: C of equation (1);
        nic_slack: C_NIC of equation (2); eplb_groups: EPLB expert groups (0: automatic).
        split, merge, overlap, locality: Zepp's stages (False = the paper's Figure 12 ablations);
            waves, local_first (False) and round_order_always (True): the ablations of Zepp's
            combine waves, own-node-first compute and priority-only round order. Each acts only
            with a Zepp strategy (locality: one that routes by locality), and the rows of Zepp's
            strategies are then named with it, e.g. "zepp/no-split".
        roofline_placement: True weighs Zepp's placement in roofline time at the batch instead of
            tokens (`--roofline-placement`, an experiment that lost on held-out data, off by default:
            docs/baselines/epic.md); only with zepp or zepp+swaps, whose rows are then named with it.
        swap_horizon: zepp+swaps' horizon in iterations (`--swap-horizon`; only with zepp+swaps;
            None: the program's default, 8).
        planning: "model" charges each strategy's per-batch metadata exchange and planning in
            its latency (src/plan/planning.hpp); "free" leaves them out.
        **overrides: gpus_per_node, num_experts, top_k, hidden, ffn (ints); nvlink_gbps, nic_gbps
            (GB/s), nvlink_latency_us, nic_latency_us (µs), peak_tflops, hbm_tbps, kernel_launch_us.

    Returns:
        dict: {"strategies": [{"name", "latency_us", "speedup_vs_a2av", "imbalance",
        "inter_node_bytes", "nvlink_bytes", "max_nic_bytes", "comm_hidden_fraction",
        "routing_cost_us", "routing_cost_optimal_us", "routing_gap", "routing_wall_us", "metadata_us",
        "planning_us" (charged, included in latency_us), zepp+swaps only: "swaps" {"accepted",
        "refused", "triggered", "horizon", best refused swap's figures}}, ...],
        "workload": {...}, "cluster": {...}} -- the JSON of `zepp simulate --format json`.

    Raises:
        ValueError naming the argument (checks shared with the program name the keyword, e.g.
        "layer: layer 99 is not in trace ..."), or the trace file and line for a malformed trace.
        TypeError for an unknown keyword, a number that is not one (size_mb="1"), a count that
        is not an integer (nodes=2.0, swap_horizon=True), a stage flag that is not a bool
        (waves=0), a name or path that is not a string, or strategies that are not names.
    """
    settings = {}
    for key, kind in _OVERRIDES.items():
        value = overrides.pop(key, None)
        if value is not None and not _number(value, key, kind) > 0:
            raise ValueError(f"{key}: expected a positive number, got {value!r}")
        settings[key] = None if value is None else kind(value)
    if overrides:
        known = [p for p in inspect.signature(simulate).parameters if p != "overrides"] + list(_OVERRIDES)
        raise TypeError(f"{sorted(overrides)[0]}: unknown keyword; expected one of {', '.join(known)}")
    if isinstance(strategies, str):
        strategies = [strategies]  # "a2av, zepp": split, trimmed and checked as the program does
    if not isinstance(strategies, (list, tuple)) or not all(isinstance(s, str) for s in strategies):
        raise TypeError(f"strategies: expected names such as ('a2av', 'eplb', 'zepp') or 'a2av,zepp', got {strategies!r}")
    for name, value in (("model", model), ("executor", executor), ("dataset", dataset), ("planning", planning)):
        if not (isinstance(value, str) or (value is None and name == "model")):
            raise TypeError(f"{name}: expected a string, got {value!r}")
    settings.update(
        trace=_path(trace, "trace", True),
        history=_path(history, "history", True),
        model="" if model is None else model,
        topology=_path(topology, "topology", False),
        nodes=count(nodes, "nodes"),
        strategies=list(strategies),
        executor=executor,
        size_mb=_number(size_mb, "size_mb", float),
        seed=count(seed, "seed", minimum=0, maximum=2**64 - 1),
        layer=count(layer, "layer", minimum=-1),
        history_fraction=_number(history_fraction, "history_fraction", float),
        zipf=_number(zipf, "zipf", float),
        dataset=str(dataset),
        extra_slots=count(extra_slots, "extra_slots", minimum=0, maximum=65536),  # as zepp simulate --extra-slots
        balance_slack=_number(balance_slack, "balance_slack", float),
        nic_slack=_number(nic_slack, "nic_slack", float),
        eplb_groups=count(eplb_groups, "eplb_groups", minimum=0),
        split=flag(split, "split"), merge=flag(merge, "merge"), overlap=flag(overlap, "overlap"),
        locality=flag(locality, "locality"), waves=flag(waves, "waves"),
        round_order_always=flag(round_order_always, "round_order_always"), local_first=flag(local_first, "local_first"),
        swap_horizon=None if swap_horizon is None else count(swap_horizon, "swap_horizon", minimum=1, maximum=1000000),
        planning=planning,
        roofline_placement=flag(roofline_placement, "roofline_placement"),
        max_seconds=seconds_budget(),
    )
    if model is None and settings["trace"]:  # the program's own message names its flags
        raise ValueError("model: expected the trace's model preset with trace, got None")
    return json.loads(_zepp.simulate(settings))
