"""Serving-engine files through the Python module: exact round trips and errors naming file and field."""

import json

import numpy as np
import pytest

import zepp


def test_sglang_stats_to_placement_to_sglang_json_is_exact(tmp_path):
    stats = tmp_path / "stats.json"
    stats.write_text('{"rank": 0, "logical_count": [[[5, 1, 0, 2, 9, 3, 1, 1], [0, 4, 4, 4, 1, 1, 2, 0]],'
                     ' [[1, 0, 0, 0, 3, 1, 0, 0], [2, 2, 0, 0, 1, 1, 0, 0]]]}')
    load = zepp.read_sglang_stats(stats)
    np.testing.assert_array_equal(load, [[6, 1, 0, 2, 12, 4, 1, 1], [2, 6, 4, 4, 2, 2, 2, 0]])
    phy2log = zepp.rebalance_experts(load, 12, 1, 2, 4, policy="zepp")[0]
    first = tmp_path / "placement.json"
    zepp.write_placement(first, phy2log, "sglang")
    ids, back = zepp.read_placement(first, "sglang")
    np.testing.assert_array_equal(back, phy2log)
    np.testing.assert_array_equal(ids, [0, 1])
    second = tmp_path / "again.json"
    zepp.write_placement(second, back, "sglang", layer_ids=ids)
    assert second.read_text() == first.read_text()
    assert first.read_text().startswith('{"physical_to_logical_map": [\n  [')


def test_sglang_stats_round_trip(tmp_path):
    load = np.array([[1.0, 0.5, 3e-9], [1e12, 7.0, 1 / 3]])
    zepp.write_sglang_stats(tmp_path / "s.json", load)
    np.testing.assert_array_equal(zepp.read_sglang_stats(tmp_path / "s.json"), load)


@pytest.mark.parametrize("format", zepp.PLACEMENT_FORMATS)
def test_every_format_round_trips(tmp_path, format):
    rng = np.random.default_rng(11)
    weight = rng.integers(0, 1000, size=(5, 16)).astype(float)
    phy2log = zepp.rebalance_experts(weight, 24, 4, 2, 8, policy="eplb")[0]
    path = tmp_path / f"map.{format}"
    ids = np.array([3, 4, 5, 6, 7]) if format == "trtllm" else np.arange(5)
    zepp.write_placement(path, phy2log, format, layer_ids=ids)
    got_ids, got = zepp.read_placement(path, format)
    np.testing.assert_array_equal(got, phy2log)
    np.testing.assert_array_equal(got_ids, ids)
    text = path.read_text()
    zepp.write_placement(path, got, format, layer_ids=got_ids)
    assert path.read_text() == text


def test_trtllm_yaml_text(tmp_path):
    path = tmp_path / "lb.yaml"
    zepp.write_placement(path, [[0, 1, 2, 0], [2, 1, 0, 1]], "trtllm", layer_ids=[7, 3])
    assert path.read_text() == ("num_slots: 4\ninitial_global_assignments:\n  3: [2, 1, 0, 1]\n"
                                "  7: [0, 1, 2, 0]\nlayer_updates_per_iter: 0\n")
    ids, phy2log = zepp.read_placement(path, "trtllm")
    np.testing.assert_array_equal(ids, [3, 7])
    np.testing.assert_array_equal(phy2log, [[2, 1, 0, 1], [0, 1, 2, 0]])


def test_layer_ids_the_files_cannot_hold_are_refused(tmp_path):
    """trtllm wrote layer 2e9, which its reader refuses (layer ids below 2^30, one bound for both);
    eplb-json dropped layer_ids [1, 3] silently (it read back rows 0, 1): it now stores them as
    "layers", which its reader gives back."""
    path = tmp_path / "lb.yaml"
    with pytest.raises(ValueError, match=r"^layer_ids: expected layer ids in \[0, 2\^30\), got 2000000000$"):
        zepp.write_placement(path, [[0, 1]], "trtllm", layer_ids=[2_000_000_000])
    assert not path.exists()
    zepp.write_placement(path, [[0, 1]], "trtllm", layer_ids=[2**30 - 1])  # the largest the reader takes
    np.testing.assert_array_equal(zepp.read_placement(path, "trtllm")[0], [2**30 - 1])
    with pytest.raises(ValueError, match=r"^layer_ids: expected distinct layer ids, got 2 twice$"):
        zepp.write_placement(path, [[0, 1], [1, 0]], "trtllm", layer_ids=[2, 2])
    zepp.write_placement(tmp_path / "map.json", [[0, 1], [1, 0]], "eplb-json", layer_ids=[3, 1])
    assert json.loads((tmp_path / "map.json").read_text())["layers"] == [3, 1]
    ids, phy2log = zepp.read_placement(tmp_path / "map.json", "eplb-json")
    np.testing.assert_array_equal(ids, [3, 1])
    np.testing.assert_array_equal(phy2log, [[0, 1], [1, 0]])
    zepp.write_placement(tmp_path / "map.json", [[0, 1], [1, 0]], "eplb-json", layer_ids=[0, 1])
    assert "layers" not in json.loads((tmp_path / "map.json").read_text())  # rows by position: EPLB's own form


