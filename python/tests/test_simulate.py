"""zepp.simulate returns the figures of `zepp simulate --format json`."""

import json
import subprocess

import pytest

import zepp

from conftest import program

WALL = "routing_wall_us"  # wall-clock time of the routing step: differs between any two runs


def same_figures(a, b):
    strip = lambda d: {**d, "strategies": [{k: v for k, v in s.items() if k != WALL} for s in d["strategies"]]}
    assert strip(a) == strip(b)


@pytest.mark.parametrize("executor", ["estimate", "sim"])
def test_synthetic_matches_the_program(executor):
    flags = ["--nodes", "2", "--size-mb", "0.25", "--seed", "3", "--extra-slots", "1", "--executor", executor]
    cli = json.loads(subprocess.run([program(), "simulate", "--format", "json", *flags],
                                    capture_output=True, text=True, check=True).stdout)
    py = zepp.simulate(nodes=2, size_mb=0.25, seed=3, extra_slots=1, executor=executor)
    assert [s["name"] for s in py["strategies"]] == ["a2av", "eplb", "zepp"]
    # A second call in the same process gives the same figures (SimGrid runs one engine per process).
    again = zepp.simulate(nodes=2, size_mb=0.25, seed=3, extra_slots=1, executor=executor)
    same_figures(py, cli)
    same_figures(again, cli)


def test_real_trace_matches_the_program(shared_dir):
    trace = shared_dir / "data/traces/mixtral-8x7b-gsm8k"
    flags = ["--trace", str(trace), "--model", "mixtral-8x7b", "--nodes", "2", "--gpus-per-node", "2",
             "--size-mb", "0.5", "--strategies", "eplb,zepp", "--balance-slack", "0.2", "--executor", "estimate"]
    cli = json.loads(subprocess.run([program(), "simulate", "--format", "json", *flags],
                                    capture_output=True, text=True, check=True).stdout)
    py = zepp.simulate(trace, model="mixtral-8x7b", nodes=2, gpus_per_node=2, size_mb=0.5,
                       strategies="eplb,zepp", balance_slack=0.2, executor="estimate")
    same_figures(py, cli)
    assert py["workload"]["model"] == "mixtral-8x7b" and not py["workload"]["synthetic"]


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(nodes=0), "nodes"),
        (dict(balance_slack=1.5), "balance_slack"),
        (dict(executor="gpu"), "executor"),
        (dict(strategies=()), "strategies"),
        (dict(gpus_per_node=-2), "gpus_per_node"),
        (dict(model="gpt-5"), "model: unknown preset 'gpt-5', expected one of deepseek-v2-lite, "),
        # The program names --topology / --model; a Python caller is told the keyword.
        (dict(topology="nosuch"), r"topology: 'nosuch' is neither a preset \(a100, h100, "),
        (dict(planning="sometimes"), "planning"),
        (dict(strategies="a2av,eplb", split=False), "split"),  # Zepp's ablations need a Zepp strategy
        (dict(strategies="zepp-overlap", locality=False), "locality"),  # it routes home
        (dict(strategies="zepp", swap_horizon=4), "swap_horizon"),
        (dict(strategies="zepp+swaps", swap_horizon=0), "swap_horizon"),
        (dict(strategies="zepp,,a2av"), "strategies: entry 2 of 'zepp,,a2av' is empty"),
        (dict(strategies=("zepp", "zepp")), "strategies: names 'zepp' twice"),
        (dict(strategies="a2av, magic"), "strategies: unknown strategy 'magic'"),
        # It read "model: is required with --trace", the program's flag.
        (dict(trace="any/trace"), r"model: expected the trace's model preset with trace, got None$"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, argument):
    with pytest.raises(ValueError, match=f"^{argument}"):
        zepp.simulate(size_mb=0.1, **kwargs)


def test_ablations_planning_and_horizon_match_the_program():
    # The keywords the program had and zepp.simulate lacked: the newer ablations, the planning
    # charge and zepp+swaps' horizon; rows are named with their ablations, as the CLI names them.
    flags = ["--nodes", "2", "--size-mb", "0.25", "--executor", "estimate", "--strategies", "a2av,zepp,zepp+swaps",
             "--no-waves", "--round-order-always", "--no-local-first", "--swap-horizon", "3", "--planning", "free"]
    cli = json.loads(subprocess.run([program(), "simulate", "--format", "json", *flags],
                                    capture_output=True, text=True, check=True).stdout)
    py = zepp.simulate(nodes=2, size_mb=0.25, executor="estimate", strategies="a2av,zepp,zepp+swaps", waves=False,
                       round_order_always=True, local_first=False, swap_horizon=3, planning="free")
    same_figures(py, cli)
    assert [s["name"] for s in py["strategies"]] == [
        "a2av", "zepp/no-waves/round-order-always/no-local-first", "zepp+swaps/no-waves/round-order-always/no-local-first"]
    assert py["cluster"]["planning"] == "free" and py["strategies"][2]["swaps"]["horizon"] == 3


def test_roofline_placement_matches_the_program():
    flags = ["--nodes", "2", "--size-mb", "0.25", "--executor", "estimate", "--strategies", "a2av,zepp",
             "--roofline-placement"]
    cli = json.loads(subprocess.run([program(), "simulate", "--format", "json", *flags],
                                    capture_output=True, text=True, check=True).stdout)
    py = zepp.simulate(nodes=2, size_mb=0.25, executor="estimate", strategies="a2av,zepp", roofline_placement=True)
    same_figures(py, cli)
    assert [s["name"] for s in py["strategies"]] == ["a2av", "zepp/roofline-placement"]
    with pytest.raises(ValueError, match="^roofline_placement"):
        zepp.simulate(nodes=2, size_mb=0.1, executor="estimate", strategies="a2av,eplb", roofline_placement=True)


