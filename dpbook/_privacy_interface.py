"""The one interface between a mechanism and the privacy auditor: :class:`PrivacyDescription`.

A mechanism family describes its own law through a method ``privacy_description()`` that returns a
:class:`PrivacyDescription`; :mod:`dpbook.privacy` holds only the search over pairs and outputs and
never looks at the mechanism's type.  A new family is audited as soon as it has that method (the
tests define one and audit it exactly).  This module imports numpy and scipy only, so every
mechanism module may import it without a cycle.

The laws the auditor handles are *Laplace-shaped*: in an output coordinate ``t`` (``t = x``, or
``t = log x`` with ``log_output``) the law of ``M(q)`` is

* a density ``exp(kernel(t, q) - log_norm(q))`` on the union of the closed intervals ``pieces``
  (which do not depend on ``q``), with ``kernel = -|t - center(q)|/scale(q) - log(2 scale(q))``
  (``shape='laplace'``) or ``-(t - center(q))^2/(2 scale^2) - log(sqrt(2 pi) scale)``
  (``shape='gauss'``, a scale that does not depend on ``q``); and
* point masses at fixed places: ``atoms = ((t, q -> log mass), ...)``.

For one pair of true values the log-ratio of two such densities is piecewise linear in ``t`` with kinks
only at the two centres and the ends of the pieces (linear for the Gaussian shape), so its supremum
over outputs is a closed form; that is what makes the audit exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import special

__all__ = ["PrivacyDescription", "corner_pairs", "laplace_cdf_curvature", "laplace_description", "laplace_log_mass", "laplace_log_mass_ratio",
           "laplace_mass_curvature", "union_description"]


_LOG_HALF = math.log(0.5)


def _identity(q):
    return q


@dataclass(frozen=True)
class PrivacyDescription:
    """How the law of a mechanism depends on its true value, in the terms the auditor needs.

    Attributes
    ----------
    center, scale : callable
        ``q -> m(q)`` and ``q -> s(q) > 0`` (vectorized) of the kernel, in the output coordinate ``t``.
    pieces : tuple of (float, float)
        Closed intervals in ``t`` carrying the density (ends may be infinite); independent of ``q``.
    atoms : tuple of (float, callable) or (float, callable, callable)
        Point masses: ``(t, q -> log mass)``, optionally with ``(q1, q2) -> log mass(q1) - log mass(q2)``
        computed accurately for close pairs.
    log_norm : callable or None
        ``q -> log N(q)``, the log of the density's normalizing mass (``None``: ``N = 1``).
    log_norm_ratio : callable or None
        ``(q1, q2) -> log N(q2) - log N(q1)``, accurate also when the two are close (where the plain
        difference of two logarithms near ``log(1/2)`` keeps no digit of a change of ``1e-16``); it may
        return ``(value, bound on its rounding error)``.  ``None``: the plain difference.
    shape : {'laplace', 'gauss'}
        The kernel.
    uniform : bool
        ``scale`` does not depend on ``q``.  For the Laplace kernel this also promises that ``center`` is
        monotone, ``N(q)`` is the Laplace(center(q), s) mass of a set (so ``|dlog N/dm| <= 1/s``) and every
        atom's log mass is monotone in ``q`` (the mass of a set below, or above, all the density's outputs).
        Then, for every fixed output ``t``, ``q -> -log p(t; q)`` falls and then rises (its bottom at
        ``to_q(t)``) and an atom's ``-log mass`` is monotone, so the worst pair over the band
        ``|q1 - q2| <= Δ`` (outputs cut by a window or not) is on its edge ``(u, u ± Δ)`` or pairs a bottom
        ``to_q(t)`` (``t`` the lowest or highest output) with an end of the domain: the auditor searches
        only those.
    worst_pairs : callable or None
        ``(lo, hi, delta) -> [(q1, q2), ...]``: pairs of true values in ``[lo, hi]`` at most ``delta``
        apart among which the worst case provably sits (a theorem of the family, proved where the
        family defines it).  The auditor then evaluates these pairs exactly instead of searching.
    curvature : callable or None
        ``(x, y) -> K``: a bound on ``|d^2/dq^2|`` of ``log_norm``, of ``center/scale`` (0 for a centre linear
        in ``q``) and of every atom's log mass for ``q`` in ``[x, y]`` (arrays of cells, vectorized), in units
        of ``curvature_unit**-2`` (so that scales of ``1e±300`` neither overflow nor underflow it).  With it
        the auditor's search over pairs is a certified branch and bound; without it the search falls back
        on ``lipschitz``.
    curvature_unit : float
        The unit of ``curvature`` (a length of the true values; ``laplace_description`` sets its scale).
    lipschitz : float or None
        A Lipschitz constant of ``q -> loss(q, q +- delta)`` where it is finite.
    enclosure : callable or None
        ``(x, y) -> (m_lo, m_hi, s_lo, s_hi, n_lo, n_hi)``: bounds of ``center``, ``scale`` and ``log_norm``
        over the true values in ``[x, y]`` (arrays of cells, vectorized).  The auditor's certified search
        over the whole band of pairs (a scale that varies with ``q``) needs it.
    linear_outputs : tuple of (float, float, float)
        ``(t, c, k)``: a theorem of the family that ``log p(t; q) = const - c * max(q - k, 0)`` for every ``q``
        (``c >= 0``); the certified search then bounds that output's log-ratio exactly.
    landmarks : tuple of float
        True values where the loss may change regime (bounds, piece ends, a shift).
    length : float
        A length scale of the true values: beyond ``4096 * length`` from every landmark the law's
        dependence on ``q`` is a translation up to ``e^{-4096}`` (normalizers at their limits).
    to_q : callable
        The true value whose centre is ``t`` (inverse of ``center``; for window landmarks).
    log_output : bool
        Outputs are ``x = e^t``.
    positive : bool
        True values must be ``> 0``; as ``q -> 0`` the law tends to a point mass at the output 0,
        so a domain reaching 0 has an infinite loss.
    log_q : PrivacyDescription or None
        The same family described as a function of ``log q`` (offers the neighbour relations
        ``'log'`` and ``'relative'``).
    neighbours : str
        The default neighbour relation (``'additive'`` or ``'log'``).
    exact : bool
        False when this describes the *base* of a post-processing whose own law is not described:
        the audit of the base is then an upper bound (the post-processing property).
    """

    center: Callable = _identity
    scale: Callable = None
    pieces: tuple = ((-math.inf, math.inf),)
    atoms: tuple = ()
    log_norm: Callable | None = None
    log_norm_ratio: Callable | None = None
    shape: str = "laplace"
    uniform: bool = True
    worst_pairs: Callable | None = None
    curvature: Callable | None = None
    lipschitz: float | None = None
    curvature_unit: float = 1.0
    enclosure: Callable | None = None
    linear_outputs: tuple = ()
    landmarks: tuple = ()
    length: float = 1.0
    to_q: Callable = _identity
    log_output: bool = False
    positive: bool = False
    log_q: "PrivacyDescription | None" = None
    neighbours: str = "additive"
    exact: bool = True
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if self.shape not in ("laplace", "gauss"):
            raise ValueError(f"shape must be 'laplace' or 'gauss', got {self.shape!r}")
        if self.scale is None or not callable(self.scale):
            raise ValueError(f"scale must be a callable q -> s(q), got {self.scale!r}")
        if self.shape == "gauss" and not self.uniform:
            raise ValueError("a Gaussian kernel needs a scale that does not depend on q (uniform=True)")
        if self.neighbours not in ("additive", "log"):
            raise ValueError(f"neighbours must be 'additive' or 'log', got {self.neighbours!r}")


def laplace_log_cdf_ratio(x, q1, q2, scale, upper=False):
    """``(log F(x; q1) - log F(x; q2), a bound on its rounding error)`` for the Laplace(q, scale) cdf ``F`` (its
    survival function with ``upper``), accurate also when ``q1`` and ``q2`` are close (a clamp's atom at ``x``).

    With ``z = (x - q)/s``: ``log F = log(1/2) + z`` for ``z <= 0``, so the difference is ``(q2 - q1)/s``;
    for ``z > 0``, ``log F = log(1 - e^{-z}/2)`` and the difference is a ``log1p`` of a difference of
    exponentials written with ``expm1``.
    """
    x = float(x)
    q1, q2 = np.broadcast_arrays(np.asarray(q1, dtype=float), np.asarray(q2, dtype=float))
    if upper:  # S(x; q) = F(-x; -q)
        x, q1, q2 = -x, -q1, -q2
    s = float(scale)
    z1, z2 = (x - q1) / s, (x - q2) / s
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        gap = q2 - q1
        low = gap / s
        # exact when the difference and the quotient are (checked by undoing them)
        exact = (gap + q1 == q2) & (q2 - gap == q1) & (low * s == gap) & (gap / low == s)
        # both z > 0: log((1 - e^{-z1}/2)/(1 - e^{-z2}/2)) = log1p((e^{-z2} - e^{-z1})/2 / (1 - e^{-z2}/2))
        num = 0.5 * np.exp(-np.minimum(z1, z2)) * -np.expm1(-np.abs(z1 - z2)) * np.sign(z1 - z2)
        high = np.log1p(num / (1 - 0.5 * np.exp(-z2)))
        # one z on each side of 0: log(1 - e^{-z}/2) - log(1/2) = log1p(-expm1(-z)) >= 0, so the two terms
        # have opposite signs and nothing cancels (the difference of two logs near log(1/2) would)
        mixed = np.where(z1 > 0, np.log1p(-np.expm1(-z1)) - z2, z1 - np.log1p(-np.expm1(-z2)))
    both_low = (z1 <= 0) & (z2 <= 0)
    value = np.where(both_low, low, np.where((z1 > 0) & (z2 > 0), high, mixed))
    with np.errstate(invalid="ignore"):
        err = np.where(both_low & exact, 0.0, 8 * np.spacing(np.abs(np.nan_to_num(value, posinf=0.0, neginf=0.0)))
                       + np.where(both_low | ((z1 > 0) & (z2 > 0)), 0.0,
                                  4 * np.spacing(np.abs(np.nan_to_num(z1)) + np.abs(np.nan_to_num(z2)))))
    return value, err


def laplace_description(scale, pieces=((-math.inf, math.inf),), **kw):
    """A :class:`PrivacyDescription` with a Laplace kernel of the fixed ``scale`` centred at ``q``."""
    b = float(scale)
    kw.setdefault("length", b)
    kw.setdefault("lipschitz", 4 / b)
    kw.setdefault("curvature_unit", b)
    return PrivacyDescription(scale=lambda q: np.full(np.shape(q), b), uniform=True, pieces=tuple(pieces), **kw)


def laplace_cdf_curvature(scale, below=(), above=()):
    """A ``curvature`` for atoms whose log masses are Laplace(q, scale) log-cdfs at the points ``below``
    (``log P(L <= x)``) and log-survival functions at ``above`` (``log P(L >= x)``), and nothing else.

    With ``z = (x - q)/b``, ``log F = log(1/2) + z`` for ``z <= 0`` (no curvature) and ``log(1 - e^{-z}/2)`` beyond,
    whose second derivative is at most ``2 e^{-z}`` in size: on a cell of ``q`` the bound is 0 where every
    ``z <= 0`` and ``(2/b^2) e^{-max(z_min, 0)}`` otherwise, largest over the points (returned in units of
    ``b^-2``: ``laplace_description`` sets ``curvature_unit=b``).
    """
    b = float(scale)

    def curvature(x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        out = np.zeros(np.broadcast(x, y).shape)
        with np.errstate(over="ignore"):
            for p in below:  # z = (p - q)/b runs over [(p - y)/b, (p - x)/b]
                out = np.maximum(out, np.where(p - x <= 0, 0.0, 2 * np.exp(-np.maximum((p - y) / b, 0.0))))
            for p in above:  # z = (q - p)/b runs over [(x - p)/b, (y - p)/b]
                out = np.maximum(out, np.where(y - p <= 0, 0.0, 2 * np.exp(-np.maximum((x - p) / b, 0.0))))
        return out

    return curvature


def corner_pairs(frozen=(-math.inf, math.inf)):
    """``worst_pairs`` for a family whose loss grows as the pair moves apart and is largest at the ends.

    The theorem the family must prove: the law is the same for every ``q`` outside ``frozen = (a, b)``
    as at the nearest of ``a``, ``b``; and for true values in ``[a, b]`` the loss over pairs at most
    ``delta`` apart is largest at a corner of the domain clipped to ``[a, b]``: ``(D1, D1 + delta)``,
    ``(D2 - delta, D2)`` or their reverses (or the two ends, if closer than ``delta``; or ``(0, delta)``
    when the clipped domain is the whole line and the loss is translation invariant).
    """
    a, b = frozen

    def pairs(lo, hi, delta):
        d1, d2 = min(max(lo, a), b), max(min(hi, b), a)
        if d2 - d1 <= delta:
            if d1 == d2:  # the law never changes on the domain
                return [(d1, d1)] if math.isfinite(d1) else [(0.0, 0.0)]
            return [(d1, d2), (d2, d1)]
        out = []
        if math.isfinite(d1):
            out += [(d1, d1 + delta), (d1 + delta, d1)]
        if math.isfinite(d2):
            out += [(d2 - delta, d2), (d2, d2 - delta)]
        return out or [(0.0, delta), (delta, 0.0)]

    return pairs


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
        across = 0.5 * (-np.expm1(np.minimum(loz, 0.0)) - np.expm1(-np.maximum(hiz, 0.0)))
    mass = np.where(hi <= 0, left, np.where(lo >= 0, right, across))
    return sign * np.where(sign != 0, mass, 0.0)


def laplace_log_mass_ratio(q1, q2, scale, lower, upper, log_mass):
    """``log N(q2) - log N(q1)`` for ``N(q)``, the Laplace(q, scale) mass of the union of ``[lower_k, upper_k]``.

    ``N(q2) - N(q1)`` is summed piece by piece as ``P(a - q2 <= L <= a - q1) - P(b - q2 <= L <= b - q1)``
    (no cancellation), divided by ``N(q1)`` and passed to ``log1p``: accurate for pairs that differ by
    ``1e-16`` scales, where ``log N(q2) - log N(q1)`` keeps no digit.  ``log_mass(q)`` gives ``log N``;
    the plain difference is used where ``N(q1)`` underflows or the ratio is far from 1.
    """
    q1, q2 = np.broadcast_arrays(np.asarray(q1, dtype=float), np.asarray(q2, dtype=float))
    lower = np.asarray(lower, dtype=float).reshape((-1,) + (1,) * q1.ndim)
    upper = np.asarray(upper, dtype=float).reshape((-1,) + (1,) * q1.ndim)
    l1, l2 = np.asarray(log_mass(q1), dtype=float), np.asarray(log_mass(q2), dtype=float)
    diff = np.sum(_piece_mass_diffs(q1, q2, lower, upper, float(scale)), axis=0)
    return _log1p_ratio(diff, l1, l2)


def _log1p_ratio(diff, l1, l2):
    """``log N2 - log N1`` from ``N2 - N1 = diff`` and ``log N1 = l1`` (the plain difference where that is better)."""
    plain = l2 - l1
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        rel = diff * np.exp(-l1)
        fine = np.log1p(np.where(rel > -1, rel, 0.0))
    use = (l1 > -700) & (np.abs(plain) < 0.5) & np.isfinite(fine)
    return np.where(use, fine, plain)


def _piece_mass_diffs(q1, q2, lower, upper, s):
    """``N_k(q2) - N_k(q1)`` for each piece ``[lower_k, upper_k]`` (broadcast against the pairs), without cancellation."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        lo_q, hi_q = np.minimum(q1, q2), np.maximum(q1, q2)
        sign = np.where(q2 > q1, 1.0, np.where(q2 < q1, -1.0, 0.0))
        step = (hi_q - lo_q) / s
        # a piece wholly left (right) of both: N_k(q2) = N_k(q1) e^{-+(q2 - q1)/s}
        mixed = _signed_mass(lower - q2, lower - q1, s) - _signed_mass(upper - q2, upper - q1, s)
        # a piece holding both: N_k(hi) - N_k(lo) = (1 - e^{-step})/2 (e^{-(lo - a)/s} - e^{-(b - hi)/s})
        x, y = (lo_q - lower) / s, (upper - hi_q) / s
        gap = np.where(np.isinf(x) & np.isinf(y), 0.0, y - x)
        both = -0.5 * np.expm1(-step) * np.sign(gap) * np.exp(-np.minimum(x, y)) * -np.expm1(-np.abs(gap))
        both = sign * np.where(np.isfinite(both), both, 0.0)
        holds = (lower <= lo_q) & (hi_q <= upper)
        left = upper <= lo_q
        right = lower >= hi_q
        n1 = np.exp(_piece_log_mass(q1, s, lower, upper))
        outside = np.where(left, n1 * np.expm1(-(q2 - q1) / s), n1 * np.expm1((q2 - q1) / s))
        return np.where(holds, both, np.where(left | right, outside, mixed))


def laplace_mass_curvature(x, y, scale, lower, upper, log_mass):
    """A bound on ``|(log N)''|`` over ``q`` in ``[x, y]`` for the Laplace mass ``N`` of a union of intervals.

    ``N' = sum_k f_q(a_k) - f_q(b_k)`` and ``|N''| <= sum_k (f_q(a_k) + f_q(b_k))/s`` with ``f_q`` the
    Laplace(q, s) density; on the cell ``f_q(e) <= e^{-dist(e, [x, y])/s}/(2s) =: E_e`` and, as
    ``|N'/N| <= 1/s``, ``N >= sqrt(N(x) N(y)) e^{-(y - x)/(2s)}``.  So
    ``|(log N)''| <= |N''|/N + (N'/N)^2 <= E/(s N_min) + min(E/N_min, 1/s)^2`` with ``E = sum_e E_e``.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ends = np.concatenate([np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)])
    ends = ends[np.isfinite(ends)]
    s = float(scale)
    if ends.size == 0:
        return np.zeros(np.broadcast(x, y).shape)
    e = ends.reshape((-1,) + (1,) * x.ndim)
    dist = np.maximum(np.maximum(x - e, e - y), 0.0) / s
    log_e = special.logsumexp(-dist, axis=0) - math.log(2 * s)
    log_nmin = 0.5 * (np.asarray(log_mass(x)) + np.asarray(log_mass(y))) - (y - x) / (2 * s)
    ratio = np.exp(np.minimum(log_e - log_nmin, 700.0))
    return ratio / s + np.minimum(ratio, 1 / s) ** 2


def _clip_parts(q, scale, lower, upper):
    """``c = clip(q)``, ``A' = (c - lower)/b``, ``B' = (upper - c)/b``, ``d = |q - c|/b`` (``inf`` past the doubles)."""
    c = np.clip(q, lower, upper)
    with np.errstate(over="ignore"):
        return c, (c - lower) / scale, (upper - c) / scale, np.abs(q - c) / scale


def _g(k, z):
    """``P_k(z) / z^k = e^{-z} M(1, k + 1, z) / k!`` for ``0 <= z <= 1`` (``P_k`` the regularized lower gamma)."""
    z = np.minimum(z, 1.0)
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


class _UnionMass:
    """``N(q)``, the Laplace(q, s) mass of a union of disjoint sorted intervals, in ``O(log n)`` per ``q``.

    The pieces wholly left of ``q`` contribute ``e^{-(q - b_j)/s} A_j`` with ``A_j`` a running log-sum over
    ``k <= j`` of ``e^{-(b_j - b_k)/s} (1 - e^{-w_k/s})/2`` (every exponent ``<= 0``), those wholly right of
    it the mirror image, and the piece holding ``q`` its own mass.  The curvature bound sums
    ``e^{-dist(e, cell)/s}`` over the finite ends the same way.
    """

    def __init__(self, scale, lower, upper):
        self.s = s = float(scale)
        self.lo, self.hi = lower, upper
        # each piece's mass seen from one of its ends, (1 - e^{-width/s})/2 (by the one home of a piece's mass)
        end = np.where(np.isfinite(upper), upper, np.where(np.isfinite(lower), lower, 0.0))
        self.log_w = log_w = _piece_log_mass(end, s, lower, upper)
        n = lower.size
        left = np.empty(n)
        right = np.empty(n)
        for j in range(n):  # O(n) once
            left[j] = log_w[j] if j == 0 else np.logaddexp(left[j - 1] - (upper[j] - upper[j - 1]) / s, log_w[j])
        for j in range(n - 1, -1, -1):
            right[j] = log_w[j] if j == n - 1 else np.logaddexp(right[j + 1] - (lower[j + 1] - lower[j]) / s, log_w[j])
        self.left, self.right = left, right
        ends = np.sort(np.concatenate([lower, upper]))
        self.ends = ends = ends[np.isfinite(ends)]
        m = ends.size
        self.e_left, self.e_right = np.empty(m), np.empty(m)
        for j in range(m):
            self.e_left[j] = 0.0 if j == 0 else np.logaddexp(self.e_left[j - 1] - (ends[j] - ends[j - 1]) / s, 0.0)
        for j in range(m - 1, -1, -1):
            self.e_right[j] = 0.0 if j == m - 1 else np.logaddexp(self.e_right[j + 1] - (ends[j + 1] - ends[j]) / s, 0.0)

    def log_mass(self, q):
        q = np.asarray(q, dtype=float)
        s, lo, hi = self.s, self.lo, self.hi
        n = lo.size
        # j: pieces with upper <= q are wholly left; k: pieces with lower >= q are wholly right
        j = np.searchsorted(hi, q, side="right") - 1
        k = np.searchsorted(lo, q, side="left")
        with np.errstate(invalid="ignore", over="ignore"):
            left = np.where(j >= 0, self.left[np.maximum(j, 0)] - (q - hi[np.maximum(j, 0)]) / s, -np.inf)
            right = np.where(k < n, self.right[np.minimum(k, n - 1)] - (lo[np.minimum(k, n - 1)] - q) / s, -np.inf)
            inside = j + 1  # the piece holding q, if j + 1 < k
            holds = inside < k
            i = np.minimum(inside, n - 1)
            own = np.where(holds, _piece_log_mass(q, s, lo[i], hi[i]), -np.inf)
        return np.logaddexp(np.logaddexp(left, right), own)

    def ratio(self, q1, q2):
        q1, q2 = np.broadcast_arrays(np.asarray(q1, dtype=float), np.asarray(q2, dtype=float))
        l1, l2 = self.log_mass(q1), self.log_mass(q2)
        plain = np.asarray(l2 - l1, dtype=float)
        with np.errstate(invalid="ignore"):
            err = 4 * (np.spacing(np.abs(np.nan_to_num(l1, neginf=0.0))) + np.spacing(np.abs(np.nan_to_num(l2, neginf=0.0))))
        close = np.abs(q2 - q1) < 1e-3 * self.s
        if not close.any():
            return plain, err
        fine, fine_err = self._close_ratio(q1[close], q2[close])
        out = np.array(plain, dtype=float)
        out[close] = fine
        err = np.array(err, dtype=float)
        err[close] = fine_err
        return out, err

    def _close_ratio(self, q1, q2, middle=4):
        """``log N(q2) - log N(q1)`` for close pairs in ``O(log n)`` each: the pieces wholly left (right) of both
        true values scale together by ``e^{-+(q2 - q1)/s}`` (their summed mass is the running sum of
        :meth:`log_mass`); only the few pieces between are summed one by one (all of them, for the rare pair
        with more than ``middle`` pieces between)."""
        s, lo, hi = self.s, self.lo, self.hi
        n = lo.size
        lo_q, hi_q = np.minimum(q1, q2), np.maximum(q1, q2)
        j = np.searchsorted(hi, lo_q, side="right") - 1  # pieces 0..j wholly left of both
        k = np.searchsorted(lo, hi_q, side="left")  # pieces k.. wholly right of both
        with np.errstate(invalid="ignore", over="ignore"):
            left = np.where(j >= 0, self.left[np.maximum(j, 0)] - (q1 - hi[np.maximum(j, 0)]) / s, -np.inf)
            right = np.where(k < n, self.right[np.minimum(k, n - 1)] - (lo[np.minimum(k, n - 1)] - q1) / s, -np.inf)
            diff = np.exp(left) * np.expm1(-(q2 - q1) / s) + np.exp(right) * np.expm1((q2 - q1) / s)
            size = np.abs(np.exp(left) * np.expm1(-(q2 - q1) / s)) + np.abs(np.exp(right) * np.expm1((q2 - q1) / s))
        idx = j[None, :] + 1 + np.arange(middle)[:, None]
        inside = idx < k[None, :]
        safe = np.minimum(idx, n - 1)
        parts = _piece_mass_diffs(q1[None, :], q2[None, :], lo[safe], hi[safe], s)
        diff = diff + np.sum(np.where(inside, parts, 0.0), axis=0)
        size = size + np.sum(np.where(inside, np.abs(parts), 0.0), axis=0)
        many = (k - j - 1) > middle
        l1 = self.log_mass(q1)
        out = _log1p_ratio(diff, l1, self.log_mass(q2))
        if many.any():
            out[many] = laplace_log_mass_ratio(q1[many], q2[many], s, lo, hi, self.log_mass)
            size[many] = np.inf  # summed piece by piece: bounded below by the generic allowance only
        # the terms' rounding (a few ulps each, and of the running sums), relative to N(q1)
        with np.errstate(over="ignore", invalid="ignore"):
            err = 64 * np.finfo(float).eps * size * np.exp(-l1)
        err = np.where(np.isfinite(err), err, 64 * np.spacing(np.abs(out)))
        return out, err + 16 * np.spacing(np.abs(out))

    def curvature(self, x, y):
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        s, e = self.s, self.ends
        if e.size == 0:
            return np.zeros(x.shape)
        m = e.size
        j = np.searchsorted(e, x, side="left") - 1  # ends < x
        k = np.searchsorted(e, y, side="right")  # ends > y
        with np.errstate(invalid="ignore", over="ignore"):
            left = np.where(j >= 0, self.e_left[np.maximum(j, 0)] - (x - e[np.maximum(j, 0)]) / s, -np.inf)
            right = np.where(k < m, self.e_right[np.minimum(k, m - 1)] - (e[np.minimum(k, m - 1)] - y) / s, -np.inf)
        count = np.maximum(k - j - 1, 0)
        with np.errstate(divide="ignore"):
            log_e = np.logaddexp(np.logaddexp(left, right), np.log(count)) - math.log(2 * s)
        log_nmin = 0.5 * (self.log_mass(x) + self.log_mass(y)) - (y - x) / (2 * s)
        ratio = np.exp(np.minimum(log_e + math.log(s) - log_nmin, 700.0))  # E s/N_min: scale-free
        return ratio + np.minimum(ratio, 1.0) ** 2  # in units of s^-2


def union_description(scale, lower, upper, shift=0.0, **kw):
    """The description of ``q + shift + L_b`` conditioned on the union of ``[lower_k, upper_k]`` (and normalized).

    Truncation, normalization and restriction of a Laplace base are all this law.  Its log-normalizer
    is :func:`laplace_log_mass` (with an accurate ratio, :func:`laplace_log_mass_ratio`) and the curvature
    bound of :func:`laplace_mass_curvature`; the landmarks are the ends and the gaps' middles (in ``q``).
    """
    b = float(scale)
    lower = np.array(lower, dtype=float).ravel()
    upper = np.array(upper, dtype=float).ravel()
    order = np.argsort(lower)
    lower, upper = lower[order], upper[order]

    built = []

    def mass():  # built on first use (O(n)), so the auditor can refuse a request before paying for it
        if not built:
            built.append(_UnionMass(b, lower, upper))
        return built[0]

    def log_norm(q):
        return mass().log_mass(np.asarray(q, dtype=float) + shift)

    def ratio(q1, q2):
        return mass().ratio(np.asarray(q1, dtype=float) + shift, np.asarray(q2, dtype=float) + shift)

    def curvature(x, y):
        return mass().curvature(np.asarray(x, dtype=float) + shift, np.asarray(y, dtype=float) + shift)

    ends = np.r_[lower, upper]
    ends = tuple((ends[np.isfinite(ends)] - shift).tolist())
    middles = tuple((0.5 * (upper[:-1] + lower[1:]) - shift).tolist())
    kw.setdefault("landmarks", ends + middles)
    if shift:
        kw.setdefault("center", lambda q: np.asarray(q, dtype=float) + shift)
        kw.setdefault("to_q", lambda t: t - shift)
    return laplace_description(b, tuple(zip(lower.tolist(), upper.tolist())), log_norm=log_norm, log_norm_ratio=ratio,
                               curvature=curvature, **kw)
