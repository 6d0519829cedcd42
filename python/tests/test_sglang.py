"""ZeppSglangEplb: SGLang's expert-location contract and --init-expert-location file, computed with
Zepp's placement, with stable rebalancing and lost ranks."""

import json

import numpy as np
import pytest

import zepp
from zepp.integrations.sglang import ZeppSglangEplb


@pytest.fixture(autouse=True)
def fresh_memory():
    ZeppSglangEplb.reset()
    yield
    ZeppSglangEplb.reset()


def gpu_loads(phy2log_row, load, S):
    """Expected load per rank: each expert's load split evenly over its replicas (lost slots: -1)."""
    live = phy2log_row[phy2log_row >= 0]
    cnt = np.bincount(live, minlength=len(load))
    return np.array([sum(load[e] / cnt[e] for e in phy2log_row[r * S:(r + 1) * S]) for r in range(len(phy2log_row) // S)])


def test_hand_case_one_hot_expert():
    # 4 ranks x 2 slots on 2 nodes, loads [9, 1, 1, 1]: the hot expert on every rank (2.25 each), the
    # spare slot a second copy of a cold one (0.5 + 0.5). Ranks then hold 3.25, 3.25, 2.75, 2.75:
    # max / mean = 3.25 / 3, the best any placement can do (9 / 4 + 1 on the ranks of the unsplit ones).
    phy2log, log2phy, logcnt = ZeppSglangEplb.rebalance_experts([[9.0, 1.0, 1.0, 1.0]], 8, 2, None, 2)
    assert logcnt[0, 0] == 4 and sorted(logcnt[0, 1:]) == [1, 1, 2]
    for r in range(4):
        assert 0 in phy2log[0, 2 * r:2 * r + 2]
    loads = gpu_loads(phy2log[0], [9, 1, 1, 1], 2)
    assert sorted(loads) == pytest.approx([2.75, 2.75, 3.25, 3.25])
    np.testing.assert_array_equal(log2phy[0, 0], [0, 2, 4, 6])  # slots ascending


def test_contract_steps_summed_and_same_as_zepp_policy():
    rng = np.random.default_rng(7)
    steps = rng.integers(0, 300, size=(5, 3, 16))  # SGLang's logical_count [steps, layers, experts]
    phy2log, log2phy, logcnt = ZeppSglangEplb.rebalance_experts(steps, 24, 3, 4, 2)
    assert phy2log.shape == (3, 24) and logcnt.shape == (3, 16) and log2phy.shape[:2] == (3, 16)
    assert phy2log.dtype == log2phy.dtype == logcnt.dtype == np.int64
    ref = zepp.rebalance_experts(steps.sum(axis=0), 24, 1, 2, 8, policy="zepp")
    for got, want in zip((phy2log, log2phy, logcnt), ref):
        np.testing.assert_array_equal(got, want)
    assert log2phy.shape[2] == logcnt.max()  # X: the most replicas (SGLang pads to P itself)
    for layer in range(3):
        np.testing.assert_array_equal(np.bincount(phy2log[layer], minlength=16), logcnt[layer])
        for e in range(16):
            slots = log2phy[layer, e][log2phy[layer, e] >= 0]
            assert np.all(phy2log[layer, slots] == e) and len(slots) == logcnt[layer, e]


def test_stable_rebalance_from_the_map_it_returned():
    rng = np.random.default_rng(9)
    weight = 1e6 / (np.stack([rng.permutation(256) for _ in range(2)]) + 1.0)
    first = ZeppSglangEplb.rebalance_experts(weight, 288, 9, 8, 4)[0]  # 32 ranks on 4 nodes
    drifted = weight * rng.uniform(0.98, 1.02, size=weight.shape)
    second, _, _, moves = ZeppSglangEplb.rebalance_experts(drifted, 288, 9, 8, 4, expert_bytes=1e6, return_moves=True)
    np.testing.assert_array_equal(moves["slots_changed"], np.sum(second != first, axis=1))
    assert np.all(moves["nic"] == 0)  # nothing crosses a node
    assert np.all(moves["slots_changed"] <= 0.05 * 288)
    assert np.all(moves["imbalance"] <= moves["from_scratch_imbalance"] * 1.01 + 1e-12)
    scratch = zepp.rebalance_experts(drifted, 288, 1, 4, 32, policy="zepp")[0]
    assert np.sum(second != first) < np.sum(scratch != first)
    # An explicit previous (SGLang's current map) gives the same placement as the remembered one.
    explicit = ZeppSglangEplb.rebalance_experts(drifted, 288, 9, 8, 4, previous=first)[0]
    np.testing.assert_array_equal(explicit, second)
    # Not stable: from scratch every time.
    ZeppSglangEplb.stable = False
    try:
        np.testing.assert_array_equal(ZeppSglangEplb.rebalance_experts(drifted, 288, 9, 8, 4)[0], scratch)
    finally:
        ZeppSglangEplb.stable = True
    # A zero budget keeps the previous map.
    kept = ZeppSglangEplb.rebalance_experts(drifted, 288, 9, 8, 4, previous=first, expert_bytes=1e6,
                                            max_moved_bytes=0)[0]
    np.testing.assert_array_equal(kept, first)


def test_lost_ranks_as_sglang_elastic_ep():
    rng = np.random.default_rng(4)
    weight = 1e6 / (np.stack([rng.permutation(64) for _ in range(2)]) + 1.0)
    first = ZeppSglangEplb.rebalance_experts(weight, 96, 6, None, 4)[0]  # 16 ranks x 6 slots
    active = np.ones(16, dtype=bool)
    active[[5, 12]] = False
    phy2log, log2phy, logcnt, moves = ZeppSglangEplb.rebalance_experts(weight, 96, 6, None, 4, active_ranks=active,
                                                                       expert_bytes=1e6, return_moves=True)
    lost = np.zeros(96, dtype=bool)
    lost[30:36] = lost[72:78] = True
    assert np.all(phy2log[:, lost] == 0)  # SGLang's filler for a lost rank's slots
    assert not np.isin(log2phy, np.flatnonzero(lost)).any()  # never routed to
    assert np.all(logcnt >= 1) and np.all(logcnt.sum(axis=1) == 14 * 6)
    np.testing.assert_array_equal(moves["survivors"], [r for r in range(16) if r not in (5, 12)])
    for layer in range(2):
        for r in moves["survivors"]:
            assert len(set(phy2log[layer, r * 6:(r + 1) * 6])) == 6  # S slots, one copy each
        live = ~lost
        np.testing.assert_array_equal(np.bincount(phy2log[layer, live], minlength=64), logcnt[layer])
    # Rebalanced from the full map: the survivors' slots that changed are what the report counts, and
    # fewer bytes move than with a from-scratch placement on the survivors.
    np.testing.assert_array_equal(moves["slots_changed"], np.sum((phy2log != first) & ~lost, axis=1))
    scratch = zepp.rebalance_experts(weight, 96, 1, 4, 16, policy="zepp", failed_ranks=[5, 12])[0]
    assert np.sum((phy2log != first) & ~lost) <= np.sum((scratch != first) & ~lost)
    # The same through failed_ranks, and from SGLang's map with -1 or 0 in the lost slots.
    by_ids = ZeppSglangEplb.rebalance_experts(weight, 96, 6, None, 4, failed_ranks=[12, 5], previous=first)[0]
    np.testing.assert_array_equal(by_ids, phy2log)
    with_holes = phy2log.copy()
    with_holes[:, lost] = -1
    again = ZeppSglangEplb.rebalance_experts(weight, 96, 6, None, 4, failed_ranks=[5, 12], previous=with_holes,
                                             return_moves=True)
    np.testing.assert_array_equal(again[0], phy2log)
    assert np.all(again[3]["slots_changed"] == 0)


def test_init_expert_location_file(tmp_path):
    rng = np.random.default_rng(11)
    weight = rng.integers(1, 1000, size=(3, 16))
    phy2log = ZeppSglangEplb.rebalance_experts(weight, 24, 3, None, 2)[0]
    path = tmp_path / "placement.json"
    flags = ZeppSglangEplb.write_init_expert_location(path, phy2log, 3)
    assert flags == {"ep_size": 8, "ep_num_redundant_experts": 8}
    assert list(json.loads(path.read_text())) == ["physical_to_logical_map"]  # all init_by_mapping takes
    layers, back = zepp.read_placement(path, "sglang")
    np.testing.assert_array_equal(layers, [0, 1, 2])
    np.testing.assert_array_equal(back, phy2log)
    # Lost rank 2: a server restarted on the 7 others, each keeping its slots in order.
    degraded = ZeppSglangEplb.rebalance_experts(weight, 24, 3, None, 2, failed_ranks=[2])[0]
    flags = ZeppSglangEplb.write_init_expert_location(path, degraded, 3, failed_ranks=[2])
    assert flags == {"ep_size": 7, "ep_num_redundant_experts": 5}
    np.testing.assert_array_equal(zepp.read_placement(path, "sglang")[1], np.delete(degraded, range(6, 9), axis=1))
    # MoE rows at model layers 1..3: layer 0 gets SGLang's trivial row p -> p mod E.
    ZeppSglangEplb.write_init_expert_location(path, phy2log, 3, layer_ids=[1, 2, 3])
    layers, back = zepp.read_placement(path, "sglang")
    np.testing.assert_array_equal(back[0], np.arange(24) % 16)
    np.testing.assert_array_equal(back[1:], phy2log)
    # Leaving out the rank that held an expert's only copy is refused.
    with pytest.raises(ValueError, match="^physical_to_logical_map: row 0 has no slot for expert 0"):
        ZeppSglangEplb.write_init_expert_location(path, [[0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 4]], 2,
                                                  failed_ranks=[0])
    flags = ZeppSglangEplb.write_init_expert_location(path, [list(range(8)) * 2], 2, failed_ranks=[0])
    assert flags == {"ep_size": 7, "ep_num_redundant_experts": 6}


@pytest.mark.parametrize("call, argument", [
    (lambda: ZeppSglangEplb.rebalance_experts([1.0] * 8, 12, 3, None, 2), "tokens_per_expert"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0, -1.0] * 4], 12, 3, None, 2), "tokens_per_expert"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 5, None, 2), "num_local_physical_experts"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 12, None, 1), "num_local_physical_experts"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 3), "num_nodes"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 0, 3, None, 2), "num_physical_experts"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, 0, 2), "num_groups"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, previous=[[0] * 11]), "previous"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, previous=[[9] * 12]), "previous"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, failed_ranks=[4]), "failed_ranks"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, failed_ranks=[0, 1, 2]), "failed_ranks"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, active_ranks=[1, 1, 1]), "active_ranks"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, active_ranks=[1, 2, 1, 1]), "active_ranks"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, active_ranks=[1] * 4, failed_ranks=[0]),
     "active_ranks"),
    (lambda: ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, max_moved_bytes=-1), "max_moved_bytes"),
    (lambda: ZeppSglangEplb.write_init_expert_location("x.json", [[0, 1, 2]], 2), "num_local_physical_experts"),
    (lambda: ZeppSglangEplb.write_init_expert_location("x.json", [[0, 1, 1, 0]], 2, failed_ranks=[2]), "failed_ranks"),
    (lambda: ZeppSglangEplb.write_init_expert_location("x.json", [0, 1], 2), "physical_to_logical_map"),
])
def test_bad_arguments_name_the_argument(call, argument):
    with pytest.raises(ValueError, match=rf"^{argument}(\[[0-9, ]+\])?:"):  # an entry by its index
        call()


