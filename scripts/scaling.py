#!/usr/bin/env python3
"""How the cost of `zepp simulate` grows with the cluster (docs/scaling.md, issue 21).

Runs `zepp simulate --strategies S --optimum off --format json` once per strategy and node count,
each run a child process of its own, and measures wall time, CPU time (user + system, the simulation
child included) and peak resident memory (the largest process of the run: wait4's maxrss covers the
reaped simulation child). Prints a Markdown table and the fitted growth exponent b of
cost ~ a * nodes^b (least squares on log-log over the node counts >= --fit-from).

A strategy stops growing once one of its runs takes more than --budget seconds of CPU: the next
node count would take about 2^b times as long; the table says which runs were left out.

With --plot PREFIX also writes PREFIX.dat, PREFIX.gp and runs gnuplot for PREFIX.svg; with
--markdown FILE writes the page (docs/scaling.md): what is measured, the table, the exponents, the plot.

usage: scripts/scaling.py build/zepp [--nodes 2,4,...,128 --gpus-per-node 4 --size-mb 16
       --model kimi-k2 --strategies a2av,zepp --budget 600 --plot docs/figures/scaling
       --markdown docs/scaling.md]
"""

import argparse
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import time

PLOT = """set terminal svg size 760,440 dynamic enhanced font 'Helvetica,12' background rgb 'white'
set output '{svg}'
set title '{title}'
set xlabel 'nodes ({gpn} GPUs each)'
set ylabel 'CPU seconds (user + system)'
set y2label 'peak resident memory (MB)'
set logscale xy
set logscale y2
set xtics ({xtics})
set ytics nomirror
set y2tics
set key left top
set grid
plot {curves}
"""


