"""gemm= of zepp.route, zepp.Router and zepp.torch: consolidation by GEMM time (src/routing/consolidate.cpp,
issue 24 item 6) with the GemmCost the simulator routes with, on the global and the per-rank path."""

import json
import subprocess

import numpy as np
import pytest

import zepp

from conftest import program

# tests/routing/consolidate_test.cpp's kCost {1, 1, 600, 1.0, 0.0} in microseconds (peak_flops
# is at least 1e6 FLOP/s here, as `--peak-tflops` takes it): a row costs 6 / 6e8 = 0.01 us of
# FLOPs, the weight read 1 us, no launch, so t(n) = 1 us for 1 <= n <= 100 rows.
COST = {"hidden": 1, "ffn": 1, "peak_flops": 6e8, "read_s": 1e-6, "launch_s": 0.0}


def busiest(slots, num_slots, num_gpus, gemm):
    """The busiest GPU's roofline GEMM time in seconds: per slot max(6 n hidden ffn / peak, read) +
    launch for its n >= 1 rows, summed per GPU (routing.hpp's GemmCost::time, written out here)."""
    rows = np.bincount(slots[slots >= 0].ravel(), minlength=num_slots).astype(float)
    flops = 6 * rows * gemm["hidden"] * gemm["ffn"] / gemm["peak_flops"]
    t = np.where(rows > 0, np.maximum(flops, gemm["read_s"]) + gemm["launch_s"], 0.0)
    return t.reshape(num_gpus, -1).sum(axis=1).max()


def per_rank(phy2log, nodes, gpus, topk, src, gemm):
    """Every rank's count, the all-gathered counts, each rank's plan and its own slots, put back in
    the batch's order; returns (slots, plan of rank 0, consolidated per rank)."""
    routers = [zepp.Router(phy2log, nodes, gpus, gemm=gemm) for _ in range(gpus)]
    mine = [np.ascontiguousarray(topk[src == r]) for r in range(gpus)]
    counts = np.stack([routers[r].count(mine[r]) for r in range(gpus)])
    plans = [routers[r].plan(counts) for r in range(gpus)]
    slots = np.empty_like(topk)
    for r in range(gpus):
        np.testing.assert_array_equal(plans[r], plans[0])  # every rank plans the same
        slots[src == r] = routers[r].route_rank(mine[r], r, plans[r])
    return slots, plans[0], [router.consolidated for router in routers]


def test_hand_case_moves_a_weight_bound_gemm_off_the_busiest_gpu():
    # consolidate_test.cpp's RemovesAWeightBoundGemmFromTheBusiestGpu: one node, 2 GPUs, GPU0 =
    # slots 0, 1 = experts 0, 1; GPU1 = slots 2, 3 = experts 1, 2. GPU0 has 3 rows of e0 and 2 of
    # e1, GPU1 2 of e1. Water-filling (C = 0) gives e1's replicas 2 rows each: GPU0 runs 2 GEMMs
    # (2 us), GPU1 one (1 us). Consolidation moves slot 1's 2 rows to slot 2: 1 us on each GPU.
    phy2log = [0, 1, 1, 2]
    topk = np.array([[0], [0], [0], [1], [1], [1], [1]])
    src = np.array([0, 0, 0, 0, 0, 1, 1])
    plain = zepp.route(topk, src, phy2log, 1, 2, balance_slack=0.0)
    np.testing.assert_array_equal(plain.ravel(), [0, 0, 0, 1, 1, 2, 2])
    moved = zepp.route(topk, src, phy2log, 1, 2, balance_slack=0.0, gemm=COST)
    np.testing.assert_array_equal(moved.ravel(), [0, 0, 0, 2, 2, 2, 2])
    assert busiest(plain, 4, 2, COST) == 2e-6 and busiest(moved, 4, 2, COST) == 1e-6
    router = zepp.Router(phy2log, 1, 2, balance_slack=0.0, gemm=COST)
    np.testing.assert_array_equal(router.route(topk, src), moved)
    assert router.consolidated == 1 and router.gemm == {k: float(v) for k, v in COST.items()}
    # The per-rank path: the same consolidated plan (m[p, i], slot-major) on every rank and the
    # same slots; without gemm it is the rows-only plan.
    slots, plan, moves = per_rank(np.array(phy2log), 1, 2, topk, src, COST)
    np.testing.assert_array_equal(plan, [[3, 0], [0, 0], [2, 2], [0, 0]])
    np.testing.assert_array_equal(slots, moved)
    assert moves == [1, 1]
    slots, plan, moves = per_rank(np.array(phy2log), 1, 2, topk, src, None)
    np.testing.assert_array_equal(plan, [[3, 0], [2, 0], [0, 2], [0, 0]])
    np.testing.assert_array_equal(slots, plain)
    assert moves == [0, 0]


