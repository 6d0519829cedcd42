#!/usr/bin/env python3
"""Call zepp.route the way an EP dispatcher would, for one MoE layer.

    PYTHONPATH=build/python:python python3 examples/dispatcher_route.py --gpus 8 --nodes 2 --tokens 512

Each rank's gate picks top-k experts for its tokens; the dispatcher asks zepp.route which
replica (slot) serves every (token, k) pair, then builds what an all-to-all dispatch needs: per
(source rank, destination rank) pair counts, and per destination rank the list of
(source rank, token, k, local slot) it will receive. Expert popularity follows a power law
(or a [layers, experts] load file given with --stats, SGLang's statistics JSON). Prints how many
pairs stay on their GPU, their node, or cross nodes, against an even split over replicas.
"""

import argparse

import numpy as np

import zepp


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--experts", type=int, default=64, help="ignored with --stats")
    parser.add_argument("--top-k", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=512, help="tokens per rank")
    parser.add_argument("--stats", help="SGLang statistics JSON; its first layer's load sets popularity")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name in ("gpus", "nodes", "experts", "top_k", "tokens"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: expected a count >= 1, got {getattr(args, name)}")
    if args.gpus % args.nodes:
        parser.error(f"--gpus: {args.gpus} is not a multiple of --nodes {args.nodes}")
    rng = np.random.default_rng(args.seed)

    if args.stats:
        popularity = zepp.read_sglang_stats(args.stats)[0] + 1e-9
    else:
        popularity = 1.0 / np.arange(1, args.experts + 1) ** 1.2
    E, G, per_node = len(popularity), args.gpus, args.gpus // args.nodes
    popularity = popularity / popularity.sum()

    # Placement from history (here: the popularity itself), two extra slots per GPU.
    slots_per_gpu = -(-E // G) + 2
    phy2log = zepp.rebalance_experts(popularity[None, :] * 1e6, G * slots_per_gpu, 1, args.nodes, G, policy="zepp")[0][0]

    # This step's batch: every rank's tokens and their gate's top-k choices.
    src_rank = np.repeat(np.arange(G), args.tokens)
    topk_ids = np.array([rng.choice(E, size=args.top_k, replace=False, p=popularity) for _ in src_rank])

    slot = zepp.route(topk_ids, src_rank, phy2log, args.nodes, G)  # [T, k]
    dst_rank = slot // slots_per_gpu
    assert np.all(phy2log[slot] == topk_ids)

    send_counts = np.zeros((G, G), dtype=np.int64)  # the all-to-all's split sizes
    np.add.at(send_counts, (np.repeat(src_rank, args.top_k), dst_rank.ravel()), 1)
    receive = {r: [] for r in range(G)}
    for t, k in np.ndindex(*dst_rank.shape):
        receive[dst_rank[t, k]].append((src_rank[t], t, k, slot[t, k] % slots_per_gpu))

    def shares(dst):
        src = src_rank[:, None]
        same_gpu = np.mean(dst == src)
        same_node = np.mean(dst // per_node == src // per_node)
        return same_gpu, same_node - same_gpu, 1 - same_node

    # An even split: each pair to a replica of its expert chosen uniformly at random.
    replicas = [np.flatnonzero(phy2log == e) for e in range(E)]
    even_dst = np.vectorize(lambda e: rng.choice(replicas[e]) // slots_per_gpu)(topk_ids)

    print(f"{len(src_rank)} tokens x top-{args.top_k} on {G} GPUs in {args.nodes} nodes, {E} experts, "
          f"{slots_per_gpu} slots per GPU")
    print("routing       own GPU   same node   other node")
    for name, dst in (("zepp.route", dst_rank), ("even split", even_dst)):
        print("{:<12} {:8.1%} {:11.1%} {:12.1%}".format(name, *shares(dst)))
    print("pairs received per rank:", [len(receive[r]) for r in range(G)])
    print("send counts (row: source rank, column: destination rank):")
    print(send_counts)


if __name__ == "__main__":
    main()
