"""Torch tensors in, torch tensors out (issue 22 item 1): every entry point that takes arrays takes
tensors and gives the caller's kind back, as DeepSeek's EPLB does; CPU tensors are not copied."""

import json
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed (scripts/install-deps.sh installs it)")

import zepp  # noqa: E402
from zepp.integrations.sglang import ZeppSglangEplb  # noqa: E402
from zepp._tensors import host  # noqa: E402
from zepp.integrations.vllm import EplbPlan, ZeppEplbPolicy  # noqa: E402


def test_rebalance_experts_tensor_equals_eplb_reference(shared_dir):
    cases = json.loads((shared_dir / "data/eplb/reference-cases.json").read_text())["cases"]
    readme = json.loads((shared_dir / "data/eplb/readme-example.json").read_text())
    for case in cases + [readme]:
        weight = torch.tensor(case["weight"], dtype=torch.float32)
        args = [case[k] for k in ("num_replicas", "num_groups", "num_nodes", "num_gpus")]
        phy2log, log2phy, logcnt = zepp.rebalance_experts(weight, *args)
        for t in (phy2log, log2phy, logcnt):
            assert isinstance(t, torch.Tensor) and t.dtype == torch.int64 and t.device.type == "cpu"
        assert torch.equal(phy2log, torch.tensor(case["expected_phy2log"], dtype=torch.int64))
        ref = zepp.rebalance_experts(np.asarray(case["weight"], dtype=np.float32), *args)
        for t, a in zip((phy2log, log2phy, logcnt), ref):
            np.testing.assert_array_equal(t.numpy(), a)


def test_rebalance_experts_bfloat16_and_zepp_report_are_tensors():
    weight = torch.tensor([[90, 132, 40, 61, 104, 165, 39, 4], [20, 107, 104, 64, 19, 197, 187, 157]],
                          dtype=torch.bfloat16)
    phy2log = zepp.rebalance_experts(weight, 12, 1, 2, 4, policy="zepp")[0]
    assert isinstance(phy2log, torch.Tensor) and phy2log.shape == (2, 12)
    out = zepp.rebalance_experts(weight.float(), 12, 1, 2, 4, policy="zepp", previous=phy2log, return_moves=True)
    assert torch.equal(out[0], phy2log)  # the same loads: nothing moves
    assert isinstance(out[3]["slots_changed"], torch.Tensor) and out[3]["slots_changed"].tolist() == [0, 0]
    assert out[3]["survivors"].tolist() == [0, 1, 2, 3]


def test_router_reads_and_writes_cpu_tensors_in_place():
    phy2log = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
    router = zepp.Router(phy2log, 2, 4)
    topk = torch.tensor([[0, 1], [2, 3], [1, 0], [3, 2]], dtype=torch.int32)
    src = torch.tensor([0, 1, 2, 3], dtype=torch.int32)
    assert np.shares_memory(host(topk), topk.numpy())  # a CPU tensor is read in place
    slot = router.route(topk, src)
    assert isinstance(slot, torch.Tensor) and slot.dtype == torch.int32  # topk_ids' dtype, as for numpy
    np.testing.assert_array_equal(slot.numpy(), router.route(topk.numpy(), src.numpy()))
    assert torch.equal(phy2log[slot.long()], topk.long())
    out = torch.full((4, 2), -1, dtype=torch.int32)
    pointer = out.data_ptr()
    assert router.route(topk, src, out=out) is out and out.data_ptr() == pointer  # written in place
    assert torch.equal(out, slot)
    with pytest.raises(ValueError, match="^out"):
        router.route(topk, src, out=torch.empty((4, 2), dtype=torch.int64))  # not topk_ids' dtype
    # zepp.route: int64 slots, as a tensor for a tensor.
    slot64 = zepp.route(topk, src, phy2log, 2, 4)
    assert slot64.dtype == torch.int64 and torch.equal(slot64, slot.long())


def test_router_count_plan_route_rank_write_into_cpu_tensors():
    """count, plan and route_rank refused a CPU tensor `out` of the right shape and dtype ("out:
    expected a writeable C-contiguous int64 array of shape (4,)"), though route takes one and a
    serving engine all-gathers into preallocated tensors; a meta tensor raised torch's own
    NotImplementedError instead of a ValueError naming topk_ids."""
    router = zepp.Router(torch.tensor([0, 1, 2, 3, 0, 1, 2, 3]), 2, 4)
    topk = torch.tensor([[0, 1], [2, 3], [1, 0], [3, -1]])
    rows = torch.zeros((4, 4), dtype=torch.int64)
    for rank in range(4):
        out = torch.full((4,), -1, dtype=torch.int64)
        assert router.count(topk[rank:rank + 1], out=out) is out
        rows[rank] = out
    assert rows.tolist() == [[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0, 1]]
    plan = torch.full((8, 4), -1, dtype=torch.int64)
    pointer = plan.data_ptr()
    assert router.plan(rows, out=plan) is plan and plan.data_ptr() == pointer
    assert torch.equal(plan, router.plan(rows))
    slots = torch.full((1, 2), -9, dtype=torch.int64)
    assert router.route_rank(topk[3:], 3, plan, out=slots) is slots
    assert slots.tolist() == router.route(topk, torch.arange(4))[3:].tolist() == [[7, -1]]
    with pytest.raises(ValueError, match=r"^out: expected a writeable C-contiguous int64 array of shape \(4,\)$"):
        router.count(topk, out=torch.empty(4, dtype=torch.int32))
    with pytest.raises(ValueError, match=r"^topk_ids: expected an array-like convertible by numpy.asarray \("):
        router.route(torch.empty((4, 2), dtype=torch.int64, device="meta"), torch.arange(4))


