"""Issue 23: every floating-point keyword of every public function refuses NaN, infinities, negative
values and values beyond its range with ValueError (TypeError for a non-number) naming the keyword.
The keywords come from the functions' own signatures (a float default) and zepp.simulate's
overrides table, so a float keyword added to one of them is checked here without editing this test;
those whose default is not a float are listed in FLOAT_KEYWORDS_WITHOUT_FLOAT_DEFAULT."""

import inspect
import math

import numpy as np
import pytest

import zepp
from zepp import _simulate

PHY2LOG = [0, 1, 2, 3, 0, 2, 1, 3]
WEIGHT = np.array([[5.0, 3.0, 2.0, 1.0]])
PREVIOUS = np.array([PHY2LOG])

# How to call each function with one keyword set: everything else valid and small.
CALLS = {
    "simulate": lambda **kw: zepp.simulate(nodes=2, executor="estimate", **kw),
    "route": lambda **kw: zepp.route([[0]], [0], PHY2LOG, 2, 4, **kw),
    "Router": lambda **kw: zepp.Router(PHY2LOG, 2, 4, **kw),
    "rebalance_experts": lambda **kw: zepp.rebalance_experts(WEIGHT, 8, 1, 1, 2, policy="zepp", previous=PREVIOUS, **kw),
}
FUNCTIONS = {"simulate": zepp.simulate, "route": zepp.route, "Router": zepp.Router.__init__,
             "rebalance_experts": zepp.rebalance_experts}
FLOAT_KEYWORDS_WITHOUT_FLOAT_DEFAULT = {"rebalance_experts": ["expert_bytes", "max_moved_bytes"]}


def float_keywords():
    out = []
    for name, fn in FUNCTIONS.items():
        for p in inspect.signature(fn).parameters.values():
            if isinstance(p.default, float):
                out.append((name, p.name))
        out += [(name, k) for k in FLOAT_KEYWORDS_WITHOUT_FLOAT_DEFAULT.get(name, [])]
    out += [("simulate", k) for k, kind in _simulate._OVERRIDES.items() if kind is float]
    return out


def test_the_signatures_list_the_float_keywords():
    found = set(float_keywords())
    for expected in [("simulate", "size_mb"), ("simulate", "zipf"), ("simulate", "nic_slack"), ("simulate", "nvlink_gbps"),
                     ("simulate", "kernel_launch_us"), ("route", "balance_slack"), ("Router", "balance_slack"),
                     ("rebalance_experts", "expert_bytes")]:
        assert expected in found
    assert len(found) >= 16


@pytest.mark.parametrize("function,keyword", float_keywords())
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, 1e308, -1.0, "0.5"])
def test_every_float_keyword_refuses_values_out_of_range_naming_itself(function, keyword, value):
    with pytest.raises((ValueError, TypeError)) as e:
        CALLS[function](**{keyword: value})
    assert str(e.value).startswith(keyword + ":"), str(e.value)
    if not isinstance(value, str):  # a string: ValueError or TypeError, never read as its number
        assert e.type is ValueError, str(e.value)


def test_ranges_are_the_programs():
    # zepp.simulate's keywords share `zepp simulate`'s flag ranges (src/core/flag_ranges.cpp).
    with pytest.raises(ValueError, match=r"^zipf: expected a number in \[0, 1000\], got 1001$"):
        zepp.simulate(nodes=2, executor="estimate", zipf=1001)
    with pytest.raises(ValueError, match=r"^nic_gbps: expected a number in \[1e-06, 1e\+06\] GB/s, got 2e\+06$"):
        zepp.simulate(nodes=2, executor="estimate", nic_gbps=2e6)
    with pytest.raises(ValueError, match=r"^expert_bytes: expected a number of bytes in \[0, 1e15\], got 2000000000000000.0$"):
        CALLS["rebalance_experts"](expert_bytes=2e15)
