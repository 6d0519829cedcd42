"""Issue 15: every argument error is a ValueError naming the argument, every file error names the
file, and no call allocates more than its inputs justify before validating (checked under
resource.setrlimit, in a child interpreter so the limit stays there)."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import zepp


def test_zipf_too_large_is_a_value_error_not_a_crash():
    # Crashed the interpreter (heap overflow): r^-400 underflows for all but 6 of 384 experts.
    with pytest.raises(ValueError, match="zipf: .*fewer than top-k 8"):
        zepp.simulate(zipf=400, executor="estimate")


@pytest.mark.parametrize("call, argument", [
    (lambda: zepp.rebalance_experts(np.ones((1, 8)), 2**31, 1, 1, 1), "num_replicas"),
    (lambda: zepp.rebalance_experts(np.ones((1, 8)), 16, 2**40, 1, 1), "num_groups"),
    (lambda: zepp.simulate(nodes=10**12), "nodes"),
    (lambda: zepp.simulate(gpus_per_node=10**12), "gpus_per_node"),
    (lambda: zepp.simulate(seed=2**64), "seed"),
    (lambda: zepp.simulate(layer=2**40), "layer"),
    (lambda: zepp.simulate(eplb_groups=-1), "eplb_groups"),
    (lambda: zepp.simulate(eplb_groups=385), "eplb_groups"),
    (lambda: zepp.route([[0]], [0], [0, 1], 1, 2**31), "num_gpus"),
])
def test_counts_beyond_int32_are_value_errors_naming_the_argument(call, argument):
    with pytest.raises(ValueError, match=f"^-*{argument}"):
        call()


# Each call asked for far more memory than its inputs justify: 2 TiB (route), past 17 GB
# (rebalance_experts), past 7.9 GB (write_placement). Under a 1.5 GiB address-space allowance
# above what the interpreter already holds, each must raise ValueError naming the argument,
# not MemoryError, not an abort, and not grow.
BOUNDED = textwrap.dedent("""
    import resource, sys, tempfile, os
    import numpy as np
    import zepp
    page = os.sysconf("SC_PAGE_SIZE")
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * page
    resource.setrlimit(resource.RLIMIT_AS, (used + 3 * 2**29, resource.RLIM_INFINITY))
    out = tempfile.mkdtemp()
    calls = {
        "num_gpus": lambda: zepp.route(np.zeros((4, 2), dtype=np.int64), np.zeros(4, dtype=np.int64),
                                       np.arange(2**20), 1, 2**20),
        "num_replicas": lambda: zepp.rebalance_experts(np.ones((2, 16)), 8 * 10**7, 4, 2, 8),
        "layer_ids": lambda: zepp.write_placement(os.path.join(out, "p.json"), [[0, 1, 2, 3], [3, 2, 1, 0]],
                                                  "sglang", layer_ids=[0, 10**9]),
    }
    for argument, call in calls.items():
        try:
            call()
        except ValueError as e:
            assert str(e).startswith(argument + ":"), (argument, str(e))
            print(argument, "ValueError", e)
        else:
            sys.exit(f"{argument}: no error")
""")


def test_huge_requests_fail_with_value_error_within_bounded_memory():
    r = subprocess.run([sys.executable, "-c", BOUNDED], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for argument in ("num_gpus", "num_replicas", "layer_ids"):
        assert f"{argument} ValueError {argument}:" in r.stdout, r.stdout


def test_file_errors_name_the_file(tmp_path):
    huge = tmp_path / "huge.json"
    huge.write_text('{"logical_count": [[1, 1e999]]}')
    with pytest.raises(ValueError, match=f"{huge}: expected valid JSON with finite numbers"):
        zepp.read_sglang_stats(huge)
    maps = tmp_path / "maps.json"
    maps.write_text('{"phy2log": [[0, 1e999]]}')
    with pytest.raises(ValueError, match=f"{maps}: expected valid JSON with finite numbers"):
        zepp.read_placement(maps, "eplb-json")
    dup = tmp_path / "dup.json"
    dup.write_text('{"physical_to_logical_map": [[0, 1]],\n "physical_to_logical_map": [[1, 0]]}')
    with pytest.raises(ValueError, match=f'{dup}:2: expected each key once per object, got "physical_to_logical_map" twice'):
        zepp.read_placement(dup, "sglang")
    missing = tmp_path / "absent.json"
    with pytest.raises(ValueError, match=f"{missing}: cannot open"):
        zepp.read_sglang_stats(missing)
