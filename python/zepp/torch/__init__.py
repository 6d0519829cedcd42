"""zepp.torch: expert-parallel dispatch and combine with torch.distributed, along Zepp's plan.

    import zepp.torch
    layer = zepp.torch.MoELayer(experts, phy2log, num_nodes, strategy="zepp")
    out = layer(hidden_states, topk_ids, topk_weights)       # on every rank of the group

Per rank, each MoE layer: the ranks all-gather their per-expert token counts and compute the same
count-level plan (Zepp's per-rank planning), route their own tokens along it (locality-preferred
replicas), send each token once to each node serving it and forward it over the intra-node link,
compute the experts of their slots, pre-reduce the outputs per node and return them
(zepp/torch/_dispatch.py states the steps and why the output is exact). "a2av" and "eplb" are the
flat baselines of docs/baselines. Runs on gloo (CPU tensors) and NCCL (CUDA tensors) with
all_gather, isend and irecv only, as in torch 1.13 and 2.x. docs/torch.md has the example.
"""

from ._dispatch import STRATEGIES, Batch, Dispatcher
from ._exchange import Traffic
from ._layer import MoELayer, SwiGLUExpert, weighted_experts

__all__ = ["STRATEGIES", "Batch", "Dispatcher", "MoELayer", "SwiGLUExpert", "Traffic", "weighted_experts"]
