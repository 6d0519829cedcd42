"""SGLang expert locations computed with Zepp's placement (paper §4.1, docs/rebalancing.md).

What this adapter follows in SGLang (python/sglang/srt/eplb/):
- `--init-expert-location FILE` reads a JSON object; with "physical_to_logical_map" [L, P] it
  builds ExpertLocationMetadata by init_by_mapping, which derives the expert-to-slots map itself
  (expert_location.py). Rows are model layers 0..L-1.
- P = num_logical_experts + `--ep-num-redundant-experts`, a multiple of `--ep-size`; slot p sits on
  EP rank p // num_local_physical_experts.
- Periodic rebalancing (`--enable-eplb`) calls eplb_algorithms.rebalance_experts(tokens_per_expert,
  num_physical_experts, num_local_physical_experts, num_groups, num_nodes, algorithm), where
  tokens_per_expert is the recorder's logical_count [steps, L, E] (the DeepSeek algorithms sum it
  over steps), and takes back (physical_to_logical_map [L, P], logical_to_all_physical_map
  [L, E, X], expert_count [L, E]); ExpertLocationMetadata pads X to P with -1.
- Elastic EP (elastic_ep.py): active_ranks [ep_size], 1 for a serving rank; an inactive rank's slots
  hold expert 0 in physical_to_logical_map and appear nowhere in logical_to_all_physical_map.
"""

import enum

import numpy as np

from .._args import array, count, flag, loads, summed
from .._formats import write_placement
from .._placement import rebalance_experts
from .._tensors import Caller, host

# zepp.rebalance_experts' argument names in its ValueErrors, and SGLang's for the same thing.
_SGLANG_NAMES = {"weight": "tokens_per_expert", "num_replicas": "num_physical_experts",
                 "num_gpus": "num_local_physical_experts"}


# SGLang's EplbAlgorithm names (eplb_algorithms/__init__.py, over its versions): the algorithm it
# would have run, which Zepp's placement replaces.
SGLANG_ALGORITHMS = ("deepseek", "deepseek_hierarchical", "deepseek_vec", "deepseek_vec_hierarchical",
                     "elasticity_aware", "flash_lb", "compute_aware", "compute_aware_hierarchical")


def _algorithm(algorithm):
    """Refuse what is not an SGLang algorithm: None, a member of SGLang's EplbAlgorithm enum (any,
    as its list grows), or one of SGLANG_ALGORITHMS by name; ValueError listing them otherwise."""
    if algorithm is None or (isinstance(algorithm, enum.Enum) and type(algorithm).__name__ == "EplbAlgorithm"):
        return
    if isinstance(algorithm, str) and algorithm in SGLANG_ALGORITHMS:
        return
    raise ValueError(f"algorithm: expected None, a member of SGLang's EplbAlgorithm or one of its names "
                     f"({', '.join(SGLANG_ALGORITHMS)}), got {algorithm!r}")


def _sizes(num_physical_experts, num_local_physical_experts, num_nodes):
    """(P, S, ranks, nodes) checked: S divides P and the ranks divide evenly over the nodes."""
    P = count(num_physical_experts, "num_physical_experts")
    S = count(num_local_physical_experts, "num_local_physical_experts")
    nodes = count(num_nodes, "num_nodes")
    if P % S:
        raise ValueError(f"num_local_physical_experts: expected a divisor of num_physical_experts = {P}, got {S}")
    ranks = P // S
    if ranks % nodes:
        raise ValueError(f"num_nodes: expected a divisor of the {ranks} EP ranks "
                         f"(num_physical_experts / num_local_physical_experts), got {nodes}")
    return P, S, ranks, nodes


def _failed(failed_ranks, active_ranks, ranks):
    """Lost ranks as a sorted list, from failed_ranks (ids) or SGLang's active_ranks mask."""
    if active_ranks is None:
        return None if failed_ranks is None else sorted(int(r) for r in array(host(failed_ranks), "failed_ranks", 1, True))
    if failed_ranks is not None:
        raise ValueError("active_ranks: give either active_ranks (SGLang's mask) or failed_ranks (rank ids), not both")
    mask = np.asarray(host(active_ranks))
    if mask.dtype == bool:
        mask = mask.astype(np.int64)
    mask = array(mask, "active_ranks", 1, integer=True)
    if mask.shape != (ranks,) or not np.all((mask == 0) | (mask == 1)):
        raise ValueError(f"active_ranks: expected {ranks} flags of 0 or 1 (one per EP rank), got {mask.tolist()}")
    return [int(r) for r in np.flatnonzero(mask == 0)]


