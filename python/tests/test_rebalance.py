"""zepp.rebalance_experts: EPLB's published outputs reproduced exactly; Zepp's policy invariants."""

import json

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
    # Four extra slots, each to the highest load per replica: expert 0 (100), expert 0 (50), expert 7
    # (40 > 33.3), expert 0 (33.3 > 20 > 10).
    np.testing.assert_array_equal(logcnt[0], [4, 1, 1, 1, 1, 1, 1, 2])
    # Replicas spread over nodes first: expert 0 on both nodes, expert 7 on both nodes.
    node_of_slot = np.arange(12) // 6
    assert set(node_of_slot[phy2log[0] == 0]) == {0, 1}
    assert set(node_of_slot[phy2log[0] == 7]) == {0, 1}
    # Slots ascending in log2phy for Zepp's policy.
    for e in range(8):
        s = log2phy[0, e][log2phy[0, e] >= 0]
        assert list(s) == sorted(s)


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
        (dict(num_replicas=2.5), "num_replicas"),
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


def test_help_shows_signature_and_contract():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import zepp; help(zepp.rebalance_experts)"],
                         capture_output=True, text=True, check=True).stdout
    assert "rebalance_experts(weight, num_replicas, num_groups, num_nodes, num_gpus, policy='eplb')" in out
    for word in ("phy2log", "log2phy", "logcnt", "ValueError", "§4.1"):
        assert word in out
