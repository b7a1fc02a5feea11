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

**Unions** (:func:`_normalized_root`, :class:`dpbook.Normalized`).  Conditioning on a union of pieces makes
the transform's equation a quadratic in ``e^{q/b}`` between consecutive piece ends.  The law's relative
error ``Δ`` is bounded uniformly over a hull at most ``512 b`` long (each piece's log-mass, its short path
through scipy's ``exprel`` included, then ``logsumexp``), and the width is certified at run time: the exact
transform, evaluated from the quadratic's coefficients with running error bounds, is beyond ``p e^{±Δ}`` at
``root ± W``.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from scipy import special

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


def _bound_positions(x, lower, top):
    """``[(bound, at, gathered)]``: for each finite bound that holds releases, their flat positions in ``x``, and
    a place for the uniforms gathered there (:func:`_bound_releases`)."""
    positions = []
    for bound, on in zip((lower, top), _on_bounds(x, lower, top)):
        if on is not None:
            at = np.nonzero(on.reshape(-1))[0]
            if at.size:
                positions.append((bound, at, {}))
    return positions


def _shared_positions(x, p, vs, lower, top):
    """:func:`_bound_positions` computed once for the two ends of an interval (``vs``: their uniforms), or
    ``None`` (each end computes its own) where ``p`` or a ``v`` has another shape than ``x``."""
    if any(np.ndim(a) and np.shape(a) != np.shape(x) for a in (p, *vs)):
        return None
    return _bound_positions(np.asarray(x, dtype=float), lower, top)


def _both_ends(root, x, p, v_top, v_bottom, params, lower, top):
    """``(root(x, p, v_top, False, *params, lower, top, positions), root(x, p, v_bottom, True, ...))``: a clamped
    family's two ends with the positions of the releases on its bounds found once (:func:`_shared_positions`)."""
    positions = _shared_positions(x, p, (v_top, v_bottom), lower, top)
    return tuple(
        root(x, p, v, upper, *params, lower, top, positions)
        for v, upper in ((v_top, False), (v_bottom, True))
    )


def _bound_releases(x, shape, lower, top, v, p, positions=None):
    """For each finite bound that holds releases: ``(bound, at, v_at, p_at)``, the flat positions of the releases
    (``x`` of the broadcast ``shape``) on it and their ``v`` and ``p`` (a scalar stays a scalar).  The roots
    compute the releases on a bound apart, on their own positions only.  ``positions``: those of
    :func:`_shared_positions`, when the caller has them (the uniforms of both ends, often one array, are then
    gathered once)."""
    if positions is None:
        positions = _bound_positions(x, lower, top)
    for bound, at, gathered in positions:
        w = _gathered(v, shape, at, gathered)
        pp = np.broadcast_to(p, shape).ravel()[at] if np.ndim(p) else p
        yield bound, at, w, pp


def _gathered(v, shape, at, cache):
    """``v`` (broadcast to ``shape``) at the flat positions ``at``, or ``v`` itself where it is a scalar: gathered
    once per array, kept in ``cache`` for the other end of the same interval (keyed by ``id``: the array outlives
    the two calls that share the cache)."""
    if not np.ndim(v):
        return v
    if id(v) not in cache:
        cache[id(v)] = np.broadcast_to(v, shape).ravel()[at]
    return cache[id(v)]


def _laplace_root(x, p, v, upper, scale, lower=-np.inf, top=np.inf, positions=None):
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
    intervals' ``root ± W``.  The releases on a bound are computed apart (on their own positions only, or
    ``positions``: :func:`_shared_positions`).
    """
    b = float(scale)
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z0 = _laplace_offset(p, b)
        root = np.asarray(x + z0 if upper else x - z0)
        width = _laplace_width(x, z0, b)
        if np.ndim(p) or np.ndim(v) > x.ndim or p >= 0.5:
            return _laplace_bounds(x, p, v, upper, b, lower, top)
        for bound, at, w, _ in _bound_releases(x, x.shape, lower, top, v, p, positions):
            r, z, ok = None, None, None
            if (bound == lower) != bool(upper):  # the atom's weight divides p
                r = p / ((1.0 - w) if upper else w)
                z = _laplace_offset(r, b)
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


def _laplace_offset(p, b):
    """``z_0 = b log(2 min(p, 1/2))``: the Laplace root is ``x - z_0`` (lower tail), ``x + z_0`` (upper)."""
    return b * np.log(2.0 * np.minimum(p, 0.5))


def _laplace_width(x, z0, b):
    """The width of :func:`_laplace_root` between the bounds, ``u (12 |x| + 32 |z_0| + 36 b) + 2^-1020``, as a new
    array (the same for both tails: ``|z_0|`` is)."""
    width = np.asarray(np.abs(x))
    width *= 12.0 * _U
    width += _U * (32.0 * np.abs(z0) + 36.0 * b) + _TINY
    return width


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
        z = _laplace_offset(r, b)
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


def _geometric_root(
    x, p, v, upper, lam, log1p_alpha, lower=-np.inf, top=np.inf, positions=None
):
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
    ``p``.  The releases on a bound are computed apart (on their own positions only, or ``positions``:
    :func:`_shared_positions`).
    """
    lam = float(lam)
    alpha = math.exp(-lam)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        shape = np.broadcast_shapes(np.shape(x), np.shape(p), np.shape(v))
        x = np.broadcast_to(np.asarray(x, dtype=float), shape)
        r = p / ((1.0 - v + v * alpha) if upper else (v + (1.0 - v) * alpha))
        m0, width = _geometric_tail(x, r, lam, log1p_alpha)
        # the root is x + m0 (upper), x - m0; m0 written below, so an array of its own
        if m0.shape != shape or not m0.flags.owndata:
            m0 = np.broadcast_to(m0, shape).copy()
        flat_m0, flat_width = m0.reshape(-1), width.reshape(-1)
        for bound, at, w, pp in _bound_releases(x, shape, lower, top, v, p, positions):
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
    r, w = (np.array(a, dtype=float) for a in root)
    _shift_in_place(r, w, shift)
    return Root(r, w)


def _shift_in_place(root, width, shift):
    """:func:`_shifted_root` written over arrays of its own: ``root + shift`` and, unless ``width`` is ``None``,
    ``1.5 width + 5 u |shift| + 2^-1020`` (the same doubles)."""
    with np.errstate(invalid="ignore", over="ignore"):
        root += shift
        if width is not None:
            width *= 1.5
            width += 5.0 * _U * abs(shift) + _TINY


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
        at = np.nonzero(on_atom.reshape(-1))[0]
        w = v if np.ndim(v) == 0 else np.broadcast_to(v, shape).reshape(-1)[at]
        pp = p if np.ndim(p) == 0 else np.broadcast_to(p, shape).reshape(-1)[at]
        _ramp_atom_into(root, width, at, pp, w, upper, b)
    elif root.shape != shape:
        root, width = np.broadcast_to(root, shape), np.broadcast_to(width, shape)
    return _shifted_root(Root(root, width), float(shift))


def _ramp_ends(x, p, v_top, v_bottom, scale, shift):
    """The roots of both ends of an interval at once, ``(_ramp_root(x, p, v_top, False, scale, shift),
    _ramp_root(x, p, v_bottom, True, scale, shift))``: the same doubles, with the work on the releases done
    once (the width off the atom and its shift, the test ``x == 0``, its positions and, for one array of
    uniforms, their gather) and the shift applied in place, to the atom's roots before they are written.
    ``None`` where that does not apply (``p`` an array or at least ``1/2``, a ``v`` of another shape than
    ``x``): the caller then asks for each end."""
    x = np.asarray(x, dtype=float)
    if (
        np.ndim(p)
        or not p < 0.5
        or any(np.ndim(v) and np.shape(v) != x.shape for v in (v_top, v_bottom))
    ):
        return None
    b, shift = float(scale), float(shift)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # off the atom: the plain Laplace roots (_laplace_root)
        z0 = _laplace_offset(p, b)
        top, bottom = np.asarray(x - z0), np.asarray(x + z0)
    top_width = _laplace_width(x, z0, b)  # the same for both ends
    _shift_in_place(top, top_width, shift)
    _shift_in_place(bottom, None, shift)
    bottom_width = top_width.copy()
    at = np.nonzero((x == 0.0).reshape(-1))[0]
    if at.size:
        gathered = {}
        for root, width, v, upper in (
            (top, top_width, v_top, False),
            (bottom, bottom_width, v_bottom, True),
        ):
            w = _gathered(v, x.shape, at, gathered)
            _ramp_atom_into(root, width, at, p, w, upper, b, shift)
    return Root(top, top_width), Root(bottom, bottom_width)


def _ramp_atom_into(root, width, at, p, v, upper, b, shift=None):
    """Write the ramp's roots at its atom (:func:`_ramp_atom`, in ``y``; moved to ``q`` by ``shift`` unless it is
    ``None``) at the flat positions ``at`` of the arrays ``root`` and ``width`` (each with its own data), for
    ``p`` and ``v`` given at those positions or as scalars (then one answer for every atom)."""
    flat_root, flat_width = root.reshape(-1), width.reshape(-1)
    if np.ndim(p) == 0 and np.ndim(v) == 0:
        r0, w0 = (
            np.array(a) for a in _ramp_atom_once(float(p), float(v), bool(upper), b)
        )
    else:
        p = np.asarray(p, dtype=float) if np.ndim(p) else float(p)
        v = np.asarray(v, dtype=float) if np.ndim(v) else np.full(at.size, float(v))
        if upper:
            # root -inf with width 0 at most atoms: written as one value, then the rest
            rest, r0, w0 = _ramp_atom_upper(p, v, b)
            edge, edge_width = np.array(-np.inf), np.array(0.0)
            if shift is not None:
                _shift_in_place(edge, edge_width, shift)
            flat_root[at], flat_width[at] = edge, edge_width
            at = at[rest]
        else:
            r0, w0 = _ramp_atom(p, v, upper, b)
    if shift is not None:
        _shift_in_place(r0, w0, shift)
    flat_root[at], flat_width[at] = r0, w0


@functools.lru_cache(maxsize=64)
def _ramp_atom_once(p, v, upper, b):
    """:func:`_ramp_atom` for one ``(p, v)``: the same at every atom of a plain interval (kept for the next
    call, which asks the same)."""
    root, width = _ramp_atom(np.full(1, p), np.full(1, v), upper, b)
    return float(root[0]), float(width[0])


