"""Engines' expert load statistics (SGLang recorder dumps .pt and JSON, vLLM's load window) read
from Python (zepp.read_expert_load) and, through `python3 -m zepp.loads`, by the zepp CLI."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed (scripts/install-deps.sh installs it)")

import zepp  # noqa: E402

from conftest import program  # noqa: E402

COUNTS = torch.tensor([[[3, 0, 1, 2], [0, 5, 0, 1]], [[1, 1, 0, 0], [2, 0, 2, 0]]], dtype=torch.int32)  # [2 steps, 2 L, 4 E]


def test_sglang_stat_dump_and_json(tmp_path):
    torch.save({"rank": 0, "logical_count": COUNTS, "average_utilization_rate_over_window": None}, tmp_path / "d.pt")
    load = zepp.read_expert_load(tmp_path / "d.pt")
    np.testing.assert_array_equal(load, [[4, 1, 1, 2], [2, 5, 2, 1]])
    zepp.write_sglang_stats(tmp_path / "s.json", load)
    np.testing.assert_array_equal(zepp.read_expert_load(tmp_path / "s.json"), load)


def test_sglang_per_pass_dump_folds_physical_counts(tmp_path):
    phy2log = torch.tensor([[0, 1, 2, 3, 0, 1], [3, 2, 1, 0, 3, 2]])  # [L, P = 6]
    records = [{"forward_pass_id": i, "rank": 0, "gatherer_key": "primary",
                "global_physical_count": torch.tensor([[1, 0, 2, 0, 3, 1], [0, 1, 0, 0, 2, 2]]) * (i + 1)}
               for i in range(2)]
    torch.save({"records": records, "last_physical_to_logical_map": phy2log}, tmp_path / "p.pt")
    load = zepp.read_expert_load(tmp_path / "p.pt")
    np.testing.assert_array_equal(load, [[12, 3, 6, 0], [0, 0, 9, 6]])  # slot counts x 3 passes, folded


def test_vllm_load_window_logical_and_physical(tmp_path):
    torch.save(COUNTS.double(), tmp_path / "w.pt")  # load_window_cpu [samples, L, E]
    np.testing.assert_array_equal(zepp.read_expert_load(tmp_path / "w.pt"), COUNTS.sum(0).numpy())
    physical = torch.ones(3, 1, 4)  # [samples, L, P = 4] over a map holding expert 1 twice
    torch.save({"expert_load_window": physical, "physical_to_logical_map": torch.tensor([[0, 1, 2, 1]])},
               tmp_path / "v.pt")
    np.testing.assert_array_equal(zepp.read_expert_load(tmp_path / "v.pt"), [[3, 6, 3]])
    with pytest.raises(ValueError, match="w.pt: load window: expected a 3-D array"):
        torch.save(COUNTS[0], tmp_path / "w.pt")
        zepp.read_expert_load(tmp_path / "w.pt")
    # No samples (or steps) to sum: zero loads would pass for a recording of an idle model.
    torch.save(torch.zeros(0, 2, 4), tmp_path / "empty.pt")
    with pytest.raises(ValueError, match=r"empty.pt: load window: expected \[samples, layers, experts or slots\] of "
                                         r"at least one sample, got shape \(0, 2, 4\)"):
        zepp.read_expert_load(tmp_path / "empty.pt")
    torch.save({"load_window_cpu": torch.zeros(0, 2, 4)}, tmp_path / "empty.pt")
    with pytest.raises(ValueError, match=r"empty.pt: load_window_cpu: expected .* at least one sample"):
        zepp.read_expert_load(tmp_path / "empty.pt")
    torch.save({"logical_count": torch.zeros(0, 2, 4)}, tmp_path / "empty.pt")
    with pytest.raises(ValueError, match=r"empty.pt: logical_count: expected \[steps, layers, experts\] of at least "
                                         r"one step, got shape \(0, 2, 4\)"):
        zepp.read_expert_load(tmp_path / "empty.pt")
    (tmp_path / "bad.pt").write_bytes(b"PK\x03\x04 a zip archive torch cannot read")
    with pytest.raises(ValueError, match="bad.pt: cannot read as a torch.save file"):
        zepp.read_expert_load(tmp_path / "bad.pt")


def test_loads_summing_above_the_bound_are_refused_when_read(tmp_path):
    """Each step within 1e15 but their sum above it: read_sglang_stats returned it, and
    write_sglang_stats and rebalance_experts then refused it; now every reader refuses it."""
    path = tmp_path / "s.json"
    path.write_text('{"logical_count": [[[1, 6e14]], [[2, 6e14]]]}')
    message = r": logical_count: \[0, 1\] sums to 1.2e\+15 over the steps, above the load bound 1e15$"
    with pytest.raises(ValueError, match=f"^{path}{message}"):
        zepp.read_sglang_stats(path)
    with pytest.raises(ValueError, match=f"^{path}{message}"):
        zepp.read_expert_load(path)
    torch.save({"logical_count": torch.tensor([[[1, 6e14]], [[2, 6e14]]])}, tmp_path / "d.pt")
    with pytest.raises(ValueError, match=f"d.pt{message}"):
        zepp.read_expert_load(tmp_path / "d.pt")
    torch.save(torch.tensor([[[1, 6e14]], [[2, 6e14]]]), tmp_path / "w.pt")
    with pytest.raises(ValueError, match=r"w.pt: load window: \[0, 1\] sums to 1.2e\+15 over the samples"):
        zepp.read_expert_load(tmp_path / "w.pt")
    # Two slots of one expert, each within the bound over the samples.
    torch.save({"expert_load_window": torch.tensor([[[6e14, 6e14, 1]]]), "physical_to_logical_map": torch.tensor([[0, 0, 1]])},
               tmp_path / "v.pt")
    with pytest.raises(ValueError, match=r"v.pt: physical_to_logical_map: \[0, 0\] sums to 1.2e\+15 over the "
                                         r"expert's slots, above the load bound 1e15$"):
        zepp.read_expert_load(tmp_path / "v.pt")


def test_map_entry_beyond_the_experts_is_refused(tmp_path):
    """A map entry of 99 among 8 experts read as 100 experts, 92 of them without load; every expert
    of [0, E) has a slot in every layer, so the entry beyond the first one missing is named."""
    phy2log = torch.arange(8).repeat(2, 2)  # [L = 2, P = 16], experts 0..7 twice
    phy2log[1, 5] = 99
    torch.save({"expert_load_window": torch.ones(3, 2, 16), "physical_to_logical_map": phy2log}, tmp_path / "v.pt")
    with pytest.raises(ValueError, match=r"v.pt: physical_to_logical_map\[1, 5\]: expected an expert id in \[0, 8\), "
                                         r"got 99 \(layer 0 has no slot for expert 8; every expert needs one in every layer\)$"):
        zepp.read_expert_load(tmp_path / "v.pt")
    records = [{"global_physical_count": torch.ones(2, 16)}]
    torch.save({"records": records, "last_physical_to_logical_map": phy2log}, tmp_path / "p.pt")
    with pytest.raises(ValueError, match=r"p.pt: last_physical_to_logical_map\[1, 5\]: expected an expert id in \[0, 8\)"):
        zepp.read_expert_load(tmp_path / "p.pt")


def test_cli_reads_a_converted_recorder_dump(tmp_path):
    binary = program()
    counts = torch.randint(0, 50, (3, 2, 8), dtype=torch.int32)  # Mixtral's 8 experts
    torch.save({"rank": 0, "logical_count": counts}, tmp_path / "dump.pt")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-m", "zepp.loads", tmp_path / "dump.pt", "-o", tmp_path / "load.json"],
                   check=True, env=env)
    doc = json.loads((tmp_path / "load.json").read_text())
    assert doc["num_experts"] == 8 and doc["expert_usage_by_layer"]["1"]["3"] == int(counts[:, 1, 3].sum())
    out = tmp_path / "placement.json"
    subprocess.run([binary, "place", "--policy", "zepp", "--trace", tmp_path / "load.json", "--model", "mixtral-8x7b",
                    "--nodes", "2", "--gpus-per-node", "2", "--extra-slots", "1",
                    "--output-format", "sglang", "--output", out], check=True)
    ids, phy2log = zepp.read_placement(out, "sglang")
    assert phy2log.shape == (2, 4 * (2 + 1))
    bad = subprocess.run([sys.executable, "-m", "zepp.loads", tmp_path / "missing.pt"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and "missing.pt: expected an existing statistics file" in bad.stderr


def test_cli_refuses_a_file_that_is_no_statistics_naming_the_file_line_and_field(tmp_path):
    # A text file reached torch.load, which said "IndexError: list index out of range"; a
    # non-list "records" was a TypeError traceback.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n")
    (tmp_path / "empty").write_bytes(b"")
    torch.save({"records": 5}, tmp_path / "records.pt")
    for name, message in [("passwd", ":1: expected SGLang statistics JSON ('{' first) or a torch.save file (.pt: a zip "
                                     "archive or a pickle), got 'root:x:0:0:root:/root:/bin/bash'"),
                          ("empty", ":1: expected SGLang statistics JSON ('{' first) or a torch.save file (.pt: a zip "
                                    "archive or a pickle), got an empty file"),
                          ("records.pt", ": records: expected a list of records, got int")]:
        bad = subprocess.run([sys.executable, "-m", "zepp.loads", tmp_path / name], capture_output=True, text=True, env=env)
        assert (bad.returncode, bad.stderr) == (2, f"zepp.loads: {tmp_path / name}{message}\n")


def test_json_statistics_with_a_byte_order_mark_are_read_whatever_their_name(tmp_path):
    """read_sglang_stats reads a UTF-8 BOM before '{', but read_expert_load took such a file not
    named .json for neither JSON nor torch.save: "expected SGLang statistics JSON ('{' first)"."""
    path = tmp_path / "stats.dump"
    path.write_bytes(b'\xef\xbb\xbf{"logical_count": [[1, 2]]}')
    np.testing.assert_array_equal(zepp.read_expert_load(path), [[1, 2]])
    np.testing.assert_array_equal(zepp.read_expert_load(path), zepp.read_sglang_stats(path))


def test_cli_output_follows_the_output_file_rules(tmp_path):
    # -o was opened with open(): a folder or device was only checked for existence ("expected a
    # regular file to write", naming no flag, after the input was read) and a killed run left half
    # a file. It is checked first, as every zepp output, and written atomically.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    (tmp_path / "folder").mkdir()
    bad = subprocess.run([sys.executable, "-m", "zepp.loads", tmp_path / "missing.pt", "-o", tmp_path / "folder"],
                         capture_output=True, text=True, env=env)
    assert (bad.returncode, bad.stderr) == (2, f"zepp.loads: --output: {tmp_path / 'folder'} is a directory; "
                                               "expected a regular file to write (or a new file name)\n")
    torch.save(COUNTS, tmp_path / "w.pt")
    for _ in range(2):  # written, then replaced
        subprocess.run([sys.executable, "-m", "zepp.loads", tmp_path / "w.pt", "-o", tmp_path / "out" / "load.json"],
                       check=True, env=env)
    assert json.loads((tmp_path / "out" / "load.json").read_text())["expert_usage_by_layer"]["1"]["1"] == 5
    assert sorted(os.listdir(tmp_path / "out")) == ["load.json"]
    torch.save(torch.ones(2, 3, 0), tmp_path / "none.pt")  # a window of no experts
    with pytest.raises(ValueError, match=r"none.pt: expected loads of at least one layer and one expert, got shape \(3, 0\)"):
        zepp.read_expert_load(tmp_path / "none.pt")


def test_a_map_is_refused_where_it_would_be_ignored(tmp_path):
    """--map (physical_to_logical_map) was silently ignored for logical counts (SGLang statistics
    JSON, logical_count and load_window_cpu dumps) and for files holding their own map: it folds
    only a physical window saved without its map, and is refused, saying why, elsewhere."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    phy2log = np.array([[0, 1, 2, 3, 0, 1], [3, 2, 1, 0, 3, 2]])  # [L = 2, P = 6] over 4 experts
    zepp.write_placement(tmp_path / "map.json", phy2log, "sglang")
    zepp.write_sglang_stats(tmp_path / "s.json", COUNTS.sum(0).numpy())
    bad = subprocess.run([sys.executable, "-m", "zepp.loads", tmp_path / "s.json", "--map", tmp_path / "map.json"],
                         capture_output=True, text=True, env=env)
    assert (bad.returncode, bad.stderr) == (2, f"zepp.loads: {tmp_path / 's.json'}: --map: expected no map: the file "
                                               "holds logical counts, SGLang statistics JSON (logical_count), which "
                                               "need no folding (a map applies only to a physical window saved "
                                               "without its map)\n")
    logical = "expected no map: the file holds logical counts, {}, which need no folding"
    own = "expected no map: the file holds its own {}"
    torch.save({"rank": 0, "logical_count": COUNTS}, tmp_path / "d.pt")
    torch.save({"load_window_cpu": COUNTS}, tmp_path / "w.pt")
    saved = torch.from_numpy(phy2log)  # the file's own map, the same as the one given
    torch.save({"records": [{"global_physical_count": torch.ones(2, 6)}], "last_physical_to_logical_map": saved},
               tmp_path / "p.pt")
    torch.save({"expert_load_window": torch.ones(1, 2, 6), "physical_to_logical_map": saved}, tmp_path / "v.pt")
    for name, message in [("s.json", logical.format("SGLang statistics JSON (logical_count)")),
                          ("d.pt", logical.format("SGLang's logical_count")),
                          ("w.pt", logical.format("vLLM's load_window_cpu")),
                          ("p.pt", own.format("last_physical_to_logical_map")),
                          ("v.pt", own.format("physical_to_logical_map"))]:
        with pytest.raises(ValueError) as e:
            zepp.read_expert_load(tmp_path / name, phy2log)
        assert str(e.value).startswith(f"{tmp_path / name}: physical_to_logical_map: {message}"), name
    # A physical window saved without its map takes it, from Python and the command line.
    torch.save(torch.ones(3, 2, 6), tmp_path / "physical.pt")
    np.testing.assert_array_equal(zepp.read_expert_load(tmp_path / "physical.pt", phy2log), [[6, 6, 3, 3], [3, 3, 6, 6]])
    out = subprocess.run([sys.executable, "-m", "zepp.loads", tmp_path / "physical.pt", "--map", tmp_path / "map.json",
                          "--to", "sglang"], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == {"logical_count": [[6.0, 6.0, 3.0, 3.0], [3.0, 3.0, 6.0, 6.0]]}
