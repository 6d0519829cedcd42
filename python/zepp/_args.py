"""Argument checks shared by the public functions: every failure is a ValueError naming the argument (TypeError for one of the wrong type)."""

import math
import operator

import numpy as np

import _zepp

from ._tensors import host

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

def seconds_budget():
    """CPU seconds one call may take, as `zepp place` allows (call_seconds_budget of
    src/pipeline/cost.hpp): ZEPP_MAX_SECONDS when set, else 60. Calls whose sizes give a longer
    estimate (the estimate `zepp` makes) are refused before any work; ValueError for a
    ZEPP_MAX_SECONDS that is not a positive number."""
    return _zepp.seconds_budget()


def check_placement(layers, experts, slots, gpus, zepp, name):
    """ValueError naming `name` when placing `slots` replicas of `experts` experts per layer on
    `gpus` GPUs for `layers` layers needs more memory or time than this process has (the C++
    estimate of pipeline/cost.hpp, shared with `zepp place`): checked before any copy."""
    _zepp.check_placement_cost(float(layers), float(experts), float(slots), float(gpus), bool(zepp), seconds_budget(),
                               name, "pass fewer layers or experts in weight, or a smaller num_replicas (time budget: ZEPP_MAX_SECONDS)")


def check_routing(slots, experts, gpus, pairs, name):
    """ValueError naming `name` when routing `pairs` (token, k) pairs over a layer of `slots` slots
    of `experts` experts on `gpus` GPUs does not fit (pipeline/cost.hpp): checked before any copy."""
    _zepp.check_routing_cost(float(slots), float(experts), float(gpus), float(pairs), seconds_budget(), name,
                             "route fewer tokens per call, or check phy2log and num_gpus (time budget: ZEPP_MAX_SECONDS)")


def shape_of(value):
    """The shape of an array-like that has one (numpy array, torch tensor) without converting it,
    else None (a list: numpy must read it to know)."""
    shape = getattr(value, "shape", None)
    try:
        return tuple(int(n) for n in shape) if shape is not None else None
    except TypeError:
        return None


def count(value, name, minimum=1, maximum=INT32_MAX):
    """`value` as a Python int in [minimum, maximum]; the C++ core takes 32-bit counts unless a
    caller says otherwise. TypeError for what is not an integer (bools and floats too, 4.0
    included, as range() and EPLB's indexing refuse them), ValueError for one out of range."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected an integer, got {value!r}") from None
    if n < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {n}")
    if n > maximum:
        raise ValueError(f"{name}: expected an integer <= {maximum}, got {n}")
    return n


def flag(value, name):
    """A bool (numpy's too), or TypeError naming `name`: 'no' would be truthy."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name}: expected True or False, got {value!r}")


def memory_budget():
    """Bytes this process may still allocate: physical memory, or what RLIMIT_AS leaves above
    the current address space when that is less (pipeline/cost.cpp, shared with `zepp`)."""
    return _zepp.memory_budget_bytes()


def fits(nbytes, name, what):
    """Raise ValueError naming `name` when `what` needs more than memory_budget() bytes: checked
    before the call allocates, so a size typed wrong fails at once instead of swapping or aborting."""
    budget = memory_budget()
    if nbytes > budget:
        raise ValueError(f"{name}: {what} needs about {nbytes / 2**30:.3g} GiB, more than the "
                         f"{budget / 2**30:.3g} GiB this process can allocate")


def array(value, name, ndim, integer, finite=True):
    """`value` (numpy array, list, torch tensor on any device, ...) as a numpy array of `ndim`
    dimensions (a tensor through _tensors.host: CPU ones read in place, others copied to the host).

    integer=True requires integer entries (returned as int64), else real numbers (float64); both
    must be finite (unless finite=False). NaN or inf raise, as does anything numpy cannot convert. An array whose copy
    would not fit in memory -- a broadcast view with zero strides can stand for far more values
    than it holds -- raises before it is copied."""
    shape = shape_of(value)
    if shape is not None:
        if len(shape) != ndim:
            raise ValueError(f"{name}: expected a {ndim}-D array, got shape {shape}")
        values = math.prod(shape)
        strides = getattr(value, "strides", None) or ()
        view = " (a broadcast view with zero strides: copying it materialises every value)" if 0 in strides else ""
        fits(8 * values, name, f"copying the {values:,} values of shape {shape}{view}")
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
        if a.dtype == np.uint64 and (a > INT64_MAX).any():  # int64 would wrap them negative in messages
            at = tuple(int(i) for i in np.argwhere(a > INT64_MAX)[0])
            raise ValueError(f"{name}[{', '.join(map(str, at))}]: expected an integer below 2^63, got {a[at]}")
        return a.astype(np.int64)
    if a.dtype.kind not in "iuf":
        raise ValueError(f"{name}: expected real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if finite and not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected finite numbers, got NaN or inf")
    return a


# The largest load of one expert: the bound every reader of load files checks (kMaxLoad,
# src/core/input_bounds.hpp), 1e15 tokens; a larger value is a unit mistake or corruption.
MAX_LOAD = _zepp.MAX_LOAD


def loads(value, name, ndim):
    """`value` as a float64 array of `ndim` dimensions of expert loads, each finite and in
    [0, MAX_LOAD] as the file readers require, else ValueError "NAME[i, j]: expected a load in
    [0, 1e15], got V" naming the first offending entry (array's errors otherwise)."""
    a = array(value, name, ndim, integer=False, finite=False)
    with np.errstate(invalid="ignore"):
        bad = ~((a >= 0) & (a <= MAX_LOAD))  # NaN compares false: refused too
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        bound = f"{MAX_LOAD:.0e}".replace("e+", "e")
        raise ValueError(f"{name}[{', '.join(map(str, at))}]: expected a load in [0, {bound}], got {float(a[at])!r}")
    return a


def bounded(total, name, over):
    """`total` [layers, E], loads summed `over` something (steps, samples, an expert's slots), else
    ValueError naming `name` and the first sum above MAX_LOAD: each part was within the bound, but
    every reader and rebalance_experts refuse the sum."""
    above = np.argwhere(total > MAX_LOAD)
    if above.size:
        at = tuple(int(i) for i in above[0])
        raise ValueError(f"{name}: [{at[0]}, {at[1]}] sums to {float(total[at]):g} over {over}, above the load bound 1e15")
    return total


def summed(window, name, what, columns="experts"):
    """A recording's loads, window [steps or samples, layers, columns] as `loads` checked them,
    summed over its first axis; ValueError naming `name` for a window of none (zero loads would
    pass for an idle model) or a sum above MAX_LOAD."""
    if window.shape[0] == 0:
        raise ValueError(f"{name}: expected [{what}s, layers, {columns}] of at least one {what}, "
                         f"got shape {window.shape}")
    return bounded(window.sum(axis=0), name, f"the {what}s")
