"""`python3 -m zepp.torch.run ...`: torch.distributed.run (torchrun), working on Debian 12.

Debian 12's python3-torch 1.13 with Python 3.11 cannot start `python3 -m torch.distributed.run`
without --redirects/--tee: its Std.from_str turns "0" (and "3") into None, because since Python
3.11 iterating an IntFlag skips the zero and multi-bit members it searches, and the launcher then
fails with "AttributeError: 'NoneType' object has no attribute 'get'". This module installs a
from_str that maps the same strings by value, only where the installed one is broken, and runs
torch.distributed.run's own main with the same arguments; on torch 2.x it changes nothing.
"""

import re
import sys


def _fix_std_from_str():
    from torch.distributed.elastic.multiprocessing import api

    Std = api.Std
    if Std.from_str("0") is not None:
        return

    def from_str(vm):
        if re.fullmatch(r"[0-3]", vm):
            return Std(int(vm))
        if re.fullmatch(r"([0-9]+:[0-3])(,[0-9]+:[0-3])*", vm):
            return {int(i): Std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
        raise ValueError(f"{vm} does not match: <[0-3]> or <[0-9]+:[0-3](,[0-9]+:[0-3])*>")

    Std.from_str = staticmethod(from_str)


def main():
    _fix_std_from_str()
    from torch.distributed import run

    sys.argv[0] = "torch.distributed.run"
    run.main()


if __name__ == "__main__":
    main()