def _ramp_atom(p, v, upper, b):
    """``(root, width)`` in ``y`` at the ramp's atom ``x = 0`` (:func:`_ramp_root`) for a flat array ``v`` and
    ``p`` (an array like it, or a scalar): the common cases on whole arrays, the zone below the bound (``y < 0``)
    on its own positions."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if upper:
            root, width = np.full(v.shape, -np.inf), np.zeros(v.shape)
            rest, root_rest, width_rest = _ramp_atom_upper(p, v, b)
            root[rest], width[rest] = root_rest, width_rest
            return root, width
        r = p / v
        # BIT's root at its bound, y = -b log(2r) >= 0, with its width u(32 y + 36 b) + 2^-1020 (in place)
        root = np.minimum(r, 0.5)
        root *= 2.0
        np.log(root, out=root)
        root *= -b
        width = root * (32.0 * _U)
        width += 36.0 * _U * b + _TINY
        # its zone at y >= 0 only (y >= W); r > 1/2 (y = 0) is among these
        near = np.nonzero(root * (1.0 - 32.0 * _U) < 36.0 * _U * b + _TINY)[0]
        rr = r[near]
        g = 1.0 - rr
        below, below_w = _ramp_below(g, 3.02 * rr / g, b)
        never = rr > 1.0  # U <= v < p everywhere
        root[near] = np.where(never, -np.inf, np.where(rr > 0.5, below, root[near]))
        width[near] = np.where(never, 0.0, np.where(rr > 0.5, below_w, np.nan))
        return root, width


def _ramp_atom_upper(p, v, b):
    """:func:`_ramp_atom`'s upper tail as ``(rest, root, width)``: the root is ``-inf`` with width 0 at every atom
    but the positions ``rest``, where it is ``root`` with ``width``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = 1.0 - v
        # elsewhere 1 - U >= A >= p at every y
        rest = np.nonzero(a < p * (1.0 + 4.0 * _U))[0]
        pr, ar, vr = p[rest] if np.ndim(p) else p, a[rest], v[rest]
        g = (pr - ar) / vr
        return (rest, *_ramp_below(g, (pr + 2.01 * ar) / (vr * g), b))


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


# --- the Gaussian mechanism and its clamping (Gaussian, GaussianBIT) -----------------------------------------

#: the assumption of the Gaussian widths (tested against a 60-digit reference in
#: tests/families/test_gaussian_interval.py): scipy's ``ndtr(a)`` within ``u (K0 + K2 a^2)`` of ``Φ(a)``,
#: relatively, for ``-37 <= a <= 0`` (cephes documents a peak relative error of ``3.4e-14``, about ``300 u``,
#: over ``[-13, 0]``, its growth being the rounding of ``a^2`` inside ``exp(-a^2/2)``: about ``1.8 u a^2``
#: measured), within ``K0 u`` for ``a >= 0``, and below ``1e-298`` for ``a < -37``; ``ndtri(y)`` within ``KI u
#: (|Φ^{-1}(y)| + 1)`` of ``Φ^{-1}(y)`` for ``1e-80 <= y <= 1/2`` (documented: ``4.6e-16`` relative)
_NDTR_K0, _NDTR_K2, _NDTRI_K = 8.0, 4.0, 6.0


def _gaussian_root(x, p, v, upper, scale, lower=-np.inf, top=np.inf, positions=None):
    r"""The :class:`Root` of ``P_q(M < x) + v P_q(M = x) = p`` (``upper`` false) or ``P_q(M > x) + (1 - v)
    P_q(M = x) = p`` (``upper`` true) for ``M = clip(q + σZ, lower, top)``, ``Z`` standard normal, ``σ`` the
    ``scale`` (:class:`dpbook.Gaussian`: infinite bounds; :class:`dpbook.GaussianBIT`).

    **The roots.**  Between the bounds the intervals compute the lower tail from the law's ``cdf`` at ``x^-``
    and at ``x``, ``A = Φ((x^- - q)/σ)`` and ``B = Φ((x - q)/σ)``, as ``A + v max(B - A, 0)`` (the plain
    interval: ``B``), and the upper tail from its ``sf``, ``C = Φ((q - x)/σ)`` and ``D = Φ((q - x^-)/σ)``, as
    ``C + (1 - v) max(D - C, 0)`` (plain: ``D``).  The root is ``x + σ t_0`` (lower tail), resp. ``x - σ t_0``,
    with ``t_0 = -Φ^{-1}(r)`` and ``r = p``.  At ``x = lower`` the lower tail is ``v B`` (``r = p/v``), at
    ``x = top`` the upper tail ``(1 - v) D`` (``r = p/(1 - v)``, the weight rounded as the law rounds it).
    Where ``v/2 < p`` (resp. ``(1 - v)/2 < p``), with a margin for ``ndtr``'s error, that atom's transform
    stays below ``p`` wherever its argument is ``<= 0``: the lower tail at ``x = lower`` fails on the whole
    domain (root ``-inf``), the upper tail at ``x = top`` can pass only at ``q = top``, decided from its value
    there as the intervals compute it (root ``top`` with width 0, else ``+inf``).  At the other bound the
    transform is at least the weight (up to 3 roundings) and at least the normal tail at its smallest
    argument on the domain (``1/2`` at ``x = lower``; ``Φ((top^- - top)/σ)`` at ``x = top``, used where that
    argument is ``>= -1``), so the end is the domain's (``+inf`` for the lower tail at ``x = top``, ``-inf``
    for the upper tail at ``x = lower``) where one of them is ``>= p``; elsewhere the search decides (NaN).

    **The width** (``u = 2^-53``; the assumption :data:`_NDTR_K0`: ``ndtr`` within ``ρ_N(a) = u (8 + 4 a^2)``
    relatively, ``ndtri`` within ``6 u (t + 1)``).  Each computed ``Φ`` is ``Φ(a') (1 + δ)``, ``|δ| <=
    ρ_N(a)``, at an argument ``a' = a (1 + θ) + ζ`` (``|θ| <= 2.01 u``, ``|ζ| <= 2^-1075``: the difference and
    the quotient rounded), which moves ``log Φ`` by at most ``|a' - a|`` times its slope ``φ/Φ <= |a| + 1``.
    The lower tail as computed lies between ``A~`` (the rounding is monotone) and ``B~ (1 + 3.01 u)`` (where
    ``B~ < A~`` it is ``A~ <= A (1 + ρ) <= B (1 + ρ)``), an atom's ``v B~`` within ``u`` of ``v B~``.  So the
    computed predicate is the exact one wherever ``B (1 + ρ_U) < r`` (it fails) or ``A (1 - ρ_U) >= r`` (it
    holds), with ``ρ_U = u (13.1 + 6.01 s^2 + 2.01 s)`` over the zone (``s = t_0 + 1 >= |a|``); beyond the zone
    the relative error grows like ``a^2`` while the tail falls like ``e^{-a^2/2}``.  The zone is therefore
    ``[x^- + σ t_-, x + σ t_+]`` with ``Φ(-t_±) = r/(1 ± ρ_U)``; ``log Φ(-t)`` has slope ``-φ(t)/Φ̄(t) <=
    -max(t, 0.79)`` for ``t >= -0.01``, so ``|t_± - t_0| <= 1.011 ρ_U/max(t_0, 0.79) <= u (6.08 t_0 + 46.1)``.
    (The upper tail is the mirror image: ``C~`` and ``D~``.)  The closed form adds ``ndtri``'s error, ``1.27 u``
    for the rounding of ``r`` (``dΦ^{-1}/dr = 1/φ`` and the Mills ratio ``Φ̄(t)/φ(t) <= 1.2534``) and two
    roundings, ``σ u (8.02 t_0 + 7.3) + 1.01 u |x|``; the spacing ``x - x^- <= 2u|x| + 2^-1074`` adds to the
    zone.  Doubled for safety and for the rounding of the intervals' ``root ± W``::

        W = u (σ (30 t_0 + 110) + 8 |x|) + 2^-1020.

    Certified where ``1e-80 <= r <= 1/2`` (``t_0 <= 19``, ``ρ_U <= 3e-13``), ``p >= 1e-290`` (above every
    computed value that has underflowed) and the ends ``root ± W`` are finite; elsewhere the width is NaN.
    The facts about ``Φ`` used here are checked on a grid, the assumption against a 60-digit reference
    (``tests/families/test_gaussian_interval.py``).  ``positions``: as for :func:`_laplace_root`.
    """
    s = float(scale)
    shape = np.broadcast_shapes(np.shape(x), np.shape(p), np.shape(v))
    x = np.broadcast_to(np.asarray(x, dtype=float), shape)
    with np.errstate(all="ignore"):
        root, width = _gaussian_tail(x, p, p, upper, s)
        # writeable arrays of the broadcast shape (a 0-d computation gives numpy scalars)
        if not isinstance(root, np.ndarray) or root.shape != shape:
            root = np.array(np.broadcast_to(root, shape), dtype=float)
        if not isinstance(width, np.ndarray) or width.shape != shape:
            width = np.array(np.broadcast_to(width, shape), dtype=float)
        flat_root, flat_width = root.reshape(-1), width.reshape(-1)
        for bound, at, w, pp in _bound_releases(x, shape, lower, top, v, p, positions):
            weight = (1.0 - w) if upper else w
            # one value for all the releases on the bound where p and v are one
            size = at.size if np.ndim(w) or np.ndim(pp) else 1
            if (bound == lower) != bool(upper):  # the atom's weight divides p
                xb = np.full(size, bound)
                edge, edge_width = _gaussian_tail(xb, pp / weight, pp, upper, s)
                below = 0.5 * weight * (1.0 + (2.0 * _NDTR_K0 + 2.0) * _U) < pp
                if upper:  # x = top: only q = top can pass, as the intervals compute it
                    h = np.nextafter(top, -np.inf)
                    at_top = weight * special.ndtr(-((h - top) / s))
                    alone = np.where(at_top >= pp, top, np.inf)
                else:  # x = lower: U <= v/2 < p on the domain
                    alone = -np.inf
                ok = np.isfinite(edge_width)
                edge = np.where(ok, edge, np.where(below, alone, bound))
                edge_width = np.where(ok, edge_width, np.where(below, 0.0, np.nan))
            else:  # at least max(Φ(a_min), weight) up to a few ulps: the domain's end
                if upper:  # x = lower: Φ(a) >= 1/2 for q >= lower
                    tail = 0.5 * (1.0 - 16.0 * _U)
                else:  # x = top: Φ at a_min = (top^- - top)/σ, not 1/2
                    a_min = (np.nextafter(top, -np.inf) - top) / s
                    tail = special.ndtr(a_min) * (1.0 - 32.0 * _U) * (a_min >= -1.0)
                big = np.maximum(weight * (1.0 - 4.0 * _U), tail)
                end = np.where(big >= pp, np.inf if not upper else -np.inf, bound)
                edge = np.broadcast_to(end, (size,))
                edge_width = np.where(np.isinf(edge), 0.0, np.nan)
            flat_root[at] = edge
            flat_width[at] = edge_width
        root += 0.0  # -0.0 made 0.0 (root is an array of its own)
        return Root(root, width)


