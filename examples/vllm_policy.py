#!/usr/bin/env python3
"""Zepp's placement as vLLM's EPLB policy, driven the way vLLM drives a policy.

    PYTHONPATH=build/python:python python3 examples/vllm_policy.py \\
        --trace ../shared/data/traces/deepseek-v2-lite-puffin --ranks 16 --nodes 2

vLLM keeps a window of per-step expert loads and, every rebalance interval, asks its policy for
the target placement: policy.plan_rebalance(context, policy_state) with context.load_window_cpu
[samples, layers, E] and context.physical_to_logical_map_cpu (the placement installed now), and
installs the EplbPlan it returns (docs/vllm.md). Here the window's samples are successive slices
of the trace's tokens; the example installs each plan and prints, per rebalance, the expected
GPU imbalance (max / mean tokens, each replica taking an equal share of its expert) and how many
slots changed, against a from-scratch placement of the same window. With vLLM installed, its own
EplbRebalanceContext and EplbTopology carry the inputs; without it, objects with the same fields.
"""

import argparse
import types

import numpy as np

import zepp
from zepp.integrations.vllm import ZeppEplbPolicy

try:
    from vllm.distributed.eplb.policy.abstract import EplbRebalanceContext, EplbTopology
except ImportError:
    EplbRebalanceContext = EplbTopology = None


def make_context(window, installed, nodes, ranks):
    topology = (EplbTopology or types.SimpleNamespace)(num_groups=1, num_nodes=nodes, num_ranks=ranks)
    fields = dict(load_window_cpu=window, physical_to_logical_map_cpu=installed, topology=topology,
                  num_replicas=installed.shape[1], cpu_group=None)
    return (EplbRebalanceContext or types.SimpleNamespace)(**fields)


def imbalance(load, phy2log, ranks):
    """Mean over layers of max / mean expected tokens per rank."""
    out = []
    for row, l in zip(phy2log, load):
        share = l / np.bincount(row, minlength=l.size)
        per_rank = share[row].reshape(ranks, -1).sum(axis=1)
        out.append(per_rank.max() / per_rank.mean())
    return float(np.mean(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace", required=True, help="token-level routing trace")
    p.add_argument("--ranks", type=int, default=16)
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--extra-slots", type=int, default=2, help="redundant experts per rank")
    p.add_argument("--samples", type=int, default=4, help="window samples per rebalance")
    p.add_argument("--rebalances", type=int, default=4)
    args = p.parse_args()
    import torch

    trace = zepp.read_trace(args.trace)
    E = trace.num_experts
    layers = list(trace.layers.values())
    steps = args.samples * (args.rebalances + 1)
    # [steps, layers, E]: the trace's tokens cut into equal slices, one slice per step.
    loads = np.zeros((steps, len(layers), E))
    for l, lt in enumerate(layers):
        for s, chunk in enumerate(np.array_split(lt.topk_ids, steps)):
            loads[s, l] = np.bincount(chunk.reshape(-1), minlength=E)
    loads = torch.from_numpy(loads)
    P = args.ranks * (-(-E // args.ranks) + args.extra_slots)
    policy = ZeppEplbPolicy()
    state = policy.create_state(len(layers))
    installed = policy.rebalance_experts(loads[: args.samples].sum(0), P, 1, args.nodes, args.ranks)
    print(f"{len(layers)} MoE layers, {E} experts, {args.ranks} ranks on {args.nodes} nodes, {P} slots; "
          f"vLLM {'classes' if EplbRebalanceContext else 'absent: plain objects'}")
    print(f"{'rebalance':>9} {'imbalance':>10} {'slots changed':>14} {'from scratch':>13}")
    for r in range(1, args.rebalances + 1):
        window = loads[r * args.samples:(r + 1) * args.samples]
        plan = policy.plan_rebalance(make_context(window, installed, args.nodes, args.ranks), state)
        target = plan.physical_to_logical_map
        scratch = zepp.rebalance_experts(window.sum(0), P, 1, args.nodes, args.ranks, policy="zepp")[0]
        print(f"{r:>9} {imbalance(window.sum(0).numpy(), target.numpy(), args.ranks):>10.3f} "
              f"{int((target != installed).sum()):>14} {int((scratch != installed).sum()):>13}")
        for layer in range(len(layers)):
            policy.on_layer_committed(state, plan, layer)
        installed = target


if __name__ == "__main__":
    main()