MEANING = """Each row is one `zepp simulate` process: workload sampling, placement, routing, the
communication plan, then the `sim` executor (SimGrid) in a forked child. Wall time depends on
what else the machine runs (the load average is stated); CPU time (user + system, the child
included) is the figure to compare. Peak memory is the largest resident set of one process of
the run (the parent or the simulation child, not their sum).

Where the time goes at scale: the simulator starts every task as an asynchronous SimGrid
activity (`src/exec/sim_engine.cpp`, no actor per task), so what grows is SimGrid's max-min
solver. With fair link sharing every transfer in flight is one variable of one linear system,
and an all-to-all pattern connects them all (every flow crosses its sender's NIC egress and its
receiver's ingress), so each flow's completion re-solves the whole system: about F variables,
F completions: O(F^2) per layer. F grows as the square of the GPU count (all-to-allv: a flow per
GPU pair), so CPU time grows about as nodes^4. Zepp's merged puts go from each NIC to one peer
GPU per other node (Algorithm 1), G times fewer inter-node flows than all-to-allv's: the same
growth from a lower base. Meeting issue 21's targets (Kimi-K2 32 x 4 at 64 MiB in 10 s, 128 x 4
in 120 s) takes fewer flows in flight or a solver that touches only the flows a completion
changes: SimGrid 3.32's selective update re-solves the whole connected component of the finished
flow's links, which all-to-all traffic makes the whole system.

Zepp's own plan has grown since 1 Dec (when its 32-node run took 6.8 s CPU): its combine leaves
in completion waves (up to 16 per node pair, commit 12b189e) and its dispatch in chunks (commit
12638cd), each its own transfer. Kimi-K2 8 x 4 at 4 MiB (`--timeline`, 6 Dec, commit 7434852):
2,987 combine RDMA puts, 9,213 NVLink combine transfers and 2,987 pre-reductions against 224,
807 and 224 for `zepp/no-waves`, with up to 817 transfers in flight against 344. At 16 x 4 the
simulation takes 6.8 s CPU for `zepp`, 1.0 s for `zepp/no-waves`, 3.1 s for
`zepp/no-dispatch-chunks` and 0.4 s for both off. Each wave is a separate flow because that is
how the plan sends it; merging a (NIC, peer) pair's waves into one flow, or queueing them as one
RDMA queue pair would, changes what is simulated for every strategy with more than one transfer
per pair, so it waits for a decision on the link model, not for the simulator. The queue-pair
model is there to try: `--link-sharing pair` (commit 98e2259) keeps one transfer in flight per
(sender, receiver) GPU pair. Kimi-K2 4 MiB, zepp: 16 x 4 7.8 -> 2.6 s CPU (latency 1766.5 ->
1769.9 us), 32 x 4 192.6 -> 20.5 s CPU (2328.7 -> 2309.8 us); a2av unchanged. At 16 x 4, 16 MiB
it moved fast -0.2%, comet -5.8%, epic +0.15%, zepp +0.09%; docs/reproduction.md's link-sharing
sensitivity gives its effect on every strategy over all 36 Figure 9 configurations. 128 dgx-h100 nodes (1,024 GPUs) at
1 MiB, zepp alone, did not finish in 15 min (fair) nor in 25 min (pair) on this machine, sharing its 2 cores with builds.
Under `--link-sharing serial` (one transfer at a time per NIC and NVLink pair; 6 Dec 2026 05:31 UTC, commit dbc68f5,
load 2.5 with another job) it ran in 77 s wall, 55.3 s CPU and 1.21 GB: zepp 6,940.4 us, of which 2,380.6 us metadata
exchange and 2,865.8 us planning charged (the 1,024 GPUs' counts are 384 x 1,024 cells on every rank). The issue's
32-node 64 MiB command under serial: 10.3 s wall, 10.4 s CPU, 0.92 GB, but serial is not the default model and moves
the latencies far (zepp 50,699 us against 30,256.6 under fair; a2av 444,759 us), so it does not meet the target.
The issue's 128 x 4 at 16 MiB, under serial with the same caveat (`--strategies eplb,zepp`: a2av cannot place 384
experts on 512 GPUs; 06:01 UTC, commit a790308, load 1): 61 s wall, 59.6 s CPU, 2.38 GB; zepp 25,333.2 us (eplb
124,546.3), of which 2,380.6 us metadata exchange and 3,933.1 us planning charged.

The issue's target command again (6 Dec 2026 02:58-03:07 UTC, commit 3eaa01a, load 3.4-5.5 on
2 cores shared with builds): `zepp simulate --model kimi-k2 --nodes 32 --gpus-per-node 4
--size-mb 64` took 327 s wall, 233.8 s CPU and 0.92 GB peak (target: 10 s, 2 GB); with
`--link-sharing pair` 253 s wall, 203.5 s CPU, 0.92 GB, the latencies within 0.4% (zepp 30,256.6
-> 30,154.8 us, a2av and eplb equal): pair sharing removes zepp's waves from the solver, not
a2av's flow per GPU pair.

Profiled (issue 21 item 3; perf, 1 Dec 2026 19:47 UTC, load 5-8 on 2 cores): `zepp simulate
--model kimi-k2 --nodes 32 --gpus-per-node 4 --size-mb 64` took 124.7 s CPU (116.4 user + 8.3
system; 181 s wall; 1.09 GB peak). Samples: the a2av, eplb and zepp simulations 32%, 39% and 18%,
the parent (workload, placement, routing, plans, the LEMON optimum) 11%. In the simulations
SimGrid's LMM takes most of it: `MaxMin::do_solve`, `System::update_modified_cnst_set_rec` (the
selective update walking the one connected component), `System::solve` and the lazy action heap
(about 63% of the a2av simulation's samples), plus a linear `std::list` removal reached from
`CommImpl::finish` and `ExecImpl::post` (14% of a2av's, 15% of eplb's, 35% of zepp's). Tried and
not kept: `network/optim:Full` (no selective update, one full solve per event) is 3.5 x faster for
a2av alone at 24 x 4 (8.8 -> 2.5 s CPU) but slower for the whole command (158 s CPU against 125 s:
Zepp's sparse flows gain from the selective update), and it orders completions that fall on the
same instant differently, which moves latencies by up to 2e-4 (zepp 31,336.5 -> 31,342.7 us).
Merging the concurrent flows of one GPU pair is not faithful under max-min sharing (one flow gets
one share where k flows get k), and S4U sets no sharing weight per comm. What remains: a max-min
solver of our own for this topology (an inter-node flow crosses exactly its sender's egress and
its receiver's ingress) that updates only what a completion changes, or fewer flows in flight.

The linear removal, identified (6 Dec 2026 08:30 UTC, perf with DWARF call graphs on `zepp
simulate --model kimi-k2 --nodes 16 --gpus-per-node 4 --size-mb 16 --strategies zepp`, 23% of
the samples: 14% under `CommImpl::finish`, 9% under `ExecImpl::post`): SimGrid 3.32 records
every activity in the `activities_` list of the actor that created it, and ours are all created
by maestro (the scheduler has no actor per task), so that list holds every transfer and GEMM in
flight, and each completion runs `std::list::remove` over all of it, one more O(F) term per
event. Creating the activities with no current context (SimGrid's internal
`Context::set_current(nullptr)`), which skips the registration, was tried: the activities then
never report their completion (`task 0 never ran`), so the registration stays."""


