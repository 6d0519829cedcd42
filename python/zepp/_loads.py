"""Expert load statistics as serving engines record them, read into [layers, E] loads.

Sources (facts from the engines' code, looked up for issue 22; no code of theirs is used):
- SGLang statistics JSON {"logical_count": [steps, L, E] or [L, E]} (read_sglang_stats).
- SGLang's expert-distribution recorder dumps (`torch.save` files, python/sglang/srt/eplb/
  expert_distribution.py): mode "stat" writes expert_distribution_recorder_<time>.pt holding
  {"rank", "logical_count": [buffered steps, L, E] int tensor (summed over ranks),
  "average_utilization_rate_over_window"}; modes "per_pass"/"per_token" write one file per rank
  {"records": [{"forward_pass_id", "rank", "gatherer_key", "global_physical_count": [L, P], ...}],
  "last_physical_to_logical_map": [L, P]}: physical counts, folded here onto logical experts
  through that map (exact when the placement did not change during the recording).
- vLLM's expert-load window: the policy context's load_window_cpu [samples, L, E] (logical, oldest
  first), saved with torch.save as a tensor or as {"load_window_cpu": tensor}; the older
  EplbState.expert_load_window [samples, L, P] counts physical slots: give its
  physical_to_logical_map (or save {"expert_load_window": ..., "physical_to_logical_map": ...}).
"""

import json
import os

import numpy as np

import _zepp

from ._args import array, bounded, loads, summed
from ._formats import _path, read_sglang_stats


def _fold(physical, phy2log, name):
    """[L, P] physical counts -> [L, E] logical through phy2log [L, P]."""
    phy = array(phy2log, name, 2, integer=True)
    if phy.shape != physical.shape:
        raise ValueError(f"{name}: expected a [layers, slots] map of shape {physical.shape} (as the counts), got {phy.shape}")
    if phy.min() < 0:
        raise ValueError(f"{name}: expected expert ids >= 0, got {phy.min()}")
    # Every expert of [0, E) has a slot in every layer, so E is the first id some layer lacks: an id
    # beyond it (99 among 8 experts) is corrupt, not 92 experts without load.
    L, P = phy.shape
    held = np.zeros((L, P + 1), dtype=bool)  # P slots hold at most ids 0..P-1: column P stands for any beyond
    held[np.arange(L)[:, None], np.minimum(phy, P)] = True
    lacks = held.argmin(axis=1)  # per layer, its first id without a slot
    E = int(lacks.min())
    if (phy >= E).any():
        layer, slot = (int(i) for i in np.argwhere(phy >= E)[0])
        raise ValueError(f"{name}[{layer}, {slot}]: expected an expert id in [0, {E}), got {phy[layer, slot]} "
                         f"(layer {int(lacks.argmin())} has no slot for expert {E}; every expert needs one in every layer)")
    out = np.zeros((physical.shape[0], E))
    for layer in range(physical.shape[0]):
        np.add.at(out[layer], phy[layer], physical[layer])
    return bounded(out, name, "the expert's slots")


def _window(window, phy2log, where):
    """[samples, L, E or P] summed over samples, folded to logical experts when phy2log is given."""
    total = summed(loads(window, where, 3), where, "sample", "experts or slots")
    return total if phy2log is None else _fold(total, phy2log, "physical_to_logical_map")


def read_expert_load(path, physical_to_logical_map=None):
    """Per-layer expert load [layers, E] from an engine's statistics file.

    Args:
        path: a .json file (SGLang statistics {"logical_count": ...}) or a torch.save file (.pt):
            SGLang's recorder dump ("stat" or "per_pass"/"per_token" mode), or vLLM's load window
            (a [samples, layers, E] tensor, or a dict with "load_window_cpu", or
            "expert_load_window" [samples, layers, P] with "physical_to_logical_map").
        physical_to_logical_map: [layers, P] for a physical window saved without its map (vLLM's
            expert_load_window, or a [samples, layers, P] tensor), folded onto logical experts.
            Refused for a file that holds logical counts (SGLang's logical_count, JSON or .pt;
            vLLM's load_window_cpu) or its own map: it would be ignored.

    Returns: [layers, E] float64 numpy array, summed over steps / samples / records: the `weight`
    of rebalance_experts.

    Raises: ValueError naming the file and what was expected (a file neither JSON nor torch.save,
    unknown content, shapes that do not match, negative counts, a map entry beyond the experts every
    layer holds, a map given for a file that needs none). Reading .pt files needs torch; they are read with
    torch.load(weights_only=True), which refuses pickled code.
    """
    return _read(path, physical_to_logical_map, "physical_to_logical_map")


def _read(path, phy2log, map_name):
    """read_expert_load, a map given for a file that needs none refused naming `map_name` (the
    argument, or the CLI's --map)."""
    path = _path(path)
    if not os.path.isfile(path):
        raise ValueError(f"{path}: expected an existing statistics file")
    if _kind(path) == "json":
        if phy2log is not None:
            raise ValueError(f"{path}: {map_name}: {_LOGICAL.format('SGLang statistics JSON (logical_count)')}")
        return read_sglang_stats(path)
    try:
        import torch
    except ImportError:
        raise ValueError(f"{path}: reading torch.save files needs torch (apt-get install python3-torch)") from None
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 -- any unreadable file becomes the documented ValueError
        raise ValueError(f"{path}: cannot read as a torch.save file ({type(e).__name__}: {e})") from None
    try:
        load = _from_object(data, phy2log, map_name)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    if load.size == 0:  # read_sglang_stats and write_sglang_stats refuse these too
        raise ValueError(f"{path}: expected loads of at least one layer and one expert, got shape {load.shape}")
    return load


