"""zepp.torch: dispatch and combine of real activations with torch.distributed (gloo, CPU
processes), against a dense single-process reference, for every strategy (issue 22)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed (scripts/install-deps.sh installs it)")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import zepp  # noqa: E402

E, K, H, FFN, T = 16, 4, 32, 16, 24  # experts, top-k, hidden, expert FFN, tokens per rank


def workload(world, rank, skew):
    """Every rank's tokens (seeded, the same on every rank): power-law expert choice."""
    rng = np.random.default_rng(7)
    p = 1.0 / np.arange(1, E + 1) ** skew
    p /= p.sum()
    ids = np.stack([rng.choice(E, size=K, replace=False, p=p) for _ in range(world * T)])
    hidden = torch.from_numpy(rng.standard_normal((world * T, H)).astype(np.float32))
    gates = torch.softmax(torch.from_numpy(rng.standard_normal((world * T, K)).astype(np.float32)), dim=1)
    load = np.bincount(ids.reshape(-1), minlength=E).astype(float)
    mine = slice(rank * T, (rank + 1) * T)
    return load, hidden[mine], torch.from_numpy(ids[mine]), gates[mine]


def worker(rank, world, nodes, init, results):
    import zepp.torch as zt

    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        load, hidden, ids, gates = workload(world, rank, skew=1.2)
        experts = {e: zt.SwiGLUExpert(H, FFN, seed=100 + e) for e in range(E)}
        ref = zt.weighted_experts(experts, list(range(E)), hidden, gates, ids)  # slot e holds expert e
        P = world * (E // world + 2)
        out = {}
        for strategy in zt.STRATEGIES:
            phy2log = np.arange(E) if strategy == "a2av" else \
                zepp.rebalance_experts(load[None], P, nodes, nodes, world, policy=strategy)[0][0]
            layer = zt.MoELayer(experts, phy2log, nodes, strategy)
            y = layer(hidden, ids, gates)
            if rank == 1:  # a rank with no tokens still takes part in every collective
                layer(hidden[:0], ids[:0], gates[:0])
            else:
                layer(hidden, ids, gates)
            error = torch.tensor([float((y - ref).abs().max())], dtype=torch.float64)
            dist.all_reduce(error, op=dist.ReduceOp.MAX)
            traffic = layer.dispatcher.traffic.as_tensor()
            dist.all_reduce(traffic)
            # -1 padding (as zepp.Router takes it) goes nowhere and adds nothing: every other
            # pair's output as the dense reference gives it; a row of padding only gets zeros.
            padded = ids.clone()
            padded[::3, 1] = -1
            padded[1] = -1
            pad_ref = zt.weighted_experts(experts, list(range(E)), hidden, gates, padded)
            pad_error = torch.tensor([float((layer(hidden, padded, gates) - pad_ref).abs().max())], dtype=torch.float64)
            dist.all_reduce(pad_error, op=dist.ReduceOp.MAX)
            out[strategy] = (float(error), traffic.tolist(), float(pad_error))
        out["zepp gemm"] = consolidated(rank, world, nodes, experts, load, hidden, ids, gates)
        out["type errors"] = type_errors(experts, np.arange(E), hidden, ids, gates)
        if rank == 0:
            results.put(out)
    finally:
        dist.destroy_process_group()


def type_errors(experts, phy2log, hidden, ids, gates):
    """The TypeErrors of arguments of the wrong type, raised before any collective call (num_nodes
    None failed on "'<' not supported", numpy hidden states on "has no attribute 'dim'")."""
    import zepp.torch as zt

    layer = zt.MoELayer(experts, phy2log, 2, "a2av")
    messages = []
    for call in (lambda: zt.MoELayer(experts, phy2log, None), lambda: zt.MoELayer(experts, phy2log, 2.0),
                 lambda: layer(hidden.numpy(), ids, gates)):
        try:
            call()
        except TypeError as e:
            messages.append(str(e))
    return messages


def consolidated(rank, world, nodes, experts, load, hidden, ids, gates):
    """MoELayer(strategy="zepp", gemm=Llama-4 Maverick's a100 GEMM cost) on the top-1 of the same
    tokens (Llama-4 is top-1; every GEMM weight-bound): (max error against the dense reference,
    replicas consolidation emptied, whether every rank's slots equal zepp.Router(gemm=...).route on
    all tokens at once)."""
    import zepp.torch as zt

    gemm = zepp.gemm_cost("llama4-maverick", "a100")
    ids, gates = ids[:, :1].contiguous(), gates[:, :1].contiguous()
    phy2log = zepp.rebalance_experts(load[None], world * (E // world + 2), nodes, nodes, world, policy="zepp")[0][0]
    layer = zt.MoELayer(experts, phy2log, nodes, "zepp", gemm=gemm)
    ref = zt.weighted_experts(experts, list(range(E)), hidden, gates, ids)  # slot e holds expert e
    error = torch.tensor([float((layer(hidden, ids, gates) - ref).abs().max())], dtype=torch.float64)
    dist.all_reduce(error, op=dist.ReduceOp.MAX)
    slots = layer.dispatcher.route(ids)
    every = np.concatenate([workload(world, r, skew=1.2)[2][:, :1].numpy() for r in range(world)])
    src = np.repeat(np.arange(world), T)
    expected = zepp.Router(phy2log, nodes, world, gemm=gemm).route(every, src)[src == rank]
    same = torch.tensor([int(np.array_equal(slots, expected))])
    dist.all_reduce(same, op=dist.ReduceOp.MIN)
    return float(error), layer.dispatcher.router.consolidated, bool(same)


def run(world, nodes, tmp_path):
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    init = f"file://{tmp_path / 'rendezvous'}"
    mp.spawn(worker, args=(world, nodes, init, results), nprocs=world, join=True)
    return results.get()


def test_every_strategy_matches_the_dense_reference(tmp_path):
    out = run(4, 2, tmp_path)  # 8 ranks on 2 and 4 nodes: test_torch_ep.py
    error, moves, same = out.pop("zepp gemm")
    assert error <= 1e-5 and moves > 0 and same  # consolidation fired, the per-rank slots the global ones
    assert out.pop("type errors") == ["num_nodes: expected an integer, got None",
                                      "num_nodes: expected an integer, got 2.0",
                                      "hidden: expected a torch tensor [tokens, hidden], got ndarray"]
    for strategy, (error, (inter, intra, metadata), pad_error) in out.items():
        assert error <= 1e-5 and pad_error <= 1e-5, strategy
        assert inter > 0 and metadata > 0, strategy
    # Each token crosses to a node once (zepp) instead of once per pair (a2av): fewer NIC bytes.
    assert out["zepp"][1][0] < out["a2av"][1][0]


def mismatch_worker(rank, world, init, case, results):
    """One rank of a group whose ranks call dispatch with arguments that disagree (`case`):
    puts (rank, what dispatch raised, whether the group still works afterwards)."""
    import datetime

    import zepp.torch as zt

    # A collective sized differently on two ranks fails in gloo within this timeout instead of
    # waiting forever; the test's join timeout bounds the rest.
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=20))
    try:
        _, hidden, ids, gates = workload(world, rank, skew=1.2)
        strategy = "a2av" if case == "strategy" and rank == 3 else "zepp"
        dispatcher = zt.Dispatcher(np.arange(E), 2, strategy)
        if case == "local":  # every local check comes before any collective call
            def no_collective(tensor):
                raise AssertionError("a collective before the local checks")
            dispatcher.exchange.all_gather = no_collective
            outcome = []
            for call in (lambda: dispatcher.dispatch(hidden, ids, gates[:, :2]),
                         lambda: dispatcher.dispatch(hidden, ids[:-1], gates),
                         lambda: dispatcher.dispatch(hidden.long(), ids, gates)):
                try:
                    call()
                    outcome.append("accepted")
                except Exception as e:  # noqa: BLE001 -- the test compares the type and message
                    outcome.append(f"{type(e).__name__}: {e}")
            results.put((rank, outcome, True))
            return
        if case == "hidden" and rank == 1:
            hidden = torch.cat([hidden, hidden], dim=1)  # [T, 2H] on one rank, [T, H] on the others
        try:
            dispatcher.dispatch(hidden, ids, gates)
            raised = "accepted"
        except Exception as e:  # noqa: BLE001
            raised = f"{type(e).__name__}: {e}"
        alive = torch.ones(1)
        dist.all_reduce(alive)  # the ranks raised together: the group is still in step
        results.put((rank, raised, int(alive) == world))
    finally:
        dist.destroy_process_group()


def run_mismatch(case, tmp_path, world=4, timeout=90):
    """Every rank's (rank, outcome, group alive), failing the test when a rank hangs or dies."""
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    init = f"file://{tmp_path / ('rendezvous-' + case)}"
    procs = [ctx.Process(target=mismatch_worker, args=(r, world, init, case, results)) for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout)
    hung = [r for r, p in enumerate(procs) if p.is_alive()]
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join()
    assert not hung, f"ranks {hung} hung"
    assert [p.exitcode for p in procs] == [0] * world, "a rank died"
    out = sorted(results.get() for _ in range(world))
    return out


@pytest.mark.parametrize("case, message", [
    ("hidden", "ValueError: hidden: every rank of the group must pass the same hidden size, "
               f"got {H} on ranks 0, 2, 3 and {2 * H} on rank 1"),
    ("strategy", "ValueError: strategy: every rank of the group must pass the same strategy, "
                 "got 'zepp' on ranks 0, 1, 2 and 'a2av' on rank 3"),
])
def test_ranks_that_disagree_all_raise_before_rows_move(case, message, tmp_path):
    """A rank whose hidden size or strategy differs from the others made another rank abort in
    gloo (op.preamble.length <= op.nbytes) and the rest hang: every rank now raises the same
    ValueError from dispatch's agreement all_gather, and the group stays usable."""
    assert run_mismatch(case, tmp_path) == [(r, message, True) for r in range(4)]


def test_dispatch_checks_its_arguments_before_any_collective(tmp_path):
    """strategy "zepp" checked topk_weights' shape and topk_ids' rows after route's all_gather."""
    for rank, outcome, _ in run_mismatch("local", tmp_path):
        assert outcome == [f"ValueError: topk_weights: expected shape ({T}, {K}) (as topk_ids), got ({T}, 2)",
                           f"ValueError: topk_ids: expected one row per token ({T}), got {T - 1}",
                           "ValueError: hidden: expected a floating tensor (torch.float32, torch.float64, "
                           "torch.float16, torch.bfloat16), got torch.int64"], rank
