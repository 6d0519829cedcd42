"""Variable-size point-to-point exchange between EP ranks, with the bytes each rank sends.

One exchange moves, from every rank to any others, a float tensor [n, F] and an int64 tensor
[n, I] of n rows (n may differ per pair and be 0). The row counts travel first in one all_gather
of a [world] int64 vector (metadata), then every non-empty pair moves with isend/irecv. Only
collectives and point-to-point calls present in torch 1.13 and 2.x and implemented by both gloo
(CPU) and NCCL (CUDA tensors) are used: all_gather, isend, irecv, Work.wait.
"""

import torch
import torch.distributed as dist


class Traffic:
    """Bytes this rank sent: to ranks of other nodes, to other ranks of its node, and the row
    counts and plan metadata of all_gathers (what it contributed, times the ranks receiving it)."""

    def __init__(self):
        self.inter_node_bytes = 0
        self.intra_node_bytes = 0
        self.metadata_bytes = 0

    def as_tensor(self):
        return torch.tensor([self.inter_node_bytes, self.intra_node_bytes, self.metadata_bytes], dtype=torch.int64)


class Exchange:
    """Exchanges rows between the ranks of `group`; ranks r and q share a node when
    r // gpus_per_node == q // gpus_per_node."""

    def __init__(self, gpus_per_node, group=None):
        self.group = group
        self.world = dist.get_world_size(group)
        self.rank = dist.get_rank(group)
        if gpus_per_node < 1 or self.world % gpus_per_node:
            raise ValueError(f"gpus_per_node: expected a divisor of the {self.world} ranks, got {gpus_per_node}")
        self.gpus_per_node = gpus_per_node
        self.traffic = Traffic()
        # NCCL moves CUDA tensors only; gloo moves CPU ones (and CUDA ones through the host).
        nccl = dist.get_backend(group) == "nccl"
        self.device = torch.device("cuda", torch.cuda.current_device()) if nccl else torch.device("cpu")

    def node(self, rank):
        return rank // self.gpus_per_node

    def _global(self, rank):
        """Rank in the default group, as isend/irecv take it."""
        return rank if self.group is None else dist.get_global_rank(self.group, rank)

    def all_gather(self, tensor):
        """[world, *tensor.shape] on the CPU: every rank's tensor (metadata bytes counted)."""
        tensor = tensor.to(self.device).contiguous()
        parts = [torch.empty_like(tensor) for _ in range(self.world)]
        dist.all_gather(parts, tensor, group=self.group)
        self.traffic.metadata_bytes += tensor.numel() * tensor.element_size() * (self.world - 1)
        return torch.stack(parts).cpu()

    def send(self, rows, float_cols, int_cols, dtype, device):
        """rows: {destination rank: (float [n, float_cols], int64 [n, int_cols])}, the own rank
        included (kept without a copy). Returns {source rank: (float, int64)} for every rank that
        sent rows here, the own rank included."""
        counts = torch.zeros(self.world, dtype=torch.int64)
        for dst, (f, _) in rows.items():
            counts[dst] = f.shape[0]
        matrix = self.all_gather(counts)  # matrix[src, dst] = rows src sends to dst
        works, received = [], {}
        for src in range(self.world):
            n = int(matrix[src, self.rank])
            if src == self.rank or n == 0:
                continue
            f = torch.empty((n, float_cols), dtype=dtype, device=device)
            i = torch.empty((n, int_cols), dtype=torch.int64, device=device)
            works.append(dist.irecv(f, src=self._global(src), group=self.group, tag=0))
            works.append(dist.irecv(i, src=self._global(src), group=self.group, tag=1))
            received[src] = (f, i)
        for dst, (f, i) in rows.items():
            if dst == self.rank or f.shape[0] == 0:
                continue
            f, i = f.contiguous(), i.contiguous()
            works.append(dist.isend(f, dst=self._global(dst), group=self.group, tag=0))
            works.append(dist.isend(i, dst=self._global(dst), group=self.group, tag=1))
            nbytes = f.numel() * f.element_size() + i.numel() * i.element_size()
            if self.node(dst) == self.node(self.rank):
                self.traffic.intra_node_bytes += nbytes
            else:
                self.traffic.inter_node_bytes += nbytes
        for work in works:
            work.wait()
        if self.rank in rows and rows[self.rank][0].shape[0] > 0:
            received[self.rank] = rows[self.rank]
        return received