def test_strategy_entries_are_trimmed_as_the_program_trims_them():
    # "a2av, zepp+swaps" was split without trimming: " zepp+swaps" was unknown, and the horizon
    # was refused as if zepp+swaps were not named.
    py = zepp.simulate(nodes=2, size_mb=0.1, executor="estimate", strategies="a2av, zepp+swaps ", swap_horizon=4)
    assert [s["name"] for s in py["strategies"]] == ["a2av", "zepp+swaps"]
    assert py["strategies"][1]["swaps"]["horizon"] == 4


def test_an_unknown_keyword_is_a_type_error_naming_it():
    # As Python's own calls do for an unexpected keyword argument.
    with pytest.raises(TypeError, match="^warp_speed: unknown keyword"):
        zepp.simulate(size_mb=0.1, warp_speed=9)
    # The message lists every keyword, not only the model and cluster overrides.
    with pytest.raises(TypeError, match="expected one of trace, model, .*swap_horizon, .*gpus_per_node"):
        zepp.simulate(size_mb=0.1, optimum="on")


def test_variant_names_run_beside_their_base():
    kw = dict(nodes=2, size_mb=0.25, executor="estimate")
    both = zepp.simulate(strategies="zepp,zepp/no-waves,epic/zepp-placement", **kw)
    assert [s["name"] for s in both["strategies"]] == ["zepp", "zepp/no-waves", "epic/zepp-placement"]
    flagged = zepp.simulate(strategies="zepp", waves=False, **kw)
    assert both["strategies"][1]["latency_us"] == flagged["strategies"][0]["latency_us"]
    with pytest.raises(ValueError, match="^strategies: 'zepp/no-waves' runs zepp/no-waves, which 'zepp'"):
        zepp.simulate(strategies="zepp,zepp/no-waves", waves=False, **kw)


def test_topology_preset_and_file(tmp_path):
    preset = zepp.simulate(topology="dgx-h100", nodes=2, size_mb=0.25, strategies=("a2av",), executor="estimate")
    assert preset["cluster"]["gpus_per_node"] == 8
    path = tmp_path / "slow.yaml"
    path.write_text("base: dgx-h100\nnic:\n  bandwidth: 100 Gb/s\n")
    slow = zepp.simulate(topology=path, nodes=2, size_mb=0.25, strategies=("a2av",), executor="estimate")
    assert slow["cluster"]["topology"] == "slow"
    # A quarter of the NIC bandwidth: the same bytes take longer.
    assert slow["strategies"][0]["latency_us"] > preset["strategies"][0]["latency_us"]
    path.write_text("base: dgx-h100\nnic:\n  bandwidth: 100\n")
    with pytest.raises(ValueError, match=r"slow.yaml:3: nic.bandwidth: expected a unit"):
        zepp.simulate(topology=path, nodes=2, strategies=("a2av",), executor="estimate")


def test_history_and_trace_apart_match_the_program(shared_dir):
    traces = shared_dir / "data/traces/llama4-maverick-mmlu"
    history, trace = traces / "abstract_algebra", traces / "anatomy"
    flags = ["--history", str(history), "--trace", str(trace), "--model", "llama4-maverick", "--topology", "dgx-h100",
             "--nodes", "2", "--size-mb", "0.25", "--strategies", "a2av,zepp", "--executor", "estimate"]
    cli = json.loads(subprocess.run([program(), "simulate", "--format", "json", *flags],
                                    capture_output=True, text=True, check=True).stdout)
    py = zepp.simulate(trace, model="llama4-maverick", topology="dgx-h100", nodes=2, history=history, size_mb=0.25,
                       strategies="a2av,zepp", executor="estimate")
    same_figures(py, cli)
    assert "history = all" in py["workload"]["description"] and "abstract_algebra" in py["workload"]["description"]
    assert py["cluster"]["gpus_per_node"] == 8


def test_bandwidths_without_an_exact_ratio_leave_the_optimum_unsolved():
    # NVLink / NIC = 1e12 has no integer terms below 2^31 for the exact solver's arc costs: the
    # call raised "topo: nvlink_bw / nic_bw has no exact integer ratio"; the optimum is now null.
    r = zepp.simulate(nodes=2, strategies="zepp", executor="estimate", nic_gbps=0.000001, nvlink_gbps=1e6)
    assert r["strategies"][0]["routing_cost_optimal_us"] is None
    assert r["strategies"][0]["latency_us"] > 0


def test_errors_name_the_keyword_and_a_float_count_is_a_type_error(shared_dir):
    # The checks shared with the program said "--layer: ..." to a caller who wrote layer=99.
    trace = shared_dir / "data/traces/deepseek-v2-lite-puffin"
    with pytest.raises(ValueError, match=r"^layer: layer 99 is not in trace "):
        zepp.simulate(trace, model="deepseek-v2-lite", layer=99, strategies="a2av", executor="estimate")
    with pytest.raises(ValueError, match=r"^num_experts: 16 experts, but .* selects experts 0-7 only"):
        zepp.simulate(shared_dir / "data/traces/mixtral-8x7b-gsm8k", model="mixtral-8x7b", nodes=2, num_experts=16,
                      strategies="a2av", executor="estimate")
    # A count that is not an integer is the wrong type, as for range(4.0) (python/README.md): it
    # raised ValueError.
    for kwargs in (dict(nodes=4.0), dict(seed=1.5), dict(layer=True)):
        with pytest.raises(TypeError, match=rf"^{next(iter(kwargs))}: expected an integer, got "):
            zepp.simulate(size_mb=0.1, executor="estimate", **kwargs)