def test_hand_case_undoes_moves_that_leave_the_maximum():
    # consolidate_test.cpp's UndoesMovesThatLeaveTheMaximum: a third GPU with experts 3 and 4, one
    # row each (2 us, tied with GPU0). Moving GPU0's e1 rows lowers GPU0 but not the maximum, so
    # the move is undone and the slots are the rows-only ones.
    phy2log = [0, 1, 1, 2, 3, 4]
    topk = np.array([[0], [0], [0], [1], [1], [1], [1], [3], [4]])
    src = np.array([0, 0, 0, 0, 0, 1, 1, 2, 2])
    router = zepp.Router(phy2log, 1, 3, balance_slack=0.0, gemm=COST)
    np.testing.assert_array_equal(router.route(topk, src), zepp.route(topk, src, phy2log, 1, 3, balance_slack=0.0))
    assert router.consolidated == 0


@pytest.mark.parametrize("model, topology", [("llama4-maverick", "a100"), ("deepseek-v2-lite", "dgx-h100")])
def test_gemm_cost_is_the_roofline_of_the_programs_presets(model, topology):
    # The figures of `zepp presets --format json` through core/roofline.hpp's formula: the cost
    # `zepp simulate --model M --topology T` routes with (launch_s: the preset's 5 us).
    presets = json.loads(subprocess.run([program(), "presets", "--format", "json"], capture_output=True, text=True,
                                        check=True).stdout)
    m = next(x for x in presets["models"] if x["name"] == model)
    c = next(x for x in presets["clusters"] if x["name"] == topology)
    g = zepp.gemm_cost(model, topology)
    assert list(g) == ["hidden", "ffn", "peak_flops", "read_s", "launch_s"]
    assert (g["hidden"], g["ffn"]) == (m["hidden"], m["ffn"])
    assert g["peak_flops"] == pytest.approx(c["peak_tflops"] * 1e12, rel=1e-12)
    assert g["read_s"] == pytest.approx(3 * m["hidden"] * m["ffn"] * 2 / (c["hbm_tbps"] * 1e12), rel=1e-12)
    assert g["launch_s"] == 5e-6


def test_gemm_cost_reads_a_topology_file(tmp_path):
    path = tmp_path / "slow-hbm.yaml"
    path.write_text("base: a100\ncompute:\n  hbm: 0.5 TB/s\n  kernel_launch: 7 us\n")
    g = zepp.gemm_cost("llama4-maverick", path)
    assert g["read_s"] == pytest.approx(3 * 5120 * 8192 * 2 / 0.5e12, rel=1e-12)
    assert g["launch_s"] == pytest.approx(7e-6)