def _gaussian_tail(x, r, p, upper, s):
    """``(root, width)`` of :func:`_gaussian_root` for the tail ``Φ(±(q - x)/σ) = r`` (width NaN where it is not
    certified; the root ``x`` where ``r`` has no quantile).  With one ``r`` for all releases (between the
    bounds) only the release varies: one array operation for the root, three for the width."""
    n = special.ndtri(np.minimum(r, 0.5))  # -t_0
    ok = (r >= 1e-80) & (r <= 0.5) & (p >= 1e-290)
    root = x + s * n if upper else x - s * n
    width = np.abs(x)
    width *= 8.0 * _U
    width += _U * s * (30.0 * -n + 110.0) + _TINY
    if np.ndim(ok) == 0 and np.ndim(n) == 0 and np.isfinite(n):
        # |root| + width finite for every release: one check on the extreme ones
        if ok and root.size and max(root.max(), -root.min()) <= 1e308 and s <= 1e300:
            return root, width
        if not ok:
            return root, np.full(np.shape(width), np.nan)
    ok = ok & np.isfinite(root + width) & np.isfinite(root - width)
    return np.where(np.isfinite(root), root, x), np.where(ok, width, np.nan)


# --- Normalized: a starting point (no proved width yet) ---------------------------------------------------


#: the per-piece log-mass error assumptions of :func:`_normalized_root`: ``expm1``, ``exp``, ``log`` and
#: ``log1p`` within ``E`` units (module docstring)
_NORM_E = 4.0

#: a normalized law's root is certified only over a hull at most this many scales long (the uniform error
#: bound grows with it; a longer hull, or an unbounded one, is searched from the root)
_NORMALIZED_HULL = 512.0


def _normalized_delta(b, lo, hi, p, short_log):
    r"""``Δ``, a bound on ``|log F~ - log F|`` for the transform as :class:`dpbook.Normalized` computes it
    (its ``cdf``/``sf`` at ``x`` and the release below it, the randomized combination of the two included)
    at every true value of the hull, over a hull ``D`` scales long (``D <= 512``: see
    :func:`_normalized_root`).  ``short_log`` bounds ``|log ℓ| + |log b|`` over the pieces that may take the
    short path (cut pieces included; 0 where none)."""
    n = float(lo.size)
    d = float((hi[-1] - lo[0]) / b) * (1.0 + 4.0 * _U)
    piece = _U * (6.1 * d + (_NORM_E + 4.0) * short_log + 3.0 * _NORM_E + 16.0)
    log_n = math.log(n)
    sums = 3.0 * _NORM_E + n + 4.0 + (2.0 * _NORM_E + 1.0) * log_n + d + short_log
    sums = 2.0 * _U * sums
    rest = _U * (np.abs(np.log(p)) + _NORM_E + 6.0)
    return 1.01 * (2.0 * piece + sums + rest)


def _normalized_root(x, p, upper, scale, lo, hi):
    r"""The :class:`Root` of ``P_q(M <= x) = p`` (``upper`` false) or ``P_q(M > x) = p`` (``upper`` true) for
    ``M`` the Laplace law ``q + L_b`` conditioned on the union of the sorted disjoint pieces ``[lo_k, hi_k]``
    (:class:`dpbook.Normalized`; no atoms, so ``v`` plays no role), ``0 < p <= 1/2``, with a width
    certified at run time.  The upper tail is the lower tail of the reflected law (``-M`` at ``-q``) at
    ``-x``.

    **The root.**  ``G(q) = S_b(q) - p N(q)``, with ``S_b`` the Laplace mass at ``q`` of the pieces cut at
    the release ``e`` below it and ``N`` of all of them (``S_a = N - S_b`` above it), changes sign once, at
    the root (the transform decreases in ``q`` on the hull; the law at ``q`` beyond the hull is the law at
    its end).  The mass of a piece ``[α, γ]`` at ``q`` is ``[α <= q <= γ] + Σ ± e^{-|z - q|/b}/2`` over its
    two ends ``z`` (``+`` for a lower end above ``q`` or an upper end below it), so on a segment between
    two consecutive piece ends ``P_i <= q <= P_{i+1}`` (``q = P_i + b t``) each of ``S_b`` and ``S_a`` is
    ``C_2 e^t + C_1 + C_0 e^{-t}``: the ends ahead of the segment add to ``C_2``, those behind to ``C_0``.
    On a finite hull at most ``512 b`` long (:func:`_normalized_fast`) the sums over the fixed ends are
    tables over the segments and the number ``m`` of ends below ``e`` (:func:`_normalized_tables`, no
    exponent beyond ``±512``), to which ``e`` adds its own term when it lies inside a piece (it then ends
    the cut parts, and splits its segment in two); the signs of ``G`` at the ends and at ``e`` locate the
    root's segment, and its quadratic ``C_2 w^2 + C_1 w + C_0`` in ``w = e^t`` (both roots, in the stable
    form; the one on the segment) gives the root.  ``G < 0`` at the hull's lower end puts the root at
    ``-inf`` (the predicate ``P_q(M <= x) >= p`` holds nowhere), ``G >= 0`` at its top at ``+inf``.  Over a
    longer or unbounded hull every segment's quadratic is solved (:func:`_normalized_start`; a starting
    point only).  A release at or below the hull's lower end gives ``-inf``, one at or above its top
    ``+inf`` (width 0 where both points read are beyond it: the law's ``cdf`` is 0, resp. 1, there).

    **The width** (``u = 2^-53``, ``E = 4`` as in the module docstring, for ``expm1``, ``log1p`` and
    scipy's ``exprel``, which is ``expm1(x)/x``, too).  The intervals read ``F~``, the law's ``cdf`` (resp.
    ``sf``) at ``e_lo = x^-`` and ``e_hi = x`` (mirrored: ``-x`` and ``-x^-``) and their randomized
    combination, which lies between the two up to ``3u``.  Two steps:

    1. *The law's error* ``Δ`` (:func:`_normalized_delta`), uniform over the hull.  The law computes
       ``log F~ = lse(l~_cut) - lse(l~)`` from the pieces' log-masses
       (``dpbook._kernels.laplace._piece_log_mass``: ``log 2N(c) + log(1/2) - d``, ``d = |q - c|/b <= D``
       for ``q`` in the hull, ``D`` its length in scales).  On the long path ``2N(c) = (1 - e^{-A'}) + (1 -
       e^{-B'})`` lies in ``[0.63, 2]``; each ``expm1`` of an argument with two roundings (relative
       condition at most 1) errs by ``(E + 2.01) u``, the sum by ``u``, the logarithm adds ``0.7 E u``.  On
       the short path (counted for every piece shorter than ``3 b``: from ``2.5 b`` on none takes it, see
       :func:`_long_path`) ``log ℓ - log b + log(α g(A') + β g(B'))`` with ``g(z) = (1 - e^{-z})/z``
       (``exprel(-z)``, decreasing from 1 to ``0.63`` on ``[0, 1]``, ``|g'/g| <= 1/2``; ``max(α, β) = 1``, so
       the sum lies in ``[0.63, 2]``): ``α`` errs by ``3.01 u``, ``g`` by ``1.01 u`` from its argument and
       ``(E + 1) u`` itself, the products and the sum by ``2 u``, the logarithms of ``ℓ`` and ``b`` by
       ``E u`` times ``|log ℓ| + |log b| <= Λ`` (``Λ``: the bound over the short pieces, ``ℓ >= len/2``).
       With ``d`` (``2.01 u d``) and the two sums, each piece's log-mass errs by at most
       ``δ = u (6.1 D + (E + 4) Λ + 3E + 16)``.  scipy's ``logsumexp`` is ``log1p(s) + log m + a_max``
       (``m`` the count of maxima): 1-Lipschitz in its entries, plus ``u (3E + n + 4 + (2E + 1) log n +
       D + Λ)`` of its own (``n`` pieces, ``s <= n``, ``|a_max| <= D + Λ + 2``); the two of them, the
       difference (``u |log p|`` on the side that matters), ``exp`` and the randomized combination give
       ``Δ = 1.01 (2δ + 2u (3E + n + 4 + (2E + 1) log n + D + Λ) + u (|log p| + E + 6))``.  So wherever the
       exact ``F <= p e^{-Δ}`` the computed transform is below ``p``, and wherever ``F >= p e^{Δ}`` it is
       at least ``p``.

    2. *A run-time certificate* at ``q_+ = root + W`` and ``q_- = root - W`` (the doubles the intervals
       compute): ``S_b`` and ``S_a`` are evaluated in the root's segment from their coefficients with a
       running error bound ``ρ Σ|terms| + 2^-1020 (w + 1/w + 1) 2k`` (``ρ = 1.01 u (6.1 D + 3E + 4k +
       12)``: a term is at most three exponentials of distances with two roundings each, the table's
       ``e^{-|P_z - P_i|/b}``, ``e``'s and ``w``, then the products and the sums of at most ``2k + 3``
       terms; the last term covers subnormal results), and the other release point by the mass of
       ``[e_lo, e_hi]``, at most ``h/(2b)`` (``h <= 2u|x| + 2^-1074``).  The width is certified where
       ``F(e_hi) < p (1 - Δ)`` at ``q_+`` and ``F(e_lo) > p (1 + 2Δ)`` at ``q_-`` follow from those bounds
       (with ``16 u`` for the roundings of the comparison): the exact transform decreases in ``q``, so every
       double beyond ``q_+`` has ``F~ < p`` and every one below ``q_-`` has ``F~ >= p``, and the search's end
       lies in ``[q_-, q_+]``.  ``W`` is chosen from the slope of ``G`` at the root (1.5 times the zone
       where ``|G|`` is within its error, else 24 times); where ``q_±`` leave the root's segment, or the
       check fails (the flat tail next to a bound, a root next to a piece end, masses lost to rounding)
       the width is NaN.
       A root ``±inf`` is certified the same way at the hull's end (width 0).  Nothing is certified over a
       hull longer than ``512 b`` (the bound ``Δ`` is uniform over it).

    Returns a :class:`Root` shaped like the broadcast of ``x`` and ``p``."""
    b = float(scale)
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    x = np.asarray(x, dtype=float)
    if upper:
        x, lo, hi = -x, -hi[::-1], -lo[::-1]
    shape = np.broadcast_shapes(x.shape, np.shape(p))
    xf = np.broadcast_to(x, shape).reshape(-1)
    pf = np.broadcast_to(np.asarray(p, dtype=float), shape).reshape(-1)
    width = np.full(xf.size, np.nan)
    with np.errstate(all="ignore"):
        if (hi[-1] - lo[0]) / b <= _NORMALIZED_HULL:
            root = np.full(xf.size, np.nan)
            at = np.flatnonzero((xf > lo[0]) & (xf < hi[-1]))
            if at.size:
                e, pa = xf[at], pf[at]
                root[at], parts, slope, m = _normalized_fast(e, pa, b, lo, hi)
                width[at] = _normalized_certified(
                    root[at], (parts, slope), e, pa, b, lo, hi, m
                )
        else:
            root = _normalized_start(xf, pf, b, lo, hi)
        # both points read at or below the hull's lower end (F~ = 0), resp. above its top (F~ = 1): the
        # points are (e^-, e), mirrored (e, e^+)
        below = (xf < lo[0]) | ((xf == lo[0]) & (not upper))
        beyond = (xf > hi[-1]) | ((xf == hi[-1]) & upper)
        root = np.where(xf <= lo[0], -np.inf, np.where(xf >= hi[-1], np.inf, root))
        width = np.where(below | beyond, 0.0, width)
    root, width = root.reshape(shape), width.reshape(shape)
    return Root(-root if upper else root + 0.0, width)


