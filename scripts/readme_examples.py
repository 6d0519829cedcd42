#!/usr/bin/env python3
"""Keeps README.md true to the program: runs every console example and every generated figure.

    python3 scripts/readme_examples.py --check   # compare README.md with the program (ctest: readme)
    python3 scripts/readme_examples.py --write   # rewrite README.md from the program's output

Run from anywhere after `bash scripts/build.sh zepp`; `--zepp PATH` picks another binary.

What it reads in README.md:
- A ```console block whose lines start with `$ build/zepp ...` (a trailing backslash continues
  the command): the command runs in the repository root and its standard output replaces (or is
  compared with) the lines after it, up to the next `$ ` line or the end of the block.
- `<!-- readme-source NAME: build/zepp ... --format json -->` (anywhere): a command whose
  JSON output the figures below may quote (run once, only when a figure uses it). `csv PATH`
  instead of a command reads a CSV file (a list of rows, numbers converted).
- `<!--=EXPR|FORMAT-->TEXT<!--/-->` in prose: TEXT is EXPR formatted with FORMAT (Python's
  format spec, e.g. `.1f`, `,.0f`). EXPR is Python over the sources: `ds.zepp.latency_us` is the
  latency of the strategy named `zepp` in source `ds` (a list of objects with a "name" is indexed
  by name; `ds['zepp+swaps']` where a name is no identifier; `ds[0]` the first), with
  `geomean`, `min`, `max`, `len`, `rows(src, **equal)`, `col(rows, field)`, `lat(src, strategy,
  **config)`, `over_fastest(src, **equal)` and `variants_within(src, base, slack)` at hand (CSV
  helpers; a configuration is workload, topology, nodes, size_mb).

Numbers compare within 0.5% (or one unit of their last printed digit, whichever is larger); all
other text must match exactly. Exit status: 0 when the README matches, 1 when it does not
(each difference listed), 2 on a command that fails, a malformed marker, a README that cannot be
read or one with no example and no figure to check, 77 (skipped) when the real traces
(`../shared/data/traces`) are absent.
"""
import argparse
import csv
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 0.005
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
SOURCE = re.compile(r"<!-- readme-source (\w+): (.*?) -->")
FIGURE = re.compile(r"<!--=(.*?)\|([^|]*?)-->(.*?)<!--/-->", re.S)
FIX_MESSAGE = ("README.md no longer matches the program. Regenerate it with\n"
               "    python3 scripts/readme_examples.py --write\n"
               "(after `bash scripts/build.sh zepp`), review `git diff README.md` (the prose around a changed "
               "number may need rewording) and commit it with your change.")


class Failure(Exception):
    """A command that failed or a malformed marker (exit status 2)."""


