"""Private kernels of the closed-form inversions in the true value ``q`` (the hook ``_quantile_in_q``).

A release ``M = clip(q + N, lower, upper)`` of a location family with symmetric noise ``N`` has, at a
release ``x``, the randomized probability-integral transform ``U_q = P_q(M < x) + v P_q(M = x)``: between
the bounds it is the noise's cdf at ``x - q`` (no atom there), at a finite bound the atom of the clamped
tail enters with the weight ``v``.  Solving ``U_q = p`` (or ``1 - U_q = p``) for ``q`` needs the noise's
quantile function only: these are the intervals' starting points (``dpbook.inference.intervals``)."""

from __future__ import annotations

import numpy as np

__all__ = []


def _clamped_root(x, p, v, upper, ppf, lower=-np.inf, top=np.inf, continuous=True):
    """The ``q`` with ``P_q(M < x) + v P_q(M = x) = p`` (``upper`` false) or ``P_q(M > x) + (1 - v) P_q(M = x)
    = p`` (``upper`` true) for ``M = clip(q + N, lower, top)``; ``ppf`` is the quantile function of the
    symmetric noise ``N`` on ``[0, 1]`` (``-inf`` at 0, ``inf`` at 1).

    Between the bounds ``P(N <= x - q) = p`` gives ``q = x - ppf(p)`` and ``P(N >= x - q) = p`` gives
    ``q = x + ppf(p)``; at ``x = lower`` the transform is ``v F(lower - q)`` (resp. ``1 - v F(lower - q)``),
    at ``x = top`` it is ``1 - (1 - v) S(top - q)`` (resp. ``(1 - v) S(top - q)``).  A probability outside
    ``[0, 1]`` has no root: the answer is ``±inf``, the side where the predicate holds everywhere.

    ``continuous``: between the bounds the intervals compute ``P(M < x)`` as ``P(M <= x^-)`` at the double
    ``x^-`` below ``x``, so the computed transform is that of the noise at ``x - (1 - v)(x - x^-) - q``
    (a point between ``x^-`` and ``x``); the root is moved by that fraction of a spacing, which is what
    puts it on the double where the computed transform crosses ``p`` rather than one or two off.  (An
    integer-valued family uses ``x - 1`` and its own rounding of the root: ``continuous=False``.)
    """
    x, p, v = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (x, p, v)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if upper:
            at_lower, at_top, inside = (1.0 - p) / v, p / (1.0 - v), p
        else:
            at_lower, at_top, inside = p / v, (1.0 - p) / (1.0 - v), p
        r = np.clip(
            np.where(x == lower, at_lower, np.where(x == top, at_top, inside)), 0.0, 1.0
        )
        z = ppf(np.nan_to_num(r, nan=1.0))
        shift = (1.0 - v) * (x - np.nextafter(x, -np.inf)) if continuous else 0.0
        inside = (x + z if upper else x - z) - shift
        return np.where(x == lower, lower - z, np.where(x == top, top + z, inside))
