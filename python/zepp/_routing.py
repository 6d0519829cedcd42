"""Zepp's locality-preferred token routing for one MoE layer."""

import math
import os
import sys

import numpy as np

import _zepp

from ._args import INT32_MAX, MAX_LOAD, array, check_routing, count, shape_of
from ._tensors import Caller, host, is_tensor


def _check_cluster(phy2log, num_nodes, num_gpus, balance_slack):
    """Validated (phy2log as int32, E, nodes, gpus, slack) for a Router."""
    nodes, gpus = count(num_nodes, "num_nodes"), count(num_gpus, "num_gpus")
    shape = shape_of(phy2log)  # sizes checked before numpy copies anything (E <= P slots)
    if shape is not None and len(shape) == 1:  # the slots alone, then per (GPU, expert) with E <= P
        check_routing(shape[0], 1, 1, 0, "phy2log")
        check_routing(shape[0], shape[0], gpus, 0, "num_gpus")
    phy = array(phy2log, "phy2log", 1, integer=True)
    try:  # a string or bool is not read as its number ('0.5' would be)
        if isinstance(balance_slack, (str, bytes, bool, np.bool_)):
            raise TypeError
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
    # Routing keeps per (GPU, expert) demand and quotas and per slot its tables: checked before
    # they are allocated, so a count typed wrong fails at once (2**20 GPUs asked for 2 TiB).
    check_routing(P, E, gpus, 0, "num_gpus")
    missing = np.setdiff1d(np.arange(E), phy)
    if missing.size:
        raise ValueError(f"phy2log: expert {missing[0]} has no slot; every expert of [0, {E}) needs one")
    return phy.astype(np.int32), E, nodes, gpus, slack


GEMM_FIELDS = ("hidden", "ffn", "peak_flops", "read_s", "launch_s")
# Each figure's range (low, high, how the message writes it): sizes as ModelShape's int32 fields,
# peak_flops and launch_s as `zepp simulate --peak-tflops / --kernel-launch-us` take them
# (src/core/flag_ranges.cpp), read_s up to 1e6 s (a weight read of days is a unit mistake).
_GEMM_RANGES = {"hidden": (1, INT32_MAX, f"in [1, {INT32_MAX}] elements"),
                "ffn": (1, INT32_MAX, f"in [1, {INT32_MAX}] elements"),
                "peak_flops": (1e6, 1e24, "in [1e6, 1e24] FLOP/s"),
                "read_s": (0, 1e6, "in [0, 1e6] s"),
                "launch_s": (0, 1, "in [0, 1] s")}


def gemm_cost(model, topology):
    """The roofline cost of one expert GEMM that the simulator's routing weighs, for `gemm=`.

    Exactly the GemmCost `zepp simulate --model MODEL --topology TOPOLOGY` routes with
    (src/routing/routing.hpp `gemm_cost`: the operands of core/roofline.hpp's expert GEMM time,
    BF16 weights), so a Router given it routes as the simulator's Zepp does. For a simulation
    with --hidden, --ffn, --peak-tflops, --hbm-tbps or --kernel-launch-us, set the same figures
    in the dict (read_s = 3 hidden ffn 2 bytes / HBM bandwidth).

    Args:
        model: model preset name (`zepp presets`, `zepp.model_preset`), e.g. "llama4-maverick".
        topology: cluster preset name ("a100", "h100", "dgx-h100", ...) or the path of a topology
            file (docs/topology.md), as `zepp.simulate(topology=...)`; only its GPU's compute
            (peak FLOP/s, HBM bandwidth, kernel launch) is read.

    Returns:
        dict with the five figures of t(n) = max(6 n hidden ffn / peak_flops, read_s) + launch_s
        seconds for a GEMM of n >= 1 rows (0 for none): "hidden" (token dimension, elements),
        "ffn" (expert FFN width, elements), "peak_flops" (FLOP/s), "read_s" (seconds to read the
        expert's weights, 3 hidden ffn 2 bytes / HBM bandwidth), "launch_s" (seconds per kernel
        launch). Llama-4 Maverick on a100: read_s 161.8e-6, launch_s 5e-6.

    Raises:
        ValueError naming model or topology: an unknown preset, a file that is not a topology
        file, or the file's line and field when malformed. TypeError naming either when it is not
        a string (or path, for topology).
    """
    if not isinstance(model, str):
        raise TypeError(f"model: expected a model preset name, got {model!r}")
    if not isinstance(topology, (str, os.PathLike)):
        raise TypeError(f"topology: expected a cluster preset name or a topology file path, got {topology!r}")
    return dict(zip(GEMM_FIELDS, _zepp.gemm_cost(model, os.fsencode(topology))))


