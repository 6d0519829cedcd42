#!/usr/bin/env python3
"""Fits the synthetic workload's popularity exponent (r^-zipf, src/workload/synthetic.cpp) to the
real top-8 per-expert loads in shared/data/traces/qwen3-30b-a3b-load (issue 24 item 7).

    python3 scripts/fit_popularity.py [--traces ../shared/data/traces] [--tokens 4000]

Why this statistic. The real data are per-layer expert loads (the fraction of prompt tokens that
chose each of 128 experts among their top-8; 3 data sets x 2 languages x 48 layers = 288 rows).
A least-squares line through log(load) against log(rank) is driven by the tail (the coldest
experts fall off steeply, slope ~2 over all ranks), and a line through the head underestimates the
exponent, because choosing 8 *distinct* experts caps a hot expert at one choice per token. What
makes a GPU a straggler is how far the busiest expert is above the mean, so the exponent is fitted
by the busiest/mean load ratio: for each exponent on a grid, the synthetic sampler's own process
(8 distinct experts per token, drawn one after another with probability proportional to r^-zipf
among those not yet drawn) is simulated for E = 128 and its busiest/mean ratio recorded; each real
row's ratio is inverted through that table (linear interpolation) and the median over the rows is
the fit. The share of load held by the busiest 10% of experts is inverted the same way as a check.
The exponent is then used unchanged for other expert counts (Kimi-K2: 384), i.e. the assumption is
that popularity falls off with rank as in Qwen3's layers. Deterministic (seeded); stdlib only.
"""
import argparse
import bisect
import csv
import glob
import itertools
import os
import random
import statistics
import sys


def sampled_stats(zipf, experts, top_k, tokens, seed=1):
    """busiest/mean and busiest-10% share of the loads of `tokens` tokens drawn as the sampler does."""
    rng = random.Random(seed)
    cum = list(itertools.accumulate((r + 1) ** -zipf for r in range(experts)))
    load = [0] * experts
    for _ in range(tokens):
        taken = set()
        while len(taken) < top_k:
            e = bisect.bisect_right(cum, rng.random() * cum[-1])
            if e < experts:
                taken.add(e)
        for e in taken:
            load[e] += 1
    top = sorted(load, reverse=True)[: experts // 10]
    return max(load) / (sum(load) / experts), sum(top) / sum(load)


def invert(table, value, index):
    """Exponent whose simulated statistic `index` equals value (clamped to the grid)."""
    for a, b in zip(table, table[1:]):
        if a[index] <= value <= b[index]:
            return a[0] + (b[0] - a[0]) * (value - a[index]) / (b[index] - a[index])
    return table[0][0] if value < table[0][index] else table[-1][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--traces", default=os.path.join(here, "..", "..", "shared", "data", "traces"))
    ap.add_argument("--tokens", type=int, default=4000, help="tokens simulated per grid point")
    args = ap.parse_args()
    if args.tokens < 1:
        ap.error(f"--tokens: expected at least 1 token per grid point, got {args.tokens}")
    files = sorted(glob.glob(os.path.join(args.traces, "qwen3-30b-a3b-load", "*.csv")))
    if not files:
        sys.exit(f"fit_popularity: no qwen3-30b-a3b-load/*.csv under {args.traces}")
    rows = []
    for path in files:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                rows.append([float(r[f"Expert_{i}"]) for i in range(128)])
    grid = [round(0.40 + 0.05 * i, 2) for i in range(17)]  # 0.40 .. 1.20
    table = [(z,) + sampled_stats(z, 128, 8, args.tokens) for z in grid]
    by_max, by_top = [], []
    for v in rows:
        mean = sum(v) / len(v)
        top = sorted(v, reverse=True)[: len(v) // 10]
        by_max.append(invert(table, max(v) / mean, 1))
        by_top.append(invert(table, sum(top) / sum(v), 2))
    print(f"{len(rows)} layer rows from {len(files)} files (128 experts, top-8)")
    for name, fits in (("busiest/mean", by_max), ("busiest-10% share", by_top)):
        q = sorted(fits)
        print(f"{name:18s} fitted exponent: median {statistics.median(q):.2f} "
              f"(quartiles {q[len(q) // 4]:.2f}, {q[3 * len(q) // 4]:.2f})")


if __name__ == "__main__":
    main()
