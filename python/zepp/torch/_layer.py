"""An expert-parallel MoE layer: dispatch, this rank's experts, combine (torch.nn.Module)."""

import torch

from ._dispatch import Dispatcher


class SwiGLUExpert(torch.nn.Module):
    """One routed expert FFN as DeepSeek, Qwen and Mixtral use it: w2 (silu(x w1) * (x w3)),
    x [n, hidden] -> [n, hidden]. `seed` makes the weights (normal, scaled by 1 / sqrt(fan-in))
    the same on every rank holding a replica of the expert, and in a dense reference."""

    def __init__(self, hidden, ffn, seed, dtype=torch.float32):
        super().__init__()
        g = torch.Generator().manual_seed(int(seed))
        self.w1 = torch.nn.Parameter(torch.randn(hidden, ffn, generator=g) / hidden ** 0.5, requires_grad=False)
        self.w3 = torch.nn.Parameter(torch.randn(hidden, ffn, generator=g) / hidden ** 0.5, requires_grad=False)
        self.w2 = torch.nn.Parameter(torch.randn(ffn, hidden, generator=g) / ffn ** 0.5, requires_grad=False)
        self.to(dtype)

    def forward(self, x):
        return (torch.nn.functional.silu(x @ self.w1) * (x @ self.w3)) @ self.w2


def weighted_experts(experts, slot_expert, hidden, gates, local_slots):
    """[n, H]: per row, the gate-weighted sum of the outputs of the experts on the row's local
    slots (-1 columns skipped). experts: {logical id: module}; slot_expert: [S] logical id per slot."""
    out = torch.zeros_like(hidden)
    for slot, expert_id in enumerate(slot_expert):
        rows, cols = torch.nonzero(local_slots == slot, as_tuple=True)
        if rows.numel():
            y = experts[int(expert_id)](hidden[rows])
            out.index_add_(0, rows, y * gates[rows, cols].unsqueeze(1))
    return out


class MoELayer(torch.nn.Module):
    """The routed experts of one MoE layer under expert parallelism.

    forward(hidden_states [T, H], topk_ids [T, k], topk_weights [T, k]) -> [T, H]: for every token
    of this rank, sum_j topk_weights[t, j] * expert_{topk_ids[t, j]}(hidden_states[t]), the pairs
    served by the ranks of the placement and moved with `Dispatcher` (a collective call: every
    rank of the group calls forward, with any number of tokens, 0 included). hidden_states is a
    torch tensor; a topk_ids entry of -1 is padding (as SGLang pads, and zepp.Router takes it):
    that pair is dispatched nowhere and adds nothing.

    Args:
        experts: {logical expert id: module} for at least the experts on this rank's slots (a
            module maps [n, H] -> [n, H]); replicas on other ranks must hold the same weights.
        phy2log, num_nodes, strategy, group, balance_slack, gemm: as Dispatcher (gemm: "zepp"'s
            consolidation by GEMM time, off by default; `zepp.gemm_cost(model, topology)`).
    """

    def __init__(self, experts, phy2log, num_nodes, strategy="zepp", group=None, balance_slack=0.1, gemm=None):
        super().__init__()
        self.dispatcher = Dispatcher(phy2log, num_nodes, strategy, group, balance_slack, gemm)
        missing = sorted({int(e) for e in self.dispatcher.local_experts} - {int(e) for e in experts})
        if missing:
            raise ValueError(f"experts: expected a module for every expert on rank {self.dispatcher.rank}'s "
                             f"slots, missing {missing}")
        self.experts = torch.nn.ModuleDict({str(e): experts[e] for e in sorted({int(e) for e in self.dispatcher.local_experts})})

    def forward(self, hidden_states, topk_ids, topk_weights):
        batch = self.dispatcher.dispatch(hidden_states, topk_ids, topk_weights)
        experts = {int(e): m for e, m in self.experts.items()}
        partial = weighted_experts(experts, self.dispatcher.local_experts, batch.hidden, batch.gates,
                                   batch.local_slots)
        return self.dispatcher.combine(batch, partial)