def test_wrong_types_raise_type_error_naming_the_argument(tmp_path):
    """read_sglang_stats(5), write_*(None, ...), read_trace(None) and model_preset(None) raised
    ValueError; a path or name of the wrong type is a TypeError, an empty path a ValueError naming
    it (it read ": cannot open for reading")."""
    path = r"^path: expected a file path \(str or os.PathLike\), got "
    for call, message in [(lambda: zepp.read_sglang_stats(5), path + "5$"),
                          (lambda: zepp.write_sglang_stats(None, [[1.0]]), path + "None$"),
                          (lambda: zepp.read_placement(None, "sglang"), path + "None$"),
                          (lambda: zepp.write_placement(None, [[0, 1]], "sglang"), path + "None$"),
                          (lambda: zepp.read_trace(None), path + "None$"),
                          (lambda: zepp.read_expert_load(3.5), path + "3.5$"),
                          (lambda: zepp.read_placement(tmp_path / "x.json", None),
                           r"^format: expected one of sglang, trtllm, eplb-json, got None$"),
                          (lambda: zepp.model_preset(None), r"^name: expected a model preset name, got None$")]:
        with pytest.raises(TypeError, match=message):
            call()
    for call in (lambda: zepp.read_sglang_stats(""), lambda: zepp.write_placement("", [[0, 1]], "sglang")):
        with pytest.raises(ValueError, match=r"^path: expected a file path, got an empty one$"):
            call()


def test_uint64_ids_beyond_int64_are_shown_as_given(tmp_path):
    with pytest.raises(ValueError, match=r"^phy2log\[0, 0\]: expected an integer below 2\^63, got 9223372036854775808$"):
        zepp.write_placement(tmp_path / "p.json", np.full((1, 4), 2**63, np.uint64), "sglang")


def test_malformed_files_name_file_and_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_slots: 3\ninitial_global_assignments:\n  1: [0, 1]\n")
    with pytest.raises(ValueError, match=rf"^{bad}:3: initial_global_assignments\[1\]: expected a list of num_slots = 3"):
        zepp.read_placement(bad, "trtllm")
    bad = tmp_path / "bad.json"
    bad.write_text('{"logical_count": [[1, 2], [3, "x"]]}')
    with pytest.raises(ValueError, match=rf"^{bad}: logical_count\[1\]\[1\]: expected a number"):
        zepp.read_sglang_stats(bad)
    with pytest.raises(ValueError, match="cannot open for reading"):
        zepp.read_placement(tmp_path / "absent.json", "sglang")


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda p: zepp.write_placement(p, [0, 1], "sglang"), "phy2log"),
        (lambda p: zepp.write_placement(p, [[0, 1], [0, 0]], "sglang"), "phy2log"),
        (lambda p: zepp.write_placement(p, [[0, 1]], "vllm"), "format"),
        (lambda p: zepp.write_placement(p, [[0, 1], [1, 0]], "trtllm", layer_ids=[2, 2]), "layer_ids"),
        (lambda p: zepp.write_placement(p, [[0, 1]], "trtllm", layer_ids=[1, 2]), "layer_ids"),
        (lambda p: zepp.write_sglang_stats(p, [[1.0, -1.0]]), "load"),
        (lambda p: zepp.read_placement(p, "yaml"), "format"),
    ],
)
def test_bad_arguments_name_the_argument(tmp_path, call, argument):
    with pytest.raises(ValueError, match=f"^{argument}"):
        call(tmp_path / "out")


@pytest.mark.parametrize(
    "name, text, read",
    [
        ("stats.json", '{"logical_count": [[1, 1e400]]}', zepp.read_sglang_stats),
        ("stats.json", '{"logical_count": [[1, 2]', zepp.read_sglang_stats),
        ("map.json", '{"phy2log": [[0, 1e400]]}', lambda p: zepp.read_placement(p, "eplb-json")),
        ("map.json", '{"physical_to_logical_map": [[0, 1e400]]}', lambda p: zepp.read_placement(p, "sglang")),
        ("map.json", '{"physical_to_logical_map": [[0, -1e400]]}', lambda p: zepp.read_placement(p, "sglang")),
        ("map.json", '{"physical_to_logical_map": [[0, 99999999999999999999999]]}',
         lambda p: zepp.read_placement(p, "sglang")),
        ("map.yaml", "num_slots: 1e400\ninitial_global_assignments:\n  0: [0]\n", lambda p: zepp.read_placement(p, "trtllm")),
        ("map.yaml", "num_slots: [\n", lambda p: zepp.read_placement(p, "trtllm")),
    ],
)
def test_parse_failures_are_value_errors_naming_the_file(tmp_path, name, text, read):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=f"^{path}"):
        read(path)


def test_sglang_stores_layer_ids_as_row_positions(tmp_path):
    """SGLang's rows are model layers 0..L-1: layer_ids [5, 1] are stored as rows 5 and 1 (the
    others SGLang's trivial row p -> p mod E), not dropped; trtllm stores them as keys and
    eplb-json as "layers" (test_layer_ids_the_files_cannot_hold_are_refused)."""
    path = tmp_path / "map.json"
    zepp.write_placement(path, [[1, 0, 2, 3], [3, 2, 1, 0]], "sglang", layer_ids=[5, 1])
    ids, phy2log = zepp.read_placement(path, "sglang")
    np.testing.assert_array_equal(ids, np.arange(6))
    np.testing.assert_array_equal(phy2log[[5, 1]], [[1, 0, 2, 3], [3, 2, 1, 0]])
    np.testing.assert_array_equal(phy2log[[0, 2, 3, 4]], [[0, 1, 2, 3]] * 4)