def _normalized_start(xf, pf, b, lo, hi):
    """The roots of :func:`_normalized_root` as starting points only (flat arrays, in the lower tail's frame):
    every segment's quadratic solved (for a hull unbounded or longer than ``512 b``, whose roots are not
    certified)."""
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
        return best


def _normalized_tables(b, lo, hi):
    """Release-independent tables of :func:`_normalized_fast` for the ``n = 2k`` ends ``P`` of a finite hull
    at most ``512 b`` long: for each segment ``i`` (``[P_i, P_{i+1}]``, anchored at ``P_i``) and each prefix
    ``m`` of the ends, the signed sums of ``e^{-|z - P_i|/b}/2`` over the ends ``z`` of ``P[:m]`` (``B``)
    and of ``P[m:]`` (``A``) ahead of the segment (``C_2``) and behind it (``C_0``), their sums of absolute
    values, the indicators ``C_1``, ``e^{-|P_l - P_i|/b}`` and ``e^{L_i}``."""
    ends = np.stack([lo, hi], axis=1).ravel()
    n = ends.size
    i = np.arange(n - 1)[:, None]
    z = np.arange(n)[None, :]
    lower = (z % 2) == 0
    near = np.exp(-np.abs(ends[None, :] - ends[:, None]) / b)
    half = 0.5 * near[:-1]
    ahead = z >= i + 1
    # a lower end ahead of q adds +e^{-|z - q|/b}/2, an upper one -; behind, the other way round
    m2 = np.where(ahead, np.where(lower, half, -half), 0.0)
    m0 = np.where(ahead, 0.0, np.where(lower, -half, half))
    zero = np.zeros((n - 1, 1))
    out = {"ends": ends, "near": near, "grow": np.exp((ends[1:] - ends[:-1]) / b)}
    for name, terms in (("2", m2), ("0", m0)):
        for suffix, tt in (("", terms), ("abs", np.abs(terms))):
            out["B" + name + suffix] = np.concatenate([zero, np.cumsum(tt, 1)], 1)
            out["A" + name + suffix] = np.concatenate(
                [np.cumsum(tt[:, ::-1], 1)[:, ::-1], zero], 1
            )
    m = np.arange(n + 1)[None, :]
    inside = (i % 2) == 0
    out["B1"] = (inside & (i + 1 < m)) * 1.0
    out["A1"] = (inside & (i >= m)) * 1.0
    return out


def _normalized_fast(e, p, b, lo, hi):
    """The roots of :func:`_normalized_root` at releases ``e`` strictly inside a finite hull at most ``512 b``
    long (flat arrays, in the lower tail's frame), as ``(root, (at_root, at_end), (g_2, g_0, w), m)``:
    ``at_root`` the root's segment (its coefficients of ``S_b`` and ``S_a`` per release, their sums of
    absolute values, its anchor and its ends), ``at_end(sel, top)`` the same for the segment holding the
    hull's top (or bottom) at the releases ``sel``, ``G``'s outer coefficients and ``w = e^t`` at the root
    (its slope), and the number ``m`` of piece ends below each release."""
    t = _normalized_tables(b, lo, hi)
    ends = t["ends"]
    n = ends.size
    m = np.searchsorted(ends, e, side="left")  # the ends below e: 1 <= m <= n - 1
    odd = (m % 2) == 1  # e inside a piece (lo_j < e <= hi_j): an end of the cut pieces
    u_dn = np.exp(-(e - ends[m - 1]) / b)
    u_up = np.exp(-(ends[m] - e) / b)
    segs = np.arange(n - 1)[:, None]
    # e^{-|e - P_i|/b}/2 for every segment's anchor
    half_e = 0.5 * np.where(
        segs <= m - 1, u_dn * t["near"][:-1, m - 1], u_up * t["near"][:-1, m]
    )
    e_ahead = odd & (segs <= m - 1)
    e_behind = odd & (segs >= m)
    ahead_e = np.where(e_ahead, half_e, 0.0)
    behind_e = np.where(e_behind, half_e, 0.0)
    table = {
        "b": (
            t["B2"][:, m] - ahead_e,
            t["B1"][:, m] + (odd & (segs == m - 1)),
            t["B0"][:, m] + behind_e,
        ),
        "a": (t["A2"][:, m] + ahead_e, t["A1"][:, m], t["A0"][:, m] - behind_e),
        "babs": (t["B2abs"][:, m] + ahead_e, 0.0, t["B0abs"][:, m] + behind_e),
        "aabs": (t["A2abs"][:, m] + ahead_e, 0.0, t["A0abs"][:, m] + behind_e),
    }
    # e^{-(q - e)/b}/2 = e^{(e - P_{m-1})/b} e^{-t}/2 on the part [e, hi_j]
    back = 0.5 / u_dn

    def parts(idx, second, sel):
        """At the releases ``sel`` (flat positions): the ``(S_b, S_a, |S_b|, |S_a|)`` coefficient triples of
        their segment ``idx`` (its part above ``e`` where ``second``; one segment for all of them where it is an
        int), its anchor and its ends."""
        if np.ndim(idx) == 0:  # one row of each table

            def pick(a):
                return a[idx][sel]

        else:  # one gather from the flattened table (the tables are C-contiguous, shaped (n - 1, e.size))
            flat = idx * e.size + np.arange(e.size)[sel]

            def pick(a):
                return a.reshape(-1)[flat]

        he, bk = pick(half_e), back[sel]
        out = []
        for key, s_e, one in (("b", 1.0, 0.0), ("a", -1.0, 1.0)):
            c2, c1, c0 = (pick(c) for c in table[key])
            # above e: e is behind q (sign s_e), q outside the cut part below e and inside the one above
            c2 = np.where(second, c2 + s_e * he, c2)
            c0 = np.where(second, c0 + s_e * bk, c0)
            c1 = np.where(second, one, c1)
            out.append((c2, c1, c0))
        for key, value in (("babs", out[0]), ("aabs", out[1])):
            c2, c0 = pick(table[key][0]), pick(table[key][2])
            c2, c0 = np.where(second, c2 - he, c2), np.where(second, c0 + bk, c0)
            out.append((c2, value[1], c0))
        split = odd[sel] & (idx == m[sel] - 1)
        start = np.where(split & second, e[sel], ends[idx])
        stop = np.where(split & ~second, e[sel], ends[idx + 1])
        return out, ends[idx], start, stop

    # G's coefficients on every segment (on the split one, its part below e), and its sign at every end:
    # each segment's anchor (t = 0), the hull's top, and e
    q_ = 1.0 - p
    g2, g1, g0 = (q_ * table["b"][j] - p * table["a"][j] for j in range(3))
    count = np.sum(g2 + g1 + g0 >= 0.0, axis=0)
    # the hull's top lies in the part above e of the last segment where e splits it
    top_split = odd & (m - 1 == n - 2)
    he_top = half_e[n - 2]
    grow = t["grow"][n - 2]
    g_top = np.where(top_split, g2[n - 2] + he_top, g2[n - 2]) * grow
    g_top += np.where(top_split, -p, g1[n - 2])
    g_top += np.where(top_split, g0[n - 2] + back, g0[n - 2]) / grow
    count += g_top >= 0.0
    i = np.clip(count - 1, 0, n - 2)
    row = (m - 1)[None]
    ge = np.take_along_axis(g2, row, 0)[0] / u_dn + np.take_along_axis(g1, row, 0)[0]
    ge += np.take_along_axis(g0, row, 0)[0] * u_dn
    second = odd & (i == m - 1) & (ge >= 0.0)
    coef, anchor, start, stop = parts(i, second, slice(None))
    (b2, b1, b0), (a2, a1, a0) = coef[0], coef[1]
    g2, g1, g0 = q_ * b2 - p * a2, q_ * b1 - p * a1, q_ * b0 - p * a0
    disc = np.sqrt(np.maximum(g1 * g1 - 4.0 * g2 * g0, 0.0))
    half = -0.5 * (g1 + np.where(g1 >= 0.0, disc, -disc))
    w_lo = np.exp((start - anchor) / b)
    w_hi = np.exp((stop - anchor) / b)
    w1, w2 = half / g2, g0 / half
    in1 = (w1 >= w_lo * (1.0 - 1e-9)) & (w1 <= w_hi * (1.0 + 1e-9))
    w = np.where(in1, w1, w2)
    w = np.clip(np.where(np.isfinite(w), w, w_lo), w_lo, w_hi)
    root = np.clip(anchor + b * np.log(w), start, stop)
    root = np.where(count == 0, -np.inf, np.where(count == n, np.inf, root))

    def at_end(sel, top):
        """The segments holding the hull's end (the top: in the part above e where split)."""
        return parts(
            n - 2 if top else 0,
            top_split[sel] if top else np.zeros(sel.size, bool),
            sel,
        )

    return root, ((coef, anchor, start, stop), at_end), (g2, g0, w), m