class ZeppSglangEplb:
    """Zepp's placement in SGLang's expert-location format, with stable rebalancing and lost ranks.

    Use it as SGLang's rebalancing algorithm (Zepp replaces SGLang's choice among its own, so
    an SGLang `algorithm` is accepted and ignored; anything else is refused):

        from sglang.srt.eplb import eplb_algorithms
        eplb_algorithms.rebalance_experts = ZeppSglangEplb.rebalance_experts

    or offline: stats = zepp.read_sglang_stats(dump); phy2log = ZeppSglangEplb.rebalance_experts(
    stats, P, S, None, nodes)[0]; ZeppSglangEplb.write_init_expert_location(path, phy2log, S).

    Stable rebalancing: SGLang installs the map returned, so the last map this class returned for a
    shape is the current placement. With `stable = True` (the default) a call without `previous`
    rebalances from it with the fewest weight moves that stay within 1% of a from-scratch
    placement's balance (zepp.rebalance_experts(previous=...)); the first call for a shape places
    from scratch. `reset()` forgets the maps (e.g. after SGLang restarts).
    """

    stable = True
    _current = {}  # (layers, experts, num_physical_experts, num_local_physical_experts) -> phy2log

    @classmethod
    def reset(cls):
        cls._current = {}

    @classmethod
    def rebalance_experts(cls, tokens_per_expert, num_physical_experts, num_local_physical_experts, num_groups=None,
                          num_nodes=1, algorithm=None, *, previous=None, failed_ranks=None, active_ranks=None,
                          expert_bytes=0, max_moved_bytes=None, return_moves=False):
        """SGLang's eplb_algorithms.rebalance_experts contract, computed with Zepp's placement.

        Args:
            tokens_per_expert: tokens routed to each logical expert, [steps, layers, E] as SGLang's
                recorder dumps logical_count (summed over steps) or [layers, E]; a torch tensor on
                any device, or any array-like. Layers are model layers (dense ones all zero).
            num_physical_experts: slots per layer P = E + ep_num_redundant_experts, all ranks
                together.
            num_local_physical_experts: slots per EP rank S, dividing P; ceil(E / ranks) <= S <= E
                (an expert has at most one replica per rank). ranks = P / S.
            num_groups: expert groups; Zepp's placement does not group experts (accepted, unused).
            num_nodes: server nodes (SGLang's nnodes), dividing the ranks; a node's ranks share
                NVLink.
            algorithm: SGLang's EplbAlgorithm (a member, or its name such as "deepseek"), or None;
                ignored (this is the algorithm). Anything else is refused.
            previous: the current physical_to_logical_map [layers, P] (e.g. SGLang's
                get_global_expert_location_metadata().physical_to_logical_map_cpu); default: the
                last map this class returned for the shape when `stable`, else none. Slots of
                failed ranks may hold anything in [0, E) or -1; they are ignored.
            failed_ranks: lost EP rank ids in [0, ranks), or
            active_ranks: SGLang's elastic-EP mask [ranks], 0 for a lost rank (not both).
                The placement is on the survivors, each keeping its S slots, every expert with a
                replica on one; with previous, the fewest moves reaching the balance target.
            expert_bytes: weights of one expert in bytes (3 x hidden x ffn x 2 in BF16), the cost
                of a move. 0: size unknown; each move then costs one expert copy, the report's
                bytes are 0 and max_moved_bytes binds nothing.
            max_moved_bytes: per-layer budget in bytes for optional weight moves, trading balance
                for churn (needs a previous map); None: no budget.
            return_moves: also return zepp.rebalance_experts' per-layer moves report (a dict).

        Returns:
            (physical_to_logical_map [layers, P], logical_to_all_physical_map [layers, E, X],
            expert_count [layers, E]) as int64 torch tensors on tokens_per_expert's device when it
            is a tensor (a GPU tensor is copied to the host for planning, the results back), else
            numpy arrays. X is the most replicas of any expert (SGLang pads it to P).
            A lost rank's slots hold expert 0 in physical_to_logical_map, as in SGLang's elastic
            EP, and appear in neither of the other two. With return_moves, the report fourth.

        Raises:
            ValueError naming the argument (SGLang's names): tokens_per_expert not 2-D or 3-D or
            empty (no steps included), an entry negative, not finite or above 1e15 (named by its
            index) or summing above 1e15 over the steps; counts that do not divide; previous of the
            wrong shape, with ids outside [0, E) or without a slot for some expert; failed_ranks /
            active_ranks out of range, repeated, both given, or leaving too few slots for every
            expert; an algorithm that is not SGLang's (naming the accepted ones).
        """
        _algorithm(algorithm)
        return_moves = flag(return_moves, "return_moves")
        try:
            tokens = np.asarray(host(tokens_per_expert))
        except Exception as e:  # ragged lists: numpy's message, under the argument's name
            raise ValueError(f"tokens_per_expert: expected an array-like convertible by numpy.asarray ({e})") from None
        if tokens.ndim == 3:
            tokens = summed(loads(tokens, "tokens_per_expert", 3), "tokens_per_expert", "step")  # entries named by step
        elif tokens.ndim == 2:  # checked before its shape is used: [["a"]] was "num_local_physical_experts: ..."
            tokens = loads(tokens, "tokens_per_expert", 2)
        else:
            raise ValueError(f"tokens_per_expert: expected [steps, layers, experts] or [layers, experts], "
                             f"got shape {tokens.shape}")
        P, S, ranks, nodes = _sizes(num_physical_experts, num_local_physical_experts, num_nodes)
        if num_groups is not None:
            count(num_groups, "num_groups")
        failed = _failed(failed_ranks, active_ranks, ranks)
        L, E = tokens.shape
        if not -(-E // ranks) <= S <= E:
            raise ValueError(f"num_local_physical_experts: expected ceil(E / ranks) = {-(-E // ranks)} <= S <= E = {E} "
                             f"(every expert placed, at most one replica per rank), got {S} on {ranks} ranks")
        key = (L, E, P, S)
        if previous is None and cls.stable:
            previous = cls._current.get(key)
        rebalancing = previous is not None or failed is not None or max_moved_bytes is not None or return_moves
        try:
            if rebalancing:
                phy2log, log2phy, logcnt, moves = rebalance_experts(
                    tokens, P, 1, nodes, ranks, policy="zepp", previous=previous, failed_ranks=failed,
                    expert_bytes=expert_bytes, max_moved_bytes=max_moved_bytes, return_moves=True)
            else:  # the placement zepp.rebalance_experts(policy="zepp") gives
                phy2log, log2phy, logcnt = rebalance_experts(tokens, P, 1, nodes, ranks, policy="zepp")
        except (ValueError, TypeError) as e:
            message = str(e)
            name = message.split(":", 1)[0].split("[", 1)[0]  # "weight[0, 5]: ..." names an entry
            raise type(e)(_SGLANG_NAMES.get(name, name) + message[len(name):]) from None
        phy2log = np.where(phy2log < 0, 0, phy2log)  # SGLang's elastic EP: a lost rank's slots hold expert 0
        if cls.stable:
            cls._current[key] = phy2log.copy()
        maps = Caller(tokens_per_expert).give_all((phy2log, log2phy, logcnt))
        return (*maps, moves) if return_moves else maps

    @staticmethod
    def write_init_expert_location(path, physical_to_logical_map, num_local_physical_experts, failed_ranks=None,
                                   layer_ids=None):
        """Write a placement as SGLang's `--init-expert-location` JSON file.

        Args:
            path: the file to write.
            physical_to_logical_map: [layers, P] as rebalance_experts returns it.
            num_local_physical_experts: slots per EP rank S (P / S ranks).
            failed_ranks: lost rank ids; their slots are left out, so the file is the placement of
                a server started on the surviving ranks only (SGLang derives each expert's slots
                from this map, so a lost rank's expert-0 filler would otherwise count as replicas).
            layer_ids: model layer of each row (default 0..layers-1); missing layers get SGLang's
                trivial row (zepp.write_placement).

        Returns:
            {"ep_size": ranks written, "ep_num_redundant_experts": slots - E}: the values of
            --ep-size and --ep-num-redundant-experts to start SGLang with.

        Raises:
            ValueError naming the argument: S not dividing P, failed_ranks out of range or
            repeated, a row missing an expert (e.g. one whose only replicas were on a failed rank).
        """
        phy = array(host(physical_to_logical_map), "physical_to_logical_map", 2, integer=True)
        L, P = phy.shape
        if L == 0 or P == 0:
            raise ValueError(f"physical_to_logical_map: expected a non-empty [layers, slots] array, got shape {phy.shape}")
        S = count(num_local_physical_experts, "num_local_physical_experts")
        if P % S:
            raise ValueError(f"num_local_physical_experts: expected a divisor of the {P} slots, got {S}")
        ranks = P // S
        lost = []
        if failed_ranks is not None:
            lost = array(host(failed_ranks), "failed_ranks", 1, integer=True).tolist()
            if any(r < 0 or r >= ranks for r in lost) or len(set(lost)) != len(lost):
                raise ValueError(f"failed_ranks: expected distinct rank ids in [0, {ranks}), got {lost}")
        keep = [r for r in range(ranks) if r not in lost]
        if not keep:
            raise ValueError("failed_ranks: every rank is lost")
        E = int(phy.max()) + 1  # the full map holds every expert
        kept = phy.reshape(L, ranks, S)[:, keep, :].reshape(L, len(keep) * S)
        for row in range(L):
            missing = np.setdiff1d(np.arange(E), kept[row])
            if missing.size:
                raise ValueError(f"physical_to_logical_map: row {row} has no slot for expert {missing[0]} "
                                 f"on the surviving ranks; every row needs all of [0, {E})")
        try:
            write_placement(path, kept, "sglang", layer_ids)
        except ValueError as e:  # name this function's argument
            message = str(e)
            if message.startswith("phy2log"):
                raise ValueError("physical_to_logical_map" + message[len("phy2log"):]) from None
            raise
        return {"ep_size": len(keep), "ep_num_redundant_experts": len(keep) * S - E}
