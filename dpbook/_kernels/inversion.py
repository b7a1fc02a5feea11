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

**Truncations** (:func:`_truncated_root`, :func:`_count_root`).  Conditioning on ``[lower, top]`` divides the
tail by the mass kept, so ``U_q = p`` is a quadratic in ``e^{-|q - x|/b}`` (resp. ``α^{c - x}``) on each side
of the release.  The same two steps give the width: a bound ``Δ`` on the relative error of the transform as
the law computes it, and a lower bound on the slope of the exact transform over the zone, which vanishes
where the tail flattens next to the far bound (the law at ``q`` beyond a bound is the law at the bound):
there the width grows like ``1/(1 - e^{-B_r})`` and past ``2^20`` times the scale's ulps the root is only a
starting point.  The continuous width is proved in closed form; the count's is certified at run time from
running error bounds of the quadratic's coefficients and its residual at the root (its ends only need the
zone to miss the integers).  ``expm1``, ``log1p`` and ``logaddexp`` are assumed within ``E = 4`` ulps too.
"""

from __future__ import annotations

import functools
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


# --- monotone transforms of the Laplace release (TranslatedRamp, LogLaplace) ---------------------------------


def _shifted_root(root, shift):
    """The :class:`Root` in ``q`` of a transform that the family computes at ``y = fl(q - shift)`` (a
    :class:`dpbook.TranslatedRamp` is :class:`dpbook.BIT` read at ``q - α``), from its root ``R`` and width
    ``W`` in ``y``.

    ``fl(q - shift)`` is nondecreasing in ``q`` and within ``u |q - shift|`` of it, so every ``q`` where the
    computed transform may be on either side of ``p`` has ``|q - shift - R| <= W + u |q - shift|``, with
    ``|q - shift| <= (|R| + W)(1 + 1.01 u)``; the root ``fl(R + shift)`` adds ``u(|R| + shift)`` and the
    intervals' ``root ± width`` one more rounding of ``u(|R| + shift + width)``: in all at most ``(W + 4u(|R|
    + shift))(1 + 4u) + 2^-1020``.  Every width of :func:`_laplace_root` and :func:`_ramp_atom` is at least
    ``12 u |R|`` (``|R| <= (|x| + |z_0|)(1 + u)`` against ``u(12|x| + 32|z_0|)``; ``21 u b |log 2g|`` against
    ``|R| = b |log 2g|``), so ``4u|R| <= W/3`` and the width ``1.5 W + 5u shift + 2^-1020`` covers it (an
    infinite root stays infinite, a NaN width NaN)."""
    r, w = root
    with np.errstate(invalid="ignore", over="ignore"):
        return Root(r + shift, 1.5 * w + (5.0 * _U * abs(shift) + _TINY))


def _ramp_root(x, p, v, upper, scale, shift):
    r"""The :class:`Root` in ``q`` of the transform of ``max(q - α + L_b, 0)`` (:class:`dpbook.TranslatedRamp`,
    computed as :class:`dpbook.BIT` with ``lower = 0`` at ``y = q - α``): BIT's roots in ``y``
    (:func:`_laplace_root`) moved to ``q`` (:func:`_shifted_root`), except at the atom ``x = 0``, where ``y``
    also runs below the bound (``q < α``) and the transform leaves the exponential tail.

    At ``x = 0`` the intervals compute ``U = fl(v fl(1 - e~))`` (``P(M < 0) = 0`` exactly; ``v = 1`` for the
    plain interval) and ``1 - U = fl(e~ + fl(A fl(1 - e~)))`` with ``A = fl(1 - v)`` (exact for ``v >= 1/2``,
    the only case that matters below), where ``e~ = 0.5 exp(-|z~|)``, ``z~ = fl(-y/b)``, is the computed
    ``e = e^{y/b}/2`` for ``y < 0``: ``e~ = e e^θ`` with ``|θ| <= u|z| + 1.01 E u``.

    * Lower tail, ``r = p/v <= 1/2``: BIT's root ``y = -b log(2r) >= 0`` with its width, certified where its
      zone stays at ``y >= 0`` (there ``U = v e^{-y/b}/2`` is BIT's).  ``r > 1`` (``v < p``): ``U <= v < p``
      for every ``y`` (root ``-inf``).  ``1/2 < r < 1``: ``U = v(1 - e) = p`` at ``e = g = 1 - r``, ``y <
      0``.  The computed predicate passes where ``1 - e~ >= r(1 + 2.03u)`` and fails where ``1 - e~ < r(1 -
      3.02u)`` (two roundings; ``fl(t) >= p`` implies ``t >= p(1 - u)``), so ``e~`` is within ``κ g`` of ``g``
      in the zone, ``κ = 3.02 u r/(1 - r)``.
    * Upper tail: ``1 - U >= 1/2 > p`` for ``y >= 0``; for ``y < 0`` it is ``A + v e``, at least ``p`` for
      every ``y`` where ``A >= p(1 + 4u)`` (root ``-inf``; the two roundings of ``A(1 - e~)`` lose at most
      ``2.01 u A``), else ``= p`` at ``e = g = (p - A)/v``.  The computed sum is ``A + v e~ + η`` with ``|η| <=
      2.01 u A``, so ``e~`` is within ``κ g`` of ``g`` in the zone, ``κ = u(p + 2.01 A)/(v g)``.

    With ``κ <= 2^-20``, ``|log(1 ± κ)| <= 2κ``: the zone in ``y`` is ``b log(2g) ± b(2κ + u|z| + 1.01 E u)``,
    and the closed form ``b fl(log(2 fl(g)))`` adds ``b u (2.1 + (2E + 1.01)|log 2g|)`` (``fl(g)`` is within
    ``κ g`` of ``g`` too; ``1 - fl(r)`` is exact by Sterbenz).  With ``E = 4`` and ``|z| <= |log 2g| + 1.1``,
    doubled: ``W = b u (4κ/u + 16 + 21 |log 2g|)``, certified where the zone lies at ``y < 0``; elsewhere the
    root is a starting point (width NaN)."""
    b = float(scale)
    x = np.asarray(x, dtype=float)
    shape = np.broadcast_shapes(x.shape, np.shape(p), np.shape(v))
    if np.ndim(p):
        # arrays of probabilities: BIT's general path, then the atom on its own positions
        root, width = _laplace_root(x, p, v, upper, b, 0.0, np.inf)
    else:  # off the atom neither v nor the bound plays a role: the plain Laplace root
        root, width = _laplace_root(x, p, 0.5, upper, b)
    on_atom = np.broadcast_to(x == 0.0, shape)
    if on_atom.any():
        if root.shape != shape or not (root.flags.owndata and width.flags.owndata):
            root = np.array(np.broadcast_to(root, shape), dtype=float)
            width = np.array(np.broadcast_to(width, shape), dtype=float)
        if np.ndim(p) == 0 and np.ndim(v) == 0:  # the same answer at every atom
            r0, w0 = _ramp_atom_once(float(p), float(v), bool(upper), b)
            np.putmask(root, on_atom, r0)
            np.putmask(width, on_atom, w0)
        else:
            at = np.flatnonzero(on_atom)
            pp, w = (
                np.broadcast_to(np.asarray(a, dtype=float), shape).reshape(-1)[at]
                if np.ndim(a)
                else np.full(at.size, float(a))
                for a in (p, v)
            )
            r0, w0 = _ramp_atom(pp, w, upper, b)
            flat_root, flat_width = root.reshape(-1), width.reshape(-1)  # views
            flat_root[at], flat_width[at] = r0, w0
    elif root.shape != shape:
        root, width = np.broadcast_to(root, shape), np.broadcast_to(width, shape)
    return _shifted_root(Root(root, width), float(shift))


@functools.lru_cache(maxsize=64)
def _ramp_atom_once(p, v, upper, b):
    """:func:`_ramp_atom` for one ``(p, v)``: the same at every atom of a plain interval (kept for the next
    call, which asks the same)."""
    root, width = _ramp_atom(np.full(1, p), np.full(1, v), upper, b)
    return float(root[0]), float(width[0])


def _ramp_atom(p, v, upper, b):
    """``(root, width)`` in ``y`` at the ramp's atom ``x = 0`` (:func:`_ramp_root`) for flat arrays ``p``,
    ``v``: the common cases on whole arrays, the zone below the bound (``y < 0``) on its own positions."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if upper:
            a = 1.0 - v
            root, width = np.full(v.shape, -np.inf), np.zeros(v.shape)
            # elsewhere 1 - U >= A >= p at every y
            rest = np.flatnonzero(a < p * (1.0 + 4.0 * _U))
            pr, ar, vr = p[rest], a[rest], v[rest]
            g = (pr - ar) / vr
            root[rest], width[rest] = _ramp_below(g, (pr + 2.01 * ar) / (vr * g), b)
            return root, width
        r = p / v
        # BIT's root at its bound, y = -b log(2r) >= 0, with its width u(32 y + 36 b) + 2^-1020
        root = np.log(2.0 * np.minimum(r, 0.5))
        root *= -b
        width = root * (32.0 * _U)
        width += 36.0 * _U * b + _TINY
        # its zone at y >= 0 only (y >= W); r > 1/2 (y = 0) is among these
        near = np.flatnonzero(root * (1.0 - 32.0 * _U) < 36.0 * _U * b + _TINY)
        rr = r[near]
        g = 1.0 - rr
        below, below_w = _ramp_below(g, 3.02 * rr / g, b)
        never = rr > 1.0  # U <= v < p everywhere
        root[near] = np.where(never, -np.inf, np.where(rr > 0.5, below, root[near]))
        width[near] = np.where(never, 0.0, np.where(rr > 0.5, below_w, np.nan))
        return root, width


def _ramp_below(g, kappa, b):
    """``(root, width)`` at the atom below the bound: ``y = b log(2g)`` with ``W = b u (4κ/u + 16 + 21 |log
    2g|)`` (``kappa`` in units of ``u``), certified where ``κ <= 2^-20`` and the zone lies at ``y < 0``."""
    lg = np.log(2.0 * g)
    y0 = b * lg
    w0 = b * _U * (4.0 * kappa + 16.0 + 21.0 * np.abs(lg))
    ok = (g > 0.0) & (kappa <= 2.0**-20 / _U) & (y0 + w0 < 0.0)
    start = np.where(np.isfinite(y0), y0, np.where(g > 0.0, 0.0, -np.inf))
    return start, np.where(ok, w0, np.nan)


#: ``log`` of the largest double and of the smallest positive one
_LOG_MAX = math.log(np.finfo(float).max)
_LOG_TINY = math.log(2.0**-1074)


def _log_root_fast(x, p, upper, b):
    """:func:`_log_root` for one probability ``p < 1/2`` (else ``None``): the root ``x e^{±s}`` (``s = -b
    log(2p)``; no atoms, so ``v`` plays no role) with a width linear in ``λ = |log x|``, and ``edge`` (the
    releases to leave to :func:`_log_root`: not normal, or a zone that may leave the positive doubles).

    :func:`_log_root`'s widths at ``|ℓx| <= λ(1 + 1e-15)`` are at most ``W = u(32|z_0| + 36 b + 12 λ) +
    2^-1020``, ``W' = W + u(5 + 40 λ)``, ``W'' = W' + 8.1u(λ + s + W')``; the root is ``fl(x fl(e^{±s}))``
    instead of ``fl(exp(fl(log x) ± s))``: centred at ``log x ± s`` (``8uλ`` more in ``W''``) within ``(E +
    1.01)u`` relative (``8u`` in the width factor instead of ``6u``).  So ``W'' <= c_0 + 69 u λ`` with ``c_0 =
    (u(32|z_0| + 36 b + 5) + 2^-1020)(1 + 9u) + 8.2 u s``, and the width is ``root (1.01 W'' + 8u) +
    2^-1020``; each release's answer depends on that release alone.  Certified where ``c_0 + 69 u · 745 <=
    2^-20`` (``|log x| <= 745`` for every positive double), else ``None``."""
    if np.ndim(p) or not 0.0 < p < 0.5:
        return None
    z0 = float(b * np.log(2.0 * p))
    shift = z0 if upper else -z0
    c0 = (_U * (32.0 * abs(z0) + 36.0 * b + 5.0) + _TINY) * (1.0 + 9.0 * _U)
    c0 += 8.2 * _U * abs(shift)
    c1 = 69.0 * _U * (1.0 + 1e-15)
    if not c0 + 745.0 * c1 <= 2.0**-20:
        return None
    with np.errstate(over="ignore"):
        factor = np.exp(np.float64(shift))
    if not (np.isfinite(factor) and factor > 0.0):
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lam = np.abs(np.log(x))
        root = np.asarray(x * factor)
        width = np.asarray(lam * (1.01 * c1))
        width += 1.01 * c0 + 8.0 * _U
        width *= root
        width += _TINY
        edge = None
        if x.size and not (
            float(np.min(x)) >= 2.0**-1022
            and float(np.max(x)) * factor * 2.0 <= _FLOAT_MAX
            and float(np.min(x)) * factor >= 2.0**-1000
        ):
            w_max = c0 + c1 * lam  # W'' per release
            lx = np.log(np.where(x > 0.0, x, 1.0))
            edge = (
                ~(x >= 2.0**-1022)
                | (lx + shift + w_max + 1e-12 > _LOG_MAX)
                | (lx + shift - w_max - 1e-12 < _LOG_TINY)
            )
    return Root(root, width), edge


#: the largest double
_FLOAT_MAX = float(np.finfo(float).max)


def _log_root(x, p, v, upper, scale, fast=True):
    r"""The :class:`Root` in ``q`` of the transform of ``q e^{L_b}`` (:class:`dpbook.LogLaplace`), computed
    as the Laplace transform at ``ℓx = fl(log x)`` around ``ℓq = fl(log q)``: the Laplace root ``R`` in ``ℓq``
    and its width ``W`` (:func:`_laplace_root`, whose proof takes the release's spacing ``h``), mapped
    through ``exp``.

    The release below ``x`` is ``x^-``, at ``ℓ(x^-) = fl(log x^-)``: ``ℓx - ℓ(x^-) <= log(x/x^-) + 2 · 2Eu|ℓx|
    <= 2.01u + 16u|ℓx|`` (``E = 4``; ``ulp(y) <= 2u|y|``), so ``W' = W + u(5 + 40|ℓx|)`` covers it (plus
    ``1.01 log1p(2^-1074/x^-) >= log(x/x^-)`` for a subnormal ``x``, whose spacing is not relative).
    ``fl(log q)`` is within ``2Eu|log q|`` of ``log q``, so the zone in ``log q`` is ``R ± W''``, ``W'' = W'
    + 8.1u(|R| + W')``, and in ``q`` it is ``[e^{R - W''}, e^{R + W''}]``.  The root ``fl(exp R) = e^R(1 +
    ε)``, ``|ε| <= E u`` (a subnormal result: ``E 2^-1074`` absolute), and for ``W'' <= 2^-20``, ``e^{W''} - 1
    <= 1.001 W''``: the zone lies within ``root (1.001 W'' + 4.1u)`` of the root; with the intervals'
    rounding of ``root ± width``, ``width = root (1.01 W'' + 6u) + 2^-1020``.

    Where the zone lies beyond every positive double (``R - W'' > log(max double)``: the transform is on the
    ``q``-small side of ``p`` for every ``q``, root ``+inf``; ``R + W'' < log(2^-1074)``: root ``-inf``) the
    width is 0.  At ``x = 0`` (``P(M <= 0) = 0``) both transforms are on one side of ``p`` everywhere (root
    ``-inf``); at the smallest positive release (``x^- = 0``) and where ``W'' > 2^-20`` or the zone meets
    either limit the root is a starting point (width NaN)."""
    x = np.asarray(x, dtype=float)
    fast = _log_root_fast(x, p, upper, float(scale)) if fast else None
    if fast is not None:
        (root, width), edge = fast
        if edge is None or not edge.any():
            return Root(root, width)
        rest = _log_root(
            x[edge],
            p,
            v if np.ndim(v) == 0 else np.broadcast_to(v, x.shape)[edge],
            upper,
            scale,
            fast=False,
        )
        root[edge], width[edge] = rest
        return Root(root, width)
    shape = np.broadcast_shapes(x.shape, np.shape(p), np.shape(v))
    positive = x > 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        lx = np.log(np.where(positive, x, 1.0))
        root, width = _laplace_root(lx, p, v, upper, scale)
        # a subnormal release: log(x/x^-) = log1p(2^-1074/x^-), not 2.01u
        spacing = np.where(
            x < 2.0**-1022, 1.01 * np.log1p(2.0**-1074 / np.nextafter(x, 0.0)), 0.0
        )
        width = width + _U * (5.0 + 40.0 * np.abs(lx)) + spacing
        root, width = np.broadcast_arrays(root, width)
        wide = width + 8.1 * _U * (np.abs(root) + width)
        q_root = np.exp(root)
        q_width = q_root * (1.01 * wide + 6.0 * _U) + _TINY
        above = root - wide > _LOG_MAX
        below = root + wide < _LOG_TINY
        inside = (root + wide <= _LOG_MAX) & (root - wide >= _LOG_TINY)
        ok = inside & (wide <= 2.0**-20)
        q_root = np.where(above, np.inf, np.where(below, -np.inf, q_root))
        q_width = np.where(above | below, 0.0, np.where(ok, q_width, np.nan))
        q_width = np.where(np.broadcast_to(x == 2.0**-1074, shape), np.nan, q_width)
        q_root = np.where(np.broadcast_to(positive, shape), q_root, -np.inf)
        q_width = np.where(np.broadcast_to(positive, shape), q_width, 0.0)
        return Root(q_root, q_width)


#: the relative margin of the decisions of :func:`_truncated_root` (a release's side of the root, a root
#: beyond a bound): far above the rounding of the quantities compared (under ``2^-41``)
_SIDE = 2.0**-40

#: the largest slope factors ``κ``, ``G`` that :func:`_truncated_root` certifies (the proof's
#: second-order terms stay far below one unit in the last place)
_FLAT = 2.0**20


def _rounded_root(x, p, v, upper, scale):
    r"""The :class:`Root` over integer ``q`` of the transform of ``round(q + L_b)`` (:class:`dpbook.Rounded` of
    :class:`dpbook.Laplace`), computed by the intervals from ``P(R <= k) = F(k + 1/2)`` (``F`` the Laplace cdf
    as :func:`dpbook._kernels.laplace._laplace_cdf` computes it, ``k ± 1/2`` and ``k + 1/2 - q`` exact for
    ``|k|, |q| < 2^51``).

    With ``s = 1/(2b)``, the lower transform ``U = (1 - v) F(x - 1/2 - q) + v F(x + 1/2 - q)`` is on the
    exponential tail for ``q >= x + 1``: ``U = c e^{(x - q)/b}/2`` with ``c = (1 - v) e^{-s} + v e^{s}``, root
    ``q_0 = x + b(log c - log 2p)``; the upper one, ``v S(x + 1/2 - q) + (1 - v) S(x - 1/2 - q)``, is for ``q <=
    x - 1``: ``c' e^{(q - x)/b}/2`` with ``c' = v e^{-s} + (1 - v) e^{s}``, root ``x - b(log c' - log 2p)``.
    ``log c`` is ``logaddexp`` of ``log(weight) ∓ s``.

    *The width.*  As in the module docstring, the computed transform on the tail is ``U e^{δ}`` with ``|δ| <=
    3(u|z| + 1.01 E u) + 4u`` and ``|z| <= |q - x|/b + s``; the slope of ``log U`` is ``1/b``, so the zone is
    within ``u(3 b |z_0| + 1.5 + 16.2 b)`` of ``q_0`` (``z_0 = (q_0 - x)/b``, ``b s = 1/2``).  The closed form:
    ``logaddexp`` is 1-Lipschitz in each argument with weights ``t`` summing to 1, and ``t |log weight| <= t
    (|log c| + s) + 1/e``, so ``log c`` is within ``u(16 |log c| + 16 s + 16)``; ``log 2p`` within ``8u |log
    2p|``; the products and sums ``3u(|x| + b|z_0|)``.  With ``Z = |log c| + |log 2p| >= |z_0|`` the total is
    below ``u(b(22 Z + 33) + 10 + 3|x|)``; doubled and rounded up, ``W = u(b(48 Z + 72) + 24 + 8|x|) +
    2^-1020``, and since ``c`` lies in ``[e^{-s}, e^{s}]``, ``|log c| <= s`` (``48 b s = 24``): one width ``u(b(48
    |log 2p| + 72) + 48 + 8 max|x|) + 2^-1020`` serves every release of the call.  Certified where the zone and
    its neighbouring integers are on the tail (``q_0 - W >= x + 1``, resp. ``q_0 + W <= x - 1``, checked as
    ``b z_0 ≷ 1 ± W``: the rounding of ``x ± b z_0`` is within the doubling).  ``c`` is computed as ``e^{-s} +
    weight · 2 sinh s`` (two nonnegative terms, a few ``u`` relative), or ``weight · e^{s}`` for ``s > 700``.

    *Next to the release.*  Where the zone lies wholly on the other side of ``x ± 1`` (so ``x + 1`` surely
    fails, resp. ``x - 1``), the end is ``x`` or next to it: ``U(x) = e^{-s}/2 + v(1 - e^{-s})`` (resp. ``1 -
    U(x) = e^{-s}/2 + (1 - v)(1 - e^{-s})``), computed to a few ``u`` relative, decides ``x`` where it is more
    than ``1e-12`` relative from ``p``; otherwise ``x - 1`` passes (``U(x - 1) >= F(1/2) >= 1/2 > p``, also as
    computed), resp. ``x + 1``.  Such an end is returned as the root ``x ± 1/2`` with width ``1/4`` (the zone
    holds no integer).  Elsewhere (``|x| >= 2^51``, or a zone across the tail's edge) the root is a starting
    point (width NaN)."""
    b = float(scale)
    s = 0.5 / b
    x = np.asarray(x, dtype=float)
    p, v = np.asarray(p, dtype=float), np.asarray(v, dtype=float)
    if x.size and not float(np.max(np.abs(x))) < 2.0**51:
        shape = np.broadcast_shapes(x.shape, p.shape, v.shape)
        return Root(np.broadcast_to(x, shape) + 0.0, np.full(shape, np.nan))
    big_x = float(np.max(np.abs(x))) if x.size else 0.0
    w_hi = 1.0 - v if upper else v  # the weight of e^{s}; 1 - w_hi that of e^{-s}
    e = math.exp(-s)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_2p = np.log(2.0 * p)
        if s <= 700.0:  # c = e^{-s} + w_hi 2 sinh(s), a sum of two nonnegative terms
            log_c = np.log(e + w_hi * (2.0 * math.sinh(s)))
        else:  # e^{-2s} is below every weight's relative rounding
            log_c = np.where(w_hi > 0.0, np.log(w_hi) + s, -s)
        shift = b * (log_c - log_2p)
        root = x - shift if upper else x + shift
        # |log c| <= s (c lies in [e^{-s}, e^{s}]) and b s = 1/2: one width for every release
        width = _U * (b * (48.0 * np.abs(log_2p) + 72.0) + 48.0 + 8.0 * big_x) + _TINY
        on_tail = shift >= 1.0 + width  # q_0 - W >= x + 1, resp. q_0 + W <= x - 1
        beyond = shift < 1.0 - width
        at_x = 0.5 * e + w_hi * (1.0 - e)  # U(x), resp. 1 - U(x)
        passes, fails = at_x >= p * (1.0 + 1e-12), at_x <= p * (1.0 - 1e-12)
        sign = -1.0 if upper else 1.0
        near = x + np.where(passes, 0.5 * sign, -0.5 * sign)
        decided = beyond & (passes | fails)
        out_root = np.where(decided, near, np.where(np.isfinite(root), root, x))
        out_width = np.where(on_tail, width, np.where(decided, 0.25, np.nan))
        return Root(out_root, out_width)


def _truncated_root(x, p, v, upper, scale, lower=-np.inf, top=np.inf):
    """The :class:`Root` of ``P_q(M < x) + v P_q(M = x) = p`` (``upper`` false) or ``P_q(M > x) + (1 - v)
    P_q(M = x) = p`` (``upper`` true) for the truncated Laplace law ``M`` (``q + L_b`` conditioned on
    ``[lower, top]``, as ``dpbook.families.truncation._truncated_cdf`` computes it), ``0 < p <= 1/2``.

    The intervals compute the lower tail from the law's cdf at ``e_lo = x^-`` and ``e_hi = x`` (weight
    ``v`` on ``e_hi``; the plain interval reads ``e_hi`` alone), the upper tail from its ``sf`` at ``x`` and
    ``x^-``, which is the cdf of the mirrored law (``-M`` at ``-q`` on ``[-top, -lower]``) at ``e_lo = -x``
    and ``e_hi = -x^-`` with the weight ``1 - v``: one kernel, on the lower tail.  At a point ``e`` inside
    the bounds, with ``A = (e - lower)/b``, ``B = (top - e)/b``, ``w = e^{-|q - e|/b}`` and the normalizer
    ``D = 2 - e^{-(c - lower)/b} - e^{-(top - c)/b}`` (``c = clip(q)``), ``P_q(M <= e)`` is
    ``w (1 - e^{-A})/D`` for ``c >= e`` and ``1 - w (1 - e^{-B})/D`` for ``c <= e``, so ``= p`` is the
    quadratic ``ℓ w^2 - 2 p' w + p' e^{-F} = 0`` with ``p' = p``, ``ℓ = 1 - e^{-A} + p e^{-A}``, ``F = B``
    on the first side (where ``P_e(M <= e) >= p``), and ``p' = 1 - p`` with ``A`` and ``B`` exchanged on
    the other.  Its larger root ``w = (p' + sqrt(p' g))/ℓ``, ``g = p' - ℓ e^{-F}``, gives ``q = e ± b z_0``
    with ``z_0 = -log w <= log(1/p')``.  ``g < 0`` (no root on the domain) says the predicate holds
    everywhere (first side: root ``+inf``) or nowhere (``-inf``), certified where ``g < -2^-41`` (far
    beyond the rounding of ``g`` and of the law there).  Where the side is within ``2^-40 p`` of ``p``,
    ``g`` within ``2^-41`` of 0, or the two points straddle a bound, the root is a starting point (NaN
    width); ``e_hi <= lower`` gives ``U = 0`` (root ``-inf``), ``e_lo >= top`` or ``e_hi >= top`` with the
    weight 1 gives ``U = 1`` (``+inf``).

    **The width** (``u = 2^-53``; the module docstring's assumption ``E = 4``, for ``expm1`` too).  On the
    long path, which the law takes at every ``q`` where :func:`_long_path` says so (nothing is certified
    otherwise), its cdf
    has a relative error ``Δ <= 2.01 u |z| + 3 E u + 10.02 u`` at ``z = (e - c)/b`` (its ``exp``; two
    ``expm1`` of positive arguments, whose relative condition is at most 1; the sum, the ratio, and the
    three roundings of the randomized combination).  On the first side
    ``-d log P/dc = 2(1 - e^{-(top - c)/b})/(b D) >= (1 - e^{-(top - c)/b})/b``, on the other its mirror
    times ``(1 - P)/P >= 1``.  With ``B_r`` the root's distance to the far bound in units of ``b`` and
    ``κ = 1 + (4/3)/B_r`` (at least ``1/(1 - e^{-t})`` for ``t >= 3 B_r/4``: over the whole zone, as
    ``W <= b B_r/8`` is checked, which also keeps the computed ``B_r`` within ``1/8`` of the exact one
    and ``t >= (7/9) B_r``), the zone of rounding lies within ``1.36 κ b Δ`` of the exact root, and
    beyond it the exact tail moves away from ``p`` faster than ``Δ`` grows (``2.01 u/b`` per unit of
    ``q``).  Where that zone may reach the release, the slope there is bounded with ``G`` below instead:
    ``κ_z = max(κ, G)``.  The closed form's own error: ``g`` to ``p' u (3E + 10.02 + 2.01 λ)``
    (``λ = log(1/p)``, as ``F e^{-F} ℓ <= p' λ``), and since ``sqrt(p' g) = p'(1 - e^{-B_r})`` (the slope at
    the root) ``w`` moves by ``u κ (3E + 12.02 + 2.01 λ) + (2E + 9.6) u`` relative (``1 - p`` rounded
    included), ``q`` by ``b`` times that, ``(E + 1) u b z_0`` (the logarithm) and ``u |q|``.  The computed
    transform lies between the law at ``e_lo`` and at ``e_hi`` (``h = e_hi - e_lo``, up to its three
    roundings), whose roots differ by at most ``h κ G`` (``|dq/de| <= κ/(1 - e^{-A_e}) <= κ G``,
    ``G = 1 + b/(e_lo - lower)`` on the first side, ``1 + b/(top - e_hi)`` on the other).  Doubled, with
    ``E = 4``, the rounding of the intervals' ``root ± W``, and ``2^-1074 κ G <= 2^-1034`` (``κ, G <= 2^20``,
    checked):

    ``W = u (κ_z b (6 z_0 + 60) + κ b (53 + 5 λ) + b (36 + 14 z_0) + |x| (4 + 4 κ G)) + 2^-1020``.

    (A wrong side, the other side's quadratic extrapolated past ``e``, would err by ``2(cosh t - 1)``
    relative to ``1 - e^{-A}``, second order in ``t = |q - e|/b``: the side's margin excludes it.)
    """
    b = float(scale)
    x = np.asarray(x, dtype=float)
    if upper:  # the mirrored law's lower tail at e_lo = -x (e_hi = -x^-), with the weight 1 - v
        x, v, lower, top = -x, 1.0 - np.asarray(v, dtype=float), -top, -lower
    shape = np.broadcast_shapes(x.shape, np.shape(p), np.shape(v))
    x = np.broadcast_to(x, shape)
    with np.errstate(all="ignore"):
        a, c = (x - lower) / b, (top - x) / b
        ma, mc = -np.expm1(-a), -np.expm1(-c)
        total = ma + mc
        lead = p * total
        right = ma >= lead  # P_x(M <= x) >= p: the root has q >= x
        side_sure = np.abs(ma - lead) > (_SIDE * p) * total
        pr = np.where(right, p, 1.0 - p)
        far = np.where(right, c, a)
        lead = pr + (1.0 - pr) * np.where(right, ma, mc)  # 1 - e^{-A} + p e^{-A}
        gap = pr - lead * np.exp(-far)
        root = np.where(right, np.inf, -np.inf)
        # decided beyond a bound
        width = np.where(side_sure & (gap < -(2.0**-41)), 0.0, np.nan)
        at = np.flatnonzero(gap > 0.0)
        if at.size:
            root.ravel()[at], width.ravel()[at] = _truncated_finite(
                *(
                    _pick_flat(t, at)
                    for t in (x, a, c, right, side_sure, pr, far, lead, gap)
                ),
                p if np.ndim(p) == 0 else _pick_flat(p, at),
                b,
            )
        if not _long_path(b, lower, top):  # the law's short path: not certified
            width = np.full(shape, np.nan)
        # the two points on or beyond a bound (e_lo = x^-, e_hi = x; mirrored: e_lo = x, e_hi = x^+)
        lo_edge = np.nextafter(lower, np.inf) if not upper else lower  # e_lo <= lower
        hi_edge = top if not upper else np.nextafter(top, -np.inf)  # e_hi >= top
        edge = (x <= lo_edge) | (x >= hi_edge)
        if edge.any():
            v = np.broadcast_to(np.asarray(v, dtype=float), shape)
            zero = x <= lower if not upper else x < lower  # e_hi <= lower: U = 0
            one = (x > top if not upper else x >= top) | ((x >= hi_edge) & (v == 1.0))
            root = np.where(zero, -np.inf, np.where(one, np.inf, root))
            width = np.where(zero | one, 0.0, np.where(edge, np.nan, width))
    if upper:
        root = -root
    return Root(root + 0.0, width)


def _pick_flat(a, at):
    return a.ravel()[at]


def _truncated_finite(x, a, c, right, side_sure, pr, far, lead, gap, p, b):
    """``(root, width)`` of :func:`_truncated_root` where the quadratic has its root on the domain
    (``g > 0``), at the flat positions given."""
    w = (pr + np.sqrt(pr * gap)) / lead
    z0 = -np.log(w)
    s = b * z0
    root = np.where(right, x + s, x - s)
    kappa = 1.0 + (4.0 / 3.0) / (far - z0)
    h = (2.0 * _U) * np.abs(x) + 2.0**-1074
    g = 1.0 + b / (np.where(right, a, c) * b - h)
    lam = -np.log(np.minimum(p, 1.0 - p))
    base = _U * (kappa * b * (53.0 + 5.0 * lam) + b * (36.0 + 14.0 * z0))
    base += _U * np.abs(x) * (4.0 + 4.0 * kappa * g) + _TINY
    slope = _U * b * (6.0 * z0 + 60.0)
    width = base + kappa * slope
    reach = s <= width  # the zone may reach the release: κ_z = max(κ, G)
    width = np.where(reach, base + np.maximum(kappa, g) * slope, width)
    ok = (
        side_sure
        & (kappa >= 1.0)
        & (kappa <= _FLAT)
        & (g >= 1.0)
        & (g <= _FLAT)
        & (width <= 0.125 * b * (far - z0))
        & np.isfinite(root)
    )
    return root, np.where(ok, width, np.nan)


@functools.lru_cache(maxsize=64)
def _long_path(b, lower, top):
    """Whether the truncated law's cdf takes its long path at every true value: ``max(A', B') >= 1`` as
    computed (``A' = (c - lower)/b``, ``B' = (top - c)/b`` over the doubles ``c`` of ``[lower, top]``; the
    short path, for an interval shorter than two scales, is not covered by the proof of
    :func:`_truncated_root`).

    ``A'`` is nondecreasing and ``B'`` nonincreasing in ``c`` (rounding is monotone), so with ``c*`` the first
    double where ``A' >= 1``, the path is long everywhere exactly where ``B' >= 1`` at the double below
    ``c*``.  ``c*`` is found from ``lower + b`` in at most 64 steps of one double (else: not certified)."""
    if np.isinf(lower) or np.isinf(top) or top - lower >= 2.5 * b:
        return True  # (the computed A' + B' is then above 2.4: its larger half above 1)

    def side(c):
        return (c - lower) / b >= 1.0

    c = min(max(lower + b, lower), top)
    for _ in range(64):
        if side(c) and c > lower and side(np.nextafter(c, -np.inf)):
            c = np.nextafter(c, -np.inf)
        elif not side(c) and c < top:
            c = np.nextafter(c, np.inf)
        else:
            break
    else:
        return False
    if not side(c):  # A' < 1 everywhere: B' >= 1 needed everywhere, at top too
        return bool((top - top) / b >= 1.0)
    below = np.nextafter(c, -np.inf)
    return bool(c == lower or (top - below) / b >= 1.0)


def _count_root(x, p, v, upper, lam, lower=-np.inf, top=np.inf):
    """The :class:`Root` of the transforms of :func:`_geometric_root` for the conditioned count
    (``dpbook.DiscreteTruncated``: ``q + K`` given ``lower <= q + K <= top``, ``K`` discrete Laplace,
    ``λ = 1/b``, ``α = e^{-λ}``), over integer ``q``, with a width certified at run time.

    The upper tail is the lower tail of the mirrored law (``-M`` at ``-q`` on ``[-top, -lower]``) at ``-x``
    with the weight ``1 - v``.  With ``s = α^{c - x}`` (``c = clip(q)``), ``ℓ = α^{1 + x - lower}``,
    ``μ = α^{1 + top - x}`` and ``(1 - α) Z = 1 + α - ℓ s - μ/s`` (the law's class docstring), the lower
    tail ``U = P(M < x) + v P(M = x)`` satisfies ``Q(s) = s (1 - α) Z (U - p)`` on ``c >= x`` and
    ``Q(s) = -s (1 - α) Z (U - p)`` on ``c <= x - 1``, with the quadratics

    * ``c >= x``: ``Q_R(s) = A_2 s^2 - A_1 s + A_0``, ``A_2 = v(1 - α) + α(1 - α^{x - lower}) + p ℓ``,
      ``A_1 = p (1 + α)``, ``A_0 = p μ``: convex, ``Q_R(1) ∝ U(x) - p``; the root is its larger one;
    * ``c <= x - 1``: ``Q_L(s) = (1 - p) ℓ s^2 - (1 - p)(1 + α) s + (1 - v + v α - p μ)``, the smaller one.

    ``U`` decreases in ``c``, so the side is the sign of ``Q_R(1)`` (``U(x) >= p``), then of
    ``α Q_L(1/α) = A_0 α - (1 - p)(α + 1 - α^{x - lower})`` (``U(x - 1) < p``; between the two the end is
    ``x - 1``); beyond a bound, ``Q_R(s)/s = A_2 α^{top - x} - p >= 0`` at ``c = top`` says that ``U(top) >= p``
    (every ``q`` passes: ``+inf``), ``Q_L(s)/s = A_0 α^{x - lower} - (1 - p) > 0`` at ``c = lower`` that
    ``U(lower) < p`` (none: ``-inf``); the powers ``α^n`` are computed as ``exp(-n λ)``, so that nothing
    is lost where ``α`` itself underflows.  The root is ``c = x - log(s)/λ``.

    **The width.**  The law's computed transform (log-space sums: ``log G`` by ``expm1`` and ``log``, one
    ``logaddexp`` for ``Z`` and one for the tail, ``|y| λ`` products, ``exp``, and the randomized
    combination) has a relative error at most ``Δ = u (4 (|y| + 1) λ + 2 λ + 83 + 40 L)`` at ``c = x - y``
    (``u = 2^-53``, ``L = -log(1 - α)``, ``E = 4`` ulps for ``exp``, ``expm1``, ``log``, ``log1p`` and so for
    ``logaddexp``; the cdf's and the sf's formulas alike).  A relative perturbation ``Δ`` of ``U`` moves
    ``Q`` by at most ``1.01 Δ p (1 + α) s`` near the root (``(1 - α) Z <= 1 + α``), and at most
    ``(1 + α) Δ`` where the decisions above compare with ``U <= 1``.  Every
    coefficient is computed with a running bound ``e_i`` of its error (``exp(-n λ)`` to ``u (E + n λ)``,
    sums of positive terms, ``1 - α`` and ``1 - α^n`` by ``expm1``); a decision is taken where the computed
    value exceeds the sum of those bounds, its rounding and the ``Δ`` term.  For a root ``s~`` the residual
    ``|Q(s~)|`` (computed, plus ``4u`` times ``A_2 s^2 + A_1 s + A_0`` for its rounding, plus
    ``Σ e_i s^i`` and the ``Δ`` term) over ``|Q'(s~)| = |2 A_2 s~ - A_1|`` (its own error subtracted),
    doubled, bounds the distance ``δ`` to every ``s`` where the computed transform may cross ``p``, as long
    as ``δ <= |Q'|/(4 A_2)`` (so ``|Q'|`` halves at most; checked); ``Δ`` grows by ``4 u λ`` per unit of
    ``c`` while ``log U`` moves by at least ``λ (1 - α)``, so nothing beyond the zone crosses, nor beyond
    the decisions' points (``λ >= 2^-40``, checked: nothing is certified for a larger scale).  In ``c``:
    ``(δ/s)/(λ (1 - δ/s))``, plus the logarithm's ``(E + 1) u |log s|/λ`` and ``u |c|``, doubled.
    Certified where that is at most ``1/4``; the intervals then take the integer ends wherever the zone
    holds no integer.
    """
    lam = float(lam)
    x = np.asarray(x, dtype=float)
    v = np.asarray(v, dtype=float)
    if upper:
        x, v, lower, top = -x, 1.0 - v, -top, -lower
    shape = np.broadcast_shapes(x.shape, np.shape(p), v.shape)
    x, v = np.broadcast_to(x, shape), np.broadcast_to(v, shape)
    alpha, m1 = math.exp(-lam), -math.expm1(-lam)
    big_l = -math.log(m1) if m1 > 0 else math.inf
    u, e = _U, 4.0
    with np.errstate(all="ignore"):
        n_l = x - lower
        n_m = top - x
        ta = np.exp(-n_l * lam)  # α^{x - lower} = ℓ/α
        tm = np.exp(-n_m * lam)  # α^{top - x} = μ/α
        # exp(-t) to u (E + t) relative, 2^-1074 absolute (subnormal results); 0 for an infinite bound
        e_ta = np.where(ta > 0.0, ta * u * (e + n_l * lam), 0.0)
        e_ta += np.where(np.isfinite(n_l), 2.0**-1074, 0.0)
        e_tm = np.where(tm > 0.0, tm * u * (e + n_m * lam), 0.0)
        e_tm += np.where(np.isfinite(n_m), 2.0**-1074, 0.0)
        ell, mu = ta * alpha, tm * alpha  # α^{1 + x - lower}, α^{1 + top - x}
        e_ell = e_ta * alpha + ell * u * (e + 1.0) + 2.0**-1074
        e_mu = e_tm * alpha + mu * u * (e + 1.0) + 2.0**-1074
        mx = -np.expm1(-(x - lower) * lam)  # 1 - α^{x - lower}
        # c >= x
        a2 = v * m1 + alpha * mx + p * ell
        e2 = u * (2.0 * e + 4.0) * a2 + p * e_ell
        a1 = p * (1.0 + alpha)
        e1 = u * (e + 2.0) * a1
        a0 = p * mu
        e0 = p * e_mu + u * a0
        # c <= x - 1
        b2 = (1.0 - p) * ell
        f2 = (1.0 - p) * e_ell + 3.0 * u * b2
        b1 = (1.0 - p) * (1.0 + alpha)
        f1 = u * (e + 3.0) * b1
        w_above = (1.0 - v) + v * alpha
        b0 = w_above - p * mu
        f0 = u * (e + 3.0) * w_above + p * e_mu + u * (p * mu + np.abs(b0))
        delta_1 = u * (10.0 * lam + 83.0 + 40.0 * big_l)  # Δ at |y| <= 1
        # U(x) >= p ?
        q_r1 = a2 - a1 + a0
        m_r1 = e2 + e1 + e0 + 2.0 * u * (a2 + a1 + a0) + (1.0 + alpha) * delta_1
        right = q_r1 >= 0.0
        right_sure = np.abs(q_r1) > m_r1
        # U(x - 1) < p ?  (only below x: x > lower)
        q_l1 = b0 * alpha - (1.0 - p) * (alpha + mx)
        m_l1 = (f0 * alpha + u * abs(b0) * (e + 1.0) * alpha) + (1.0 - p) * (
            alpha + mx
        ) * u * (e + 4.0)
        m_l1 += 2.0 * u * (np.abs(b0) * alpha + (1.0 - p) * (alpha + mx))
        m_l1 += (1.0 + alpha) * delta_1
        left = q_l1 > 0.0
        left_sure = (np.abs(q_l1) > m_l1) | (x <= lower)
        left = left | (x <= lower)  # no c below x: the predicate fails down to lower
        # beyond a bound
        # beyond a bound: Q_R(s_top)/s_top = A_2 μ/α - p, Q_L(s_low)/s_low = A_0 ℓ/α - (1 - p)
        delta_top = u * (4.0 * n_m * lam + 6.0 * lam + 83.0 + 40.0 * big_l)
        q_top = a2 * tm - p
        m_top = e2 * tm + a2 * e_tm + 2.0 * u * (a2 * tm + p)
        m_top += (1.0 + alpha) * delta_top
        delta_low = u * (4.0 * n_l * lam + 6.0 * lam + 83.0 + 40.0 * big_l)
        q_low = b0 * ta - (1.0 - p)
        m_low = f0 * ta + np.abs(b0) * e_ta + u * (1.0 - p) * (e + 2.0)
        m_low += 2.0 * u * (np.abs(b0) * ta + (1.0 - p)) + (1.0 + alpha) * delta_low
        # the roots: the larger of Q_R, the smaller of Q_L
        c2, c1, c0 = (np.where(right, t, w) for t, w in ((a2, b2), (a1, b1), (a0, b0)))
        g2, g1, g0 = (np.where(right, t, w) for t, w in ((e2, f2), (e1, f1), (e0, f0)))
        # no real root (a negative discriminant, NaN here): no sign change of G on the segment
        disc = np.sqrt(c1 * c1 - 4.0 * c2 * c0)
        s = np.where(right, (c1 + disc) / (2.0 * c2), 2.0 * c0 / (c1 + disc))
        log_s = np.log(s)
        root = x - log_s / lam
        resid = np.abs((c2 * s - c1) * s + c0)
        size = (c2 * s + c1) * s + c0
        y1 = np.abs(log_s) / lam + 1.25  # |y| + 1 over the zone
        delta = u * (4.0 * y1 * lam + 2.0 * lam + 83.0 + 40.0 * big_l)
        bound = resid + 4.0 * u * size + (g2 * s + g1) * s + g0
        bound += 1.01 * delta * p * (1.0 + alpha) * s
        slope = np.abs(2.0 * c2 * s - c1)
        slope -= 2.0 * g2 * s + g1 + 4.0 * u * (2.0 * c2 * s + c1)
        ds = 2.0 * bound / slope
        rel = ds / s
        width = 2.0 * (rel / (lam * (1.0 - rel)) + (e + 1.0) * u * np.abs(log_s) / lam)
        width += 2.0 * u * np.abs(root) + _TINY
        in_range = np.where(
            right, (root >= x) & (root <= top), (root <= x - 1.0) & (root >= lower)
        )
        ok = (
            (slope > 0.0)
            & (ds <= slope / (4.0 * c2))
            & (rel < 0.5)
            & (width <= 0.25)
            & in_range
            & (lam >= 2.0**-40)
        )
        width = np.where(ok, width, np.nan)
        # the decided cases
        plus = right & right_sure & (q_top >= m_top)  # U(top) >= p: +inf
        minus = ~right & right_sure & left & left_sure & (x > lower) & (q_low > m_low)
        minus |= ~right & right_sure & (x <= lower)  # nothing below x = lower
        between = ~right & right_sure & ~left & left_sure & (x > lower)  # end: x - 1
        root = np.where(plus, np.inf, np.where(minus, -np.inf, root))
        root = np.where(between, x - 0.5, root)
        width = np.where(plus | minus, 0.0, np.where(between, 0.25, width))
        undecided = ~(right_sure & (right | left_sure))
        width = np.where(undecided, np.nan, width)
        inside = (x >= lower) & (x <= top) & (lower < top) & (lam >= 2.0**-40)
        width = np.where(inside, width, np.nan)
        root = np.where(np.isfinite(root) | np.isinf(root), root, x)
    if upper:
        root = -root
    return Root(root + 0.0, width)


def _count_map_root(k_lo, k_hi, p, v, upper, lam, terms):
    """The :class:`Root` over integer ``q >= 0`` of the transforms of ``φ(q + K)`` (:class:`dpbook.
    CountPostProcessed` with ``integer=True``, an integer-valued nondecreasing ``φ``, ``K`` discrete Laplace,
    ``λ = 1/b``, ``α = e^{-λ}``) at a release ``x``, given ``k_lo = k*(x - 1)`` and ``k_hi = k*(x)``, the largest
    ``k`` with ``φ(k) <= x - 1``, resp. ``<= x`` (``-inf`` where there is none).

    Then ``P_q(M <= y) = T(k*(y) - q)`` with ``T(m) = P(K <= m)``, so the lower transform is ``U = (1 - v)
    T(k_lo - q) + v T(k_hi - q)``, on the tail (``q >= k_hi + 1``) ``w T(k_hi - q)`` with ``w = v + (1 - v)
    α^n`` (``n = k_hi - k_lo``), and the upper ``V = (1 - v) T(q - k_lo - 1) + v T(q - k_hi - 1)``, for ``q <=
    k_lo`` equal to ``w' T(q - k_lo - 1)``, ``w' = 1 - v + v α^n``: :func:`_geometric_raw` with ``r = p/w``
    gives the root ``k_hi - m_0``, resp. ``k_lo + 1 + m_0``.

    **The width.**  The family's ``cdf`` is a sum of at most ``terms = T + 4`` pieces ``c e^{-z}`` (``c <= 1``:
    the pmf ``e^{log tanh(λ/2) - |k - q| λ}``, the tails ``e^{-s/b}/(1 + α)``, one ``1 - `` such a tail),
    one difference of two of them and ``T + 3`` additions.  Each exponent is computed within ``ε = u (3.03 z
    + 5 L + 30)`` (``L = -log tanh(λ/2)``; ``E = 4`` ulps for ``exp``, ``log``, ``log1p``, ``tanh``), so each
    piece within ``c e^{-z}(e^{ε} - 1) <= 1.3 u (3.03 z e^{-z} + 5 L + 30) <= 2 u (31 + 5 L)`` where ``ε <=
    1/2``; where ``ε > 1/2`` (``z > 10^{15}``) both the piece and its computed value are below ``2^-1074``.
    So the computed ``cdf`` is within ``ε_F = u (2 (T + 4)(31 + 5 L) + T + 12) + (T + 4) 2^-1074`` of the
    exact one at every ``q`` (no cancellation: the difference is bounded by its own two pieces' errors), the
    ``sf = 1 - cdf`` within ``ε_F + u``, and the transforms as the intervals compute them (``P(M <= x - 1) +
    v max(P(M <= x) - P(M <= x - 1), 0)`` and its mirror) within ``E = 3 ε_F + 6u`` — absolutely, at every
    ``q``.  The exact transform is monotone in ``q``, so the computed predicate is the exact one wherever the
    exact transform is more than ``E`` from ``p``; on the tail ``log U`` has slope ``λ``, so that zone is
    within ``(E/p)/(1 - E/p)/λ`` of the exact root.  The closed form's own error is :func:`_geometric_raw`'s
    width plus ``2.02 ρ/λ`` for the relative error ``ρ = u (2.02 n λ + 12)`` of the weight (``α^n`` by
    ``exp(-n λ)``; ``ρ = 2^-1000/w + 4u`` where ``α^n < 2^-1000``).  Certified where ``E/p <= 1/4`` and the
    zone's integers are all on the tail (``m_0 + W < -1``).

    *Next to the tail.*  Where the zone leaves the tail the end is decided from ``U(k_hi) = w/(1 + α)`` and
    ``U(k_hi + 1) = w α/(1 + α)`` (resp. ``V(k_lo + 1)``, ``V(k_lo)``), computed within ``ρ + 9u`` relative (the
    second ``ρ + u (λ + 19)``, and ``2^-1000`` absolute where ``α`` underflows), where each is more than ``E`` and
    its own error from ``p``: the end is ``k_hi`` (resp. ``k_lo + 1``), or
    none on the domain (``k_hi <= 0`` and ``U(k_hi) < p``); returned as the root ``k ± 1/2`` with width
    ``1/4``.  At ``x = 0`` (``k_lo = -inf``) ``V >= 1 - v`` everywhere: the bottom is the domain's end (root
    ``-inf``) where ``1 - v >= p + E``.  Elsewhere the width is NaN (the search decides)."""
    lam = min(float(lam), 1e300)  # beyond it α = 0 already; the cap keeps 0 λ at 0
    alpha = math.exp(-lam)
    log1p_alpha = math.log1p(alpha)
    tanh = math.tanh(0.5 * lam)
    big_l = -math.log(tanh) if tanh > 0.0 else math.inf
    err = 3.0 * _U * (2.0 * terms * (31.0 + 5.0 * big_l) + terms + 8.0)
    err += 3.0 * terms * 2.0**-1074 + 6.0 * _U
    shape = np.broadcast_shapes(np.shape(k_lo), np.shape(p), np.shape(v))
    k_lo, k_hi, p, v = (
        np.broadcast_to(np.asarray(a, dtype=float), shape) for a in (k_lo, k_hi, p, v)
    )
    with np.errstate(all="ignore"):
        n = k_hi - k_lo
        a_n = np.exp(-n * lam)
        w = (v + (1.0 - v) * a_n) if not upper else ((1.0 - v) + v * a_n)
        rho = np.where(
            a_n >= 2.0**-1000, _U * (2.02 * n * lam + 12.0), 2.0**-1000 / w + 4.0 * _U
        )
        ref = k_lo + 1.0 if upper else k_hi
        m0, raw = _geometric_raw(ref, p / w, lam, log1p_alpha)
        rel = err / p
        width = raw + 2.02 * rho / lam + 1.01 * (rel / (1.0 - rel)) / lam
        ok = (rel <= 0.25) & (rho <= 1e-3) & (m0 + width < -1.0) & np.isfinite(ref)
        root = ref + m0 if upper else ref - m0
        # next to the tail: the transform at the tail's first point and the one before it
        near = w / (1.0 + alpha)  # U(k_hi), resp. V(k_lo + 1)
        edge = near * alpha  # U(k_hi + 1), resp. V(k_lo)
        slack = rho + 9.0 * _U
        near_pass = near * (1.0 - slack) >= p + err
        near_fail = near * (1.0 + slack) < p - err
        edge_up = edge * (1.0 + slack + _U * (lam + 10.0)) + 2.0**-1000
        edge_fail = edge_up < p - err
        if upper:
            end = np.where(near_pass & edge_fail, k_lo + 0.5, np.nan)
            first = (1.0 - v) * (1.0 - 2.0 * _U) >= p + err  # x = 0: V >= 1 - v
            end = np.where(np.isinf(k_lo), np.where(first, -np.inf, np.nan), end)
        else:
            end = np.where(near_pass & edge_fail, k_hi + 0.5, np.nan)
            end = np.where(near_fail & (k_hi <= 0.0), k_hi - 0.5, end)
        decided = ~ok & ~np.isnan(end)
        root = np.where(decided, end, np.where(np.isfinite(root), root, ref))
        root = np.where(np.isfinite(root) | np.isinf(end), root, 0.0)
        width = np.where(
            ok, width, np.where(decided, np.where(np.isinf(end), 0.0, 0.25), np.nan)
        )
    return Root(root + 0.0, width)


# --- Normalized: a starting point (no proved width yet) ---------------------------------------------------


def _normalized_root(x, p, upper, scale, lo, hi):
    r"""A starting point (no width: the intervals search from it) for the root in ``q`` of ``P_q(M <= x) = p``
    (``upper`` false) or ``P_q(M > x) = p`` (``upper`` true) for ``M`` the Laplace law ``q + L_b`` conditioned
    on the union of the sorted disjoint pieces ``[lo_k, hi_k]`` (:class:`dpbook.Normalized`; no atoms, so ``v``
    plays no role).  The upper tail is the lower tail of the reflected law (``-M`` at ``-q``) at ``-x``.

    ``G(q) = P_q(M <= x) - p`` times the normalizer is the Laplace mass at ``q`` of the signed measure of
    weight ``1 - p`` on the pieces cut at ``x`` below it and ``-p`` above it.  Between two consecutive points
    of the piece ends and ``x`` (a segment of the hull, from a finite end ``r`` in the direction ``d = ±1``:
    ``q = r + d b t``, ``0 <= t <= L``) each cut piece lies ahead of ``q``, behind it or around it, so
    ``G = C_2 e^t + C_1 + C_0 e^{-t}``: a piece ahead adds its mass at ``r`` to ``C_2``, one behind to ``C_0``,
    the piece around ``q`` (weight ``σ``) adds ``σ`` to ``C_1`` and ``-σ e^{-D/b}/2`` to ``C_2`` (``D`` the
    distance from ``r`` to its end ahead) and to ``C_0`` (its end behind).  Each segment's quadratic
    ``C_2 w^2 + C_1 w + C_0`` (``w = e^t``) is solved (both roots, in the stable form) and the root on its
    segment kept.  The transform decreases in ``q`` on the hull (the law at ``q`` beyond the hull is the
    law at its end), so where no segment holds a root the predicate ``P_q(M <= x) >= p`` holds everywhere
    (root ``+inf``: ``G >= 0`` at the hull's lower end) or nowhere (``-inf``).  A release below the hull
    gives ``-inf``, one at or above its top ``+inf``.  Returns the roots as an array shaped like the
    broadcast of ``x`` and ``p``."""
    b = float(scale)
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    x = np.asarray(x, dtype=float)
    if upper:
        x, lo, hi = -x, -hi[::-1], -lo[::-1]
    shape = np.broadcast_shapes(x.shape, np.shape(p))
    xf = np.broadcast_to(x, shape).reshape(-1)
    pf = np.broadcast_to(np.asarray(p, dtype=float), shape).reshape(-1)
    # the cut pieces (axis 0) and their weights, per release (axis 1)
    xr = xf[None, :]
    a = np.concatenate(
        [np.broadcast_to(lo[:, None], (lo.size, xf.size)), np.maximum(lo[:, None], xr)]
    )
    c = np.concatenate(
        [np.minimum(hi[:, None], xr), np.broadcast_to(hi[:, None], (hi.size, xf.size))]
    )
    sigma = np.concatenate(
        [
            np.broadcast_to(1.0 - pf, (lo.size, xf.size)),
            np.broadcast_to(-pf, (lo.size, xf.size)),
        ]
    )
    sigma = np.where(c > a, sigma, 0.0)
    # the segments of the hull between consecutive points of the piece ends and x
    points = np.concatenate(
        [
            np.broadcast_to(np.concatenate([lo, hi])[:, None], (2 * lo.size, xf.size)),
            np.clip(xr, lo[0], hi[-1]),
        ]
    )
    points = np.sort(points, axis=0)
    s0, s1 = points[:-1], points[1:]
    with np.errstate(all="ignore"):
        forward = np.isfinite(s0)  # d = +1 from r = s0, else d = -1 from r = s1
        r = np.where(forward, s0, s1)[:, None, :]
        s0, s1 = s0[:, None, :], s1[:, None, :]
        aa, cc, ss = a[None], c[None], sigma[None]
        right = aa >= s1  # the piece lies above the segment
        left = cc <= s0
        around = ~right & ~left & (ss != 0.0)
        # a piece's mass at r, outside it: e^{-dist/b}(1 - e^{-len/b})/2
        dist = np.where(right, aa - r, r - cc) / b
        mass = 0.5 * np.exp(-dist) * -np.expm1(-(cc - aa) / b)
        mass = np.where(ss != 0.0, ss * mass, 0.0)
        ahead = np.where(forward[:, None, :], right, left)
        behind = np.where(forward[:, None, :], left, right)
        d_up = np.exp(-(cc - r) / b) * 0.5  # the around piece's upper end
        d_down = np.exp(-(r - aa) / b) * 0.5
        d_ahead = np.where(forward[:, None, :], d_up, d_down)
        d_behind = np.where(forward[:, None, :], d_down, d_up)
        c2 = np.sum(
            np.where(ahead, mass, 0.0) - np.where(around, ss * d_ahead, 0.0), axis=1
        )
        c0 = np.sum(
            np.where(behind, mass, 0.0) - np.where(around, ss * d_behind, 0.0), axis=1
        )
        c1 = np.sum(np.where(around, ss, 0.0), axis=1)
        # no real root (a negative discriminant, NaN here): no sign change of G on the segment
        disc = np.sqrt(c1 * c1 - 4.0 * c2 * c0)
        half = -0.5 * (c1 + np.where(c1 >= 0.0, disc, -disc))
        length = (s1[:, 0] - s0[:, 0]) / b
        best = np.full(xf.size, np.nan)
        for w in (half / c2, c0 / half):
            t = np.log(w)
            on = (
                np.isfinite(t)
                & (t >= -1e-9)
                & (t <= length * (1.0 + 1e-9) + 1e-9)
                & (length > 0.0)
            )
            q = np.where(
                forward,
                s0[:, 0] + b * np.maximum(t, 0.0),
                s1[:, 0] - b * np.maximum(t, 0.0),
            )
            q = np.where(on, np.clip(q, s0[:, 0], s1[:, 0]), np.nan)
            first = np.argmax(~np.isnan(q), axis=0)
            found = np.take_along_axis(q, first[None], axis=0)[0]
            best = np.where(np.isnan(best), found, best)
        # no root on the hull: the sign of G at its lower end (the first segment, t = 0 or t = L)
        # (a hull unbounded below: G -> (1 - p) Laplace mass > 0 as q -> -inf)
        everywhere = np.where(forward[0], c2[0] + c1[0] + c0[0] >= 0.0, True)
        best = np.where(np.isnan(best), np.where(everywhere, np.inf, -np.inf), best)
        best = np.where(xf < lo[0], -np.inf, np.where(xf >= hi[-1], np.inf, best))
    root = best.reshape(shape)
    return -root if upper else root + 0.0
