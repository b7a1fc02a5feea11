r"""Private kernels of the closed-form inversions in the true value ``q`` (the hook ``_quantile_in_q``).

A release ``M = clip(q + N, lower, upper)`` of a location family with symmetric noise ``N`` has, at a
release ``x``, the randomized probability-integral transform ``U_q = P_q(M < x) + v P_q(M = x)``: between
the bounds it is the noise's cdf at ``x - q`` (no atom there), at a finite bound the atom of the clamped
tail enters with the weight ``v``.  Where the transform is on the noise's exponential tail (Laplace noise,
``P(N <= -t) = e^{-t/b}/2``; discrete Laplace noise, ``P(K <= m) = α^{-m}/(1 + α)`` for ``m <= -1``) the
equation ``U_q = p`` (or ``1 - U_q = p``) is linear in ``q`` after a logarithm, and the kernels here
return its root together with a **proved width**: a bound on the distance from the root of every ``q``
where the transform, *as the intervals compute it* (``dpbook.inference.intervals``: the family's
``cdf``/``sf`` at ``x`` and at the release below it), can be on either side of ``p``.  Outside that zone
the computed predicate is the exact one, so the intervals take their ends from the root and the width
without evaluating the law (:class:`Root`).

**The bound** (``u = 2^-53``; the one assumption: numpy's ``exp`` and ``log`` within ``E = 4`` units in the
last place, their documented error being under one, checked against ``decimal`` in the tests).  The
computed tail ``T~`` at ``q`` is ``T(q) e^{δ}`` with ``|δ| <= 2.01 u |z| + E u`` (``z = (x - q)/b``: two
roundings of the argument, then ``exp``); the randomized transform is a convex combination of two such
values (or the smaller of them where their computed difference is negative, which moves it by at most
``2|δ|`` more), times ``v`` or ``1 - v``: ``|δ_U| <= 3(2.01 u |z| + E u) + 4u``.  The logarithm of the tail
has slope ``1/b`` in ``q``, so the computed crossing lies within ``b |δ_U|`` of the exact root; the closed
form adds its own error (``(E + 1) u |z_0| + u b`` for ``z_0 = b log(2r)``, two roundings of a sum of
spacing ``ulp(|x| + |z_0|)``) and, between the bounds of a continuous law, the randomized transform's
interpolation between the release ``x`` and the double ``x^-`` below it (at most ``h = x - x^-``).  The sum
is ``11.03 u |z_0| + 17 u b + h + 2 ulp(|x| + |z_0|)`` (with ``E = 4``); doubled for safety, and written with
``ulp(y) <= 2u|y| + 2^-1074``, ``h <= 2u|x| + 2^-1074``, it is at most
``W = u (32 |z_0| + 36 b + 12 |x|) + 2^-1020``, which also covers the rounding of the intervals' ``root ± W``.
For the discrete Laplace tail ``log T = m λ - log(1 + α)`` (``λ = 1/b``, ``m`` an integer ``<= -1``; the
law's ``λ`` and ``log(1 + α)`` are used by both) the same steps give ``|δ_T| <= 2.01 u (|m| λ + log(1 + α))
+ E u``, a zone of ``|δ_U|/λ`` and a root error of ``((4 + E) u + E u |log r| + u |log r + log(1 + α)|)/λ
+ u |m_0|``; doubled, with the roundings, ``W = (u/λ)(32 (|log r| + log(1 + α)) + 48) + u (16 |m_0| + 8 |x|)
+ 2^-1020``.

A root is certified only on the exponential tail (an effective probability ``r <= 1/2``, resp. every
integer of the zone at ``m <= -1``); elsewhere the width is NaN and the intervals search from the root.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = []

#: the unit roundoff of a double
_U = 2.0**-53

#: added to every width for the spacings of subnormal numbers (at most ``2^-1074`` each); a normal number,
#: as arithmetic on subnormal ones is slow on most processors
_TINY = 2.0**-1020


class Root(NamedTuple):
    """A closed-form root of the transform in ``q`` and its proved ``width`` (module docstring): every ``q``
    where the computed transform may be on either side of ``p`` lies within ``width`` of ``root``.  ``root``
    is ``±inf`` with width 0 where the transform is on one side of ``p`` for every true value of the
    domain (``+inf``: the predicate ``U >= p``, resp. ``1 - U >= p``, holds everywhere for the lower tail,
    fails everywhere for the upper one); ``width`` is NaN where the root is only a starting point."""

    root: np.ndarray
    width: np.ndarray


def _on_bounds(x, lower, top):
    """Where the release is on a finite bound (``None`` for an infinite one: no comparison made)."""
    return (
        None if np.isinf(lower) else x == lower,
        None if np.isinf(top) else x == top,
    )


def _laplace_root(x, p, v, upper, scale, lower=-np.inf, top=np.inf):
    """The :class:`Root` of ``P_q(M < x) + v P_q(M = x) = p`` (``upper`` false) or ``P_q(M > x) + (1 - v)
    P_q(M = x) = p`` (``upper`` true) for ``M = clip(q + L_b, lower, top)`` (Laplace noise of scale ``b``).

    The lower tail is ``r' F(e - q)`` with the noise cdf ``F`` and ``e`` between ``x^-`` and ``x`` (the
    intervals compute ``P(M < x)`` as ``P(M <= x^-)``; the width covers the spacing): ``r' = 1`` between the
    bounds, ``v`` at ``x = lower``, and at ``x = top`` the transform is at least ``1/2`` on the domain (root
    ``+inf``).  The upper tail is ``r' F(q - e)`` with ``r' = 1`` between the bounds, ``1 - v`` at ``x = top``,
    and at least ``1/2`` at ``x = lower`` (root ``-inf``).  On the tail (``r = p/r' <= 1/2``) the root is
    ``x ∓ b log(2r)``.  A larger ``r`` puts the end on a bound, where that is decided exactly: at
    ``x = lower`` for the lower tail ``U <= v/2 < p`` at ``q = lower`` (root ``-inf``); at ``x = top`` for the
    upper tail only ``q = top`` can pass, and does where ``(1 - v) P_top(M > top^-) >= p``, computed as the
    intervals compute it (root ``top``, else ``+inf``).

    The width (module docstring) is written with ``ulp(y) <= 2u|y| + 2^-1074``, ``x - x^- <= 2u|x| + 2^-1074``:
    ``W = u (32 |z_0| + 36 b + 12 |x|) + 2^-1020`` (``z_0 = b log(2r)``; a normal number for the last term, as
    arithmetic on subnormal ones is slow on most processors), covering also the rounding of the
    intervals' ``root ± W``.  The releases on a bound are computed apart (on their own positions only).
    """
    b = float(scale)
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z0 = b * np.log(2.0 * np.minimum(p, 0.5))
        root = np.asarray(x + z0 if upper else x - z0)
        width = np.asarray(np.abs(x))
        width *= 12.0 * _U
        width += _U * (32.0 * np.abs(z0) + 36.0 * b) + _TINY
        if np.ndim(p) or np.ndim(v) > x.ndim or p >= 0.5:
            return _laplace_bounds(x, p, v, upper, b, lower, top)
        on_lower, on_top = _on_bounds(x, lower, top)
        for bound, on in ((lower, on_lower), (top, on_top)):
            if on is None or not on.any():
                continue
            at = np.flatnonzero(on)
            w = v if np.ndim(v) == 0 else np.broadcast_to(v, x.shape).ravel()[at]
            r, z, ok = None, None, None
            if (bound == lower) != bool(upper):  # the atom's weight divides p
                r = p / ((1.0 - w) if upper else w)
                z = b * np.log(2.0 * np.minimum(r, 0.5))
                ok = r <= 0.5
            if upper and bound == lower:  # 1 - U >= 1 - v/2 >= p
                edge = -np.inf
            elif not upper and bound == top:  # U >= 1/2 >= p
                edge = np.inf
            elif (
                upper
            ):  # x = top: (1 - v) P(M > top^-) at q = top, as the intervals compute it
                h = top - np.nextafter(top, -np.inf)
                at_top = (1.0 - w) * (1.0 - 0.5 * np.exp(-np.abs((top - h - top) / b)))
                edge = np.where(ok, top + z, np.where(at_top >= p, top, np.inf))
            else:  # x = lower with r > 1/2: U <= v/2 < p at q = lower
                edge = np.where(ok, lower - z, -np.inf)
            flat_root, flat_width = root.reshape(-1), width.reshape(-1)
            flat_root[at] = edge
            if ok is None:
                flat_width[at] = 0.0
            else:
                extra = _U * (32.0 * np.abs(np.where(ok, z, 0.0)) + 36.0 * b)
                flat_width[at] = np.where(
                    ok, extra + 12.0 * _U * abs(bound) + _TINY, 0.0
                )
        return Root(root, width)


def _laplace_bounds(x, p, v, upper, b, lower, top):
    """:func:`_laplace_root` for arrays of probabilities (or ``p >= 1/2``): the same cases, on whole arrays."""
    x, p, v = np.broadcast_arrays(x, p, v)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        on_lower = x == lower
        on_top = x == top
        if upper:
            r = np.where(on_top, p / (1.0 - v), p)
        else:
            r = np.where(on_lower, p / v, p)
        z = b * np.log(2.0 * np.minimum(r, 0.5))
        base = x + z if upper else x - z
        ok = r <= 0.5
        w = _U * (32.0 * np.abs(z) + 36.0 * b + 12.0 * np.abs(x)) + _TINY
        root, width = base, np.where(ok, w, np.nan)
        if upper:
            h = top - np.nextafter(top, -np.inf)
            at_top = (1.0 - v) * (1.0 - 0.5 * np.exp(-np.abs((top - h - top) / b)))
            edge = np.where(at_top >= p, top, np.inf)
            root = np.where(on_lower, -np.inf, np.where(on_top & ~ok, edge, root))
            width = np.where(on_lower | (on_top & ~ok), 0.0, width)
        else:
            root = np.where(on_top, np.inf, np.where(on_lower & ~ok, -np.inf, root))
            width = np.where(on_top | (on_lower & ~ok), 0.0, width)
        return Root(root, width)


def _geometric_root(x, p, v, upper, lam, log1p_alpha, lower=-np.inf, top=np.inf):
    """The :class:`Root` of the same transforms over integer ``q`` for ``M = clip(q + K, lower, top)`` with
    discrete Laplace noise ``K`` (``λ = 1/b``, ``log1p_alpha = log(1 + α)``, ``α = e^{-λ}``), where the
    intervals compute ``P(M < x)`` as ``P(M <= x - 1)``.

    On the tail, ``T(m) = P(K <= m) = e^{λ m}/(1 + α)`` (``m <= -1``) and ``T(m - 1) = α T(m)``, so the lower
    tail is ``T(x - q)(v + (1 - v) α)`` between the bounds, ``v T(lower - q)`` at ``x = lower``, and the upper
    tail ``T(q - x)(1 - v + v α)`` between them, ``(1 - v) T(q - top)`` at ``x = top``: ``T(m) = r`` gives
    ``m_0 = (log r + log(1 + α))/λ``, certified where every integer of the zone has ``m <= -1``.  Where the
    weighted atom's ``r`` is above ``T(-1)`` for sure, only ``q`` on that bound can pass, and does where
    ``(weight) T(0) >= p``.  At the other bound, the lower tail at ``x = top`` is at least ``1/2`` from
    ``q = top - 1`` down and ``s + v(1 - s)`` at ``q = top`` (``s = T(-1)``), so the end is ``top`` or
    ``top - 1``; at ``x = lower`` the upper tail is ``1 - v(1 - s)`` at ``q = lower``, above ``1/2`` from
    ``lower + 1`` on.  Each is decided where the value is more than ``1e-12`` (far above its rounding) from
    ``p``.  The releases on a bound are computed apart (on their own positions only).
    """
    lam = float(lam)
    alpha = math.exp(-lam)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        shape = np.broadcast_shapes(np.shape(x), np.shape(p), np.shape(v))
        x = np.broadcast_to(np.asarray(x, dtype=float), shape)
        r = p / ((1.0 - v + v * alpha) if upper else (v + (1.0 - v) * alpha))
        m0, width = _geometric_tail(x, r, lam, log1p_alpha)
        m0 = np.broadcast_to(m0, shape).copy()  # the root is x + m0 (upper), x - m0
        flat_m0, flat_width = m0.reshape(-1), width.reshape(-1)
        for bound, on in zip((lower, top), _on_bounds(x, lower, top)):
            if on is None or not on.any():
                continue
            at = np.flatnonzero(on)
            w, pp = (
                np.broadcast_to(a, shape).ravel()[at] if np.ndim(a) else a
                for a in (v, p)
            )
            if (bound == lower) != bool(upper):  # the atom's weight divides p
                weight = (1.0 - w) if upper else w
                r = pp / weight
                edge, raw = _geometric_raw(np.full(at.size, bound), r, lam, log1p_alpha)
                edge_width = np.where(edge + raw < -1.0, raw, np.nan)
                # T(0) as the law computes it; where r > T(-1) for sure only q = bound can pass
                # (offset -1/2 where it does, else +1/2)
                at_bound = weight * np.exp(np.log1p(-np.exp(-lam - log1p_alpha)))
                alone = edge - raw > -1.0
                edge = np.where(alone, np.where(at_bound >= pp, -0.5, 0.5), edge)
                sure = np.abs(at_bound - pp) > 1e-12
                edge_width = np.where(alone, np.where(sure, 0.0, np.nan), edge_width)
            else:  # passes at the bound itself (offset -inf), else from the next integer on
                s = math.exp(-lam - log1p_alpha)  # T(-1)
                at_end = (1.0 - w * (1.0 - s)) if upper else (s + w * (1.0 - s))
                edge = np.where(at_end >= pp, -np.inf, 0.5)
                edge_width = np.where(np.abs(at_end - pp) > 1e-12, 0.0, np.nan)
            flat_m0[at] = edge
            flat_width[at] = edge_width
        return Root(x + m0 if upper else x - m0, width)


def _geometric_width(log_r, m0, x, lam, log1p_alpha):
    """The width of :func:`_geometric_root` (module docstring) before the tail's condition."""
    width = np.abs(x) * (8.0 * _U) + _U * 16.0 * np.abs(m0)
    width += (_U / lam) * (32.0 * (np.abs(log_r) + log1p_alpha) + 48.0) + _TINY
    return width


def _geometric_tail(x, r, lam, log1p_alpha):
    """``(m_0, width)`` of :func:`_geometric_root` on the tail (width NaN where the zone leaves it); the root
    is ``x ± m_0``."""
    m0, raw = _geometric_raw(x, r, lam, log1p_alpha)
    return m0, np.where(m0 + raw < -1.0, raw, np.nan)


def _geometric_raw(x, r, lam, log1p_alpha):
    """``(m_0, width)`` of :func:`_geometric_root`, the width before the tail's condition."""
    log_r = np.log(r)
    m0 = (log_r + log1p_alpha) / lam
    return m0, _geometric_width(log_r, m0, x, lam, log1p_alpha)