def _normalized_pick(a, at):
    """The positions ``at`` of a segment's coefficients (nested tuples of arrays and scalars)."""
    if isinstance(a, (tuple, list)):
        return tuple(_normalized_pick(t, at) for t in a)
    return a[at] if np.ndim(a) else a


def _normalized_certified(root, found, e, p, b, lo, hi, m):
    """The widths of :func:`_normalized_root` certified at run time (NaN elsewhere), from the segments'
    coefficients of :func:`_normalized_fast` (``found``)."""
    ends = np.stack([lo, hi], axis=1).ravel()
    n = ends.size
    (at_root, at_end), (g2, g0, w0) = found[0], found[1]
    h = (2.0 * _U) * np.abs(e) + 2.0**-1074  # the spacing of the two points read
    # |log ℓ| + |log b| over the pieces that may take the short path: the full ones, and the cut ones at
    # either point read (next to e: a cut length moves by at most h between them)
    full = hi - lo
    short_full = (full < 3.0 * b) * (np.abs(np.log(full)) + 0.7 + abs(math.log(b)))
    short_log = np.full(e.size, np.max(short_full))
    for cut in (e - ends[m - 1], ends[m] - e):
        short = cut < 3.0 * b
        size = np.log(np.maximum(np.where(short, cut, 1.0) - h, 2.0**-1074))
        size = short * (np.abs(size) + 0.7 + abs(math.log(b)))
        short_log = np.maximum(short_log, size)
    delta = _normalized_delta(b, lo, hi, p, short_log)
    d_hull = float((hi[-1] - lo[0]) / b) * (1.0 + 4.0 * _U)
    rho = 1.01 * _U * (6.1 * d_hull + 3.0 * _NORM_E + 2.0 * n + 12.0)
    slack = h / (2.0 * b) * (1.0 + 4.0 * _U)

    def bounds(q, part, sel):
        """``(S_b, S_a, ε_b, ε_a, inside)`` at ``q`` in the segments ``part`` of the releases ``sel``."""
        coef, anchor, start, stop = part
        inside = (q >= start) & (q <= stop)
        w = np.exp(np.where(inside, q - anchor, 0.0) / b)
        out = []
        for value, size in ((coef[0], coef[2]), (coef[1], coef[3])):
            s = value[0] * w + value[1] + value[2] / w
            a = size[0] * w + size[1] + size[2] / w
            out.append((s, rho * a + _TINY * (w + 1.0 / w + 1.0) * n + slack[sel]))
        (sb, eb), (sa, ea) = out
        return sb, sa, eb, ea, inside

    def fails(q, part, sel):  # certified: F(e_hi) < p e^{-Δ} at q
        sb, sa, eb, ea, inside = bounds(q, part, sel)
        small = eb + ea <= 0.25 * (sb + sa)
        bound = p[sel] * (1.0 - delta[sel]) * (sb + sa - eb - ea)
        return (inside & small) & ((sb + eb) * (1.0 + 16.0 * _U) < bound)

    def holds(q, part, sel):  # certified: F(e_lo) > p e^{Δ} at q
        sb, sa, eb, ea, inside = bounds(q, part, sel)
        small = (eb + ea <= 0.25 * (sb + sa)) & (eb <= 0.25 * sb)
        bound = p[sel] * (1.0 + 2.0 * delta[sel]) * (sb + sa + eb + ea)
        bound *= 1.0 + 16.0 * _U
        return (inside & small) & ((sb - eb) * (1.0 - 16.0 * _U) > bound)

    finite = np.isfinite(root)
    everyone = slice(None)
    # the zone where |G| is within its error, from the slope of G at the root (per unit of t)
    sb, sa, eb, ea, _ = bounds(root, at_root, everyone)
    slope = np.abs(g2 * w0 - g0 / w0)
    zone = b * (p * delta * (sb + sa) + eb + ea) / slope
    guess = 1.5 * zone + (4.0 * _U) * np.abs(root) + _TINY
    guess = np.where(finite & (guess < np.inf), guess, 0.0)
    ok = fails(root + guess, at_root, everyone) & holds(root - guess, at_root, everyone)
    width = np.where(finite & ok, guess, np.nan)
    # a wider zone where that fails (a curved G, a root off by more)
    retry = np.flatnonzero(finite & ~ok)
    if retry.size:
        r, wide = root[retry], 16.0 * guess[retry]
        part = tuple(_normalized_pick(a, retry) for a in at_root)
        ok = fails(r + wide, part, retry) & holds(r - wide, part, retry)
        width[retry] = np.where(ok, wide, np.nan)
    # no root on the hull: certified at the hull's end (width 0)
    for sign, end, check in ((1.0, ends[-1], holds), (-1.0, ends[0], fails)):
        sel = np.flatnonzero(root == sign * np.inf)
        if sel.size:
            q = np.full(sel.size, end)
            width[sel] = np.where(check(q, at_end(sel, sign > 0), sel), 0.0, np.nan)
    return width


# --- the folded Laplace law (FoldedLaplace): closed-form roots, certified on the long path -------------------

#: the margin (in the logarithm of the tail) of :func:`_folded_root`'s decisions that read the crude bound
#: ``2^-30`` of the law's relative error (a release's side of the root, a root beyond a bound)
_FOLD_MARGIN = 2.0**-28

_LOG2_FOLD = math.log(2.0)


def _folded_root(x, p, v, upper, scale, lower, top):
    r"""The :class:`Root` of ``P_q(M < x) + v P_q(M = x) = p`` (``upper`` false) or ``P_q(M > x) + (1 - v)
    P_q(M = x) = p`` (``upper`` true) for the folded Laplace law (:class:`dpbook.FoldedLaplace`: ``q + L_b``
    reflected at ``lower`` and ``top`` until it lies between), ``q`` in ``[lower, top]``.

    With no finite bound the law is the Laplace mechanism's, computed by the same kernels: its
    :class:`Root` with the proved width (:func:`_laplace_root`).  Otherwise the law has no atom, and the
    intervals compute the lower tail from the law's cdf at ``e_lo = x^-`` and ``e_hi = x`` (weight ``v``
    on ``e_hi``; the plain interval reads ``e_hi`` alone), the upper tail from its ``sf`` at ``x`` and
    ``x^-``, which is the cdf of the mirrored law (``-M`` at ``-q`` on ``[-top, -lower]``) at ``e_lo = -x``
    and ``e_hi = -x^-`` with the weight ``1 - v``: one kernel on the lower tail (:func:`_folded_point`),
    for the points used (``v = 1`` reads ``e_hi`` only, ``v = 0`` ``e_lo`` only).  The randomized
    transform lies within ``3.02 u`` relative of the hull of the two computed tails (its three
    roundings), which :func:`_folded_point`'s bounds include.  A root beyond a bound is decided at the
    point where it is hardest (the tail at ``top`` increases with the point, as does the tail at
    ``lower``: ``+inf`` at the smaller point used, ``-inf`` at the larger), a finite root at both
    points, joined: the width covers both zones (unless it is over 8 times the larger of them: a release
    a few doubles from a bound, where the tail changes by a factor from one double to the next, is left
    to the search).  A root not certified at every point used is a starting point (NaN width,
    :func:`_folded_start`) that the intervals polish on the law.  One finite bound:
    :func:`_folded_one_sided`."""
    b = float(scale)
    if np.isinf(lower) and np.isinf(top):
        return _laplace_root(x, p, v, upper, b)
    x = np.asarray(x, dtype=float)
    v = np.asarray(v, dtype=float)
    if np.isinf(lower) or np.isinf(top):
        return _folded_one_sided(x, p, v, upper, b, lower, top)
    if upper:  # the mirrored law's lower tail at e_lo = -x, e_hi = -x^- = (-x)^+, with the weight 1 - v
        x, v, lower, top = -x, 1.0 - v, -top, -lower
    shape = np.broadcast_shapes(x.shape, np.shape(p), v.shape)
    x = np.broadcast_to(x, shape).ravel()
    with np.errstate(all="ignore"):
        e_hi = np.nextafter(x, np.inf) if upper else x
        e_lo = x if upper else np.nextafter(x, -np.inf)
        if v.ndim == 0 and v == 1.0:
            e_plus = e_minus = e_hi
        elif v.ndim == 0 and v == 0.0:
            e_plus = e_minus = e_lo
        else:
            vf = np.broadcast_to(v, shape).ravel()
            e_plus, e_minus = (
                np.where(vf < 1.0, e_lo, e_hi),
                np.where(vf > 0.0, e_hi, e_lo),
            )
        pf = p if np.ndim(p) == 0 else np.broadcast_to(p, shape).ravel()
        root, width, open_ = _folded_decide(
            e_plus, e_minus, e_lo, e_hi, pf, b, lower, top
        )
        at = np.flatnonzero(open_)
        if at.size:
            pa = pf if np.ndim(pf) == 0 else pf[at]
            r_lo, w_lo = _folded_point(e_lo[at], pa, b, lower, top)
            r_hi, w_hi = _folded_point(e_hi[at], pa, b, lower, top)
            u_lo = e_plus[at] == e_lo[at]  # the smaller point is used
            u_hi = e_minus[at] == e_hi[at]
            first = np.minimum(
                np.where(u_lo, r_lo - w_lo, np.inf), np.where(u_hi, r_hi - w_hi, np.inf)
            )
            last = np.maximum(
                np.where(u_lo, r_lo + w_lo, -np.inf),
                np.where(u_hi, r_hi + w_hi, -np.inf),
            )
            mid = 0.5 * first + 0.5 * last
            half = np.maximum(last - mid, mid - first)
            joined = half * (1.0 + 4.0 * _U) + 2.0 * _U * np.abs(mid) + _TINY
            # (a join far wider than its parts, for a release a few doubles from a bound where the tail
            # changes by a factor from one double to the next, is left to the search)
            tight = half <= 8.0 * np.fmax(
                np.where(u_lo, w_lo, 0.0), np.where(u_hi, w_hi, 0.0)
            )
            ok = np.isfinite(first) & np.isfinite(last) & tight
            root[at] = mid
            width[at] = np.where(ok, joined, np.nan)
        nan = np.flatnonzero(np.isnan(width))
        if nan.size:  # the starting points, in the mirrored coordinate
            pn = pf if np.ndim(pf) == 0 else pf[nan]
            root[nan] = _folded_start(x[nan], pn, False, b, lower, top)
    if upper:
        root = -root
    return Root(root.reshape(shape) + 0.0, width.reshape(shape))