def run_once(zepp, args):
    """(wall s, CPU s, peak RSS MB, exit code, latency_us or None, stderr) of one `zepp simulate` run."""
    start = time.monotonic()
    proc = subprocess.Popen([zepp, "simulate", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    latency = None
    err = err.decode(errors="replace")
    if code == 0:
        latency = json.loads(out)["strategies"][0]["latency_us"]
    else:
        print(err, file=sys.stderr)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, code, latency, err


def exponent(points):
    """Least-squares slope of log(cost) against log(nodes); None with fewer than two points."""
    if len(points) < 2:
        return None
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(c, 1e-9)) for _, c in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zepp")
    ap.add_argument("--nodes", default="2,4,8,16,32,64,128")
    ap.add_argument("--gpus-per-node", type=int, default=4)
    ap.add_argument("--size-mb", type=float, default=16)
    ap.add_argument("--model", default="kimi-k2")
    ap.add_argument("--topology", default="a100")
    ap.add_argument("--strategies", default="a2av,zepp")
    ap.add_argument("--budget", type=float, default=600, help="CPU seconds after which a strategy stops growing")
    ap.add_argument("--fit-from", type=int, default=8, help="smallest node count in the fit")
    ap.add_argument("--plot", help="PREFIX for PREFIX.dat, PREFIX.gp, PREFIX.svg")
    ap.add_argument("--markdown", help="FILE: the page with the table, the exponents and the plot")
    a = ap.parse_args()
    try:
        nodes = [int(n) for n in a.nodes.split(",")]
    except ValueError:
        ap.error(f"--nodes: expected a comma-separated list of node counts, got '{a.nodes}'")
    if not nodes or min(nodes) < 1:
        ap.error("--nodes: node counts must be >= 1")
    # Every flag before the first run (each may take minutes): a node count or strategy given twice
    # ran twice and printed its row twice; an empty strategy list printed an empty table; a budget
    # that is not positive stopped every strategy after its first run.
    for n in nodes:
        if nodes.count(n) > 1:
            ap.error(f"--nodes: names {n} twice in '{a.nodes}'")
    strategies = [s.strip() for s in a.strategies.split(",")]
    if not a.strategies.strip():
        ap.error("--strategies: names no strategy; give a comma-separated list such as a2av,zepp")
    for i, s in enumerate(strategies):
        if not s:
            ap.error(f"--strategies: entry {i + 1} of '{a.strategies}' is empty")
        if strategies.count(s) > 1:
            ap.error(f"--strategies: names '{s}' twice in '{a.strategies}'")
    if not (math.isfinite(a.budget) and a.budget > 0):
        ap.error(f"--budget: expected a positive number of CPU seconds, got {a.budget:g}")
    if a.gpus_per_node < 1:
        ap.error(f"--gpus-per-node: expected >= 1, got {a.gpus_per_node}")
    if not (math.isfinite(a.size_mb) and a.size_mb > 0):
        ap.error(f"--size-mb: expected a positive number of MiB, got {a.size_mb:g}")
    if a.markdown and os.path.exists(a.markdown) and not os.path.isfile(a.markdown):
        ap.error(f"--markdown: {a.markdown} exists and is not a regular file")
    if not os.access(a.zepp, os.X_OK):
        ap.error(f"{a.zepp}: not an executable (build it first: bash scripts/build.sh zepp)")

    load_before = os.getloadavg()
    # (strategy, nodes) -> (wall, cpu, rss, latency), None (left out: over budget) or the reason the
    # strategy cannot run there (its placement does not fit that cluster: a2av's contiguous
    # placement needs the experts to be a multiple of the GPUs)
    rows = {}
    for s in strategies:
        over = None
        for n in nodes:
            if over is not None:
                rows[(s, n)] = None
                continue
            args = ["--model", a.model, "--topology", a.topology, "--nodes", str(n), "--gpus-per-node",
                    str(a.gpus_per_node), "--size-mb", str(a.size_mb), "--strategies", s, "--optimum", "off",
                    "--format", "json"]
            print(f"{s} {n} nodes ...", file=sys.stderr, flush=True)
            wall, cpu, rss, code, latency, err = run_once(a.zepp, args)
            if code == 2 and "cannot place" in err:
                reason = err.strip().split("strategies: ", 1)[-1]  # "<s> cannot place ... (change ...): why"
                rows[(s, n)] = re.sub(r" \(change [^)]*\)", "", reason)
                continue
            if code != 0:
                sys.exit(f"zepp simulate {' '.join(args)} failed with exit code {code}")
            rows[(s, n)] = (wall, cpu, rss, latency)
            print(f"  {wall:.1f} s wall, {cpu:.1f} s CPU, {rss:.0f} MB", file=sys.stderr, flush=True)
            if cpu > a.budget:
                over = n
    load_after = os.getloadavg()

    fits = {}
    for s in strategies:
        done = [(n, rows[(s, n)]) for n in nodes if isinstance(rows[(s, n)], tuple) and n >= a.fit_from]
        fits[s] = (exponent([(n, r[1]) for n, r in done]), exponent([(n, r[2]) for n, r in done]))

    cmd = (f"scripts/scaling.py build/zepp --nodes {a.nodes} --gpus-per-node {a.gpus_per_node} --size-mb {a.size_mb:g} "
           f"--model {a.model} --topology {a.topology} --strategies {a.strategies} --budget {a.budget:g}")
    out = [f"`{cmd}`: {a.model}, {a.topology} nodes of {a.gpus_per_node} GPUs, {a.size_mb:g} MiB per GPU, one "
           f"strategy per run, `--optimum off`; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after "
           f"({os.cpu_count()} cores), {time.strftime('%d %b %Y %H:%M UTC', time.gmtime())}.", "",
           "| strategy | nodes | GPUs | wall s | CPU s | peak MB | simulated latency us |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for s in strategies:
        for n in nodes:
            r = rows[(s, n)]
            if r is None:
                out.append(f"| {s} | {n} | {n * a.gpus_per_node} | not run: a smaller run took > {a.budget:g} s CPU | | | |")
            elif isinstance(r, str):
                out.append(f"| {s} | {n} | {n * a.gpus_per_node} | not run: {r} | | | |")
            else:
                out.append(f"| {s} | {n} | {n * a.gpus_per_node} | {r[0]:.1f} | {r[1]:.1f} | {r[2]:.0f} | {r[3]:.1f} |")
    out.append("")
    for s in strategies:
        cpu_b, rss_b = fits[s]
        fmt = lambda b: "n/a (fewer than two runs)" if b is None else f"{b:.2f}"
        out.append(f"- {s}: CPU time grows as nodes^{fmt(cpu_b)}, peak memory as nodes^{fmt(rss_b)} "
                   f"(least squares on log-log over {a.fit_from}+ nodes)")
    print("\n".join(out))
    if a.markdown:
        page = [f"# How the cost of `zepp simulate` grows with the cluster", "",
                f"Generated by `{cmd} --plot docs/figures/scaling --markdown docs/scaling.md`; do not edit by hand.", "",
                MEANING, "", *out, ""]
        if a.plot:
            page += [f"![CPU time and peak memory against nodes]({os.path.relpath(a.plot + '.svg', os.path.dirname(a.markdown) or '.')})", ""]
        pathlib.Path(a.markdown).write_text("\n".join(page))
        print(f"wrote {a.markdown}", file=sys.stderr)

    if a.plot:
        dat, gp, svg = (pathlib.Path(a.plot + ext) for ext in (".dat", ".gp", ".svg"))
        with open(dat, "w") as f:
            for s in strategies:
                f.write(f"# {s}: nodes wall_s cpu_s peak_mb\n")
                for n in nodes:
                    if isinstance(rows[(s, n)], tuple):
                        w, c, m, _ = rows[(s, n)]
                        f.write(f"{n} {w:.3f} {c:.3f} {m:.1f}\n")
                f.write("\n\n")
        curves = []
        for i, s in enumerate(strategies):
            b = fits[s][0]
            label = s + ("" if b is None else f" CPU (~nodes^{{{b:.2f}}})")
            curves.append(f"'{dat}' index {i} using 1:3 with linespoints lw 2 pt 7 title '{label}'")
            curves.append(f"'{dat}' index {i} using 1:4 axes x1y2 with linespoints lw 1 dt 2 pt 5 title '{s} peak MB'")
        title = f"zepp simulate cost, {a.model}, {a.size_mb:g} MiB per GPU"
        gp.write_text(PLOT.format(svg=svg, title=title, gpn=a.gpus_per_node, xtics=", ".join(str(n) for n in nodes),
                                  curves=", \\\n     ".join(curves)))
        subprocess.run(["gnuplot", str(gp)], check=True)
        print(f"wrote {dat}, {gp}, {svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
