"""zepp.rebalance_experts: EPLB's published outputs reproduced exactly; Zepp's policy invariants."""

import json
import re

import numpy as np
import pytest

import zepp


def check_maps(phy2log, log2phy, logcnt, P, E):
    """The three return values describe one placement (EPLB's contract)."""
    L = phy2log.shape[0]
    assert phy2log.dtype == log2phy.dtype == logcnt.dtype == np.int64
    assert phy2log.shape == (L, P) and logcnt.shape == (L, E)
    assert log2phy.shape == (L, E, logcnt.max())
    for l in range(L):
        np.testing.assert_array_equal(np.bincount(phy2log[l], minlength=E), logcnt[l])
        for e in range(E):
            slots = log2phy[l, e][log2phy[l, e] >= 0]
            assert len(slots) == logcnt[l, e] and np.all(log2phy[l, e, logcnt[l, e]:] == -1)
            assert np.all(phy2log[l, slots] == e)


def test_readme_example(shared_dir):
    case = json.loads((shared_dir / "data/eplb/readme-example.json").read_text())
    args = [case[k] for k in ("num_replicas", "num_groups", "num_nodes", "num_gpus")]
    phy2log, log2phy, logcnt = zepp.rebalance_experts(case["weight"], *args)
    np.testing.assert_array_equal(phy2log, case["expected_phy2log"])
    check_maps(phy2log, log2phy, logcnt, case["num_replicas"], 12)


def test_every_reference_case(shared_dir):
    cases = json.loads((shared_dir / "data/eplb/reference-cases.json").read_text())["cases"]
    assert len(cases) == 11
    for case in cases:
        weight = np.asarray(case["weight"], dtype=np.float32)
        args = [case[k] for k in ("num_replicas", "num_groups", "num_nodes", "num_gpus")]
        phy2log, log2phy, logcnt = zepp.rebalance_experts(weight, *args, policy="eplb")
        np.testing.assert_array_equal(phy2log, case["expected_phy2log"], err_msg=case["description"])
        check_maps(phy2log, log2phy, logcnt, case["num_replicas"], weight.shape[1])


class TensorLike:
    """Stands in for a CPU torch tensor: numpy.asarray converts it through __array__."""

    def __init__(self, data):
        self.data = np.asarray(data)

    def __array__(self, dtype=None):
        return self.data if dtype is None else self.data.astype(dtype)


def test_accepts_lists_and_tensor_likes():
    weight = [[90, 132, 40, 61, 104, 165, 39, 4], [20, 107, 104, 64, 19, 197, 187, 157]]
    a = zepp.rebalance_experts(weight, 12, 4, 2, 4)
    b = zepp.rebalance_experts(TensorLike(weight), 12, 4, 2, 4)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_zepp_policy_hand_case():
    # 2 nodes x 2 GPUs, 8 experts, R = 1 extra slot per GPU: P = 8 + 4 = 12 slots, 3 per GPU.
    weight = np.array([[100, 10, 10, 10, 10, 10, 10, 40]], dtype=float)
    phy2log, log2phy, logcnt = zepp.rebalance_experts(weight, 12, 1, 2, 4, policy="zepp")
    check_maps(phy2log, log2phy, logcnt, 12, 8)
    # Water-filling alone (expert 0 four copies of 25, expert 7 two of 20) packs to at best 55 per
    # GPU: every GPU holds a 25 and two of them a 20 beside a 10. Zepp's candidate counts do no worse.
    gpu = [sum(weight[0, e] / logcnt[0, e] for e in phy2log[0, g * 3:(g + 1) * 3]) for g in range(4)]
    assert max(gpu) <= 55 + 1e-9
    assert all(len(set(phy2log[0, g * 3:(g + 1) * 3])) == 3 for g in range(4))  # one copy per GPU
    # Replicas spread over nodes: the hot expert on both nodes.
    node_of_slot = np.arange(12) // 6
    assert set(node_of_slot[phy2log[0] == 0]) == {0, 1}
    # Slots ascending in log2phy for Zepp's policy.
    for e in range(8):
        s = log2phy[0, e][log2phy[0, e] >= 0]
        assert list(s) == sorted(s)