def _folded_decide(e_plus, e_minus, e_lo, e_hi, p, b, lower, top):
    """``(root, width, open)`` of :func:`_folded_root` at flat points: ``±inf`` with width 0 where a root beyond a
    bound is certified (:func:`_folded_point`'s decisions: ``+inf`` read at the smallest point used
    ``e_plus``, whose distance to ``lower`` is then the smallest, ``-inf`` at the largest ``e_minus``), NaN
    elsewhere; ``open`` where a finite root may be certified.  A point at most ``2^-1000`` above ``lower``
    (where the law's half-distances may be subnormal, off by a factor up to 3) is decided ``-inf`` only
    with the margin ``e^2``; one next to ``top`` needs no care (the law's arguments there are exact)."""
    n = e_hi.size
    root, width = np.full(n, np.nan), np.full(n, np.nan)
    one = e_plus >= top  # C = 1 at every point used
    zero = e_minus <= lower  # C = 0
    root[one], width[one] = np.inf, 0.0
    root[zero], width[zero] = -np.inf, 0.0
    w = top - lower
    big = w / b
    if not (2.0 * big > 0.5 and big <= 2.0**16 and 2.0**-1000 <= b <= 2.0**1000):
        return root, width, np.zeros(n, dtype=bool)
    live = ~one & ~zero & (p >= 2.0**-900) & (p <= 0.4)
    lW = float(np.log(-np.expm1(-2.0 * big)))
    lp = np.log(p)
    y = e_plus - lower
    log_top = -((top - e_plus) / b) + np.log(-np.expm1(-2.0 * (y / b))) - lW
    plus = live & (y >= 2.0**-1000) & (log_top >= lp + _FOLD_MARGIN)
    rest = np.flatnonzero(live & ~plus)
    root[plus], width[plus] = np.inf, 0.0
    open_ = np.zeros(n, dtype=bool)
    if rest.size:
        lpr = lp if np.ndim(lp) == 0 else lp[rest]
        y = e_minus[rest] - lower
        Y = y / b
        log_low = np.log1p(np.exp(-2.0 * (big - Y / 2.0))) + np.log(-np.expm1(-Y)) - lW
        minus = log_low <= lpr - np.where(y < 2.0**-1000, 2.0, _FOLD_MARGIN)
        root[rest[minus]], width[rest[minus]] = -np.inf, 0.0
        open_[rest[~minus]] = True
    return root, width, open_


def _folded_point(e, p, b, lower, top):
    r"""``(root, width)`` of ``C_q(e) = p`` for the folded law on ``[lower, top]`` (both finite) at the points
    ``e``: ``C_q(e)`` the lower tail ``P_q(M <= e)`` as the law computes it
    (``dpbook.families.folded.FoldedLaplace._logs``), the width NaN where not certified.

    **The law.**  With ``Y = (e - lower)/b``, ``A = (top - e)/b``, ``W = Y + A`` and ``P = (q - lower)/b``:
    on the side ``q >= e`` (A) ``C = sinh Y cosh(W - P)/sinh W``, whose logarithm has the slope
    ``-tanh(W - P)`` in ``P``; on the side ``q <= e`` (B) ``C = 1 - cosh P sinh A/sinh W``, whose
    logarithm has the slope ``-σ(P) = -sinh P sinh A/(sinh W C)``, increasing in ``P``.  ``C`` decreases
    in ``q`` from ``C_low = 1 - sinh A/sinh W`` to ``C_top = sinh Y/sinh W``.  On side A the law computes
    ``log C`` as ``-(q - e)/b - log 2 + lm(y) - lm(w) + log1p(e^{-2(top - q)/b})`` (``lm(t) = log(1 -
    e^{-2t/b})``, ``y = e - lower``) where that is below ``log 1/2``, else ``C`` from its complement (then
    ``C >= 0.49``, as is the exact one); on side B it computes ``1 - C`` by such a product and ``C = 1 -
    (1 - C)`` where ``1 - C <= 1/2`` (then both ``C >= 0.49``), else ``C`` as the ``logaddexp`` of
    ``t_1 = log(sinh A (cosh Y - cosh P)/sinh W)`` (with ``lm(top - e) - lm(w)``, ``lm(e - q)`` and
    ``lm((y + q - lower)/2)``) and ``t_2 = log(sinh Y cosh A/sinh W)`` (``= log C_q(e)`` at ``q = e``).
    With ``E = 4`` ulps (``8 u`` relative, ``u = 2^-53``) for ``exp``, ``log``, ``expm1``, ``log1p``,
    ``logaddexp``, and 5 for scipy's ``exprel`` (``expm1(x)/x``, 1 for ``|x| < 1e-16``):

    * ``lm(t)`` errs by at most ``u (21 + 11 L_t)`` (``L_t = |log(2t/b)| + 1``, or ``|log t| + |log b| +
      1.7`` where ``2t/b <= 1e-300`` and the law takes the logarithms apart; its argument is rounded twice,
      ``d log(1 - e^{-z})/d log z <= 1``, and ``|lm(t)| <= L_t``); ``log1p(e^{-2t/b})`` by ``15 u``.  The
      sum of five terms and its four roundings give, with ``exp`` and the randomized combination's three
      roundings (it lies within ``3.02 u`` relative of the two computed tails' hull), a relative error of
      the side-A tail ``u (5.01 Z + 72 + 14 (L_y + L_w))`` at ``Z = (q - e)/b <= A``; doubled:
      ``Δ(Z) = u (11 Z + 170 + 28 (L_y + L_w))``.
    * Side B: ``t_2`` errs by ``u (66 + 14 (L_y + L_w))``; in ``t_1`` the error of ``lm(e - q)`` is
      unbounded as ``q -> e``, but its weight in the ``logaddexp``, ``e^{t_1}/C <= e^{t_1 - t_2} <= (e - q)/b``
      (``cosh Y - cosh P <= (Y - P) sinh Y``), keeps it under ``u (32 + 14 |log 2W|)``; with the
      ``logaddexp`` (``8 u |log C|``), ``exp`` and the combination, doubled:
      ``Δ_B = u (440 + 16 |log C| + 30 (L_{top - e} + L_y + L_half) + 60 L_w + 28 |log 2W|)``, ``L_half`` the
      largest ``L`` over ``[y/2, y]`` (``half = (y + q - lower)/2``, rounded by at most ``1.01 u`` for
      ``y >= 2^-1000``), ``|log C| <= max(|log p|, |log C_q(e)|) + 1`` where it matters.
    * Crude, on both sides and every branch, for ``b`` in ``[2^-1000, 2^1000]``, ``y >= 2^-1000`` and
      ``W <= 2^16``: every ``L <= 1440``, so side B errs by under ``2^17 u`` and side A by ``u (11 W + 2^17)``:
      within ``2^-30`` relative.  (Next to ``top`` the law's arguments are exact, so no bound on
      ``top - e`` is needed; for ``y < 2^-1000`` the halves may be subnormal and ``t_1`` off by a factor 3.)

    **Decisions** (:func:`_folded_decide` at the extreme points used).  ``C_top >= p e^{2^-28}`` (computed to
    ``2^-35``): the predicate ``C >= p`` holds for every ``q`` of the domain (root ``+inf``, width 0);
    ``C_low <= p e^{-2^-28}``: it fails everywhere (``-inf``; margin ``e^{-2}`` for ``y < 2^-1000``).
    ``e <= lower`` gives ``C = 0`` exactly (``-inf``), ``e >= top`` ``C = 1`` (``+inf``).

    **A root on side A** (``C_q(e) >= p`` at ``q = e``): ``C = p`` is ``t + e^{-2A}/t = e^c`` with
    ``t = e^{-(q - e)/b}``, ``c = log 2p - log(1 - e^{-2Y}) + log(1 - e^{-2W})``: ``d = (q - e)/b = -c + log 2
    - log1p(s)``, ``s = sqrt(1 - 4 e^{-2(A + c)}) = tanh((top - q)/b)``, the slope at the root; ``|∂d/∂c|,
    |∂d/∂A| <= 1/s``.  Its computed error (``c`` to ``u (11 (|log p| + |lY| + |lW|) + 23)``, ``A`` to
    ``2.01 u A``, ``1 - g = 1 - 4e^{...}`` to ``g (8 u + 2 (err_c + err_A + u |A + c|)) + u``, the square
    root, ``log1p``, and ``e + b d``), doubled, is ``ε_r``.  With ``Δ_e = Δ(d + 1)``, ``W_0 = 2 b Δ_e / s``
    (and ``W_0 + ε_r <= b``) and the slope over ``r ± (W_0 + ε_r)`` checked to be at least ``s/2``
    (``tanh`` of the distance from ``top``, shaved for its roundings), the exact log-tail is ``Δ_e``
    beyond ``log p`` at ``r ± W_0``.  Below the zone on side A ``Z <= d``; above it ``log p - log C(q) -
    Δ(Z)`` is concave in ``q`` (``log cosh`` is convex, ``Δ`` linear), so it is positive up to ``top``
    where it is at both ends: ``log C_top <= log p - 2^-30`` is checked (``Δ(A) < 2^-33``).  Side B then
    holds the predicate by the crude bound, as ``(r - ε_r - e) s / (4b) >= 2^-28`` is checked.
    Certified where ``s >= 2^-10``; the width ``W_0 + ε_r``.

    **A root on side B** (``C_q(e) <= p e^{-2^-28}``: side A fails the predicate by the crude bound):
    ``cosh P = (1 - p) sinh W/sinh A``, ``k = log cosh P = log1p(-p) + Y + lW - lA``, ``P = k + log1p(s)``,
    ``s = sqrt(1 - e^{-2k}) = tanh P``, ``|∂P/∂k| = 1/s``; ``k`` to ``u (11 (|log1p(-p)| + |lW| + |lA|) + 5.01 Y
    + 20.02)``, ``P`` to ``2 err_k/s + u (11 + P)``; doubled with ``lower + b P``: ``ε_r``.  ``W_0 = 2 b Δ_B/σ_r``
    (``σ_r`` the slope at the root) and the least slope over ``r ± (W_0 + ε_r)``, at its left end,
    bounded below with ``C <= C_low`` and checked to be at least ``σ_r/2``.  Certified where ``s >=
    2^-10``; the width ``W_0 + ε_r``.
    """
    e = np.asarray(e, dtype=float)
    p = np.asarray(p, dtype=float)
    shape = np.broadcast_shapes(e.shape, p.shape)
    root = np.full(shape, np.nan)
    width = np.full(shape, np.nan)
    w = top - lower
    big = w / b
    certify = (
        2.0 * big > 0.5
        and big <= 2.0**16
        and 2.0**-1000 <= b <= 2.0**1000
        and np.isfinite(w)
    )
    zero = e <= lower  # C = 0 exactly: the predicate fails everywhere
    one = e >= top  # C = 1
    root = np.where(zero, -np.inf, np.where(one, np.inf, root))
    width = np.where(zero | one, 0.0, width)
    if not certify:
        return root, width
    y, a_dist = e - lower, top - e
    inner = (y >= 2.0**-1000) & (a_dist >= 2.0**-1000) & (p >= 2.0**-900) & (p <= 0.4)
    Y, A = y / b, a_dist / b
    lY = np.log(-np.expm1(-2.0 * Y))
    lW = float(np.log(-np.expm1(-2.0 * big)))
    lp = np.log(p)
    log_top = -A + lY - lW  # log C_top
    log_low = np.log1p(np.exp(-2.0 * (big - Y / 2.0))) + np.log(-np.expm1(-Y)) - lW
    log_at = lY + np.log1p(np.exp(-2.0 * A)) - _LOG2_FOLD - lW  # log C_q(e) at q = e
    plus = inner & (log_top >= lp + _FOLD_MARGIN)
    minus = inner & ~plus & (log_low <= lp - _FOLD_MARGIN)
    root = np.where(plus, np.inf, np.where(minus, -np.inf, root))
    width = np.where(plus | minus, 0.0, width)
    side_a = inner & ~plus & ~minus & (log_at >= lp)
    if side_a.any():
        at = np.flatnonzero(side_a.ravel())
        r, wd = _folded_side_a(
            *(np.broadcast_to(t, shape).ravel()[at] for t in (e, p, Y, A, lY, lp, y)),
            lW,
            b,
            w,
            top,
        )
        root.ravel()[at] = r
        width.ravel()[at] = wd
    side_b = inner & ~plus & ~minus & (log_at <= lp - _FOLD_MARGIN)
    if side_b.any():
        at = np.flatnonzero(side_b.ravel())
        picked = (e, p, Y, A, lp, y, a_dist, log_at, log_low)
        r, wd = _folded_side_b(
            *(np.broadcast_to(t, shape).ravel()[at] for t in picked),
            lW,
            b,
            w,
            lower,
        )
        root.ravel()[at] = r
        width.ravel()[at] = wd
    return root, width


