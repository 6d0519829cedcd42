"""Serving engines' placement and statistics files (C++ readers and writers in src/formats)."""

import os

import numpy as np

import _zepp

from ._args import array, fits, loads

PLACEMENT_FORMATS = ("sglang", "trtllm", "eplb-json")
MAX_LAYER_ID = _zepp.MAX_LAYER_ID  # layer ids of placement files are in [0, 2^30), as the readers require


def _path(path, name="path"):
    """`path` as os.fspath gives it: TypeError naming `name` for what is no path (None, a number),
    ValueError for an empty one (the core would name a file '')."""
    try:
        path = os.fspath(path)
    except TypeError:
        raise TypeError(f"{name}: expected a file path (str or os.PathLike), got {path!r}") from None
    if not path:
        raise ValueError(f"{name}: expected a file path, got an empty one")
    return path


def _native(path):
    """`path` as the core takes it: its bytes (os.fsencode), so that a name which is not UTF-8 (a
    str with surrogate escapes, as os.listdir and sys.argv give it) reaches the file system as it
    is; the core's messages show such bytes as \\xNN."""
    return os.fsencode(path)


def _read(reader, path, *args):
    """A C++ reader's failure as ValueError naming the file (they raise ValueError already; this
    catches anything else a parser library lets through)."""
    try:
        return reader(_native(path), *args)
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001 -- every parse failure becomes the documented ValueError
        raise ValueError(f"{path}: cannot read ({type(e).__name__}: {e})") from None


def read_sglang_stats(path):
    """Per-layer expert load from SGLang expert-distribution statistics (JSON).

    The file is a JSON object with "logical_count" of shape [steps, L, E] or [L, E] (token counts;
    other members are ignored). SGLang's recorder dumps it as .pt; convert with
    json.dump({"logical_count": torch.load(f)["logical_count"].tolist()}, out).

    Returns: [L, E] float64 numpy array, tokens per expert summed over steps -- the `weight` of
    rebalance_experts.
    Raises: ValueError naming the file and field (missing member, ragged lists, non-numbers,
    negative counts, a count summing above 1e15 over the steps, invalid JSON with its line);
    TypeError naming path when it is no path.
    """
    return _read(_zepp.read_sglang_stats, _path(path))


def write_sglang_stats(path, load):
    """Write [L, E] per-layer load as SGLang statistics JSON {"logical_count": [L, E]}.

    Integral loads are written as integers, others in shortest round-trip form, so
    read_sglang_stats(path) returns `load` exactly. Raises ValueError naming `load` (not 2-D, empty;
    an entry negative, NaN/inf or above 1e15, which the reader would refuse) or the file (cannot
    write); TypeError naming path when it is no path.
    """
    a = loads(load, "load", 2)
    if a.size == 0:
        raise ValueError(f"load: expected a non-empty [layers, experts] array of loads, got shape {a.shape}")
    _zepp.write_sglang_stats(_native(_path(path)), a)


def _format(format):
    if not isinstance(format, str):
        raise TypeError(f"format: expected one of {', '.join(PLACEMENT_FORMATS)}, got {format!r}")
    if format not in PLACEMENT_FORMATS:
        raise ValueError(f"format: expected one of {', '.join(PLACEMENT_FORMATS)}, got {format!r}")
    return format


def read_placement(path, format):
    """Read a model's expert placement file.

    format: "sglang" (--init-expert-location JSON {"physical_to_logical_map": [L, P]}; rows are
    model layers 0..L-1), "trtllm" (TensorRT-LLM load-balancer YAML: num_slots,
    initial_global_assignments {layer: [expert per slot]}), "eplb-json" ({"phy2log", "log2phy",
    "logcnt"} as EPLB returns them; log2phy and logcnt, when present, must agree with phy2log; rows
    are layers 0..L-1, or its "layers" when given).

    Returns: (layer_ids [L] int64, phy2log [L, P] int64); slot p of a row sits on EP rank
    p // (P / ranks).
    Raises: ValueError naming the file, line (YAML, JSON syntax) and field for malformed files:
    wrong shapes, non-integer or out-of-range ids, an expert missing from a row, repeated layers;
    TypeError naming path or format when it is no path or string.
    """
    return _read(_zepp.read_placement, _path(path), _format(format))


def write_placement(path, phy2log, format, layer_ids=None):
    """Write phy2log [L, P] (one row per MoE layer, e.g. rebalance_experts' first result) in `format`.

    layer_ids [L]: model layer of each row, distinct, in [0, 2^30) (default 0..L-1); "eplb-json"
    stores ids other than 0..L-1 as "layers" (as `zepp place --trace` does). "sglang" writes
    rows for model layers 0..max(layer_ids), filling layers absent from layer_ids (dense layers)
    with SGLang's own trivial row p -> p mod E, and writes only physical_to_logical_map (SGLang's
    init_by_mapping accepts nothing else). "trtllm" writes num_slots, initial_global_assignments (layers ascending) and
    layer_updates_per_iter: 0 (static placement). "eplb-json" writes phy2log, log2phy (slots
    ascending, -1 padded to the most replicas) and logcnt.
    Raises: ValueError naming phy2log / layer_ids / format, or the file when it cannot be written;
    TypeError naming path or format when it is no path or string.
    """
    format = _format(format)
    phy = array(phy2log, "phy2log", 2, integer=True)
    L, P = phy.shape
    if L == 0 or P == 0:
        raise ValueError(f"phy2log: expected a non-empty [layers, slots] array, got shape {phy.shape}")
    if phy.min() < 0 or phy.max() >= P:
        raise ValueError(f"phy2log: expected expert ids in [0, {P}), got [{phy.min()}, {phy.max()}]")
    ids = np.arange(L) if layer_ids is None else array(layer_ids, "layer_ids", 1, integer=True)
    if ids.shape[0] != L:
        raise ValueError(f"layer_ids: expected one id per row of phy2log ({L}), got {ids.shape[0]}")
    bad = ids[(ids < 0) | (ids >= MAX_LAYER_ID)]
    if bad.size:
        raise ValueError(f"layer_ids: expected layer ids in [0, 2^30), got {bad[0]}")
    values, counts = np.unique(ids, return_counts=True)
    if counts.max() > 1:
        raise ValueError(f"layer_ids: expected distinct layer ids, got {values[counts.argmax()]} twice")
    if format == "sglang":  # a row of P ids (and their text) for every model layer up to the largest id
        fits(16 * (int(ids.max()) + 1) * P, "layer_ids", f"writing SGLang rows for layers 0..{int(ids.max())}")
    E = int(phy.max()) + 1
    for row in range(L):
        missing = np.setdiff1d(np.arange(E), phy[row])
        if missing.size:
            raise ValueError(f"phy2log: row {row} has no slot for expert {missing[0]}; every row needs all of [0, {E})")
    _zepp.write_placement(_native(_path(path)), phy.astype(np.int32), ids.astype(np.int32), format)