def _check_gemm(gemm):
    """`gemm=` as the core takes it: None, or the five figures of GEMM_FIELDS as floats (ValueError
    naming gemm and the field otherwise)."""
    if gemm is None:
        return None
    expected = f"None or a dict of {', '.join(GEMM_FIELDS)} (zepp.gemm_cost(model, topology) makes one)"
    if not hasattr(gemm, "keys"):
        raise ValueError(f"gemm: expected {expected}, got {gemm!r}")
    keys = set(gemm.keys())
    if keys != set(GEMM_FIELDS):
        wrong = sorted(map(str, keys - set(GEMM_FIELDS)))
        missing = [f for f in GEMM_FIELDS if f not in keys]
        detail = f"unknown {wrong}" if wrong else f"missing {missing}"
        raise ValueError(f"gemm: expected exactly the keys {', '.join(GEMM_FIELDS)}; {detail}")
    fields = []
    for key in GEMM_FIELDS:
        value, (low, high, bound) = gemm[key], _GEMM_RANGES[key]
        number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        if not (number and low <= float(value) <= high):  # NaN compares false: refused too
            raise ValueError(f"gemm['{key}']: expected a number {bound}, got {value!r}")
        fields.append(float(value))
    return tuple(fields)


def _ids(value, name, ndim):
    """`value` itself when it is a C-contiguous int32/int64 numpy array of `ndim` dimensions (no
    copy; a CPU torch tensor's numpy view is one), else converted as `array` does (int64, a copy)."""
    try:
        value = host(value)
    except Exception as e:  # a tensor numpy cannot read (meta, sparse): as `array` names it
        raise ValueError(f"{name}: expected an array-like convertible by numpy.asarray ({e})") from None
    if (isinstance(value, np.ndarray) and value.ndim == ndim and value.dtype in (np.int32, np.int64)
            and value.flags.c_contiguous):
        return value
    return array(value, name, ndim, integer=True)


def _tensor_out(out, shape, fill):
    """`out` (a torch tensor) filled by `fill(o)`, the method writing into `o` (None: returning a
    new result): a CPU tensor through its numpy view (no copy), another device's from the result,
    which must have `shape`, a tuple (or a function giving it)."""
    if out.device.type == "cpu":
        fill(host(out))
        return out
    shape = shape() if callable(shape) else shape
    if tuple(out.shape) != shape or out.is_floating_point() or out.is_complex():
        raise ValueError(f"out: expected an integer tensor of shape {shape}, got {out.dtype} {tuple(out.shape)}")
    result = fill(None)
    return out.copy_(result if is_tensor(result) else sys.modules["torch"].from_numpy(result))


