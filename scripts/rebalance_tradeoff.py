#!/usr/bin/env python3
"""Balance against weight moves when rebalancing on a real shift (docs/rebalancing.md).

Places DeepSeek-V2-Lite's 26 MoE layers from the first half of the Puffin prompts (history),
then for the second half: from scratch, and rebalanced from the history placement with
`zepp place --previous` under several per-layer move budgets (--max-moved-mb). Prints a Markdown
table: bytes moved over NVLink and NICs (all layers), and the expected GPU imbalance (max / mean,
each expert's load split evenly over its replicas) averaged and worst over layers.

With --plot PREFIX also writes PREFIX.dat and PREFIX.gp and runs gnuplot for PREFIX.svg: the
imbalance (mean and worst layer) against the GB moved. With --check DOC it exits 1, naming the
rows, unless every row of the table is in DOC as printed (docs/rebalancing.md quotes it; ctest's
rebalance_tradeoff runs this), and 77 (skipped) when the trace is absent.

usage: scripts/rebalance_tradeoff.py BUILD/zepp ../shared/data/traces/deepseek-v2-lite-puffin
       [--nodes 4 --gpus-per-node 4 --extra-slots 2 --plot docs/figures/rebalance-tradeoff]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

# Labels sit right of and below their points (the worst-layer line runs above the mean's), and the
# canvas is wide enough for the title: checked on a PNG rendering of the same script (pngcairo).
PLOT = """set terminal svg size 820,440 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output '{svg}'
set title 'DeepSeek-V2-Lite, Puffin prompts 1-150 -> 151-300: balance against weights moved'
set xlabel 'GB of expert weights moved, 26 layers (NVLink + NIC)'
set ylabel 'expected max / mean GPU load'
set key right top
set grid
set xrange [-1.5:{xmax}]
set yrange [0.97:*]  # room for the labels below the 1.0 points
plot '{dat}' using 2:4 with linespoints lw 2 pt 7 title 'mean over layers', \\
     '{dat}' using 2:5 with linespoints lw 2 pt 5 dt 2 title 'worst layer', \\
     '{dat}' using 2:4:1 with labels left offset 0.8,-0.7 font ',9' notitle
