"""Validation at the public edge: every bad input raises a ``ValueError`` naming the parameter."""

from __future__ import annotations

import math
import numbers
import os

import numpy as np


def positive(name, value):
    """Return ``value`` as a float, or raise if it is not a finite number > 0."""
    v = _real(name, value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def finite(name, value):
    """Return ``value`` as a float, or raise if it is NaN or infinite."""
    v = _real(name, value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return v


def nonnegative(name, value):
    """Return ``value`` as a float, or raise if it is not a finite number >= 0."""
    v = _real(name, value)
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def bounds(lower, upper):
    """Return ``(lower, upper)`` as floats; either may be infinite but ``lower < upper``."""
    lo = _real("lower", lower)
    hi = _real("upper", upper)
    if math.isnan(lo) or lo == math.inf:
        raise ValueError(f"lower must be a number < inf (or -inf), got {lower!r}")
    if math.isnan(hi) or hi == -math.inf:
        raise ValueError(f"upper must be a number > -inf (or inf), got {upper!r}")
    if not lo < hi:
        raise ValueError(f"lower must be < upper, got lower={lower!r}, upper={upper!r}")
    return lo, hi


def real_array(name, value):
    """Return ``value`` as a float array (0-d for scalars), or raise if it is not real numbers or holds NaN.

    Only real numbers are numbers: a string (``'1'``), a bool, a complex number or an object array is
    refused, though ``numpy.asarray(..., dtype=float)`` would convert the first two silently.
    """
    arr = _real_values(name, value)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN, got {_short_repr(value)}")
    return arr


def _real_values(name, value):
    """:func:`real_array` without its test for NaN (the caller's own test covers it)."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be real numbers, got {_short_repr(value)}"
        ) from None
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be real numbers (not strings, bools, complex numbers or objects), "
            f"got {_short_repr(value)}"
        )
    return arr.astype(float, copy=False)


def probability_array(name, value):
    """Like :func:`real_array`, with every entry in ``[0, 1]``."""
    arr = real_array(name, value)
    if ((arr < 0) | (arr > 1)).any():
        raise ValueError(f"{name} must lie in [0, 1], got {_short_repr(value)}")
    return arr


def _short_repr(value, limit=200):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def finite_array(name, value):
    """Like :func:`real_array` but every entry must also be finite."""
    arr = _real_values(name, value)
    # one pass in the common case; then which entry is wrong
    if not np.isfinite(arr).all():
        if np.isnan(arr).any():
            raise ValueError(f"{name} must not contain NaN, got {_short_repr(value)}")
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def integer_array(name, value, *, limit=None, why=""):
    """Return ``value`` as a float array of integers (0-d for scalars), or raise a ``ValueError`` naming ``name``.

    The one home of "this value (array) must hold integers" (true values and releases of the integer-valued
    families).  NaN and ``±inf`` are refused (:func:`finite_array`), and so is every entry that is not
    *exactly* an integer: there is no tolerance, so ``3.0000000001`` (or ``3 + 2**-51``) is refused.  A count
    that went through float arithmetic should be rounded on purpose (``np.rint``) by the caller; the exact
    audits and the integer sums downstream rely on the values being the integers they claim to be.  Floats
    with ``|x| >= 2**52`` are all integers; ``limit`` (e.g. ``2.0**52``) refuses entries with ``|x| > limit``.
    ``why`` is appended to the message (e.g. ``" for the integer-valued DiscreteBIT"``).  Bools and strings are
    refused, as by :func:`finite_array`.
    """
    arr = finite_array(name, value)
    bad = arr != np.floor(arr)
    if limit is not None:
        bad |= np.abs(arr) > limit
    if bad.any():
        bound = "" if limit is None else f" with |{name}| <= {_number_text(limit)}"
        raise ValueError(f"{name} must be integers{bound}{why}, got {value!r}")
    return arr


def _number_text(x):
    """``2**52`` for a power of two (above 1), else ``repr(x)``."""
    mantissa, exponent = math.frexp(x)
    return f"2**{exponent - 1}" if mantissa == 0.5 and exponent > 1 else repr(x)


def count(name, value, minimum):
    """Return ``value`` as an int, checked to be an integer (not a bool) ``>= minimum``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < minimum
    ):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def size(value, *, itemsize=8, copies=4):
    """Return a valid numpy ``size`` (None, int >= 0 or tuple of ints >= 0) whose draws fit in memory.

    A sampler holds its output and a few working arrays of the same shape (``copies`` of
    ``itemsize`` bytes per draw); a size whose arrays would exceed this machine's memory is refused here,
    before anything is allocated, with a ``ValueError`` naming ``size`` and the bytes it would need.
    """
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"size must be >= 0, got {value!r}")
        dims = (int(value),)
        out = int(value)
    else:
        try:
            dims = tuple(value)
        except TypeError:
            raise ValueError(
                f"size must be None, an int or a tuple of ints, got {value!r}"
            ) from None
        for d in dims:
            if not isinstance(d, numbers.Integral) or isinstance(d, bool) or d < 0:
                raise ValueError(f"size must contain only ints >= 0, got {value!r}")
        dims = tuple(int(d) for d in dims)
        out = dims
    draws = math.prod(dims)
    need = draws * itemsize * copies
    if need > memory_bytes():
        raise ValueError(
            f"size={value!r} asks for {draws:.3g} draws, about {need:.3g} bytes with the sampler's "
            f"working arrays, more than this machine's {memory_bytes():.3g} bytes of memory"
        )
    return out


def memory_bytes():
    """The machine's physical memory in bytes (``2**40`` where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2**40


def generator(rng, name="rng"):
    """Return a ``numpy.random.Generator`` from what SPEC 7 allows for ``rng``.

    ``None`` gives a fresh default generator, an int ``>= 0`` (or a ``SeedSequence`` or ``BitGenerator``)
    seeds one with ``numpy.random.default_rng``, and a ``Generator`` is used as it is.
    """
    if rng is None or isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(
                f"{name} must be an int seed >= 0, a numpy.random.Generator or None, got {rng!r}"
            )
        return np.random.default_rng(int(rng))
    raise ValueError(
        f"{name} must be an int seed >= 0, a numpy.random.Generator or None, got {rng!r}"
    )


def extended_real(name, value):
    """Return ``value`` as a float that may be infinite, or raise if it is NaN or not a real number."""
    return _real(name, value)


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        try:
            arr = np.asarray(value)
        except Exception:
            arr = None
        if (
            arr is None
            or arr.ndim != 0
            or not np.issubdtype(arr.dtype, np.number)
            or np.iscomplexobj(arr)
        ):
            raise ValueError(f"{name} must be a real number, got {value!r}")
        value = arr.item()
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must not be NaN, got {value!r}")
    return v
