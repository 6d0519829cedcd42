#!/usr/bin/env python3
"""Time zepp.Router.route on one MoE layer's batch, and Router.route_rank on one rank's share of
it, against numpy.argsort of the same array.

    PYTHONPATH=build/python:python python3 bench/route_python.py [--tokens 170000 --top-k 6]

Sorting the [T, k] expert ids is a floor that any router pays (grouping pairs by expert); the
ratio says how far above that floor Zepp's routing is. The batch: T tokens spread evenly over
the GPUs, each with k distinct experts drawn from a power law (r-th expert ~ r^-1.2, the
DeepSeek-V2-Lite shape by default: 64 experts, top-6); placement: zepp.rebalance_experts
(policy "zepp") with 2 extra slots per GPU. Prints the best and median of --repeat calls for
int32 and int64 ids (both read in place, the result written into a reused array), the best CPU
time of this thread beside them, and checks the result equals zepp.route's.
Targets (issue 20): the global route for 170,000 tokens x top-6 within 5 ms; route_rank for one
rank's 10,600 tokens x top-6 (170,000 over 16 ranks) within 0.3 ms.
"""

import argparse
import os
import time

import numpy as np

import zepp


CPU = []  # best CPU time (this thread) of the latest timings() call: on a loaded machine the
#           wall clock also counts the time other processes held the core


def timings(fn, repeat):
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.thread_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    CPU[:] = [min(cpu)]
    return min(times), float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=170_000)
    parser.add_argument("--top-k", type=int, default=6)
    parser.add_argument("--experts", type=int, default=64)
    parser.add_argument("--gpus", type=int, default=16)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1, help="threads assigning pairs")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    E, G, T, k = args.experts, args.gpus, args.tokens, args.top_k

    popularity = 1.0 / np.arange(1, E + 1) ** 1.2
    popularity = rng.permutation(popularity / popularity.sum())
    slots_per_gpu = -(-E // G) + 2
    phy2log = zepp.rebalance_experts(popularity[None, :] * 1e6, G * slots_per_gpu, 1, args.nodes, G, policy="zepp")[0][0]
    # k distinct experts per token, weighted by popularity (Gumbel top-k).
    keys = np.log(popularity)[None, :] - np.log(-np.log(rng.random((T, E))))
    topk64 = np.ascontiguousarray(np.argpartition(-keys, k - 1, axis=1)[:, :k]).astype(np.int64)
    src64 = (np.arange(T) * G // T).astype(np.int64)
    rng.shuffle(src64)

    router = zepp.Router(phy2log, args.nodes, G, threads=args.threads)
    expected = zepp.route(topk64, src64, phy2log, args.nodes, G)
    load = os.getloadavg()
    print(f"{T} tokens x top-{k}, {E} experts, {G} GPUs on {args.nodes} nodes, {len(phy2log)} slots, "
          f"{args.threads} thread(s); load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'call':<34}{'best ms':>10}{'median ms':>11}{'x argsort':>11}{'CPU ms':>9}")
    for dtype in (np.int32, np.int64):
        topk, src = topk64.astype(dtype), src64.astype(dtype)
        assert np.array_equal(router.route(topk, src), expected)
        out = np.empty_like(topk)  # reused, as a serving engine would
        best, median = timings(lambda: router.route(topk, src, out=out), args.repeat)
        cpu = CPU[0]
        sort_best, sort_median = timings(lambda: np.argsort(topk, axis=None), args.repeat)
        name = np.dtype(dtype).name
        print(f"{'numpy.argsort, ' + name:<34}{sort_best * 1e3:>10.2f}{sort_median * 1e3:>11.2f}{1.0:>11.2f}"
              f"{CPU[0] * 1e3:>9.2f}")
        print(f"{'zepp.Router.route, ' + name:<34}{best * 1e3:>10.2f}{median * 1e3:>11.2f}{best / sort_best:>11.2f}"
              f"{cpu * 1e3:>9.2f}")
    best, median = timings(lambda: zepp.route(topk64, src64, phy2log, args.nodes, G), max(1, args.repeat // 3))
    print(f"{'zepp.route (wrapper), int64':<34}{best * 1e3:>10.2f}{median * 1e3:>11.2f}{best / sort_best:>11.2f}"
          f"{CPU[0] * 1e3:>9.2f}")

    # Per rank (issue 20): each rank counts its own tokens, the counts are all-gathered, every
    # rank plans from them and routes its own tokens. Timed on the rank with the most tokens;
    # x argsort against numpy.argsort of that rank's ids.
    print(f"\nper rank: rank with the most of the {T} tokens, {np.bincount(src64).max()} tokens")
    print(f"{'call':<34}{'best ms':>10}{'median ms':>11}{'x argsort':>11}{'CPU ms':>9}")
    rank = int(np.argmax(np.bincount(src64, minlength=G)))
    for dtype in (np.int32, np.int64):
        mine = np.ascontiguousarray(topk64[src64 == rank]).astype(dtype)
        counts = np.stack([router.count(np.ascontiguousarray(topk64[src64 == r]).astype(dtype)) for r in range(G)])
        plan = router.plan(counts)
        out = np.empty_like(mine)
        assert np.array_equal(router.route_rank(mine, rank, plan), expected[src64 == rank])
        name = np.dtype(dtype).name
        row = np.empty(E, dtype=np.int64)
        plan_out = np.empty_like(plan)
        sort_best = None  # the argsort row's own timing is the baseline (it was timed twice, reading 0.6-0.7x itself)
        for label, fn in ((f"numpy.argsort, {name}", lambda: np.argsort(mine, axis=None)),
                          (f"Router.count, {name}", lambda: router.count(mine, out=row)),
                          ("Router.plan", lambda: router.plan(counts, out=plan_out)),
                          (f"Router.route_rank, {name}", lambda: router.route_rank(mine, rank, plan, out=out))):
            best, median = timings(fn, args.repeat)
            sort_best = sort_best or best
            print(f"{label:<34}{best * 1e3:>10.3f}{median * 1e3:>11.3f}{best / sort_best:>11.2f}{CPU[0] * 1e3:>9.3f}")


if __name__ == "__main__":
    main()