def _fold_log_arg(t, b):
    """``L_t`` of :func:`_folded_point`: the magnitude of the logarithm that ``lm(t)`` forms, plus 1."""
    z = 2.0 * (t / b)
    apart = np.abs(np.log(t)) + abs(math.log(b)) + 0.7
    return np.where(z > 1e-300, np.abs(np.log(z)), apart) + 1.0


def _folded_side_a(e, p, Y, A, lY, lp, y, lW, b, w, top):
    """``(root, width)`` of :func:`_folded_point` on side A (flat arrays), NaN width where not certified."""
    c = lp + _LOG2_FOLD - lY + lW
    g = 4.0 * np.exp(-2.0 * (A + c))
    s = np.sqrt(1.0 - g)
    d = -c + _LOG2_FOLD - np.log1p(s)
    root = e + b * d
    # the computed root's error (the docstring of _folded_point), doubled
    err_c = _U * (12.0 * (np.abs(lp) + np.abs(lY) + abs(lW)) + 40.0)
    err_a = 2.01 * _U * A
    err_1g = g * (8.0 * _U + 2.0 * (err_c + err_a + _U * np.abs(A + c))) + _U
    err_s = err_1g / (2.0 * s) + _U
    err_d = err_c + err_s + 6.0 * _U + 2.0 * _U * (np.abs(c) + 0.7 + np.abs(d))
    eps = 2.0 * (b * err_d * (1.0 + _U) + _U * b * np.abs(d) + _U * np.abs(root))
    # the zone of rounding: the law's relative error on side A (at Z <= d + 1) over the slope there
    delta = _U * (
        11.0 * (np.abs(d) + 1.0)
        + 170.0
        + 28.0 * (_fold_log_arg(y, b) + _fold_log_arg(w, b))
    )
    w0 = 2.0 * b * delta / s
    reach = (top - root) / b * (1.0 - 4.0 * _U) - 1.01 * (w0 + eps) / b
    slope = np.tanh(np.maximum(reach, 0.0))
    ok = (
        (g <= 1.0)
        & (s >= 2.0**-10)
        & (reach > 0.0)
        & (slope >= 0.5 * s * (1.0 + 2.0**-20))
        & ((root - eps - e) * s / (4.0 * b) >= _FOLD_MARGIN)
        & (w0 + eps <= b)
        & (lY - A - lW <= lp - 2.0**-30)  # log C_top: beyond the zone up to top
        & np.isfinite(root)
    )
    return root, np.where(ok, w0 + eps, np.nan)


def _folded_side_b(e, p, Y, A, lp, y, a_dist, log_at, log_low, lW, b, w, lower):
    """``(root, width)`` of :func:`_folded_point` on side B (flat arrays), NaN width where not certified."""
    lA = np.log(-np.expm1(-2.0 * A))
    # the law's relative error on side B (its logaddexp), over the slope there
    l_sum = _fold_log_arg(a_dist, b) + _fold_log_arg(y, b) + _fold_half_arg(y, b)
    log_c = np.maximum(np.abs(lp), np.abs(log_at)) + 1.0
    delta = _U * (
        440.0
        + 16.0 * log_c
        + 30.0 * l_sum
        + 60.0 * _fold_log_arg(w, b)
        + 28.0 * abs(math.log(2.0 * (w / b)))
    )
    return _folded_cosh_root(
        Y, p, lp, log_low, lA - lW, np.abs(lA) + abs(lW), delta, b, lower
    )


def _log_sinh(t):
    """``log sinh t`` for ``t > 0``."""
    return t - _LOG2_FOLD + np.log(-np.expm1(-2.0 * t))


def _folded_one_sided(x, p, v, upper, b, lower, top):
    r""":func:`_folded_root` with one finite bound.  In the coordinate where it is the lower one (the law with
    an upper bound alone is the mirrored law at ``-x``, ``-q``: ``dpbook.families.folded`` computes it so,
    with the tails exchanged), the law's lower tail ``C`` at a point is :func:`_folded_low_tail`'s, its
    upper tail ``S`` :func:`_folded_high_tail`'s; the intervals read the tail at ``x`` with the weight ``v``
    and at the double next to it (below ``x``, mirrored: above ``-x``) with ``1 - v`` (within ``3.02 u`` of
    the hull of the two, which the kernels' bounds include).  The points used are joined as in
    :func:`_folded_root`; a root not certified at every point used is a starting point."""
    start = _folded_start(x, p, upper, b, lower, top)
    shape = start.shape
    x = np.broadcast_to(np.asarray(x, dtype=float), shape).ravel()
    v = np.broadcast_to(np.asarray(v, dtype=float), shape).ravel()
    pf = p if np.ndim(p) == 0 else np.broadcast_to(p, shape).ravel()
    flip = bool(np.isinf(lower))
    if flip:
        x, lower = -x, -top
    kernel = _folded_low_tail if (not upper) != flip else _folded_high_tail
    with np.errstate(all="ignore"):
        near = np.nextafter(x, np.inf if flip else -np.inf)
        first = np.full(x.size, np.inf)
        last = np.full(x.size, -np.inf)
        most = np.zeros(x.size)
        for e, used in ((x, v > 0.0), (near, v < 1.0)):
            r, w = kernel(e, pf, b, lower)
            first = np.where(used, np.minimum(first, r - w), first)
            last = np.where(used, np.maximum(last, r + w), last)
            most = np.where(used, np.fmax(most, w), most)
        decided = np.isinf(first) & (first == last)
        mid = 0.5 * first + 0.5 * last
        half = np.maximum(last - mid, mid - first)
        finite = np.isfinite(first) & np.isfinite(last) & (half <= 8.0 * most)
        joined = half * (1.0 + 4.0 * _U) + 2.0 * _U * np.abs(mid) + _TINY
        root = np.where(decided, first, mid)
        width = np.where(decided, 0.0, np.where(finite, joined, np.nan))
        if flip:
            root = -root
        root = np.where(np.isnan(width), start.ravel(), root)
    return Root(root.reshape(shape) + 0.0, width.reshape(shape))


def _folded_low_tail(e, p, b, lower):
    r"""``(root, width)`` of ``C_q(e) = p`` at flat points ``e`` for the folded law with the lower bound alone
    (``top = inf``: the limit of :func:`_folded_point`, whose notation this follows; ``lm(inf) = 0`` and
    ``log1p(e^{-inf}) = 0`` exactly, so the terms of ``top`` drop out of the law and of its errors).

    ``C = e^{-(q - e)/b} (1 - e^{-2Y})/2`` on side A (slope exactly ``-1/b`` in ``q``), ``1 - cosh P e^{-Y}``
    on side B, ``C_low = 1 - e^{-Y}``, no ``+inf``.  ``C_low <= p e^{-2^-28}`` (``e^{-2}`` for ``y < 2^-1000``):
    ``-inf``; side A's error ``u (11 Z + 170 + 28 L_y)`` grows by ``11 u`` per scale while its ``log C``
    falls by 1, so the decisions hold there for every ``Z``.  A root on side A, ``d = (r - e)/b = log(1 -
    e^{-2Y}) - log 2p`` (computed to ``u (12 (|lY| + |log p|) + 20 + 2d)``, doubled with ``e + b d``:
    ``ε_r``), has the zone ``W_0 = 1.01 b u (11 (d + 1) + 170 + 28 L_y)``, certified where
    ``(r - ε_r - e)/b >= 2^-28`` (side B holds by the crude bound).  A root on side B: ``k = log1p(-p) +
    Y``, as in :func:`_folded_point` with ``Δ_B = u (440 + 16 |log C| + 30 (L_y + L_half) + 28 (|log 2Y| +
    1))`` (``lm(e - q)``'s weight is at most ``(e - q)/b <= Y``)."""
    n = e.size
    root, width = np.full(n, np.nan), np.full(n, np.nan)
    zero = e <= lower
    root[zero], width[zero] = -np.inf, 0.0
    if not 2.0**-1000 <= b <= 2.0**1000:
        return root, width
    y = e - lower
    live = ~zero & (p >= 2.0**-900) & (p <= 0.4)
    Y = y / b
    lY = np.log(-np.expm1(-2.0 * Y))
    lp = np.log(p) + np.zeros(n)
    log_low = np.log(-np.expm1(-Y))
    log_at = lY - _LOG2_FOLD
    minus = live & (log_low <= lp - np.where(y < 2.0**-1000, 2.0, _FOLD_MARGIN))
    root[minus], width[minus] = -np.inf, 0.0
    inner = live & ~minus & (y >= 2.0**-1000)
    at = np.flatnonzero(inner & (log_at >= lp))
    if at.size:
        ea, la, pa = e[at], lY[at], lp[at]
        d = la - _LOG2_FOLD - pa
        r = ea + b * d
        err_d = _U * (12.0 * (np.abs(la) + np.abs(pa)) + 20.0 + 2.0 * np.abs(d))
        eps = 2.0 * (b * err_d * (1.0 + _U) + _U * b * np.abs(d) + _U * np.abs(r))
        w0 = 1.01 * b * _U * (11.0 * (d + 1.0) + 170.0 + 28.0 * _fold_log_arg(y[at], b))
        ok = ((r - eps - ea) / b >= _FOLD_MARGIN) & np.isfinite(r)
        root[at], width[at] = r, np.where(ok, w0 + eps, np.nan)
    at = np.flatnonzero(inner & (log_at <= lp - _FOLD_MARGIN))
    if at.size:
        ya, Ya, pa = y[at], Y[at], np.broadcast_to(p, (n,))[at]
        log_c = np.maximum(np.abs(lp[at]), np.abs(log_at[at])) + 1.0
        l_half = _fold_half_arg(ya, b)
        delta = _U * (
            440.0
            + 16.0 * log_c
            + 30.0 * (_fold_log_arg(ya, b) + l_half)
            + 28.0 * (np.abs(np.log(2.0 * Ya)) + 1.0)
        )
        root[at], width[at] = _folded_cosh_root(
            Ya, pa, lp[at], log_low[at], 0.0, 0.0, delta, b, lower
        )
    return root, width


