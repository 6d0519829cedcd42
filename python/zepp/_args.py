"""Argument checks shared by the public functions: every failure is a ValueError naming the argument."""

import operator
import os
import resource

import numpy as np

from ._tensors import host

INT32_MAX = 2**31 - 1


def count(value, name, minimum=1, maximum=INT32_MAX):
    """`value` as a Python int in [minimum, maximum] (bools and floats are refused, as EPLB's
    indexing would); the C++ core takes 32-bit counts unless a caller says otherwise."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise ValueError(f"{name}: expected an integer, got {value!r}") from None
    if n < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {n}")
    if n > maximum:
        raise ValueError(f"{name}: expected an integer <= {maximum}, got {n}")
    return n


def memory_budget():
    """Bytes this process may still allocate: physical memory, or what RLIMIT_AS leaves above
    the current address space when that is less (pipeline/cost.cpp does the same in C++)."""
    page = os.sysconf("SC_PAGE_SIZE")
    budget = os.sysconf("SC_PHYS_PAGES") * page
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * page
        budget = min(budget, max(0, soft - used))
    return budget


def fits(nbytes, name, what):
    """Raise ValueError naming `name` when `what` needs more than memory_budget() bytes: checked
    before the call allocates, so a size typed wrong fails at once instead of swapping or aborting."""
    budget = memory_budget()
    if nbytes > budget:
        raise ValueError(f"{name}: {what} needs about {nbytes / 2**30:.3g} GiB, more than the "
                         f"{budget / 2**30:.3g} GiB this process can allocate")


def array(value, name, ndim, integer):
    """`value` (numpy array, list, torch tensor on any device, ...) as a numpy array of `ndim`
    dimensions (a tensor through _tensors.host: CPU ones read in place, others copied to the host).

    integer=True requires integer entries (returned as int64), else real numbers (float64); both
    must be finite. NaN or inf raise, as does anything numpy cannot convert."""
    try:
        a = np.asarray(host(value))
    except Exception as e:  # numpy reports what it could not convert; keep the argument's name
        raise ValueError(f"{name}: expected an array-like convertible by numpy.asarray ({e})") from None
    if a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if a.size == 0:
        return a.astype(np.int64 if integer else np.float64)
    if integer:
        if a.dtype.kind not in "iu":
            raise ValueError(f"{name}: expected integer entries, got dtype {a.dtype}")
        return a.astype(np.int64)
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{name}: expected real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected finite numbers, got NaN or inf")
    return a
