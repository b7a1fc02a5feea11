"""Private numerics of the Laplace law: tails and logs, the inverse cdf, piece masses and truncated moments.

Every family built on Laplace noise (clamping, truncation, normalization, restriction, the ramps) and the
auditor's descriptions compute with these kernels on validated arrays; none of them validates its input."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import special

from .._kernels.arrays import _bound_in_place

__all__ = ["laplace_log_mass"]

#: below this the lower incomplete gamma difference is the accurate one, above it the upper one
_GAMMA2_MEDIAN = 1.6783469900166608


LOG_HALF = np.log(0.5)


def _laplace_logpdf(x, loc, scale):
    """log of the Laplace(loc, scale) density at x."""
    x, loc = np.asarray(x, dtype=float), np.asarray(loc, dtype=float)
    with np.errstate(over="ignore"):
        return -np.abs(x - loc) / scale - np.log(2 * scale)


def _laplace_cdf(x, loc, scale):
    """P(loc + L_scale <= x)."""
    with np.errstate(over="ignore"):
        z = (np.asarray(x, dtype=float) - loc) / scale
    half_tail = 0.5 * np.exp(-np.abs(z))
    return np.where(z < 0, half_tail, 1.0 - half_tail)


def _laplace_sf(x, loc, scale):
    """P(loc + L_scale > x)."""
    with np.errstate(over="ignore"):
        z = (np.asarray(x, dtype=float) - loc) / scale
    half_tail = 0.5 * np.exp(-np.abs(z))
    return np.where(z > 0, half_tail, 1.0 - half_tail)


def _laplace_logcdf(x, loc, scale):
    """log P(loc + L_scale <= x), accurate far in both tails."""
    with np.errstate(over="ignore"):
        z = (np.asarray(x, dtype=float) - loc) / scale
    return np.where(z < 0, LOG_HALF - np.abs(z), np.log1p(-0.5 * np.exp(-np.abs(z))))


def _laplace_logsf(x, loc, scale):
    """log P(loc + L_scale > x), accurate far in both tails."""
    with np.errstate(over="ignore"):
        z = (np.asarray(x, dtype=float) - loc) / scale
    return np.where(z > 0, LOG_HALF - np.abs(z), np.log1p(-0.5 * np.exp(-np.abs(z))))


def _laplace_ppf(u, loc, scale):
    """The quantile function of Laplace(loc, scale) at u in [0, 1]."""
    u = np.asarray(u, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(
            u < 0.5, loc + scale * np.log(2 * u), loc - scale * np.log(2 * (1 - u))
        )


def _laplace_isf(u, loc, scale):
    """The inverse survival function of Laplace(loc, scale) at u in [0, 1] (``ppf(1 - u)``, accurate for small u)."""
    u = np.asarray(u, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(
            u < 0.5, loc - scale * np.log(2 * u), loc + scale * np.log(2 * (1 - u))
        )


#: a double-precision uniform resolves ``1 - |t|`` down to 2^-53: draws stop 53 log 2 = 36.7 scales out,
#: as numpy's own Laplace sampler does, so a sampler never returns an infinity
RESOLUTION = 2.0**-53


def _offsets_in_place(t, scale, floor=RESOLUTION, out=None):
    """Laplace quantile offsets of the centred probabilities ``t`` in ``[-1, 1]``, in a new array or in ``out``
    (which may be ``t`` itself: the offsets then overwrite it, sparing the caller a copy).

    ``t = 2u - 1`` maps to ``-b sign(t) log(1 - |t|)``, the Laplace(0, b) quantile at ``u``; ``1 - |t|``
    is kept ``>= floor``.  The samplers' kernel: one logarithm per draw, no masks, no branches (and no
    multiplication by a scale of 1, which would change no bit).
    """
    w = np.abs(t, out=np.empty_like(t))
    np.subtract(1.0, w, out=w)
    if floor:
        _bound_in_place(w, floor)  # (w <= 1: a clip to [floor, 1])
    np.log(w, out=w)
    w = np.copysign(w, t, out=w if out is None else out)
    if np.ndim(scale) or scale != 1.0:
        w *= scale
    return w


_LOG_HALF = math.log(0.5)


# --- Laplace masses of unions of intervals: stable ratios and curvature bounds ---------------------


def _signed_mass(x, y, scale):
    """``P(x <= L_s <= y)`` for ``x <= y``, minus ``P(y <= L_s <= x)`` otherwise; never cancelling."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    lo, hi = np.minimum(x, y), np.maximum(x, y)
    sign = np.where(x < y, 1.0, np.where(x > y, -1.0, 0.0))
    with np.errstate(invalid="ignore", over="ignore"):
        width = np.where(sign != 0, hi - lo, 0.0)
        loz, hiz = lo / scale, hi / scale
        wz = width / scale
        left = 0.5 * np.exp(np.minimum(hiz, 0.0)) * -np.expm1(-wz)  # both ends <= 0
        right = 0.5 * np.exp(-np.maximum(loz, 0.0)) * -np.expm1(-wz)  # both ends >= 0
        across = 0.5 * (
            -np.expm1(np.minimum(loz, 0.0)) - np.expm1(-np.maximum(hiz, 0.0))
        )
    mass = np.where(hi <= 0, left, np.where(lo >= 0, right, across))
    return sign * np.where(sign != 0, mass, 0.0)


