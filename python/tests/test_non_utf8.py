"""Bytes that are not UTF-8 in a file's content or name reach Python escaped (\\xNN): a message
quoting one was ValueError('') and a request named by one raised UnicodeDecodeError."""

import json
import os
import subprocess

import pytest
from conftest import program

import zepp

# A topology file whose unit holds the byte 0xff: the message quotes the unit.
TOPOLOGY = b'base: h100\nnic:\n  latency: "2 \xffs"\n'
EXPECTED_TOPOLOGY = "bad.yaml:3: nic.latency: unknown unit '\\xffs'"
# A JSON file with 0xff inside a string: the parser's message quotes the byte.
JSON = b'{"logical_count": [[1, 2]], "physical_to_logical_map": "\xff"}'


@pytest.mark.parametrize("call", [
    lambda p: zepp.gemm_cost("kimi-k2", p),
    lambda p: zepp.simulate(topology=p, executor="estimate"),
])
def test_topology_messages_keep_the_bytes_escaped(tmp_path, call):
    path = tmp_path / "bad.yaml"
    path.write_bytes(TOPOLOGY)
    with pytest.raises(ValueError) as e:
        call(str(path))
    assert EXPECTED_TOPOLOGY in str(e.value)


@pytest.mark.parametrize("read, quoted", [
    (zepp.read_sglang_stats, "last read: '\"\\xff'"),
    (lambda p: zepp.read_placement(p, "sglang"), "last read: '\"\\xff'"),
    (zepp.read_trace, "not valid UTF-8"),
])
def test_reader_messages_keep_the_bytes_escaped(tmp_path, read, quoted):
    path = tmp_path / "bad.json"
    path.write_bytes(JSON)
    with pytest.raises(ValueError) as e:
        read(str(path))
    assert str(e.value).startswith(f"{path}:"), str(e.value)
    assert quoted in str(e.value)


def test_trace_folder_names_keep_the_bytes_escaped(tmp_path):
    folder = bytes(tmp_path)
    with open(folder + b"/p\xff.csv", "wb") as f:  # a good trace: its request is named by the file
        f.write(b'Layer ID,Batch Number,Token,Activated Expert IDs\n1,0,a,"[0, 1]"\n1,0,b,"[1, 2]"\n')
    assert zepp.read_trace(str(tmp_path)).requests == ["p\\xff.csv"]
    with open(folder + b"/q\xfe.csv", "wb") as f:  # a bad one: the message names it
        f.write(b"junk\n")
    with pytest.raises(ValueError) as e:
        zepp.read_trace(str(tmp_path))
    assert "q\\xfe.csv:1: expected a trace" in str(e.value)


# A trace whose file name holds the byte 0xff, as sys.argv and os.listdir give it: a str with a
# surrogate escape. The core took only UTF-8 str ("incompatible function arguments"), and the JSON
# summary quoting the path made nlohmann's dump throw ("internal error" from the program).
TRACE = (b'Layer ID,Batch Number,Token,Activated Expert IDs\n1,0,a,"[0, 1, 2, 3, 4, 5]"\n'
         b'1,0,b,"[6, 7, 8, 9, 10, 11]"\n1,0,c,"[1, 3, 5, 7, 9, 63]"\n')  # top-6 of 64: DeepSeek-V2-Lite


def _named_with_ff(tmp_path, stem, data):
    with open(bytes(tmp_path) + b"/" + stem + b"\xff", "wb") as f:
        f.write(data)
    return str(tmp_path / (stem.decode() + "\udcff"))


def test_paths_that_are_not_utf8_reach_the_file_system(tmp_path):
    path = str(tmp_path / "stats\udcff.json")
    zepp.write_sglang_stats(path, [[1, 2, 3]])
    assert os.listdir(bytes(tmp_path)) == [b"stats\xff.json"]
    assert zepp.read_sglang_stats(path).tolist() == [[1.0, 2.0, 3.0]]
    assert zepp.read_trace(_named_with_ff(tmp_path, b"t", TRACE)).num_experts == 64


def test_simulate_json_quotes_a_path_that_is_not_utf8_escaped(tmp_path):
    trace = _named_with_ff(tmp_path, b"t", TRACE)
    out = zepp.simulate(trace=trace, model="deepseek-v2-lite", nodes=2, strategies=["a2av"], size_mb=0.01)
    assert out["workload"]["description"].startswith(str(tmp_path) + "/t\\xff layer 1"), out["workload"]


def test_program_json_quotes_a_path_that_is_not_utf8_escaped(tmp_path):
    trace = _named_with_ff(tmp_path, b"t", TRACE)
    run = subprocess.run([program(), "simulate", "--trace", trace, "--model", "deepseek-v2-lite", "--nodes", "2",
                          "--strategies", "a2av", "--size-mb", "0.01", "--format", "json"],
                         capture_output=True, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["workload"]["description"].startswith(str(tmp_path) + "/t\\xff layer 1")
