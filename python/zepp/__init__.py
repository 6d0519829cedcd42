"""Zepp: expert placement, locality-preferred routing and simulation for expert-parallel MoE serving.

The compiled extension `_zepp` is built by CMake into <build>/python; put that folder and this
package's parent on the path: PYTHONPATH=<build>/python:<source>/python (python/README.md).

Functions (all take numpy arrays or anything numpy.asarray accepts, return int64/float64 numpy
arrays, and raise ValueError naming the argument, file or field on bad input):
  rebalance_experts  DeepSeek EPLB's contract, policy "eplb" or "zepp" (paper §4.1)
  route              per-(token, k) replica choice (paper §4.1 equation (1), §5)
  Router             the same bound to one layer's placement, for every forward pass (no copies, no GIL)
  simulate           one MoE layer under each strategy: the figures of `zepp simulate --format json`
  read_sglang_stats / write_sglang_stats, read_placement / write_placement   serving-engine files
"""

try:
    import _zepp  # noqa: F401  (the compiled core; every submodule uses it)
except ImportError as e:
    raise ImportError(
        f"zepp: cannot load the compiled extension _zepp ({e}); build it (cmake --build <build> --target _zepp) "
        "and add <build>/python to PYTHONPATH, using the interpreter it was built for (/usr/bin/python3)"
    ) from e

__version__ = _zepp.__version__  # CMake's project(VERSION), as `zepp --version` prints it

from ._formats import PLACEMENT_FORMATS, read_placement, read_sglang_stats, write_placement, write_sglang_stats
from ._placement import rebalance_experts
from ._routing import Router, route
from ._simulate import simulate

__all__ = [
    "PLACEMENT_FORMATS",
    "read_placement",
    "read_sglang_stats",
    "rebalance_experts",
    "route",
    "Router",
    "simulate",
    "write_placement",
    "write_sglang_stats",
]
