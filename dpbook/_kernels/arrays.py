"""Private array helpers: result conversion, broadcast compaction and the exact search over the doubles."""

from __future__ import annotations

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
