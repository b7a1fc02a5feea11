"""Private array helpers: result conversion, broadcast compaction and the exact search over the doubles."""

from __future__ import annotations

import functools
import math

import numpy as np


def _identity(q):
    return q


def _compact(q):
    """The smallest array that broadcasts to the broadcast view ``q`` (drops stride-0 axes)."""
    return q[tuple(slice(None, 1) if s == 0 else slice(None) for s in q.strides)]


def _float(a):
    """Return a Python float for 0-d results, else the array."""
    a = np.asarray(a, dtype=float)
    return float(a) if a.ndim == 0 else a


#: elements per block of a constant (:func:`_constant`, 128 kB)
_CONSTANT = 2**14


@functools.lru_cache(maxsize=32)
def _constant(bits):
    """A read-only block of ``_CONSTANT`` copies of the double ``float.fromhex(bits)`` (keyed by its hex form, so
    that ``-0.0`` and ``0.0`` are two blocks)."""
    block = np.full(_CONSTANT, float.fromhex(bits))
    block.flags.writeable = False
    return block


_NUMBERS = (float, int, np.floating, np.integer)


def _bound_in_place(x, lower=-math.inf, upper=math.inf):
    """``x`` clipped in place to ``[lower, upper]``, returned: the samplers' bound.

    numpy (2.4) runs ``maximum``/``minimum`` of an array and a scalar at 1.6 ns an element, against 0.3 for two
    contiguous arrays (only the latter loop is SIMD) and 0.57 for ``clip`` with two scalar bounds (measured here,
    ``timeit`` on 2^14 doubles).  So two finite scalar bounds take ``clip``, and one finite bound on a contiguous
    ``x`` takes ``maximum`` (``minimum``) against a cached block of the constant, ``_CONSTANT`` elements at a time:
    the very comparisons of ``np.maximum(x, lower)``, hence its values, signed zeros and NaNs included.
    """
    if not (isinstance(lower, _NUMBERS) and isinstance(upper, _NUMBERS)):
        return np.clip(x, lower, upper, out=x)
    finite_low, finite_high = lower != -math.inf, upper != math.inf
    if finite_low and finite_high:
        return np.clip(x, lower, upper, out=x)
    if not (finite_low or finite_high):
        return x
    bound, fn = (lower, np.maximum) if finite_low else (upper, np.minimum)
    if not x.flags.c_contiguous or x.size < 64:
        return fn(x, bound, out=x)
    flat = x.reshape(-1)
    block = _constant(float(bound).hex())
    for i in range(0, flat.size, _CONSTANT):
        part = flat[i : i + _CONSTANT]
        fn(part, block[: part.size], out=part)
    return x


_SIGN_MASK = np.int64(0x7FFFFFFFFFFFFFFF)


def _key(x):
    """Map doubles to int64 keys that sort as the doubles do (``-0.0`` just below ``+0.0``)."""
    i = np.asarray(x, dtype=np.float64).view(np.int64)
    return i ^ ((i >> 63) & _SIGN_MASK)


def _unkey(k):
    """The inverse of :func:`_key`."""
    k = np.asarray(k, dtype=np.int64)
    return (k ^ ((k >> 63) & _SIGN_MASK)).view(np.float64)


def _invert_cdf(reached, p, lo, hi):
    """The smallest double ``x`` in ``(lo, hi]`` with ``reached(x, p)`` true, for each ``p``, by bisection.

    ``reached(x, p)`` must be monotone in ``x`` (false, then true) and true at ``hi``; it is never
    evaluated at ``lo`` or ``hi``.  The search runs over the ordered doubles, so it ends after at most
    64 halvings at the exact switching point of the *computed* predicate.  With
    ``reached = cdf(x) >= p`` this is the generalized inverse ``inf{x: cdf(x) >= p}``: a jump of the cdf
    (a point mass) is found at its exact location.
    """
    p = np.asarray(p, dtype=float)
    k_lo = np.broadcast_to(_key(lo), p.shape).copy()
    k_hi = np.broadcast_to(_key(hi), p.shape).copy()
    for _ in range(70):
        open_ = k_hi - 1 > k_lo  # (k_hi - k_lo would overflow between -inf and inf)
        if not open_.any():
            break
        mid = (k_lo >> 1) + (k_hi >> 1) + (k_lo & k_hi & 1)
        mid = np.where(open_, mid, k_hi)
        with np.errstate(over="ignore", under="ignore"):
            ok = np.asarray(reached(_unkey(mid), p), dtype=bool)
        k_hi = np.where(open_ & ok, mid, k_hi)
        k_lo = np.where(open_ & ~ok, mid, k_lo)
    return _unkey(k_hi) + 0.0  # -0.0 -> 0.0


def _below(a):
    """The largest double below ``a`` (``-inf`` for ``a = -inf``)."""
    return -np.inf if a == -np.inf else float(np.nextafter(a, -np.inf))


class _FromLogTails:
    """The four tail functions of a law from its one method ``_log_tails(x, q) -> (log P(M <= x), log P(M > x))``
    (both tails in log space at once, as a family computes them most accurately): mixed in before the
    :class:`dpbook.Mechanism` base, whose defaults it replaces."""

    def _logcdf(self, x, q):
        return self._log_tails(x, q)[0]

    def _logsf(self, x, q):
        return self._log_tails(x, q)[1]

    def _cdf(self, x, q):
        return np.exp(self._log_tails(x, q)[0])

    def _sf(self, x, q):
        return np.exp(self._log_tails(x, q)[1])
