"""Torch tensors in, torch tensors out, for every public function (numpy stays numpy).

A function reads each array argument through `host` and gives its results back through the
`Caller` of its main argument, so a caller gets its own kind of array back, as DeepSeek's EPLB
does: torch tensors for a tensor, on that tensor's device, numpy arrays otherwise.

- A CPU tensor is read in place: `Tensor.numpy()` shares its memory (no copy). bfloat16 has no
  numpy type, so such a tensor is converted to float32 (a copy).
- A tensor on an accelerator (CUDA, ...) is copied to the host, and the results are copied back
  to its device: Zepp's planning runs on the CPU.
- Results become tensors through `torch.from_numpy` (no copy) before any device copy.

torch is never imported here: a value can only be a tensor when the caller has imported torch
already, so `sys.modules` tells. Only APIs present in torch 1.13 and 2.x are used.
"""

import sys

import numpy as np


def _torch():
    return sys.modules.get("torch")


def is_tensor(value):
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def host(value):
    """`value` as numpy when it is a torch tensor (a view of a CPU tensor, a host copy of a device
    one, float32 for bfloat16), else `value` itself (numpy.asarray comes later, in the checks)."""
    if not is_tensor(value):
        return value
    torch = _torch()
    t = value.detach()
    if t.device.type != "cpu":
        t = t.to("cpu")
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


class Caller:
    """The kind of array a caller passed (`reference`), to give results back in the same kind."""

    def __init__(self, reference):
        self.device = reference.device if is_tensor(reference) else None

    @property
    def torch(self):
        return self.device is not None

    def give(self, array):
        """`array` (numpy) as the caller's kind: a tensor on its device sharing `array`'s memory
        when that device is the CPU, else `array` unchanged."""
        if self.device is None:
            return array
        t = _torch().from_numpy(np.ascontiguousarray(array))
        return t if self.device.type == "cpu" else t.to(self.device)

    def give_all(self, arrays):
        return tuple(self.give(a) for a in arrays)
