"""Argument checks shared by the public functions: every failure is a ValueError naming the argument."""

import operator

import numpy as np


def count(value, name, minimum=1):
    """`value` as a Python int >= minimum (bools and floats are refused, as EPLB's indexing would)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise ValueError(f"{name}: expected an integer, got {value!r}") from None
    if n < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {n}")
    return n


def array(value, name, ndim, integer):
    """`value` (numpy array, list, CPU torch tensor, ...) as a numpy array of `ndim` dimensions.

    integer=True requires integer entries (returned as int64), else real numbers (float64); both
    must be finite. NaN or inf raise, as does anything numpy cannot convert (a CUDA tensor: call
    .cpu() first)."""
    try:
        a = np.asarray(value)
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
