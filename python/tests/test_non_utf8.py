"""Bytes that are not UTF-8 in a file's content or name reach Python escaped (\\xNN): a message
quoting one was ValueError('') and a request named by one raised UnicodeDecodeError."""

import pytest

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
