"""Real routing traces (src/trace: the formats of docs/trace-formats.md) as numpy arrays, and model presets."""

from collections import namedtuple

import _zepp

from ._formats import _path, _read

LayerTrace = namedtuple("LayerTrace", "topk_ids gate_weights request step")
LayerTrace.__doc__ = """All tokens of one MoE layer in source order: topk_ids [T, k] int32 logical expert ids,
gate_weights [T, k] float32 or None (the source records none, e.g. the DeepSeek CSVs), request [T]
int32 (index into Trace.requests), step [T] int32 (0 = prefill, s >= 1 = decode step s)."""

Trace = namedtuple("Trace", "format num_experts layers requests")
Trace.__doc__ = """A token-level routing trace: format (as detected), num_experts (max id + 1), layers
{layer index: LayerTrace} ascending, requests [names]."""


def read_trace(path):
    """Read a token-level routing trace file or folder, as `zepp simulate --trace` does.

    The format is detected from the content (docs/trace-formats.md): selection JSON, DeepSeek CSV,
    routing JSONL (gate probabilities kept), vLLM's route log. Load-only sources (expert load
    CSVs and counts) are refused: they hold no per-token selections.

    Returns: Trace(format, num_experts, layers {layer: LayerTrace(topk_ids, gate_weights, request,
    step)}, requests).
    Raises: ValueError naming the file, line and field of malformed input, or a load-only trace;
    TypeError naming path when it is no path.
    """
    fmt, num_experts, layers, requests = _read(_zepp.read_trace, _path(path))
    return Trace(fmt, num_experts, {layer: LayerTrace(*layers[layer]) for layer in sorted(layers)}, list(requests))


def model_preset(name):
    """A model preset of `zepp simulate --model` (src/core/presets.cpp) as a dict: name,
    num_experts, top_k, hidden, ffn (expert FFN width), layers, moe_layers, shared_experts.
    Raises ValueError naming the model and the presets there are, TypeError for a name that is no
    string."""
    if not isinstance(name, str):
        raise TypeError(f"name: expected a model preset name, got {name!r}")
    return _zepp.model_preset(name)