def test_eplb_global_policy_with_any_gpu_count():
    # num_groups % num_nodes != 0: eplb.py's global policy, which ignores num_nodes, so 6 GPUs on 4
    # nodes is accepted and equals the rule on one node. Extra replicas by load per replica: e0 (8),
    # e0 (4 ties e1, e5: lowest index), e1, e5, e0 (8/3), e0 (2 ties e1, e2, e4, e5: lowest index).
    weight = [[8, 4, 2, 1, 2, 4]]
    phy2log, log2phy, logcnt = zepp.rebalance_experts(weight, 12, 1, 4, 6)
    ref = zepp.rebalance_experts(weight, 12, 1, 1, 6)
    np.testing.assert_array_equal(phy2log, ref[0])
    np.testing.assert_array_equal(logcnt, [[5, 2, 1, 1, 1, 2]])
    check_maps(phy2log, log2phy, logcnt, 12, 6)
    with pytest.raises(ValueError, match="^num_gpus"):  # hierarchical (4 % 4 == 0) needs the multiple
        zepp.rebalance_experts(weight, 12, 4, 4, 6)


def power_law(rng, L, E, exponent):
    return np.stack([1e6 / (rng.permutation(E) + 1.0) ** exponent for _ in range(L)])


def test_previous_small_drift_moves_almost_nothing():
    rng = np.random.default_rng(3)
    weight = power_law(rng, 3, 256, 1.0)
    first = zepp.rebalance_experts(weight, 288, 1, 4, 32, policy="zepp")[0]
    drifted = weight * rng.uniform(0.98, 1.02, size=weight.shape)
    bytes_ = 3 * 2048 * 1408 * 2
    phy2log, log2phy, logcnt, moves = zepp.rebalance_experts(drifted, 288, 1, 4, 32, policy="zepp", previous=first,
                                                             expert_bytes=bytes_, return_moves=True)
    check_maps(phy2log, log2phy, logcnt, 288, 256)
    assert np.all(moves["nic"] == 0)  # nothing crosses a node
    assert np.all(moves["slots_changed"] <= 0.05 * 288)
    np.testing.assert_array_equal(moves["slots_changed"], np.sum(phy2log != first, axis=1))
    assert np.all(moves["imbalance"] <= moves["from_scratch_imbalance"] * 1.01 + 1e-12)
    np.testing.assert_array_equal(moves["nvlink_bytes"], moves["nvlink"] * bytes_)
    # No budget for moves: the previous placement stays as it is.
    same = zepp.rebalance_experts(drifted, 288, 1, 4, 32, policy="zepp", previous=first, expert_bytes=bytes_,
                                  max_moved_bytes=0)[0]
    np.testing.assert_array_equal(same, first)


def test_failed_ranks_keep_every_expert_and_rank_ids():
    rng = np.random.default_rng(4)
    weight = power_law(rng, 2, 64, 1.0)
    first = zepp.rebalance_experts(weight, 96, 1, 4, 16, policy="zepp")[0]
    lost = [12, 13, 14, 15]  # node 3
    phy2log, log2phy, logcnt, moves = zepp.rebalance_experts(weight, 96, 1, 4, 16, policy="zepp", previous=first,
                                                             failed_ranks=lost, return_moves=True)
    assert np.all(phy2log[:, 72:] == -1)  # slot p stays on rank p // 6; the lost ranks' slots are empty
    assert np.all(phy2log[:, :72] >= 0)
    assert np.all(logcnt >= 1) and np.all(logcnt.sum(axis=1) == 72)
    assert np.all(log2phy < 72)
    np.testing.assert_array_equal(moves["survivors"], np.arange(12))
    for layer in range(2):
        for g in range(12):
            assert len(set(phy2log[layer, g * 6:(g + 1) * 6])) == 6
    with pytest.raises(ValueError, match="^failed_ranks"):
        zepp.rebalance_experts(weight, 96, 1, 4, 16, policy="zepp", failed_ranks=[16])
    with pytest.raises(ValueError, match="^failed_ranks"):
        zepp.rebalance_experts(weight, 96, 1, 4, 16, policy="zepp", failed_ranks=list(range(15)))
    with pytest.raises(ValueError, match="^policy"):
        zepp.rebalance_experts(weight, 96, 1, 4, 16, policy="eplb", previous=first)
    with pytest.raises(ValueError, match="^previous"):
        zepp.rebalance_experts(weight, 96, 1, 4, 16, policy="zepp", previous=first[:, :90])