def _folded_high_tail(e, p, b, lower):
    r"""``(root, width)`` of ``S_q(e) = P_q(M > e) = p`` at flat points ``e`` for the folded law with the lower
    bound alone; ``S`` increases in ``q`` (``-inf``: ``S >= p`` for every ``q``).

    On side A (``q >= e``) ``S = 1 - e^{-(q - e)/b} (1 - e^{-2Y})/2 > 1/2``, and the law computes at least
    ``0.49`` there in either branch.  On side B ``S = cosh P e^{-Y}``, computed as ``-(e - q)/b - log 2 +
    log1p(e^{-2(q - lower)/b})`` (``lm(inf) = 0`` exactly) where that is below ``log 1/2`` (else ``S >=
    0.49``, as the exact one): within ``u (5.01 Z + 30)`` with ``exp`` and the combination, doubled ``Δ = u
    (11 Z + 60)`` (``Z <= Y``); its slope in ``P`` is ``tanh P``, increasing.  ``S`` at
    ``lower`` is ``e^{-Y}``: ``-Y >= log p + 2^-28`` gives ``-inf``.  Else ``cosh P = p e^Y``: ``k = log p +
    Y``, ``P = k + log1p(s)``, ``s = sqrt(1 - e^{-2k}) = tanh P``; ``k`` to ``u (8 |log p| + 2.01 Y + |k| +
    2)``, ``P`` to ``2 err_k/s + u (11 + P)``, doubled with ``lower + b P``: ``ε_r``.  ``W_0 = 2 b Δ(Z_r +
    1)/s`` (``Z_r = (e - r)/b``, ``W_0 + ε_r <= b``), certified where the slope ``tanh`` at the zone's left
    end (shaved for its roundings) is at least ``s/2`` and ``s >= 2^-10``.  Above the zone ``Z`` is
    smaller; below it ``log p - log S(q) - Δ(Z)`` is concave in ``q`` (``log cosh`` convex), positive at
    the zone and, as checked (``k >= 4 Δ(Y)``), at ``lower``."""
    n = e.size
    root, width = np.full(n, np.nan), np.full(n, np.nan)
    one = e <= lower  # S = 1 for every q
    root[one], width[one] = -np.inf, 0.0
    if not 2.0**-1000 <= b <= 2.0**1000:
        return root, width
    y = e - lower
    live = ~one & (p >= 2.0**-900) & (p <= 0.4)
    Y = y / b
    lp = np.log(p) + np.zeros(n)
    holds = live & (-Y >= lp + _FOLD_MARGIN)
    root[holds], width[holds] = -np.inf, 0.0
    at = np.flatnonzero(live & ~holds & (Y <= 2.0**40))
    if at.size:
        Ya, la = Y[at], lp[at]
        k = la + Ya
        s = np.sqrt(-np.expm1(-2.0 * k))
        big_p = k + np.log1p(s)
        r = lower + b * big_p
        err_k = _U * (8.0 * np.abs(la) + 2.01 * Ya + np.abs(k) + 2.0)
        err_p = 2.0 * err_k / s + _U * (11.0 + big_p)
        eps = 2.0 * (b * err_p * (1.0 + _U) + _U * b * big_p + _U * np.abs(r))
        z_r = (e[at] - r) / b  # Z at the root
        w0 = 2.0 * b * _U * (11.0 * (np.abs(z_r) + 1.0) + 60.0) / s
        left = (r - lower) / b * (1.0 - 4.0 * _U) - 1.01 * (w0 + eps) / b
        slope = np.tanh(np.maximum(left, 0.0))
        ok = (
            (k > 0.0)
            & (s >= 2.0**-10)
            & (left > 0.0)
            & (slope >= 0.5 * s * (1.0 + 2.0**-20))
            & (w0 + eps <= b)
            & (k >= 4.0 * _U * (11.0 * Ya + 60.0) + 2.0**-50)  # at lower
            & np.isfinite(r)
        )
        root[at], width[at] = r, np.where(ok, w0 + eps, np.nan)
    return root, width


def _fold_half_arg(y, b):
    """The largest ``L_t`` of :func:`_folded_point` over ``t`` in ``[y/2, y]`` (either branch of ``lm``)."""
    apart = abs(math.log(b)) + 1.7
    return np.maximum.reduce(
        [
            _fold_log_arg(y / 2.0, b),
            _fold_log_arg(y, b),
            np.abs(np.log(y / 2.0)) + apart,
            np.abs(np.log(y)) + apart,
        ]
    )


def _folded_cosh_root(Y, p, lp, log_low, l_rest, l_abs, delta, b, lower):
    """``(root, width)`` of a root on side B of the lower tail (:func:`_folded_point`), with ``l_rest = lA - lW``,
    ``l_abs = |lA| + |lW|`` (0 and 0 with one finite bound) and the law's relative error ``delta`` there."""
    l1p = np.log1p(-p)
    k = l1p + Y - l_rest  # log cosh P at the root
    s = np.sqrt(-np.expm1(-2.0 * k))  # tanh P
    big_p = k + np.log1p(s)
    root = lower + b * big_p
    err_k = _U * (11.0 * (np.abs(l1p) + l_abs) + 5.1 * Y + 21.0)
    err_p = 2.0 * err_k / s + _U * (11.0 + big_p)
    eps = 2.0 * (b * err_p * (1.0 + _U) + _U * b * big_p + _U * np.abs(root))
    log_slope = _log_sinh(big_p) - Y + l_rest - lp  # sinh P sinh A / (sinh W p)
    w0 = 2.0 * b * delta * np.exp(-log_slope)
    left = (root - lower) / b * (1.0 - 4.0 * _U) - 1.01 * (w0 + eps) / b
    log_least = _log_sinh(np.maximum(left, 2.0**-1000)) - Y + l_rest - log_low
    ok = (
        (k > 0.0)
        & (s >= 2.0**-10)
        & (left > 0.0)
        & (log_least >= log_slope - _LOG2_FOLD + 0.01)
        & np.isfinite(root)
    )
    return root, np.where(ok, w0 + eps, np.nan)


def _folded_start(x, p, upper, b, lower, top):
    """A starting point for :func:`_folded_root` (no width): on each side of the release the closed forms of
    the law are a quadratic in ``t = e^{-|q - x|/b}``.  With ``Y = (x - lower)/b``, ``A = (top - x)/b``, ``W =
    (top - lower)/b``, on the side ``q >= x`` (where ``P_x(M <= x) >= p``) ``t + e^{-2A}/t = K = 2 p (1 -
    e^{-2W})/(1 - e^{-2Y})``, on the side ``q <= x`` the same with ``A``, ``Y`` exchanged and ``1 - p`` for
    ``p``; the larger root ``t = (K + sqrt(K^2 - 4 e^{-2A}))/2`` gives ``q = x ± b d``, ``d = -log t``.  No
    real root: the predicate holds on the whole domain (first side: ``+inf``) or nowhere (``-inf``).  The
    upper tail is the lower tail of the mirrored law at ``-x``."""
    x = np.asarray(x, dtype=float)
    if upper:
        x, lower, top = -x, -top, -lower
    shape = np.broadcast_shapes(x.shape, np.shape(p))
    x = np.broadcast_to(x, shape)
    p = np.broadcast_to(np.asarray(p, dtype=float), shape)
    with np.errstate(all="ignore"):
        xc = np.clip(x, lower, top)
        near_low, near_top = xc - lower, top - xc
        big = (top - lower) / b

        def ratio(dist):
            """``(1 - e^{-2W})/(1 - e^{-2 dist/b})``, in units of the widths where ``W`` is small."""
            if 2.0 * big <= 0.5:
                return ((top - lower) / dist) * (
                    special.exprel(-2.0 * big) / special.exprel(-2.0 * (dist / b))
                )
            return -math.expm1(-2.0 * big) / -np.expm1(-2.0 * (dist / b))

        k_right = 2.0 * p * ratio(near_low)
        e_top, e_low = np.exp(-2.0 * (near_top / b)), np.exp(-2.0 * (near_low / b))
        right = k_right <= 1.0 + e_top  # P_x(M <= x) >= p: the root has q >= x
        k = np.where(right, k_right, 2.0 * (1.0 - p) * ratio(near_top))
        e = np.where(right, e_top, e_low)
        disc = k * k - 4.0 * e
        t = 0.5 * (k + np.sqrt(np.maximum(disc, 0.0)))
        d = np.maximum(-b * np.log(t), 0.0)
        root = np.where(right, xc + d, xc - d)
        root = np.where(disc < 0.0, np.where(right, np.inf, -np.inf), root)
        root = np.where(np.isnan(root), xc, root)
    return -root if upper else root + 0.0