def test_a_real_llama4_layer_consolidates_as_the_simulator_describes(shared_dir):
    """Llama-4 Maverick's layer 5 (top-1; history abstract_algebra, batch anatomy), 4 x 4 GPUs,
    Zepp's placement with 2 extra slots, 102 tokens per GPU (1 MB): every GEMM is weight-bound,
    and the routing with the simulator's a100 GemmCost empties replicas and lowers the busiest
    GPU's roofline time (the case of docs/baselines/fast.md), serving every pair by its expert,
    with the per-rank path giving the same slots."""
    traces = shared_dir / "data/traces/llama4-maverick-mmlu"
    history, batch = zepp.read_trace(traces / "abstract_algebra"), zepp.read_trace(traces / "anatomy")
    E, nodes, gpus = history.num_experts, 4, 16
    load = np.bincount(history.layers[5].topk_ids.ravel(), minlength=E).astype(float)
    P = gpus * (-(-E // gpus) + 2)
    phy2log = zepp.rebalance_experts(load[None], P, 1, nodes, gpus, policy="zepp")[0][0]
    ids = batch.layers[5].topk_ids
    take = np.random.default_rng(1).choice(ids.shape[0], size=102 * gpus)
    topk = np.ascontiguousarray(ids[take]).astype(np.int64)
    src = np.repeat(np.arange(gpus), 102)
    gemm = zepp.gemm_cost("llama4-maverick", "a100")
    router = zepp.Router(phy2log, nodes, gpus, gemm=gemm)
    slots = router.route(topk, src)
    plain = zepp.route(topk, src, phy2log, nodes, gpus)
    np.testing.assert_array_equal(phy2log[slots], topk)
    assert router.consolidated > 0
    before, after = busiest(plain, P, gpus, gemm), busiest(slots, P, gpus, gemm)
    assert after <= 0.99 * before  # every kept move lowers it by the margin, 1% of the busiest GPU's time
    emptied = (np.bincount(plain.ravel(), minlength=P) > 0) & (np.bincount(slots.ravel(), minlength=P) == 0)
    assert emptied.sum() == router.consolidated
    np.testing.assert_array_equal(zepp.route(topk, src, phy2log, nodes, gpus, gemm=gemm), slots)
    own, _, moves = per_rank(phy2log, nodes, gpus, topk, src, gemm)
    np.testing.assert_array_equal(own, slots)
    assert moves == [router.consolidated] * gpus


@pytest.mark.parametrize(
    "gemm, message",
    [
        ("llama4-maverick",
         r"^gemm: expected None or a dict of hidden, ffn, peak_flops, read_s, launch_s \(zepp.gemm_cost"),
        ((1, 1, 6e8, 1e-6, 0.0), r"^gemm: expected None or a dict"),
        ({**COST, "peak_flops": 600}, r"^gemm\['peak_flops'\]: expected a number in \[1e6, 1e24\] FLOP/s, got 600$"),
        ({**COST, "ridge": 100}, r"^gemm: expected exactly the keys .*; unknown \['ridge'\]"),
        ({k: v for k, v in COST.items() if k != "read_s"},
         r"^gemm: expected exactly the keys .*; missing \['read_s'\]"),
        ({**COST, "read_s": -1.0}, r"^gemm\['read_s'\]: expected a number in \[0, 1e6\] s, got -1.0$"),
        ({**COST, "read_s": 2e6}, r"^gemm\['read_s'\]: expected a number in \[0, 1e6\] s, got 2000000.0$"),
        ({**COST, "launch_s": float("nan")}, r"^gemm\['launch_s'\]: expected a number in \[0, 1\] s, got nan$"),
        ({**COST, "hidden": 0}, r"^gemm\['hidden'\]: expected a number in \[1, 2147483647\] elements, got 0$"),
        ({**COST, "peak_flops": float("inf")},
         r"^gemm\['peak_flops'\]: expected a number in \[1e6, 1e24\] FLOP/s, got inf$"),
        ({**COST, "ffn": "8192"}, r"^gemm\['ffn'\]: expected a number in \[1, 2147483647\] elements, got '8192'$"),
        ({**COST, "ffn": True}, r"^gemm\['ffn'\]: expected a number in \[1, 2147483647\] elements, got True$"),
    ],
)
def test_bad_gemm_is_refused_naming_it(gemm, message):
    with pytest.raises(ValueError, match=message):
        zepp.Router([0, 1, 1, 2], 1, 2, gemm=gemm)
    with pytest.raises(ValueError, match=message):
        zepp.route([[0]], [0], [0, 1, 1, 2], 1, 2, gemm=gemm)


def test_bad_gemm_cost_arguments_name_them():
    with pytest.raises(ValueError, match=r"^model: unknown preset 'llama5', expected one of .*llama4-maverick"):
        zepp.gemm_cost("llama5", "a100")
    with pytest.raises(ValueError, match=r"^topology: 'a1000' is neither a preset \(a100, "):
        zepp.gemm_cost("llama4-maverick", "a1000")
    with pytest.raises(TypeError, match=r"^model: expected a model preset name, got None"):
        zepp.gemm_cost(None, "a100")
    with pytest.raises(TypeError, match=r"^topology: expected a cluster preset name or a topology file path, got 4"):
        zepp.gemm_cost("llama4-maverick", 4)


def test_torch_dispatcher_takes_gemm_only_with_zepp():
    pytest.importorskip("torch", reason="python3-torch is not installed (scripts/install-deps.sh installs it)")
    import zepp.torch as zt

    with pytest.raises(ValueError, match=r"^gemm: only acts with strategy 'zepp' \(its routing\), got strategy 'eplb'"):
        zt.Dispatcher([0, 1, 1, 2], 1, "eplb", gemm=COST)