def test_own_result_under_failed_ranks_is_its_previous():
    """The result's -1 slots (a lost rank's) were refused as previous under the same failure
    ("expected expert ids in [0, 16), got [-1, 15]"); -1 is accepted exactly in failed ranks' slots."""
    weight = np.random.default_rng(5).random((2, 16)) * 100
    placed = zepp.rebalance_experts(weight, 32, 1, 2, 4, policy="zepp", failed_ranks=[1])[0]
    again = zepp.rebalance_experts(weight, 32, 1, 2, 4, policy="zepp", failed_ranks=[1], previous=placed,
                                   return_moves=True)
    np.testing.assert_array_equal(again[0], placed)
    np.testing.assert_array_equal(again[3]["slots_changed"], [0, 0])
    # A further loss starts from it too; -1 where no rank is lost is refused, naming row and slot.
    assert np.all(zepp.rebalance_experts(weight, 32, 1, 2, 4, policy="zepp", failed_ranks=[1, 2],
                                         previous=placed)[0][:, 8:24] == -1)
    for failed in (None, [2]):
        with pytest.raises(ValueError, match=r"^previous: row 0, slot 8 holds expert -1, expected \[0, 16\) "
                                             r"\(-1 only in a lost GPU's slots; GPU 1 is not lost\)$"):
            zepp.rebalance_experts(weight, 32, 1, 2, 4, policy="zepp", failed_ranks=failed, previous=placed)
    with pytest.raises(ValueError, match=r"^previous: expected expert ids in \[0, 16\) \(-1 in failed ranks' slots\), "
                                         r"got \[-2, 15\]$"):
        zepp.rebalance_experts(weight, 32, 1, 2, 4, policy="zepp", failed_ranks=[1], previous=np.where(placed < 0, -2, placed))


def test_previous_without_a_slot_for_some_expert_is_refused():
    """All zeros was accepted as previous though experts 1-15 had no slot (the CLI refused it)."""
    weight = np.ones((2, 16))
    with pytest.raises(ValueError, match=r"^previous: row 0, expert 1 has no slot; a placement holds every expert "
                                         r"of \[0, 16\)$"):
        zepp.rebalance_experts(weight, 24, 4, 2, 4, policy="zepp", previous=np.zeros((2, 24), int))
    previous = zepp.rebalance_experts(weight, 24, 4, 2, 4, policy="zepp")[0]
    previous[1, previous[1] == 7] = 3
    with pytest.raises(ValueError, match=r"^previous: row 1, expert 7 has no slot"):
        zepp.rebalance_experts(weight, 24, 4, 2, 4, policy="zepp", previous=previous)


def test_zepp_policy_on_real_loads(shared_dir):
    case = json.loads((shared_dir / "data/eplb/reference-cases.json").read_text())["cases"][0]
    weight = np.asarray(case["weight"], dtype=float)  # 26 layers x 64 experts, DeepSeek-V2-Lite
    L, E = weight.shape
    phy2log, log2phy, logcnt = zepp.rebalance_experts(weight, E + 2 * 16, 1, 2, 16, policy="zepp")
    check_maps(phy2log, log2phy, logcnt, E + 32, E)
    # Each GPU holds exactly its slots, and the hottest expert of each layer got the most replicas.
    for l in range(L):
        assert logcnt[l, np.argmax(weight[l])] == logcnt[l].max()


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(weight=[1.0, 2.0]), "weight"),  # EPLB requires [layers, experts]
        (dict(weight=[[1.0, float("nan")]]), "weight"),
        (dict(weight=[[1.0, -2.0]]), "weight"),
        (dict(weight=[["a", "b"]]), "weight"),
        (dict(num_replicas=0), "num_replicas"),
        (dict(num_replicas=10), "num_replicas"),  # not a multiple of num_gpus
        (dict(num_gpus=3), "num_gpus"),  # not a multiple of num_nodes
        (dict(num_groups=-1), "num_groups"),
        (dict(policy="greedy"), "policy"),
        (dict(policy="zepp", num_replicas=9, num_gpus=2, num_nodes=1), "num_replicas"),  # 9 slots on 2 GPUs
        (dict(policy="zepp", weight=[[1.0] * 2], num_replicas=12), "num_replicas"),  # 3 slots per GPU > E = 2
        (dict(policy="zepp", num_gpus=6, num_nodes=4), "num_gpus"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, argument):
    args = dict(weight=[[1.0] * 8], num_replicas=12, num_groups=2, num_nodes=2, num_gpus=4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"^{argument}"):
        zepp.rebalance_experts(**args)


