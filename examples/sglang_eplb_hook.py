#!/usr/bin/env python3
"""Zepp's placement inside SGLang: the eplb_algorithms hook and the --init-expert-location file.

    PYTHONPATH=build/python:python python3 examples/sglang_eplb_hook.py DUMP --ranks 16 --nodes 2 \\
        --output init_expert_location.json

DUMP is what SGLang's expert-distribution recorder wrote (`--expert-distribution-recorder-mode
stat`, then /dump_expert_distribution_record: expert_distribution_recorder_<time>.pt), its JSON
form {"logical_count": ...}, or a token-level trace (counted per layer). The example
1. writes the placement as SGLang's --init-expert-location file and prints the --ep-size and
   --ep-num-redundant-experts to start SGLang with;
2. installs ZeppSglangEplb.rebalance_experts as SGLang's rebalancing algorithm when SGLang is
   importable (sglang.srt.eplb.eplb_algorithms.rebalance_experts, called by its EPLB manager in
   every worker with the recorder's logical_count) and calls the hook as SGLang does on loads
   drifted by +-2%: it rebalances from the map it returned before and moves few slots
   (docs/sglang.md).
"""

import argparse

import numpy as np

import zepp
from zepp.integrations.sglang import ZeppSglangEplb


def read_counts(path):
    """[steps, L, E] logical counts from a recorder dump / statistics JSON, or [1, L, E] from a trace."""
    try:
        return zepp.read_expert_load(path)[None]
    except ValueError as first:
        try:
            trace = zepp.read_trace(path)
        except ValueError:
            raise first from None
        E = trace.num_experts
        return np.stack([np.bincount(lt.topk_ids.reshape(-1), minlength=E) for lt in trace.layers.values()])[None]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dump", help="SGLang recorder .pt / statistics JSON, or a routing trace")
    p.add_argument("--ranks", type=int, default=16, help="EP ranks (--ep-size)")
    p.add_argument("--nodes", type=int, default=2, help="nodes (--nnodes)")
    p.add_argument("--extra-slots", type=int, default=2, help="redundant slots per rank")
    p.add_argument("--output", required=True, help="--init-expert-location JSON to write")
    args = p.parse_args()
    import torch

    counts = torch.from_numpy(np.asarray(read_counts(args.dump), dtype=np.int64))  # as the recorder keeps it
    E = counts.shape[2]
    S = -(-E // args.ranks) + args.extra_slots
    phy2log, log2phy, logcnt = ZeppSglangEplb.rebalance_experts(counts, args.ranks * S, S, None, args.nodes)
    flags = ZeppSglangEplb.write_init_expert_location(args.output, phy2log, S)
    print(f"wrote {args.output}: {phy2log.shape[0]} layers x {phy2log.shape[1]} slots; start SGLang with "
          f"--init-expert-location {args.output} --ep-size {flags['ep_size']} "
          f"--ep-num-redundant-experts {flags['ep_num_redundant_experts']} --nnodes {args.nodes}")
    try:
        from sglang.srt.eplb import eplb_algorithms
    except ImportError:
        eplb_algorithms = None
        hook = ZeppSglangEplb.rebalance_experts
    else:
        eplb_algorithms.rebalance_experts = ZeppSglangEplb.rebalance_experts
        hook = eplb_algorithms.rebalance_experts
    print("hook: " + ("installed as sglang.srt.eplb.eplb_algorithms.rebalance_experts" if eplb_algorithms
                      else "SGLang absent; calling ZeppSglangEplb.rebalance_experts as SGLang would"))
    drifted = (counts.double() * torch.empty(counts.shape, dtype=torch.float64).uniform_(0.98, 1.02,
                                                                                         generator=torch.Generator().manual_seed(0))).long()
    again = hook(tokens_per_expert=drifted, num_physical_experts=args.ranks * S, num_local_physical_experts=S,
                 num_groups=None, num_nodes=args.nodes, algorithm=None)
    scratch = zepp.rebalance_experts(drifted.sum(0), args.ranks * S, 1, args.nodes, args.ranks, policy="zepp")[0]
    print(f"rebalance after a +-2% drift: {int((again[0] != phy2log).sum())} of {phy2log.numel()} slots changed "
          f"(from the map returned before; a from-scratch placement changes {int((scratch != phy2log).sum())})")

if __name__ == "__main__":
    main()