def test_bad_two_dimensional_tokens_are_named_before_the_sizes():
    """[layers, E] tokens were only checked inside zepp.rebalance_experts, after the sizes: a matrix
    of strings was refused as "num_local_physical_experts: expected ceil(E / ranks) = 1 <= S <= E
    = 1", and ragged lists with numpy's message, naming no argument."""
    with pytest.raises(ValueError, match=r"^tokens_per_expert: expected real numbers, got dtype <U1$"):
        ZeppSglangEplb.rebalance_experts([["a"]], 12, 3, None, 2)
    with pytest.raises(ValueError, match=r"^tokens_per_expert: expected an array-like convertible by numpy.asarray \("):
        ZeppSglangEplb.rebalance_experts([[1.0, 2.0], [3.0]], 12, 3, None, 2)
    with pytest.raises(ValueError, match=r"^tokens_per_expert\[0, 1\]: expected a load in \[0, 1e15\], got nan$"):
        ZeppSglangEplb.rebalance_experts([[1.0, float("nan")]], 12, 3, None, 2)


def test_step_windows_without_steps_or_summing_above_the_bound_are_refused():
    """An empty step window was accepted (zero loads), though the docstring said it raises; steps
    each within 1e15 summing above it are refused as read_sglang_stats refuses them."""
    with pytest.raises(ValueError, match=r"^tokens_per_expert: expected \[steps, layers, experts\] of at least one "
                                         r"step, got shape \(0, 2, 16\)$"):
        ZeppSglangEplb.rebalance_experts(np.zeros((0, 2, 16)), 24, 6, None, 2)
    steps = np.ones((2, 2, 16))
    steps[:, 1, 4] = 6e14
    with pytest.raises(ValueError, match=r"^tokens_per_expert: \[1, 4\] sums to 1.2e\+15 over the steps, above the "
                                         r"load bound 1e15$"):
        ZeppSglangEplb.rebalance_experts(steps, 24, 6, None, 2)


def test_an_algorithm_that_is_not_sglangs_is_refused():
    """algorithm="bogus" was accepted (and ignored): only SGLang's EplbAlgorithm, a member or its
    name, or None is, as SGLang passes it; anything else names the accepted ones."""
    import enum

    EplbAlgorithm = enum.Enum("EplbAlgorithm", "deepseek deepseek_hierarchical a_later_one")  # as SGLang's
    for algorithm in (None, "deepseek", EplbAlgorithm.deepseek_hierarchical, EplbAlgorithm.a_later_one):
        ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, algorithm)
    for algorithm in ("bogus", 3, enum.Enum("Other", "deepseek").deepseek):
        with pytest.raises(ValueError) as e:
            ZeppSglangEplb.rebalance_experts([[1.0] * 8], 12, 3, None, 2, algorithm)
        assert str(e.value) == ("algorithm: expected None, a member of SGLang's EplbAlgorithm or one of its names "
                                "(deepseek, deepseek_hierarchical, deepseek_vec, deepseek_vec_hierarchical, "
                                f"elasticity_aware, flash_lb, compute_aware, compute_aware_hierarchical), got {algorithm!r}")