@pytest.mark.parametrize("bad, shown", [(2e15, "2000000000000000.0"), (-1.0, "-1.0"), (float("inf"), "inf"),
                                        (float("nan"), "nan")])
def test_weight_entries_follow_the_load_file_rule(bad, shown, tmp_path):
    # The readers of load files refuse a load above 1e15, negative or not finite (kMaxLoad,
    # src/core/input_bounds.hpp); weight had no upper bound, and its errors named no entry.
    weight = np.ones((2, 8))
    weight[1, 5] = bad
    for policy in ("eplb", "zepp"):
        with pytest.raises(ValueError, match=re.escape(f"weight[1, 5]: expected a load in [0, 1e15], got {shown}")):
            zepp.rebalance_experts(weight, 12, 2, 2, 4, policy=policy)
    with pytest.raises(ValueError, match=re.escape(f"load[1, 5]: expected a load in [0, 1e15], got {shown}")):
        zepp.write_sglang_stats(tmp_path / "s.json", weight)  # a file the reader would refuse
    weight[1, 5] = 1e15  # the bound itself is a load
    zepp.rebalance_experts(weight, 12, 2, 2, 4, policy="zepp")


def test_a_count_that_is_not_an_integer_is_a_type_error():
    # The wrong type, as range(2.5) says (python/README.md); it was a ValueError.
    for kwargs in (dict(num_replicas=2.5), dict(num_gpus=4.0), dict(num_nodes=True)):
        args = dict(weight=[[1.0] * 8], num_replicas=12, num_groups=2, num_nodes=2, num_gpus=4)
        args.update(kwargs)
        with pytest.raises(TypeError, match=rf"^{next(iter(kwargs))}: expected an integer, got "):
            zepp.rebalance_experts(**args)


def test_help_shows_signature_and_contract():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import zepp; help(zepp.rebalance_experts)"],
                         capture_output=True, text=True, check=True).stdout
    assert ("rebalance_experts(weight, num_replicas, num_groups, num_nodes, num_gpus, policy='eplb', previous=None, "
            "failed_ranks=None, expert_bytes=0, max_moved_bytes=None, return_moves=False)") in out
    for word in ("phy2log", "log2phy", "logcnt", "ValueError", "§4.1"):
        assert word in out


def test_benchmark_script_runs():
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "placement_python.py"
    run = subprocess.run([sys.executable, str(script), "--repeat", "1"], capture_output=True, text=True, check=True)
    assert [line.split()[0] for line in run.stdout.splitlines()[1:]] == ["eplb", "zepp", "zepp,"]
    assert run.stdout.count("x eplb (cpu)") == 3


def test_boolean_flags_must_be_bools():
    """return_moves="no" was truthy (a fourth result appeared); flags take True or False only, as
    zepp.simulate's stage flags do."""
    from zepp.integrations.sglang import ZeppSglangEplb
    from zepp.integrations.vllm import ZeppEplbPolicy

    weight = np.ones((1, 16))
    calls = [(lambda v: zepp.rebalance_experts(weight, 24, 4, 2, 4, policy="zepp", return_moves=v), "return_moves"),
             (lambda v: ZeppSglangEplb.rebalance_experts(weight, 24, 6, None, 2, return_moves=v), "return_moves"),
             (lambda v: ZeppEplbPolicy.rebalance_experts(weight, 24, 1, 2, 4, maps=v), "maps")]
    for call, name in calls:
        for value in ("no", 1, None):
            with pytest.raises(TypeError, match=f"^{name}: expected True or False, got {re.escape(repr(value))}$"):
                call(value)
    assert len(zepp.rebalance_experts(weight, 24, 4, 2, 4, policy="zepp", return_moves=np.bool_(True))) == 4
    ZeppSglangEplb.reset()
    ZeppEplbPolicy.reset()


def test_a_policy_that_is_not_a_string_is_a_type_error():
    """policy=None was a ValueError ('expected eplb or zepp'); a wrong type is a TypeError, as for counts."""
    weight = np.ones((1, 16))
    for policy in (None, 1):
        with pytest.raises(TypeError, match=rf"^policy: expected 'eplb' or 'zepp', got {policy!r}$"):
            zepp.rebalance_experts(weight, 24, 4, 2, 4, policy=policy)
    with pytest.raises(ValueError, match=r"^policy: expected 'eplb' or 'zepp', got 'bogus'$"):
        zepp.rebalance_experts(weight, 24, 4, 2, 4, policy="bogus")
