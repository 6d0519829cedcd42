#!/usr/bin/env python3
"""Expert-parallel MoE layers with torch.distributed on a real trace: a2av, eplb and zepp.

    python3 -m torch.distributed.run --nproc_per_node 4 examples/torch_ep.py \\
        --trace ../shared/data/traces/deepseek-v2-lite-puffin --model deepseek-v2-lite

(PYTHONPATH=build/python:python from a build tree, or nothing after `pip install ./python`.)
Every process is one EP rank (gloo on CPU; NCCL when --backend nccl and each rank has a GPU);
--nodes splits the ranks into nodes (rank r on node r // (ranks / nodes)). For each MoE layer of
the trace (the first --layers), the first half of its requests is the history that places the
experts (eplb: DeepSeek's EPLB; zepp: Zepp's placement; a2av: expert e on rank e // (E / ranks)),
and --tokens tokens per rank of the second half are the batch: rank r holds tokens
[r T, (r + 1) T). Hidden states are seeded normal vectors; experts are SwiGLU FFNs seeded by
(layer, expert), --hidden wide (default: the model's) and --ffn wide (default 128, shrunk so CPU
processes can hold and run them: the bytes moved do not depend on it). Gate weights are the
trace's where it records them, else a softmax of seeded normal logits over the k selected experts
(the DeepSeek CSVs record none). --consolidate TOPOLOGY makes zepp's per-rank plan consolidate
weight-bound replicas by GEMM time (src/routing/consolidate.cpp) with the real model's cost on
that cluster, as `zepp simulate` routes.

Prints per strategy: the max abs error of the combined output against a dense single-process
reference (every token through its k experts, weighted, summed), the bytes all ranks sent to
other nodes and within their node (activations, gate weights and row indices, point to point),
the all-gathered metadata (row counts, zepp's per-expert counts), and the wall time per layer
(mean over layers of the slowest rank, planning included). --format json: rank 0 prints one JSON
list of {strategy, max_abs_error, inter_node_bytes, intra_node_bytes, metadata_bytes, layer_ms}.
"""

import argparse
import json
import sys
import time

import numpy as np
import torch
import torch.distributed as dist

import zepp
import zepp.torch as zt


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", required=True, help="token-level routing trace (file or folder)")
    p.add_argument("--model", required=True, help="model preset (zepp presets), e.g. deepseek-v2-lite")
    p.add_argument("--nodes", type=int, default=2, help="nodes the ranks are split into (default 2)")
    p.add_argument("--tokens", type=int, default=64, help="tokens per rank per layer (default 64)")
    p.add_argument("--layers", type=int, default=4, help="MoE layers run, the trace's first (default 4)")
    p.add_argument("--hidden", type=int, default=0, help="hidden size (default: the model's)")
    p.add_argument("--ffn", type=int, default=128, help="expert FFN width (default 128)")
    p.add_argument("--extra-slots", type=int, default=2, help="redundant slots per rank for eplb and zepp (default 2)")
    p.add_argument("--strategies", default="a2av,eplb,zepp", help="comma-separated, of " + ", ".join(zt.STRATEGIES))
    p.add_argument("--consolidate", metavar="TOPOLOGY", default="",
                   help="zepp: consolidate weight-bound replicas by GEMM time with the cost the simulator uses, "
                        "zepp.gemm_cost(--model, TOPOLOGY), a cluster preset or topology file (default: off)")
    p.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--format", choices=("table", "json"), default="table")
    return p.parse_args()


def fail(message):
    """Every rank reaches the same checks with the same inputs, so every rank exits with it."""
    if dist.get_rank() == 0:
        print(f"torch_ep: {message}", file=sys.stderr)
    dist.destroy_process_group()
    sys.exit(2)