def run_zepp(command, zepp):
    """Runs a README command line (`build/zepp ...`) in the repository root; its stdout."""
    words = shlex.split(command)
    if not words or words[0] != "build/zepp":
        raise Failure(f"README command does not start with build/zepp: {command}")
    words[0] = zepp
    start = time.monotonic()
    proc = subprocess.run(words, cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise Failure(f"`{command}` exited with status {proc.returncode}:\n{proc.stderr.strip()}")
    print(f"  {seconds:5.1f} s  {command}", file=sys.stderr)
    return proc.stdout


def parse_number(text):
    return float(text.replace(",", ""))


def decimals(text):
    return len(text.split(".")[1]) if "." in text and "e" not in text.lower() else 0


def numbers_agree(expected, actual):
    """Both texts are numbers: within TOLERANCE, or one unit of the expected's last digit."""
    e, a = parse_number(expected), parse_number(actual)
    unit = 10.0 ** -decimals(expected)
    return abs(e - a) <= max(TOLERANCE * abs(e), unit * 1.0001)


def compare_text(expected, actual):
    """None when they agree (numbers within tolerance, other text equal); else a description."""
    exp_lines, act_lines = expected.splitlines(), actual.splitlines()
    found = []
    for i in range(max(len(exp_lines), len(act_lines))):
        e = exp_lines[i] if i < len(exp_lines) else "<no line>"
        a = act_lines[i] if i < len(act_lines) else "<no line>"
        e_num, a_num = NUMBER.findall(e), NUMBER.findall(a)
        same_shape = NUMBER.sub("#", e) == NUMBER.sub("#", a) and len(e_num) == len(a_num)
        if not same_shape or not all(numbers_agree(x, y) for x, y in zip(e_num, a_num)):
            found.append(f"line {i + 1}:\n    README:  {e}\n    program: {a}")
    return "\n  ".join(found) if found else None


class Node:
    """JSON/CSV values for figure expressions: attribute access, lists indexed by 'name'."""

    def __init__(self, value):
        self.value = value

    def __getattr__(self, key):
        if key.startswith("__"):
            raise AttributeError(key)
        return self[key]

    def __getitem__(self, key):
        v = self.value
        if isinstance(v, dict) and key in v:
            return wrap(v[key])
        items = v.get("strategies") if isinstance(v, dict) else v
        if isinstance(key, int) and isinstance(items, list):
            return wrap(items[key])
        if isinstance(items, list):
            for item in items:
                if isinstance(item, dict) and item.get("name") == key:
                    return wrap(item)
        raise KeyError(f"no '{key}' in {str(v)[:200]}")

    def __iter__(self):
        items = self.value.get("strategies") if isinstance(self.value, dict) else self.value
        return (wrap(x) for x in items)


def wrap(v):
    return Node(v) if isinstance(v, (dict, list)) else v


def read_csv(path):
    with open(os.path.join(ROOT, path), newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    out = []
    for row in csv.DictReader(lines):
        conv = {}
        for k, v in row.items():
            try:
                conv[k] = float(v)
            except (TypeError, ValueError):
                conv[k] = v
        out.append(conv)
    return out


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def plain(r):
    return r.value if isinstance(r, Node) else r


def rows(src, **equal):
    """Rows of a CSV source whose fields equal the given values."""
    return [plain(r) for r in src if all(plain(r)[k] == v for k, v in equal.items())]


def col(items, field):
    return [plain(r)[field] for r in items]


CONFIG = ("workload", "topology", "nodes", "size_mb")  # a configuration of a sweep CSV (zepp experiment)


def config(r):
    return tuple(r[k] for k in CONFIG)


def lat(src, strategy, **equal):
    """latency_us of the one row of `strategy` matching `equal` (a whole configuration)."""
    found = rows(src, strategy=strategy, **equal)
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows of {strategy} match {equal}")
    return found[0]["latency_us"]


def over_fastest(src, **equal):
    """Per configuration: the fastest other strategy's latency / zepp's (variants, named with '/', left
    out), as `zepp experiment report` computes it."""
    out = []
    for z in rows(src, strategy="zepp", **equal):
        others = [r["latency_us"] for r in rows(src) if config(r) == config(z) and "/" not in r["strategy"]
                  and r["strategy"] != "zepp"]
        out.append(min(others) / z["latency_us"])
    return out


def variants_within(src, base, slack, **equal):
    """Configurations where no variant of `base` (`base/...`) is faster than `base` by more than `slack`."""
    n = 0
    for b in rows(src, strategy=base, **equal):
        v = [r["latency_us"] for r in rows(src) if config(r) == config(b) and r["strategy"].startswith(base + "/")]
        n += all(x >= (1 - slack) * b["latency_us"] for x in v)
    return n


class Sources:
    """Named sources, each run or read once, on first use."""

    def __init__(self, defs, zepp):
        self.defs, self.zepp, self.cache = defs, zepp, {}

    def get(self, name):
        if name not in self.cache:
            if name not in self.defs:
                raise Failure(f"figure uses unknown source '{name}' (define it with <!-- readme-source {name}: ... -->)")
            spec = self.defs[name]
            if spec.startswith("csv "):
                self.cache[name] = wrap(read_csv(spec[4:].strip()))
            else:
                text = run_zepp(spec, self.zepp)
                try:
                    self.cache[name] = wrap(json.loads(text))
                except json.JSONDecodeError as e:
                    raise Failure(f"source '{name}' did not print JSON ({e}): {spec}")
        return self.cache[name]


def evaluate(expr, sources):
    names = set(re.findall(r"\b([A-Za-z_]\w*)\b", expr)) & set(sources.defs)
    env = {n: sources.get(n) for n in names}
    env.update(geomean=geomean, rows=rows, col=col, lat=lat, over_fastest=over_fastest,
               variants_within=variants_within, __builtins__={"min": min, "max": max, "abs": abs, "len": len, "sum": sum})
    try:
        value = eval(expr, env)  # as globals: comprehensions in EXPR see the sources
    except Exception as e:  # a figure that cannot be computed is a malformed marker
        raise Failure(f"figure <!--={expr}|...--> cannot be computed: {type(e).__name__}: {e}")
    if isinstance(value, Node):
        raise Failure(f"figure <!--={expr}|...--> is not a number but {str(value.value)[:200]}")
    return value


def console_blocks(lines):
    """(start, end) line indices of each ```console block's body."""
    out, start = [], None
    for i, line in enumerate(lines):
        if start is None and line.strip() == "```console":
            start = i + 1
        elif start is not None and line.strip() == "```":
            out.append((start, i))
            start = None
    return out


def count_examples(text):
    """Console examples (`$ build/zepp` commands in ```console blocks) and figures in `text`."""
    lines = text.split("\n")
    commands = sum(1 for start, end in console_blocks(lines) for line in lines[start:end] if line.startswith("$ build/zepp"))
    return commands + len(FIGURE.findall(text))


def process(text, zepp, write):
    """(new text, list of differences)."""
    lines = text.split("\n")
    diffs = []
    # Console examples, last block first so that line indices stay valid while rewriting.
    for start, end in reversed(console_blocks(lines)):
        body = lines[start:end]
        if not body or not body[0].startswith("$ build/zepp"):
            continue
        new_body, i = [], 0
        while i < len(body):
            if not body[i].startswith("$ "):
                raise Failure(f"README.md line {start + i + 1}: expected a `$ build/zepp` command")
            cmd_lines = [body[i]]
            while cmd_lines[-1].endswith("\\") and i + 1 < len(body):
                i += 1
                cmd_lines.append(body[i])
            i += 1
            out_start = i
            while i < len(body) and not body[i].startswith("$ "):
                i += 1
            command = " ".join(l.rstrip("\\").strip() for l in cmd_lines)[2:]
            output = run_zepp(command, zepp).rstrip("\n")
            shown = "\n".join(body[out_start:i])
            diff = compare_text(shown, output)
            if diff:
                diffs.append(f"console example at README.md line {start}: `{command}`\n  {diff}")
            new_body += cmd_lines + output.split("\n")
        lines[start:end] = new_body
    text = "\n".join(lines)

    defs = {}
    for m in SOURCE.finditer(text):
        if m.group(1) in defs:
            raise Failure(f"source '{m.group(1)}' is defined twice")
        defs[m.group(1)] = m.group(2).strip()
    sources = Sources(defs, zepp)

    def figure(m):
        expr, fmt, shown = m.group(1).strip(), m.group(2).strip(), m.group(3)
        value = evaluate(expr, sources)
        try:
            new = format(value, fmt)
        except (TypeError, ValueError) as e:
            raise Failure(f"figure <!--={expr}|{fmt}-->: bad format: {e}")
        shown_num = NUMBER.fullmatch(shown.strip())
        if not shown_num or not numbers_agree(shown.strip(), new):
            line = text.count("\n", 0, m.start()) + 1
            diffs.append(f"figure at README.md line {line} `{expr}`: README says {shown!r}, the program gives {new}")
        return f"<!--={m.group(1)}|{m.group(2)}-->{new}<!--/-->"

    text = FIGURE.sub(figure, text)
    return text, diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare README.md with the program; exit 1 on a difference")
    mode.add_argument("--write", action="store_true", help="rewrite README.md from the program's output")
    ap.add_argument("--zepp", default=os.path.join(ROOT, "build", "zepp"), help="the zepp binary (default build/zepp)")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = ap.parse_args()
    # The README first: a file that cannot be read, or one with nothing to check (which would
    # "match the program" vacuously), is an error whatever else is missing.
    try:
        with open(args.readme, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        print(f"error: --readme {args.readme}: cannot read it: {reason}", file=sys.stderr)
        return 2
    examples = count_examples(text)
    if examples == 0:
        print(f"error: --readme {args.readme}: no console example (a ```console block starting with `$ build/zepp`) "
              "and no figure (<!--=EXPR|FORMAT-->TEXT<!--/-->): nothing to check", file=sys.stderr)
        return 2
    if not os.path.isdir(os.path.join(ROOT, "..", "shared", "data", "traces")):
        print("skipped: ../shared/data/traces (the real traces the README's examples read) is absent", file=sys.stderr)
        return 77
    if not os.access(args.zepp, os.X_OK):
        print(f"error: {args.zepp} is not an executable; build it first: bash scripts/build.sh zepp", file=sys.stderr)
        return 2
    try:
        new, diffs = process(text, os.path.abspath(args.zepp), args.write)
    except Failure as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.write:
        if new != text:
            tmp = args.readme + ".tmp"
            with open(tmp, "w") as f:
                f.write(new)
            os.replace(tmp, args.readme)
        print(f"README.md: {len(diffs)} figure(s) or example(s) changed" if diffs else "README.md: already up to date",
              file=sys.stderr)
        for d in diffs:
            print(d, file=sys.stderr)
        return 0
    if diffs:
        for d in diffs:
            print(d + "\n", file=sys.stderr)
        print(FIX_MESSAGE, file=sys.stderr)
        return 1
    print("README.md matches the program", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
