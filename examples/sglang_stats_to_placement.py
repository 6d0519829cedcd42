#!/usr/bin/env python3
"""Turn SGLang expert-distribution statistics into a Zepp placement file.

    PYTHONPATH=build/python:python python3 examples/sglang_stats_to_placement.py stats.json \
        --gpus 16 --nodes 2 --extra-slots 2 --output placement.json

stats.json holds {"logical_count": [steps, layers, experts] or [layers, experts]} (SGLang's
recorder dump converted from .pt, see zepp.read_sglang_stats). The output is SGLang's
--init-expert-location file by default (--format trtllm writes TensorRT-LLM's load-balancer
YAML, --format eplb-json EPLB's three maps). Prints each layer's expected GPU imbalance
(max / mean load, each replica taking an equal share of its expert) without and with replicas.
"""

import argparse

import numpy as np

import zepp


def gpu_imbalance(load, phy2log, gpus):
    """max / mean expected tokens per GPU when every replica takes an equal share of its expert."""
    share = load / np.bincount(phy2log, minlength=len(load))
    per_gpu = share[phy2log].reshape(gpus, -1).sum(axis=1)
    return per_gpu.max() / per_gpu.mean()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stats", help="SGLang statistics JSON")
    parser.add_argument("--gpus", type=int, required=True, help="EP ranks (GPUs)")
    parser.add_argument("--nodes", type=int, required=True, help="server nodes")
    parser.add_argument("--extra-slots", type=int, default=2, help="R: slots per GPU beyond one copy of every expert")
    parser.add_argument("--policy", choices=["zepp", "eplb"], default="zepp")
    parser.add_argument("--groups", type=int, default=1, help="expert groups (policy eplb)")
    parser.add_argument("--format", choices=zepp.PLACEMENT_FORMATS, default="sglang")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()

    load = zepp.read_sglang_stats(args.stats)  # [layers, experts], tokens summed over steps
    layers, experts = load.shape
    slots = args.gpus * (-(-experts // args.gpus) + args.extra_slots)
    phy2log, _, logcnt = zepp.rebalance_experts(load, slots, args.groups, args.nodes, args.gpus, policy=args.policy)
    zepp.write_placement(args.output, phy2log, args.format)

    contiguous = np.arange(experts)  # plain EP: expert e on GPU e // (E / gpus)
    print(f"{layers} layers x {experts} experts -> {slots} slots on {args.gpus} GPUs ({args.policy}), "
          f"written to {args.output} ({args.format})")
    print("layer  imbalance without -> with replicas  most replicas")
    for l in range(layers):
        before = gpu_imbalance(load[l], contiguous, args.gpus) if experts % args.gpus == 0 else float("nan")
        after = gpu_imbalance(load[l], phy2log[l], args.gpus)
        print(f"{l:5d}  {before:17.3f} -> {after:13.3f}  {logcnt[l].max():13d}")


if __name__ == "__main__":
    main()