class Router:
    """Zepp's routing bound to one layer's placement, for calling at every forward pass.

    The replica tables are built once here; each `route` call then costs one pass to count the
    demand, the count-level plan (microseconds) and one pass to assign the pairs, with the GIL
    released. Same rules and results as `route` (paper §4.1 equation (1), §5).

    Args:
        phy2log, num_nodes, num_gpus, balance_slack, gemm: as for `route`. With gemm, `route` and
            `plan` both consolidate, so the per-rank path keeps giving `route`'s slots; every rank
            must then pass the same gemm, as it passes the same phy2log.
        threads: threads that assign pairs (split over source GPUs; the result does not depend
            on it), >= 1.

    Attributes:
        gemm: the GEMM cost as given (a dict of floats), or None.
        consolidated: replicas the last count plan (`route` or `plan`) emptied by consolidation
            (0 without gemm, or when no move lowered the busiest GPU).

    Raises:
        ValueError naming the argument, as `route` does.
    """

    def __init__(self, phy2log, num_nodes, num_gpus, balance_slack=0.1, threads=1, gemm=None):
        phy, E, nodes, gpus, slack = _check_cluster(phy2log, num_nodes, num_gpus, balance_slack)
        fields = _check_gemm(gemm)
        self.num_experts, self.num_nodes, self.num_gpus, self.num_slots = E, nodes, gpus, phy.shape[0]
        self.threads = count(threads, "threads")
        self.gemm = None if fields is None else dict(zip(GEMM_FIELDS, fields))
        self._core = _zepp.Router(phy, E, nodes, gpus, slack, fields)

    @property
    def consolidated(self):
        """Replicas the last count plan (`route` or `plan`) emptied by consolidation."""
        return self._core.consolidated()

    def route(self, topk_ids, src_rank, out=None):
        """The slot serving every (token, k) pair.

        Args:
            topk_ids: [T, k] logical expert ids in [0, num_experts), or -1 for padding (as SGLang
                pads; its slot is -1). A C-contiguous int32 or int64 numpy array is read in
                place; anything else is converted (a copy).
            src_rank: [T] EP rank (GPU) of each token, in [0, num_gpus); int32 or int64 read in
                place likewise.
            out: optional C-contiguous [T, k] array of topk_ids' dtype to write the result into
                (reusing one across calls saves allocating and faulting in fresh pages). It must
                not share memory with topk_ids or src_rank (they are read while it is written:
                "out: must not overlap topk_ids"); nor, in count, plan and route_rank, with their
                inputs.

        Torch: topk_ids, src_rank and out may be torch tensors. CPU int32/int64 contiguous
        tensors are read and written in place (no copy); tensors on a GPU are copied to the host,
        routed there, and the result is copied back to topk_ids' device (into `out` when given).

        Returns:
            [T, k] array of topk_ids' kind and dtype (int64 when it was converted; a torch tensor
            on topk_ids' device for a tensor), `out` when given: the slot of each pair, on GPU
            slot // (num_slots / num_gpus).

        Raises:
            ValueError naming topk_ids, src_rank or out: wrong dimensions, lengths or dtype, k = 0,
            non-integer entries, ids or ranks out of range (the first offending entry is named), a
            token naming an expert twice (the token and the expert are named; -1 may repeat).
        """
        caller = Caller(topk_ids)
        shape = shape_of(topk_ids)  # the pairs' cost before any copy (a broadcast view may be huge)
        if shape is not None and len(shape) == 2:
            check_routing(self.num_slots, self.num_experts, self.num_gpus, shape[0] * shape[1], "topk_ids")
        ids = _ids(topk_ids, "topk_ids", 2)
        src = _ids(src_rank, "src_rank", 1)
        T, k = ids.shape
        if k == 0:
            raise ValueError("topk_ids: expected k >= 1 columns, got shape (T, 0)")
        if src.shape[0] != T:
            raise ValueError(f"src_rank: expected one rank per token ({T}), got {src.shape[0]}")
        if is_tensor(out):
            if out.device.type != "cpu":  # routed on the host, then copied into out
                if tuple(out.shape) != (T, k) or out.is_floating_point() or out.is_complex():
                    raise ValueError(f"out: expected an integer tensor of shape {(T, k)}, "
                                     f"got {out.dtype} {tuple(out.shape)}")
                return out.copy_(sys.modules["torch"].from_numpy(self.route(ids, src)))
            tensor_out, out = out, host(out)
            self.route(ids, src, out)
            return tensor_out
        if out is None:
            out = np.empty((T, k), dtype=ids.dtype)  # a CPU tensor caller gets it without a copy
        elif not (isinstance(out, np.ndarray) and out.shape == (T, k) and out.dtype == ids.dtype
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out: expected a writeable C-contiguous {ids.dtype} array of shape {(T, k)}")
        if T > 0:
            self._core.route(ids, src, out, self.threads)
        return caller.give(out)

    # Per-rank planning (issue 20): in a serving engine each EP rank holds only its own tokens.
    # Per layer, every rank calls count(), the rows are all-gathered into counts [G, E] (the
    # metadata exchange, e.g. torch.distributed.all_gather_into_tensor), every rank calls
    # plan(counts) and gets the same plan, and each routes its own tokens with route_rank().
    # Concatenated over ranks the slots equal `route` on all tokens at once (src_rank = each
    # token's rank), bit for bit; the proof is in src/routing/router.hpp.
    # All three take torch tensors too (CPU ones read in place) and return the caller's kind.

    def count(self, topk_ids, out=None):
        """This rank's pairs per logical expert: its row of the metadata all-gather.

        Args:
            topk_ids: [T, k] this rank's logical expert ids, -1 for padding (not counted);
                int32 or int64 C-contiguous numpy arrays are read in place.
            out: optional C-contiguous int64 [num_experts] array to write into, or a torch tensor
                (as `route`'s out: a CPU one written in place, another device's copied into).

        Returns:
            [num_experts] int64 numpy array (`out` when given).

        Raises:
            ValueError naming topk_ids (dimensions, an id outside [0, num_experts) and not -1, a
            token naming an expert twice) or out.
        """
        if is_tensor(out):
            return _tensor_out(out, (self.num_experts,), lambda o: self.count(topk_ids, o))
        caller = Caller(topk_ids)
        ids = _ids(topk_ids, "topk_ids", 2)
        if out is None:
            out = np.empty(self.num_experts, dtype=np.int64)
        elif not (isinstance(out, np.ndarray) and out.shape == (self.num_experts,) and out.dtype == np.int64
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out: expected a writeable C-contiguous int64 array of shape ({self.num_experts},)")
        if ids.shape[1] == 0:
            raise ValueError("topk_ids: expected k >= 1 columns, got shape (T, 0)")
        return caller.give(self._core.count(ids, out))

    def plan(self, counts, out=None):
        """The count-level plan (paper §4.1 equation (1), §5) from every rank's counts, consolidated
        by GEMM time when the Router has `gemm` (as `route`'s).

        Deterministic: every rank passing the same counts (and constructed with the same
        phy2log, balance_slack and gemm) gets the same plan, bit for bit.

        Args:
            counts: [num_gpus, num_experts] integer tokens, row i = rank i's `count` (the
                all-gathered metadata). A C-contiguous int64 numpy array is read in place.
            out: optional C-contiguous int64 [num_slots, num_gpus] array (or torch tensor, as
                count's) to write into.

        Returns:
            [num_slots, num_gpus] int64 numpy array m: m[p, i] = pairs of rank i served by slot p
            (on GPU p // (num_slots / num_gpus)). `out` when given.

        Raises:
            ValueError naming counts (shape, non-integer or negative entries, entries summing to
            more than MAX_LOAD = 1e15 pairs, as load files are bounded: the planner's int64 sums
            overflowed near 2**62) or out.
        """
        if is_tensor(out):
            return _tensor_out(out, (self.num_slots, self.num_gpus), lambda o: self.plan(counts, o))
        caller = Caller(counts)
        c = host(counts)
        if not (isinstance(c, np.ndarray) and c.dtype == np.int64 and c.flags.c_contiguous):
            c = array(counts, "counts", 2, integer=True)
        shape = (self.num_gpus, self.num_experts)
        if c.shape != shape:
            raise ValueError(f"counts: expected shape {shape} (num_gpus, num_experts), got {c.shape}")
        total = c.sum(dtype=np.float64)  # float: an int64 sum would wrap; negatives: the core names them
        if total > MAX_LOAD:
            raise ValueError(f"counts: expected entries summing to at most 1e15 pairs (MAX_LOAD), got {total:.4g}")
        if out is None:
            out = np.empty((self.num_slots, self.num_gpus), dtype=np.int64)
        elif not (isinstance(out, np.ndarray) and out.shape == (self.num_slots, self.num_gpus)
                  and out.dtype == np.int64 and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out: expected a writeable C-contiguous int64 array of shape "
                             f"{(self.num_slots, self.num_gpus)}")
        return caller.give(self._core.plan(c, out))

    def route_rank(self, topk_ids, rank, plan, out=None):
        """The slot serving every (token, k) pair of one rank's own tokens.

        Args:
            topk_ids: [T, k] the rank's logical expert ids, the ones it counted into `plan`;
                -1 entries (padding, as SGLang pads) pass through as -1. int32 or int64
                C-contiguous numpy arrays are read in place and the result keeps their dtype.
            rank: this rank, in [0, num_gpus).
            plan: [num_slots, num_gpus] int64, the result of `plan` on the all-gathered counts.
            out: optional C-contiguous [T, k] array of topk_ids' dtype (or torch tensor, as
                count's) to write into.

        Returns:
            [T, k] numpy array of topk_ids' dtype (int64 when converted), `out` when given.

        Raises:
            ValueError naming rank, topk_ids (as `route`), plan or out; "plan: more/fewer tokens for
            (src_gpu, expert) ..." when topk_ids are not the tokens counted into the plan.
        """
        if is_tensor(out):
            return _tensor_out(out, lambda: tuple(_ids(topk_ids, "topk_ids", 2).shape),
                               lambda o: self.route_rank(topk_ids, rank, plan, o))
        caller = Caller(topk_ids)
        ids = _ids(topk_ids, "topk_ids", 2)
        r = count(rank, "rank", minimum=0, maximum=self.num_gpus - 1)
        m = host(plan)
        if not (isinstance(m, np.ndarray) and m.dtype == np.int64 and m.flags.c_contiguous):
            m = array(plan, "plan", 2, integer=True)
        if m.shape != (self.num_slots, self.num_gpus):
            raise ValueError(f"plan: expected shape {(self.num_slots, self.num_gpus)} (num_slots, num_gpus), "
                             f"got {m.shape}")
        T, k = ids.shape
        if k == 0:
            raise ValueError("topk_ids: expected k >= 1 columns, got shape (T, 0)")
        if out is None:
            out = np.empty((T, k), dtype=ids.dtype)
        elif not (isinstance(out, np.ndarray) and out.shape == (T, k) and out.dtype == ids.dtype
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"out: expected a writeable C-contiguous {ids.dtype} array of shape {(T, k)}")
        return caller.give(self._core.route_rank(ids, r, m, out))


def route(topk_ids, src_rank, phy2log, num_nodes, num_gpus, balance_slack=0.1, gemm=None):
    """Choose the replica (slot) that serves every (token, k) pair, preferring local replicas.

    Zepp's routing (paper §4.1 equation (1), §5): for each expert, a token's request goes to a
    replica on its own GPU, else on another GPU of its node, else on a remote node, while every
    replica's load stays within [floor((1 - C) q), ceil((1 + C) q)] tokens, q being the expert's
    total requests divided by its replicas (greedy water-filling). Each token's remote requests
    are then consolidated onto as few nodes as those bounds allow. Only the cluster's shape
    matters: same GPU < same node < remote. Deterministic for the same inputs. A thin wrapper
    over `Router`; a serving engine that routes every forward pass should keep a Router per
    layer instead.

    Args:
        topk_ids: [T, k] integer logical expert ids selected by the gate, in [0, E) where
            E = phy2log.max() + 1, or -1 for padding (its slot is -1). Anything numpy.asarray accepts (a CPU torch tensor included).
        src_rank: [T] integer EP rank (GPU) each token is on, in [0, num_gpus).
        phy2log: [P] integer logical expert held by each slot of this layer (one row of
            rebalance_experts' phy2log); slot p sits on GPU p // (P / num_gpus). Every expert of
            [0, E) needs at least one slot.
        num_nodes: server nodes; num_gpus must be a multiple of it.
        num_gpus: GPUs (EP ranks); must divide P.
        balance_slack: C of equation (1), in [0, 1): 0 forces exactly balanced replicas (up to
            integer rounding), larger values allow more local routing.
        gemm: None (the default: equation (1)'s rows-only routing, as the paper's) or the roofline
            cost of one expert GEMM, a dict {"hidden", "ffn", "peak_flops", "read_s", "launch_s"}
            in the units of `gemm_cost` (elements, elements, FLOP/s, seconds, seconds); usually
            `zepp.gemm_cost(model, topology)`, the cost `zepp simulate` routes with, so that the
            slots are the simulator's Zepp routing for the same batch, placement and slack. With
            it, the count plan is consolidated by GEMM time (src/routing/consolidate.cpp, issue
            24 item 6, beyond the paper): below the roofline ridge a GEMM costs its weight read
            whatever its rows, so while the busiest GPU in roofline time has a weight-bound replica
            of a multi-replica expert whose rows can join another non-empty replica of it and
            lower that GPU by at least 1%, they move (within the node first; across nodes only
            while no node sends or receives more inter-node rows than the busiest did). A moved
            expert's replicas may then leave equation (1)'s bounds; every other expert's keep
            them. On Llama-4 Maverick (top-1, weight-bound GEMMs) it takes 8-11% off the
            simulated layer (docs/baselines/fast.md's timelines). Off by default: the routing
            does not know the model or the GPU, and only their cost makes a move right; the
            simulator, `zepp run` and the serving loop know both and pass it (but for the
            zepp/no-consolidate ablation).

    Torch: every array argument may be a torch tensor (CPU ones read without a copy; GPU ones
    copied to the host, the result copied back to topk_ids' device).

    Returns:
        [T, k] int64 array of topk_ids' kind (a torch tensor on its device for a tensor, else
        numpy): the slot serving each (token, k) pair; its GPU is slot // (P / num_gpus).
        phy2log[slot] == topk_ids[t, j] for every id other than -1.

    Raises:
        ValueError naming the argument: wrong dimensions or lengths, non-integer ids, ids or ranks
        out of range, a token naming an expert twice ("topk_ids: token 3 selects expert 5 twice
        ..."; -1 padding may repeat), an expert without a slot, counts that do not divide, slack outside [0, 1),
        gemm that is not None or a dict of exactly the five figures, or a figure that is not a
        number in its range (naming the key, e.g. "gemm['read_s']: expected a number in
        [0, 1e6] s, got -1.0"): hidden, ffn in [1, 2**31 - 1], peak_flops in [1e6, 1e24],
        read_s in [0, 1e6], launch_s in [0, 1].
    """
    shape, slots = shape_of(topk_ids), shape_of(phy2log)  # the pairs' cost before any copy
    if shape is not None and len(shape) == 2 and slots is not None and len(slots) == 1:
        check_routing(slots[0], 1, 1, shape[0] * shape[1], "topk_ids")  # the cluster's share: Router checks it
    ids = array(topk_ids, "topk_ids", 2, integer=True)  # int64: this function's result type
    src = array(src_rank, "src_rank", 1, integer=True)
    return Caller(topk_ids).give(Router(phy2log, num_nodes, num_gpus, balance_slack, gemm=gemm).route(ids, src))
