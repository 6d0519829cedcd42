"""Engine tensors in and out: the engines pass torch tensors (possibly on a GPU) and copy what a
policy returns into their own buffers."""

import numpy as np


def to_numpy(value):
    """A torch tensor on any device as a CPU numpy array (floating ones as float32: numpy has no
    bfloat16), integer ones keeping their type; anything else through numpy.asarray."""
    if hasattr(value, "detach"):
        value = value.detach()
        if value.is_floating_point():
            value = value.float()
        value = value.cpu().numpy()
    return np.asarray(value)


def like(reference, arrays):
    """`arrays` as CPU torch tensors when `reference` is a torch tensor, else as they are."""
    if hasattr(reference, "detach"):
        import torch

        return tuple(torch.from_numpy(np.ascontiguousarray(a)) for a in arrays)
    return tuple(arrays)
