"""Zepp: expert placement, locality-preferred routing and simulation for expert-parallel MoE serving.

The compiled extension `_zepp` is built by CMake into <build>/python; put that folder and this
package's parent on the path: PYTHONPATH=<build>/python:<source>/python (python/README.md).

Functions (all take numpy arrays, anything numpy.asarray accepts, or torch tensors on any device;
return int64/float64 arrays of the caller's kind -- torch tensors on the input's device for a
tensor, numpy otherwise (zepp/_tensors.py); raise ValueError naming the argument, file or field
on bad input):
  rebalance_experts  DeepSeek EPLB's contract, policy "eplb" or "zepp" (paper §4.1)
  route              per-(token, k) replica choice (paper §4.1 equation (1), §5)
  Router             the same bound to one layer's placement, for every forward pass (no copies, no GIL)
  gemm_cost          the expert GEMM cost the simulator routes with: `gemm=` of route and Router
  simulate           one MoE layer under each strategy: the figures of `zepp simulate --format json`
  read_sglang_stats / write_sglang_stats, read_placement / write_placement   serving-engine files
  read_expert_load   [L, E] load from SGLang recorder dumps (.pt, JSON) or vLLM's load window (.pt)
  read_trace         a real routing trace's per-token selections, layer by layer
  model_preset       a model's shape as `zepp simulate --model` knows it
  zepp.torch         (import it) torch.distributed dispatch and combine along Zepp's plan
"""

try:
    import _zepp  # noqa: F401  (the compiled core; every submodule uses it)
except ImportError as e:
    raise ImportError(
        f"zepp: cannot load the compiled extension _zepp ({e}); build it (cmake --build <build> --target _zepp) "
        "and add <build>/python to PYTHONPATH, using the interpreter it was built for (/usr/bin/python3)"
    ) from e

__version__ = _zepp.__version__  # CMake's project(VERSION), as `zepp --version` prints it

from ._loads import read_expert_load
from ._formats import PLACEMENT_FORMATS, read_placement, read_sglang_stats, write_placement, write_sglang_stats
from ._placement import rebalance_experts
from ._routing import Router, gemm_cost, route
from ._simulate import simulate
from ._trace import model_preset, read_trace

__all__ = [
    "PLACEMENT_FORMATS",
    "gemm_cost",
    "model_preset",
    "read_expert_load",
    "read_placement",
    "read_sglang_stats",
    "read_trace",
    "rebalance_experts",
    "route",
    "Router",
    "simulate",
    "write_placement",
    "write_sglang_stats",
]