def test_formats_take_tensors(tmp_path):
    load = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    zepp.write_sglang_stats(tmp_path / "stats.json", load)
    np.testing.assert_array_equal(zepp.read_sglang_stats(tmp_path / "stats.json"), load.numpy())
    phy2log = torch.tensor([[0, 1, 2, 0], [2, 1, 0, 1]])
    zepp.write_placement(tmp_path / "p.yaml", phy2log, "trtllm", layer_ids=torch.tensor([3, 5]))
    layers, read = zepp.read_placement(tmp_path / "p.yaml", "trtllm")
    np.testing.assert_array_equal(read, phy2log.numpy())
    np.testing.assert_array_equal(layers, [3, 5])


def test_sglang_adapter_gives_tensors_back():
    counts = torch.randint(0, 100, (3, 2, 16))
    phy2log, log2phy, logcnt = ZeppSglangEplb.rebalance_experts(counts, 24, 3, None, 2)
    assert all(isinstance(t, torch.Tensor) and t.dtype == torch.int64 for t in (phy2log, log2phy, logcnt))
    ref = ZeppSglangEplb.rebalance_experts(counts.numpy().sum(axis=0), 24, 3, None, 2, previous=phy2log.numpy())
    np.testing.assert_array_equal(ref[0], phy2log.numpy())  # the same load from its own map: no move
    ZeppSglangEplb.reset()


def context(window, phy2log, nodes, ranks):
    """vLLM's EplbRebalanceContext as a plain object (vLLM is not installed here)."""
    return types.SimpleNamespace(load_window_cpu=window, physical_to_logical_map_cpu=phy2log,
                                 topology=types.SimpleNamespace(num_groups=1, num_nodes=nodes, num_ranks=ranks),
                                 num_replicas=phy2log.shape[1], cpu_group=None)


def test_vllm_plan_rebalance_and_legacy_agree():
    ZeppEplbPolicy.reset()
    rng = np.random.default_rng(2)
    window = torch.from_numpy(rng.pareto(1.5, size=(5, 3, 64)) * 100 + 1)
    start = ZeppEplbPolicy.rebalance_experts(window[0], 96, 1, 4, 16, maps=True)
    assert isinstance(start[0], torch.Tensor) and start[1].shape == (3, 64, 96 - 64 + 1)
    policy = ZeppEplbPolicy()
    state = policy.create_state(3)
    plan = policy.plan_rebalance(context(window, start[0], 4, 16), state)
    assert isinstance(plan, EplbPlan)
    target = plan.physical_to_logical_map
    assert isinstance(target, torch.Tensor) and target.dtype == torch.int64 and target.shape == (3, 96)
    legacy = ZeppEplbPolicy.rebalance_experts(window.sum(0), 96, 1, 4, 16, start[0])
    assert torch.equal(legacy, target)
    # The window's sum differs from its first sample, yet the plan moves fewer slots than a
    # from-scratch placement of that sum would.
    scratch = zepp.rebalance_experts(window.sum(0), 96, 1, 4, 16, policy="zepp")[0]
    assert int((target != start[0]).sum()) <= int((scratch != start[0]).sum())
    assert policy.plan_rebalance(context(window, start[0], 4, 16)).physical_to_logical_map.shape == (3, 96)
    with pytest.raises(ValueError, match="^load_window_cpu"):
        policy.plan_rebalance(context(window[0], start[0], 4, 16))
    with pytest.raises(ValueError, match="^physical_to_logical_map_cpu"):
        policy.plan_rebalance(context(window, start[0][:, :48].repeat(1, 2) + 64, 4, 16))
    # The window's entries are named by their index there ("weight[0, 0]" named the sum's).
    bad = window.clone()
    bad[1, 2, 3] = float("nan")
    with pytest.raises(ValueError, match=r"^load_window_cpu\[1, 2, 3\]: expected a load in \[0, 1e15\], got nan$"):
        policy.plan_rebalance(context(bad, start[0], 4, 16))
    bad = torch.full((2, 3, 64), 6e14, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"^load_window_cpu: \[0, 0\] sums to 1.2e\+15 over the samples, above the load "
                                         r"bound 1e15$"):
        policy.plan_rebalance(context(bad, start[0], 4, 16))
    with pytest.raises(ValueError, match=r"^load_window_cpu: expected \[samples, layers, experts\] of at least one "
                                         r"sample, got shape \(0, 3, 64\)$"):
        policy.plan_rebalance(context(window[:0], start[0], 4, 16))
    ZeppEplbPolicy.reset()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: GPU tensors are copied to the host "
                    "and back (zepp/_tensors.py); this test runs where one is present")
def test_cuda_tensors_come_back_on_their_device():
    weight = torch.rand(2, 16, device="cuda") * 100
    phy2log, log2phy, logcnt = zepp.rebalance_experts(weight, 24, 1, 2, 4, policy="zepp")
    assert phy2log.device == weight.device and logcnt.device == weight.device
    slot = zepp.Router(phy2log[0], 2, 4).route(torch.randint(0, 16, (8, 2), device="cuda"),
                                                torch.arange(8, device="cuda") % 4)
    assert slot.device == weight.device
