"""Issue 23: every Python reproduction of the hostile-user sweep raises ValueError or TypeError naming
the argument, having done little work: each call runs in a fresh interpreter that reports the CPU
seconds the call took (not wall time: a loaded machine must not fail the test) and its peak resident
memory growth (above what the setup of its arguments took)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

DEEP = 100_000
QUICK_CPU_S = 1.0
MAX_RSS_MB = 200

_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    import numpy as np
    import zepp
    setup, call = sys.argv[1], sys.argv[2]
    env = {"np": np, "zepp": zepp}
    exec(setup, env)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    try:
        eval(call, env)
        outcome = {"type": None, "message": ""}
    except Exception as e:  # reported to the parent, which checks the type
        outcome = {"type": type(e).__name__, "message": str(e)}
    outcome["cpu_s"] = time.process_time() - t0
    outcome["rss_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024  # the call's growth
    print(json.dumps(outcome))
""")


def _run(call, setup=""):
    out = subprocess.run([sys.executable, "-c", _CHILD, setup, call], capture_output=True, text=True, env=os.environ,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _refused(call, names, setup="", types=("ValueError", "TypeError")):
    r = _run(call, setup)
    assert r["type"] in types, f"{call}: {r}"
    for name in names:
        assert name in r["message"], f"{call}: no {name!r} in {r['message']!r}"
    assert r["cpu_s"] < QUICK_CPU_S, f"{call}: {r['cpu_s']:.2f} CPU s"
    assert r["rss_mb"] < MAX_RSS_MB, f"{call}: {r['rss_mb']:.0f} MB"
    return r["message"]


@pytest.fixture
def deep_files(tmp_path):
    paths = {}
    for name, key, inner in (("stats", "logical_count", "1"), ("placement", "physical_to_logical_map", "0"),
                             ("eplb", "phy2log", "0")):
        p = tmp_path / f"deep_{name}.json"
        p.write_text('{"%s": %s%s%s}' % (key, "[" * DEEP, inner, "]" * DEEP))
        paths[name] = str(p)
    p = tmp_path / "deep.yaml"
    p.write_text("num_slots: 8\ninitial_global_assignments: " + "{0: " * DEEP + "[0]" + "}" * DEEP + "\n")
    paths["trtllm"] = str(p)
    return paths


def test_deep_nesting_is_refused_by_every_python_reader(deep_files):
    message = _refused(f"zepp.read_sglang_stats({deep_files['stats']!r})", [deep_files["stats"], "nested at most 64"])
    assert ": byte 81: " in message  # level 65: the object, then the 64th [ after {"logical_count": 
    _refused(f"zepp.read_placement({deep_files['placement']!r}, 'sglang')", [deep_files["placement"], "nested at most 64"])
    _refused(f"zepp.read_placement({deep_files['eplb']!r}, 'eplb-json')", [deep_files["eplb"], "nested at most 64"])
    _refused(f"zepp.read_placement({deep_files['trtllm']!r}, 'trtllm')", [deep_files["trtllm"], "nested at most 64"])


def test_sizes_beyond_the_budget_are_refused_before_any_work():
    _refused("zepp.simulate(num_experts=10**7)", ["num_experts", "this run needs about", " s ("])
    # A layer of 10^8 slots worked 68 s and took 6.3 GB.
    _refused("zepp.route(np.zeros((4, 2), np.int64), np.zeros(4, np.int64), phy, 1, 8)", ["phy2log", "this run needs about"],
             setup="phy = np.tile(np.arange(64, dtype=np.int32), 10**8 // 64)")
    # A (1, 10^9) broadcast view: 50 s of copying before the memory check.
    _refused("zepp.rebalance_experts(w, 1024, 1, 1, 8)", ["weight", "this run needs about"],
             setup="w = np.broadcast_to(np.float64(1), (1, 10**9))")
    _refused("zepp.rebalance_experts(w, 100000, 1, 1, 8)", ["weight"], setup="w = np.broadcast_to(np.float64(1), (100000, 100000))")
    # Zero strides: (10^9, 8) ids from one row.
    _refused("zepp.route(ids, np.zeros(10**9, np.int64), np.arange(8), 1, 2)", ["topk_ids"],
             setup="ids = np.broadcast_to(np.arange(8), (10**9, 8))")
    _refused("zepp.Router(np.arange(8), 1, 2).route(ids, np.zeros(10**9, np.int64))", ["topk_ids"],
             setup="ids = np.broadcast_to(np.arange(8), (10**9, 8))")
    _refused("zepp.route(np.zeros((4, 2), np.int64), np.zeros(4, np.int64), np.arange(2**20) % 8, 1, 2**20)", ["num_gpus"],
             setup="import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))")


def test_nonsense_values_are_refused_naming_the_argument():
    w = "w = np.ones((1, 16))"
    for value in ("-1", "float('nan')"):
        _refused(f"zepp.rebalance_experts(w, 16, 1, 1, 4, policy='zepp', return_moves=True, expert_bytes={value})",
                 ["expert_bytes"], setup=w)
    # expert_bytes weighs moves; a plain placement has none.
    _refused("zepp.rebalance_experts(w, 16, 1, 1, 4, expert_bytes=1e6)", ["expert_bytes", "only act with policy 'zepp'"],
             setup=w)
    _refused("zepp.simulate(split='no')", ["split: expected True or False"])
    message = _refused("zepp.simulate(extra_slots=10**9)", ["extra_slots: expected an integer <= 65536"])
    assert "-" not in message.split("got")[-1]
    _refused("zepp.simulate(kernel_launch_us=1e308)", ["kernel_launch_us: expected a number in [0, 1e+06] us, got 1e+308"])
    _refused("zepp.simulate(balance_slack=float('nan'))", ["balance_slack"])


def test_wrong_types_name_the_argument():
    _refused("zepp.simulate(strategies=None)", ["strategies: expected names"], types=("TypeError",))
    for value in ("None", "3"):
        _refused(f"zepp.simulate(topology={value})", ["topology: expected a preset name or path"], types=("TypeError",))
    _refused("zepp.simulate(trace=123)", ["trace: expected a path or None"], types=("TypeError",))
