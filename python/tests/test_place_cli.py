"""`zepp place --output-format`: the program writes serving-engine files the module reads back."""

import json
import subprocess

import numpy as np
import pytest

import zepp

from conftest import program


def test_eplb_readme_example_as_sglang_file(tmp_path, shared_dir):
    load = shared_dir / "data/eplb/readme-example.json"
    out = tmp_path / "placement.json"
    subprocess.run([program(), "place", "--policy", "eplb", "--load", load, "--output-format", "sglang",
                    "--output", out], check=True)
    ids, phy2log = zepp.read_placement(out, "sglang")
    np.testing.assert_array_equal(phy2log, json.loads(load.read_text())["expected_phy2log"])
    np.testing.assert_array_equal(ids, [0, 1])


def test_trace_loads_as_trtllm_file(tmp_path, shared_dir):
    out = tmp_path / "lb.yaml"
    subprocess.run([program(), "place", "--policy", "zepp", "--trace", shared_dir / "data/traces/mixtral-8x7b-gsm8k",
                    "--model", "mixtral-8x7b", "--nodes", "2", "--gpus-per-node", "2", "--extra-slots", "1",
                    "--output-format", "trtllm", "--output", out], check=True)
    ids, phy2log = zepp.read_placement(out, "trtllm")
    np.testing.assert_array_equal(ids, np.arange(32))  # Mixtral's 32 MoE layers, as in the trace
    assert phy2log.shape == (32, 4 * (2 + 1))


def test_unknown_format_exits_2(tmp_path, shared_dir):
    result = subprocess.run([program(), "place", "--load", shared_dir / "data/eplb/readme-example.json",
                             "--output-format", "vllm", "--output", tmp_path / "x"], capture_output=True, text=True)
    assert result.returncode == 2 and "--output-format" in result.stderr


def test_version_agrees_with_the_program():
    result = subprocess.run([program(), "--version"], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip("this zepp program has no --version yet")
    assert zepp.__version__ and zepp.__version__ in result.stdout.split(), (zepp.__version__, result.stdout)


def test_program_and_module_refuse_the_same_placement_size(tmp_path):
    """num_replicas 4e8: Python refused it while `zepp place` took memory without end; both have the
    budget of src/pipeline/cost.hpp call_seconds_budget (60 s, ZEPP_MAX_SECONDS). 1e8 replicas: over
    60 s, so both refuse. Their memory differs: log2phy padded to 1e8 - 3 entries per expert in both,
    and the program also holds the JSON it prints (16.8 GB, more than some machines have, which it
    may then name instead of the time)."""
    load = tmp_path / "big.json"
    weight = [[1.0, 2.0, 3.0, 4.0]]
    load.write_text(json.dumps({"weight": weight, "num_replicas": 100_000_000, "num_groups": 1, "num_nodes": 1,
                                "num_gpus": 4}))
    result = subprocess.run([program(), "place", "--policy", "eplb", "--load", load], capture_output=True, text=True)
    assert result.returncode == 2
    with pytest.raises(ValueError) as e:
        zepp.rebalance_experts(np.array(weight), 100_000_000, 1, 1, 4)
    assert "this run needs about 16.8 GB and 70.8 s (4 GPUs x 4 experts" in result.stderr
    assert "this run needs about 4.84 GB and 70.8 s (4 GPUs x 4 experts" in str(e.value)
    assert "more than the 60 s allowed" in str(e.value)