def _kind(path):
    """"json" or "torch" by the file's first bytes; ValueError naming the file for anything else
    (torch.load reports a text file as "IndexError: list index out of range")."""
    with open(path, "rb") as f:
        head = f.read(64)
    # A UTF-8 byte order mark may open JSON, as read_sglang_stats accepts it.
    if head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1] in (b"{", b"[") or path.endswith(".json"):
        return "json"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"\x80"):  # torch.save: a zip archive, or a pickle (legacy)
        return "torch"
    got = repr(head.split(b"\n", 1)[0][:40].decode("utf-8", "replace")) if head else "an empty file"
    raise ValueError(f"{path}:1: expected SGLang statistics JSON ('{{' first) or a torch.save file "
                     f"(.pt: a zip archive or a pickle), got {got}")


# Why a map is refused for logical counts, and for a file that holds its own map.
_LOGICAL = ("expected no map: the file holds logical counts, {}, which need no folding (a map "
            "applies only to a physical window saved without its map)")
_OWN_MAP = "expected no map: the file holds its own {} (a map applies only to a physical window saved without its map)"


def _no_map(phy2log, map_name, why):
    if phy2log is not None:
        raise ValueError(f"{map_name}: {why}")


def _from_object(data, phy2log, map_name):
    if isinstance(data, dict):
        if "logical_count" in data:  # SGLang "stat" dump
            _no_map(phy2log, map_name, _LOGICAL.format("SGLang's logical_count"))
            counts = loads(data["logical_count"], "logical_count", np.ndim(data["logical_count"]))
            if counts.ndim not in (2, 3):
                raise ValueError(f"logical_count: expected [steps, layers, experts] or [layers, experts], got shape {counts.shape}")
            return summed(counts, "logical_count", "step") if counts.ndim == 3 else counts
        if "records" in data:  # SGLang "per_pass" / "per_token" dump
            if not isinstance(data["records"], (list, tuple)):
                raise ValueError(f"records: expected a list of records, got {type(data['records']).__name__}")
            records = [r for r in data["records"] if isinstance(r, dict) and "global_physical_count" in r]
            if not records:
                raise ValueError("records: expected records with global_physical_count (per_pass mode); "
                                 "per_token dumps hold topk ids, convert them with the recorder's own tools")
            total = bounded(sum(loads(r["global_physical_count"], "global_physical_count", 2) for r in records),
                            "global_physical_count", "the records")
            if "last_physical_to_logical_map" in data:
                _no_map(phy2log, map_name, _OWN_MAP.format("last_physical_to_logical_map"))
            return _fold(total, data.get("last_physical_to_logical_map", phy2log), "last_physical_to_logical_map")
        for key in ("load_window_cpu", "expert_load_window"):
            if key in data:
                if "physical_to_logical_map" in data:
                    _no_map(phy2log, map_name, _OWN_MAP.format("physical_to_logical_map"))
                elif key == "load_window_cpu":
                    _no_map(phy2log, map_name, _LOGICAL.format("vLLM's load_window_cpu"))
                return _window(data[key], data.get("physical_to_logical_map", phy2log), key)
        raise ValueError("expected SGLang's logical_count or records, or vLLM's load_window_cpu / "
                         f"expert_load_window, got keys {sorted(map(str, data))}")
    return _window(data, phy2log, "load window")


def expert_count_json(load):
    """[L, E] load as the expert-count JSON trace every `zepp` command reads with --trace
    (docs/trace-formats.md): {"num_experts": E, "expert_usage_by_layer": {"<layer>": {"<expert>": count}}}."""
    def number(x):
        return int(x) if float(x).is_integer() else float(x)

    return {"num_experts": int(load.shape[1]),
            "expert_usage_by_layer": {str(layer): {str(e): number(c) for e, c in enumerate(row)}
                                      for layer, row in enumerate(load)}}


def main(argv=None):
    """python3 -m zepp.loads IN [-o OUT] [--to expert-count|sglang] [--map MAP.json]: an engine's
    expert load statistics as a file Zepp's tools read: "expert-count" (default), the JSON trace
    `zepp place --trace` and `zepp simulate --trace` read; "sglang", SGLang statistics JSON
    {"logical_count": [L, E]} (zepp.read_sglang_stats)."""
    import argparse
    import sys

    from ._formats import read_placement, write_sglang_stats

    p = argparse.ArgumentParser(prog="python3 -m zepp.loads", description=main.__doc__.split(": ", 1)[1])
    p.add_argument("input", help="SGLang statistics .json or recorder .pt dump, or a vLLM load window .pt")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.add_argument("--to", choices=("expert-count", "sglang"), default="expert-count")
    p.add_argument("--map", help="physical_to_logical_map (SGLang --init-expert-location JSON) of a physical window "
                                 "saved without its map; refused for logical counts (logical_count, load_window_cpu) "
                                 "and for a file holding its own map")
    args = p.parse_args(argv)
    try:
        if args.output:  # before reading anything
            _zepp.check_output_file(os.fsencode(args.output), "--output")
        phy = read_placement(args.map, "sglang")[1] if args.map else None
        load = _read(args.input, phy, "--map")
        if args.to == "sglang" and args.output:
            write_sglang_stats(args.output, load)
            return 0
        doc = expert_count_json(load) if args.to == "expert-count" else {"logical_count": load.tolist()}
        if args.output:
            _zepp.write_file_atomically(os.fsencode(args.output), json.dumps(doc), "--output")
        else:
            json.dump(doc, sys.stdout)
            print()
    except (ValueError, OSError) as e:
        print(f"zepp.loads: {e}", file=sys.stderr)
        return 2
    return 0