"""


def plot(prefix, rows):
    """PREFIX.dat (label, GB moved, NIC GB, mean, worst; budgets ascending, then no budget, then from
    scratch), PREFIX.gp, and PREFIX.svg drawn by gnuplot."""
    order = [r for r in rows if "<=" in r[0]] + [r for r in rows if "no budget" in r[0]] + [r for r in rows
                                                                                         if "scratch" in r[0]]
    dat, gp, svg = (pathlib.Path(prefix + ext) for ext in (".dat", ".gp", ".svg"))
    points = []  # budgets reaching the same placement share a point: "0, 20 MB"
    for label, _, nv, nic, mean, worst in order:
        short = label.replace("previous, <= ", "").replace(" / layer", "").replace("previous, ", "")
        values = (round((nv + nic) / 1e3, 3), round(nic / 1e3, 3), round(mean, 4), round(worst, 4))
        if points and points[-1][1] == values and short.endswith(" MB"):
            points[-1][0] = points[-1][0].replace(" MB", "") + ", " + short
        else:
            points.append([short, values])
    with open(dat, "w") as f:
        f.write("# label  GB_moved  NIC_GB  imbalance_mean  imbalance_worst\n")
        for short, (gb, nic_gb, mean, worst) in points:
            f.write(f'"{short}" {gb:.3f} {nic_gb:.3f} {mean:.4f} {worst:.4f}\n')
    gp.write_text(PLOT.format(svg=svg, dat=dat, xmax=round(max(p[1][0] for p in points) * 1.15 + 1)))
    subprocess.run(["gnuplot", str(gp)], check=True)
    print(f"wrote {dat}, {gp}, {svg}", file=sys.stderr)


def place(zepp, trace, args, extra=()):
    cmd = [zepp, "place", "--policy", "zepp", "--trace", trace, "--model", "deepseek-v2-lite", "--nodes",
           str(args.nodes), "--gpus-per-node", str(args.gpus_per_node), "--extra-slots", str(args.extra_slots), *extra]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr}")
    return json.loads(done.stdout)


def imbalance(phy2log, load, gpus):
    """Expected max / mean GPU load of one layer."""
    cnt = [0] * len(load)
    for e in phy2log:
        cnt[e] += 1
    S = len(phy2log) // gpus
    per_gpu = [sum(load[e] / cnt[e] for e in phy2log[g * S:(g + 1) * S]) for g in range(gpus)]
    return max(per_gpu) * gpus / sum(per_gpu)


def moved(prev, new, gpus, gpus_per_node, expert_bytes):
    """(NVLink bytes, NIC bytes): a slot whose expert changed fetches it from its node if a GPU there
    held it, else over a NIC; nothing when its own GPU held it."""
    S = len(prev) // gpus
    nvlink = nic = 0.0
    for p, e in enumerate(new):
        if prev[p] == e:
            continue
        g = p // S
        if e in prev[g * S:(g + 1) * S]:
            continue
        node = g // gpus_per_node
        lo, hi = node * gpus_per_node * S, (node + 1) * gpus_per_node * S
        if e in prev[lo:hi]:
            nvlink += expert_bytes
        else:
            nic += expert_bytes
    return nvlink, nic


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("zepp")
    ap.add_argument("trace")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--gpus-per-node", type=int, default=4)
    ap.add_argument("--extra-slots", type=int, default=2)
    ap.add_argument("--budgets-mb", default="0,20,50,100,200")
    ap.add_argument("--plot", metavar="PREFIX", help="also write PREFIX.dat, PREFIX.gp, PREFIX.svg")
    ap.add_argument("--check", metavar="DOC", help="exit 1 unless DOC holds every row of the table as printed")
    args = ap.parse_args()
    # Paths checked before the work (they failed with a traceback after it).
    if args.check and not pathlib.Path(args.check).is_file():
        ap.error(f"--check: {args.check} is not a file to compare with")
    if args.plot and not pathlib.Path(args.plot).resolve().parent.is_dir():
        ap.error(f"--plot: {pathlib.Path(args.plot).parent} is not an existing folder to write {args.plot}.svg in")
    if args.check and not pathlib.Path(args.trace).is_dir():
        print(f"skipped: {args.trace} is absent (the shared traces)", file=sys.stderr)
        sys.exit(77)
    files = sorted(p for p in pathlib.Path(args.trace).glob("*.csv"))
    if not files:
        sys.exit(f"{args.trace}: no CSV trace files")
    files.sort(key=lambda p: int("".join(c for c in p.stem if c.isdigit()) or 0))
    half = len(files) // 2
    gpus = args.nodes * args.gpus_per_node
    expert_bytes = 3 * 2048 * 1408 * 2  # DeepSeek-V2-Lite expert, BF16 (core/presets.cpp)
    with tempfile.TemporaryDirectory() as tmp:
        parts = {}
        for name, chosen in (("history", files[:half]), ("later", files[half:])):
            folder = pathlib.Path(tmp) / name
            folder.mkdir()
            for f in chosen:
                os.symlink(f.resolve(), folder / f.name)
            parts[name] = str(folder)
        print(f"history: {half} prompts, later: {len(files) - half} prompts; {args.nodes} nodes x "
              f"{args.gpus_per_node} GPUs, R = {args.extra_slots}", file=sys.stderr)
        history = place(args.zepp, parts["history"], args)
        prev_path = pathlib.Path(tmp) / "history.json"
        prev_path.write_text(json.dumps(history))
        rows = []
        fresh = place(args.zepp, parts["later"], args)
        runs = [("from scratch", None)] + [("previous, no budget", [])] + [
            (f"previous, <= {b} MB / layer", ["--max-moved-mb", b]) for b in args.budgets_mb.split(",")]
        for label, extra in runs:
            if extra is None:
                out = fresh
                nv = nic = 0.0
                for l, row in enumerate(out["phy2log"]):
                    a, b = moved(history["phy2log"][l], row, gpus, args.gpus_per_node, expert_bytes)
                    nv, nic = nv + a, nic + b
                imb = [x["from_scratch"] for x in place(args.zepp, parts["later"], args,
                                                       ["--previous", str(prev_path)])["imbalance"]]
            else:
                out = place(args.zepp, parts["later"], args, ["--previous", str(prev_path)] + extra)
                nv = sum(m["nvlink_bytes"] for m in out["moves"])
                nic = sum(m["nic_bytes"] for m in out["moves"])
                imb = [x["placed"] for x in out["imbalance"]]
            slots = sum(m["slots"] for m in out["moves"]) if extra is not None else sum(
                sum(1 for p, e in enumerate(row) if history["phy2log"][l][p] != e) for l, row in enumerate(out["phy2log"]))
            rows.append((label, slots, nv / 1e6, nic / 1e6, sum(imb) / len(imb), max(imb)))
    table = [f"| {label} | {slots} | {nv:.0f} | {nic:.0f} | {mean:.4f} | {worst:.4f} |"
             for label, slots, nv, nic, mean, worst in rows]
    print("| placement for the later prompts | slots changed | NVLink MB | NIC MB | imbalance, mean over layers | worst layer |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(table))
    if args.check:
        quoted = pathlib.Path(args.check).read_text(encoding="utf-8").splitlines()
        stale = [row for row in table if row not in quoted]
        if stale:
            sys.exit(f"{args.check} is stale: these rows are not in it as the program prints them now (rerun "
                     f"this script and update its table and the figures its prose quotes):\n" + "\n".join(stale))
    if args.plot:
        plot(args.plot, rows)


if __name__ == "__main__":
    main()