def _log1p_ratio(diff, l1, l2):
    """``log N2 - log N1`` from ``N2 - N1 = diff`` and ``log N1 = l1`` (the plain difference where that is better)."""
    plain = l2 - l1
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        rel = diff * np.exp(-l1)
        fine = np.log1p(np.where(rel > -1, rel, 0.0))
    use = (l1 > -700) & (np.abs(plain) < 0.5) & np.isfinite(fine)
    return np.where(use, fine, plain)


def _piece_mass_diffs(q1, q2, lower, upper, s):
    """``N_k(q2) - N_k(q1)`` for each piece ``[lower_k, upper_k]`` (broadcast against the pairs), without
    cancellation."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        lo_q, hi_q = np.minimum(q1, q2), np.maximum(q1, q2)
        sign = np.where(q2 > q1, 1.0, np.where(q2 < q1, -1.0, 0.0))
        step = (hi_q - lo_q) / s
        # a piece wholly left (right) of both: N_k(q2) = N_k(q1) e^{-+(q2 - q1)/s}
        mixed = _signed_mass(lower - q2, lower - q1, s) - _signed_mass(
            upper - q2, upper - q1, s
        )
        # a piece holding both: N_k(hi) - N_k(lo) = (1 - e^{-step})/2 (e^{-(lo - a)/s} - e^{-(b - hi)/s})
        x, y = (lo_q - lower) / s, (upper - hi_q) / s
        gap = np.where(np.isinf(x) & np.isinf(y), 0.0, y - x)
        both = (
            -0.5
            * np.expm1(-step)
            * np.sign(gap)
            * np.exp(-np.minimum(x, y))
            * -np.expm1(-np.abs(gap))
        )
        both = sign * np.where(np.isfinite(both), both, 0.0)
        holds = (lower <= lo_q) & (hi_q <= upper)
        left = upper <= lo_q
        right = lower >= hi_q
        n1 = np.exp(_piece_log_mass(q1, s, lower, upper))
        outside = np.where(
            left, n1 * np.expm1(-(q2 - q1) / s), n1 * np.expm1((q2 - q1) / s)
        )
        return np.where(holds, both, np.where(left | right, outside, mixed))


def _clip_parts(q, scale, lower, upper):
    """``c = clip(q)``, ``A' = (c - lower)/b``, ``B' = (upper - c)/b``, ``d = |q - c|/b`` (``inf`` past the doubles)."""
    c = np.clip(q, lower, upper)
    with np.errstate(over="ignore"):
        return c, (c - lower) / scale, (upper - c) / scale, np.abs(q - c) / scale


def _g(k, z):
    """``P_k(z) / z^k = e^{-z} M(1, k + 1, z) / k!`` for ``0 <= z <= 1`` (``P_k`` the regularized lower gamma)."""
    z = np.minimum(z, 1.0)
    if k == 1:  # (1 - e^{-z})/z: scipy's exprel(-z), expm1(-z)/(-z) (1 below 1e-16)
        return special.exprel(-z)
    return np.exp(-z) * special.hyp1f1(1.0, k + 1.0, z) / math.factorial(k)


def _short(c, a, b, lower, upper):
    """For an interval shorter than ``b`` on both sides of ``c`` (``max(A', B') < 1``): the unit ``ℓ =
    max(c - lower, upper - c)`` and the sides ``α = (c - lower)/ℓ``, ``β = (upper - c)/ℓ`` in ``[0, 1]``.

    Formulas in units of ``b`` lose every digit when ``A'`` or ``B'`` underflow (``b = 1e103`` on
    ``[0, 1]`` has ``P_3(B') = 0``); in units of ``ℓ`` they do not.  Returns ``(short, ℓ, α, β)``; outside
    ``short`` the values are placeholders.
    """
    short = np.maximum(a, b) < 1.0
    with np.errstate(invalid="ignore"):
        unit = np.where(short, np.maximum(c - lower, upper - c), 1.0)
    alpha = np.where(short, (c - lower) / unit, 0.0)
    beta = np.where(short, (upper - c) / unit, 0.0)
    return short, unit, alpha, beta


def _half_mass(a, b):
    """``2 N(c) = (1 - e^{-a}) + (1 - e^{-b})``, never cancelling."""
    return -np.expm1(-a) - np.expm1(-b)


def _log_two_n(c, a, b, scale, lower, upper):
    """``log 2N(c)``, also when ``A'`` and ``B'`` underflow (then ``2N(c) ≈ (upper - lower)/b``)."""
    short, unit, alpha, beta = _short(c, a, b, lower, upper)
    with np.errstate(divide="ignore"):
        long_ = np.log(np.where(short, 1.0, _half_mass(a, b)))
        near = np.log(unit) - np.log(scale) + np.log(alpha * _g(1, a) + beta * _g(1, b))
    return np.where(short, near, long_)


def _piece_log_mass(q, scale, lower, upper):
    """``log P(lower <= q + L_scale <= upper)`` (arrays broadcast): the one home of a Laplace piece's log-mass.

    Evaluated at the clipped point ``c = clip(q, lower, upper)``: ``log N = log 2N(c) - log 2 - |q - c|/b``
    (:func:`_log_two_n`: ``(1 - e^{-A'}) + (1 - e^{-B'})`` for a long piece, in units of the piece itself
    for one shorter than ``b`` on both sides of ``c``, so nothing cancels, underflows or rounds ``q``'s digits
    into the piece's length).  Truncation, normalization and the auditor all use it.
    """
    c, a, b, d = _clip_parts(q, scale, lower, upper)
    return _log_two_n(c, a, b, scale, lower, upper) + _LOG_HALF - d


def laplace_log_mass(q, scale, lower, upper):
    """``log N(q)``: the log of the Laplace(q, scale) mass of the union of ``[lower_k, upper_k]``.

    Each piece's mass is written so that nothing cancels or underflows before the logarithm
    (``-|gap|/s`` plus the log of an ``expm1``), then the pieces are summed with ``logsumexp``.
    """
    q = np.asarray(q, dtype=float)
    a = np.asarray(lower, dtype=float).reshape((-1,) + (1,) * q.ndim)
    b = np.asarray(upper, dtype=float).reshape((-1,) + (1,) * q.ndim)
    return special.logsumexp(_piece_log_mass(q, float(scale), a, b), axis=0)


def _times_exp(x, d):
    """``x e^{-d}`` for ``x >= 0``, ``d >= 0``, without underflowing ``e^{-d}`` first (``x`` up to 1e308)."""
    with np.errstate(divide="ignore"):
        return np.where(
            d < 700.0, x * np.exp(-np.minimum(d, 700.0)), np.exp(np.log(x) - d)
        )


def _truncated_moments_units(q, scale, lower, upper):
    """``(c, E[M] - c, ℓ, Var M / ℓ²)`` for validated arguments (see the module docstring).

    In units of ``b`` as in the module docstring when ``max(A', B') >= 1``; for a shorter interval in
    units of ``ℓ`` (:func:`_short`), with ``P_k(z) = z^k g_k(z)``:
    ``E[M] - c = ℓ (β² g_2(B') - α² g_2(A')) / D``, ``E[(M - c)^2] = 2 ℓ² (α³ g_3(A') + β³ g_3(B')) / D``,
    ``D = α g_1(A') + β g_1(B')``.  The variance is returned in units of ``ℓ²`` (``ℓ = b`` for a long
    interval), so that a caller can scale it last: it is ``inf`` only where it exceeds the doubles.
    """
    c, a, b, _ = _clip_parts(q, scale, lower, upper)
    short, unit, alpha, beta = _short(c, a, b, lower, upper)
    two_n = np.where(short, 1.0, _half_mass(a, b))
    small = np.minimum(a, b) < _GAMMA2_MEDIAN
    gap = np.where(
        small,
        special.gammainc(2, b) - special.gammainc(2, a),
        special.gammaincc(2, a) - special.gammaincc(2, b),
    )
    offset = gap / two_n
    second = 2 * (special.gammainc(3, a) + special.gammainc(3, b)) / two_n
    den = alpha * _g(1, a) + beta * _g(1, b)
    den = np.where(short, den, 1.0)
    offset = np.where(short, (beta**2 * _g(2, b) - alpha**2 * _g(2, a)) / den, offset)
    second = np.where(
        short, 2 * (alpha**3 * _g(3, a) + beta**3 * _g(3, b)) / den, second
    )
    length = np.where(short, unit, scale)
    return c, length * offset, length, np.maximum(second - offset**2, 0.0)


#: below this ``max(A', B')`` the truncated quantiles are computed in units of the interval (:func:`_short_quantile`)
_SHORT_QUANTILE = 2.0**-4


def _quantile_in_place(p, c, scale, lower, upper, floor=RESOLUTION):
    """Overwrite the float array ``p`` with truncated quantiles (see :meth:`Truncated.ppf`).

    The uniform is mapped onto the centred probabilities of the interval's part of the Laplace law
    around ``c`` and passed through ``dpbook._kernels.laplace._offsets_in_place`` (``floor`` as there).
    (The pieces of a mixture, each point in its own piece: :func:`_piece_table` and
    :func:`_piece_quantile_in_place`.)
    """
    a, b, width, start, short = _window(c, scale, lower, upper)
    if short.all():
        return _short_quantile(p, *_short_coefficients(c, a, b, lower, upper, scale))
    if short.any():
        short = np.broadcast_to(short, p.shape)
        fraction = p[short]
        coefficients = [
            np.broadcast_to(v, p.shape)[short]
            for v in _short_coefficients(c, a, b, lower, upper, scale)
        ]
    p *= width
    if not floor:
        w = _exact_offsets(p, start, width, a, b, scale)
        w += c
        w = np.clip(w, lower, upper)
    else:
        p += start
        w = _offsets_in_place(p, scale, floor)
        w += c
        _bound_in_place(w, lower, upper)
    if short.any():
        w = np.array(w, dtype=float)
        w[short] = _short_quantile(fraction, *coefficients)
    return w


def _window(c, scale, lower, upper):
    """The interval ``[lower, upper]`` of the Laplace law around ``c``: ``A' = (c - l)/b``,
    ``B' = (u - c)/b``, its mass ``2N`` (:func:`_half_mass`), ``start = e^{-A'} - 1``, and whether it is
    *short*: far shorter than the scale on both sides of ``c`` (below b/16: the offsets in units of b
    would lose more than 16 ulps of the interval, and every digit below 2^-53 b), so that its quantiles
    are taken in units of the interval (:func:`_short_quantile`)."""
    with np.errstate(over="ignore"):
        a, b = (c - lower) / scale, (upper - c) / scale
        # max(A', B') >= (upper - lower)/(2b): only an interval shorter than b/8 can be short (one test)
        maybe_short = bool(
            np.any(np.asarray(upper - lower) < 2 * _SHORT_QUANTILE * np.asarray(scale))
        )
    full, start = _half_mass(a, b), np.expm1(-a)
    short = np.maximum(a, b) < _SHORT_QUANTILE if maybe_short else np.zeros((), bool)
    return a, b, full, start, short


def _exact_offsets(p, start, full, a, b, scale):
    """The offsets of the exact quantiles (ppf) at ``p`` (already times the window's width): ``1 - |t|`` as
    ``p + e^{-A'}`` below ``c`` and ``(2N - p) + e^{-B'}`` above, never as ``1 - |t|`` after rounding ``t``, so
    tail probabilities far below 1e-16 keep finite quantiles."""
    with np.errstate(divide="ignore", over="ignore"):
        t = p + start
        near_one = np.where(t < 0, p + np.exp(-a), (full - p) + np.exp(-b))
        return np.where(t < 0, scale * np.log(near_one), -scale * np.log(near_one))


class _PieceTable(NamedTuple):
    """Per piece of a mixture (1-D arrays): its slot and mass of the uniform, the window of the Laplace law
    around its ``c`` (``full`` = ``2N(c)``, ``ratio`` = ``full / mass``, ``start`` = ``e^{-A'} - 1``), its ends,
    ``A'``, ``B'``, and for short pieces (``short``) the coefficients of :func:`_short_quantile`."""

    slot: np.ndarray
    mass: np.ndarray
    full: np.ndarray
    ratio: np.ndarray
    start: np.ndarray
    c: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    a: np.ndarray
    b: np.ndarray
    short: np.ndarray
    coefficients: tuple


def _piece_table(c, scale, lower, upper, slot, mass):
    """The :class:`_PieceTable` of the pieces ``[lower, upper]`` around ``c`` with slots ``[slot, slot + mass)``."""
    a, b, full, start, short = _window(c, scale, lower, upper)
    coefficients = (
        _short_coefficients(c, a, b, lower, upper, scale) if short.any() else ()
    )
    fields = np.broadcast_arrays(
        slot, mass, full, full / mass, start, c, lower, upper, a, b, short
    )
    return _PieceTable(*fields, tuple(np.broadcast_arrays(*coefficients)))


def _piece_quantile_in_place(p, k, table, scale, floor=RESOLUTION):
    """:func:`_quantile_in_place` for a mixture of pieces: point ``i`` of ``p`` is uniform on the slot of piece
    ``k[i]`` of the :class:`_PieceTable` ``table``, computed once.  Each piece's values are looked up per
    point with 1-D takes (a 2-D take of the stacked table costs twice as much) in ``mode="clip"``, which
    skips the bounds check (``k`` is a piece index by construction) and costs less than half the default's
    time, into one scratch block; the per-point bounds are applied with ``np.maximum``/``np.minimum``, several
    times faster than ``np.clip`` with array bounds."""
    t = table
    scratch = np.empty_like(p)

    def pick(column):
        return column.take(k, mode="clip", out=scratch)

    p -= pick(t.slot)
    if t.short.all():  # every piece short: nothing else is needed
        p /= pick(t.mass)
        return _short_quantile(p, *(v.take(k, mode="clip") for v in t.coefficients))
    short = t.short.take(k, mode="clip") if t.short.any() else None
    if short is not None and short.any():
        fraction = p[short] / pick(t.mass)[short]
        coefficients = [v.take(k, mode="clip")[short] for v in t.coefficients]
    else:
        short = None
    p *= pick(t.ratio)
    if not floor:
        full, start, a, b = (
            v.take(k, mode="clip") for v in (t.full, t.start, t.a, t.b)
        )
        w = _exact_offsets(p, start, full, a, b, scale)
    else:
        p += pick(t.start)
        w = _offsets_in_place(p, scale, floor, out=p)
    w += pick(t.c)
    np.maximum(w, pick(t.lower), out=w)
    np.minimum(w, pick(t.upper), out=w)
    if short is not None:
        w[short] = _short_quantile(fraction, *coefficients)
    return w


def _short_coefficients(c, a, b, lower, upper, scale):
    """Per interval, what :func:`_short_quantile` needs: ``(c, ℓ, ℓ-mass below c, total, ℓ/b, lower, upper)``
    (masses in units of ``ℓ``, :func:`_short`)."""
    _, unit, alpha, beta = _short(c, a, b, lower, upper)
    below, above = alpha * _g(1, a), beta * _g(1, b)
    return c, unit, below, below + above, unit / scale, lower, upper


def _short_quantile(u, c, unit, below, total, ratio, lower, upper):
    """The quantile at ``u`` of the Laplace law around ``c`` restricted to ``[lower, upper]``, for an interval
    shorter than ``scale`` on both sides of ``c`` (``max(A', B') < 1``), in units of the interval (:func:`_short`),
    from the interval's :func:`_short_coefficients` (broadcast against ``u``).

    In units of ``b`` the offset from ``c`` is ``-b log(1 - |t|)`` with ``|t|`` of the order of the interval's
    length over ``b``: ``1 - |t|`` rounds to 1 once that is below ``2^-53`` and every quantile (every draw)
    collapses onto ``c``, the true value.  In units of ``ℓ`` (:func:`_short`) the mass below ``c`` is
    ``ℓ α g_1(A')``, above it ``ℓ β g_1(B')``; at the centred mass ``ℓ τ`` the offset is
    ``ℓ τ h(k |τ|)`` with ``k = ℓ/b`` and ``h(z) = -log(1 - z)/z`` (``h(0) = 1``): nothing rounds away,
    and ``k`` may underflow (the law is then uniform to every digit).  Where ``k`` times the total mass is
    below ``2^-53``, ``h`` rounds to 1 at every point and is not computed.
    """
    tau = u * total
    tau -= below
    if np.all(
        total * ratio < 2.0**-53
    ):  # h(z) = 1 + z/2 + O(z²): within a quarter ulp of 1
        tau *= unit
    else:
        z = np.abs(tau) * ratio
        with np.errstate(divide="ignore", invalid="ignore"):
            h = np.where(z > 0, -np.log1p(-z) / z, 1.0)
        tau = unit * tau * h
    tau += c
    if np.ndim(lower) == 0 and np.ndim(upper) == 0 and isinstance(tau, np.ndarray):
        return _bound_in_place(
            tau, lower, upper
        )  # (scalar bounds: numpy's clip, not maximum)
    return np.minimum(np.maximum(tau, lower), upper)