class Workload:
    """Per layer: the history load [E], and this rank's tokens (hidden [T, H], topk_ids, gates)."""

    def __init__(self, args, model, world, rank):
        try:
            trace = zepp.read_trace(args.trace)
        except ValueError as e:
            fail(str(e))
        if trace.num_experts > model["num_experts"]:
            fail(f"--trace has expert ids up to {trace.num_experts - 1}; {model['name']} has {model['num_experts']} experts")
        self.E, self.H = model["num_experts"], args.hidden or model["hidden"]
        self.layers = []
        total = world * args.tokens
        for layer in list(trace.layers)[: args.layers]:
            lt = trace.layers[layer]
            requests = np.unique(lt.request)
            history = lt.request < requests[len(requests) // 2]  # first half of the requests
            batch = np.flatnonzero(~history)[:total]
            if batch.size < total:
                fail(f"layer {layer}: {batch.size} tokens after the history half, fewer than "
                     f"{world} ranks x --tokens {args.tokens}")
            load = np.bincount(lt.topk_ids[history].reshape(-1), minlength=self.E).astype(np.float64)
            mine = batch[rank * args.tokens:(rank + 1) * args.tokens]
            ids = torch.from_numpy(lt.topk_ids[mine].astype(np.int64))
            g = torch.Generator().manual_seed(args.seed * 1000003 + layer)
            hidden = torch.randn(total, self.H, generator=g)[rank * args.tokens:(rank + 1) * args.tokens]
            if lt.gate_weights is not None:
                gates = torch.from_numpy(lt.gate_weights[mine].astype(np.float32))
            else:
                logits = torch.randn(total, ids.shape[1], generator=g)[rank * args.tokens:(rank + 1) * args.tokens]
                gates = torch.softmax(logits, dim=1)
            self.layers.append((layer, load, hidden, ids, gates))


class Experts:
    """SwiGLU experts seeded by (layer, expert), built once per (layer, expert) a rank needs."""

    def __init__(self, hidden, ffn, seed):
        self.hidden, self.ffn, self.seed, self.cache = hidden, ffn, seed, {}

    def get(self, layer, expert):
        key = (layer, int(expert))
        if key not in self.cache:
            self.cache[key] = zt.SwiGLUExpert(self.hidden, self.ffn, seed=self.seed * 7919 + layer * 4099 + int(expert))
        return self.cache[key]


def reference(experts, layer, hidden, ids, gates):
    """Dense single-process MoE: every token through its k experts, gate-weighted, summed."""
    out = torch.zeros_like(hidden)
    for e in torch.unique(ids).tolist():
        rows, cols = torch.nonzero(ids == e, as_tuple=True)
        out.index_add_(0, rows, experts.get(layer, e)(hidden[rows]) * gates[rows, cols].unsqueeze(1))
    return out


def placement(strategy, load, E, world, nodes, extra):
    if strategy == "a2av":
        if E % world:
            fail(f"a2av: {E} experts do not divide over {world} ranks")
        return np.arange(E)
    P = world * (-(-E // world) + extra)
    groups = nodes if E % nodes == 0 else 1  # docs/baselines/eplb.md: one group per node when it divides E
    return zepp.rebalance_experts(load[None, :], P, groups, nodes, world, policy=strategy)[0][0]


def run(strategy, work, experts, args, world, rank, device, gemm):
    worst, times = 0.0, []
    traffic = torch.zeros(3, dtype=torch.int64)
    for layer, load, hidden, ids, gates in work.layers:
        phy2log = placement(strategy, load, work.E, world, args.nodes, args.extra_slots)
        S = len(phy2log) // world
        local = {int(e): experts.get(layer, e).to(device) for e in phy2log[rank * S:(rank + 1) * S]}
        moe = zt.MoELayer(local, phy2log, args.nodes, strategy, gemm=gemm if strategy == "zepp" else None)
        h, g = hidden.to(device), gates.to(device)
        dist.barrier()
        start = time.perf_counter()
        out = moe(h, ids, g)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        ref = reference(experts, layer, hidden, ids, gates)
        worst = max(worst, float((out.cpu() - ref).abs().max()) if out.numel() else 0.0)
        traffic += moe.dispatcher.traffic.as_tensor()
    stats = torch.tensor([worst] + times, dtype=torch.float64)
    dist.all_reduce(stats, op=dist.ReduceOp.MAX)  # the worst error, the slowest rank per layer
    dist.all_reduce(traffic, op=dist.ReduceOp.SUM)
    return {"strategy": strategy, "max_abs_error": float(stats[0]), "inter_node_bytes": int(traffic[0]),
            "intra_node_bytes": int(traffic[1]), "metadata_bytes": int(traffic[2]),
            "layer_ms": float(stats[1:].mean()) * 1e3}


def main():
    args = parse_args()
    dist.init_process_group(args.backend)
    world, rank = dist.get_world_size(), dist.get_rank()
    device = torch.device("cpu")
    if args.backend == "nccl":
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    strategies = [s for s in args.strategies.split(",") if s]
    for s in strategies:
        if s not in zt.STRATEGIES:
            fail(f"--strategies: expected names of {', '.join(zt.STRATEGIES)}, got {s!r}")
    if args.nodes < 1 or world % args.nodes:
        fail(f"--nodes: expected a divisor of the {world} ranks, got {args.nodes}")
    for name in ("tokens", "layers", "ffn"):
        if getattr(args, name) < 1:
            fail(f"--{name}: expected an integer >= 1, got {getattr(args, name)}")
    try:
        model = zepp.model_preset(args.model)
    except ValueError as e:
        fail(str(e))
    gemm = None
    if args.consolidate:
        try:
            gemm = zepp.gemm_cost(args.model, args.consolidate)
        except ValueError as e:
            fail(str(e).replace("topology: ", "--consolidate: ", 1))
    work = Workload(args, model, world, rank)
    experts = Experts(work.H, args.ffn, args.seed)
    rows = [run(s, work, experts, args, world, rank, device, gemm) for s in strategies]
    if rank == 0:
        if args.format == "json":
            print(json.dumps(rows))
        else:
            print(f"{world} ranks on {args.nodes} nodes, {len(work.layers)} MoE layers of {args.trace}, "
                  f"{args.tokens} tokens per rank, hidden {work.H}, float32 ({args.backend})")
            print(f"{'strategy':<9}{'max abs error':>15}{'inter-node B':>15}{'intra-node B':>15}{'metadata B':>12}"
                  f"{'ms/layer':>10}")
            for r in rows:
                print(f"{r['strategy']:<9}{r['max_abs_error']:>15.3g}{r['inter_node_bytes']:>15,}"
                      f"{r['intra_node_bytes']:>15,}{r['metadata_bytes']:>12,}{r['layer_ms']:>10.2f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
