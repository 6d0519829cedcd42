"""zepp.read_trace and zepp.model_preset: what examples/torch_ep.py replays."""

import numpy as np
import pytest

import zepp


def test_mixtral_trace_keeps_gate_probabilities(shared_dir):
    trace = zepp.read_trace(shared_dir / "data/traces/mixtral-8x7b-gsm8k")
    assert trace.format == "routing-jsonl" and trace.num_experts == 8
    assert list(trace.layers) == list(range(32))
    layer = trace.layers[0]
    T = layer.topk_ids.shape[0]
    assert layer.topk_ids.shape == (T, 2) and layer.topk_ids.dtype == np.int32
    assert layer.gate_weights.shape == (T, 2) and np.all((layer.gate_weights >= 0) & (layer.gate_weights <= 1))
    assert layer.request.shape == (T,) and set(np.unique(layer.request)) <= set(range(len(trace.requests)))


def test_load_only_trace_and_unknown_model_are_refused(shared_dir):
    with pytest.raises(ValueError, match="expected a token-level trace"):
        zepp.read_trace(shared_dir / "data/traces/qwen3-30b-a3b-load")
    assert zepp.model_preset("deepseek-v2-lite")["num_experts"] == 64
    assert zepp.model_preset("deepseek-v2-lite")["top_k"] == 6
    with pytest.raises(ValueError, match="no-such-model"):
        zepp.model_preset("no-such-model")
