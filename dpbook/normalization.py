"""Truncation and normalization of the Laplace law to a union of intervals (Croft, Sack & Shi).

Croft, Sack & Shi release a draw from the Laplace density centred at the true value ``q``, cut to the
*feasible* set (the complement of their *constraints*) and divided by the Laplace mass of that set,
their normalization factor (4)-(6).  dpbook describes the feasible set directly as a union of
disjoint closed intervals ``allowed = [(a1, b1), (a2, b2), ...]``.  The law is the mixture, with
weights proportional to the Laplace masses ``N_k(q)`` of the pieces, of the single-interval
truncated laws of :mod:`dpbook.truncation`; every formula below is built from those.

Croft's privacy guarantee, their (8) generalized to (13): for true values ``i Δ`` apart (``i >= 0``
real) the ratio of the two normalized densities is at most ``e^{iε}`` at every output.  That is
stronger than ε-DP.  Under it:

* one constraint reaching to infinity, here the feasible set ``[lower, inf)``: a scale that depends on
  the distance to the boundary, :func:`croft_boundary_scale` (their (32)) and :func:`croft_scale`
  (their (33), Theorem 1), used by :class:`CroftLaplace`;
* any configuration, one scale for every ``q``: :func:`croft_uniform_scale` (Lemmas 7-10, Theorems 2
  and 3, Corollary 1, guarantee (38)).

The paper's ``σ`` is dpbook's ``scale`` (``b``) and its ``ΔF`` is ``sensitivity`` (``Δ``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from . import _validation as check
from .laplace import RESOLUTION, laplace_logpdf
from .mechanism import Mechanism, _float
from .truncation import _clip_parts, _compact, _half_mass, _quantile_in_place, _truncated_moments

__all__ = [
    "CroftLaplace",
    "Normalized",
    "croft_boundary_scale",
    "croft_lower_bounds",
    "croft_scale",
    "croft_table2",
    "croft_uniform_scale",
    "normalized_bias",
    "normalized_cdf",
    "normalized_log_normalizer",
    "normalized_logpdf",
    "normalized_mean",
    "normalized_ppf",
    "normalized_variance",
]

#: ``y0 = -W(-1/(2e)) = 0.2319...``, the principal Lambert W value behind Croft's (32)
_Y0 = float(-special.lambertw(-0.5 / math.e).real)
#: Croft's (32) in units of ``Δ/ε``: ``-1/(W(-1/(2e)) e) = 1.585954...``
_SIGMA1 = 1.0 / (math.e * _Y0)
#: up to this many piece edges a draw's piece is found by comparing with all of them, faster than bisection
#: (and counted in ``int8``, so at most 127)
_FEW_PIECES = 64
#: draws per block when sampling a union for one ``q`` (temporaries of 256 kB)
_BLOCK = 2**15




# --------------------------------------------------------------------------------------------------
# the feasible set

def _allowed(allowed):
    """Validate ``allowed`` and return it as sorted float arrays ``(lo, hi)``; touching pieces merge."""
    try:
        arr = np.array(allowed, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"allowed must be a list of (lo, hi) pairs, got {allowed!r}") from None
    if arr.ndim == 1 and arr.shape == (2,):
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(f"allowed must be a non-empty list of (lo, hi) pairs, got {allowed!r}")
    if np.isnan(arr).any():
        raise ValueError(f"allowed must not contain NaN, got {allowed!r}")
    arr = arr[np.argsort(arr[:, 0], kind="stable")]
    lo, hi = arr[:, 0], arr[:, 1]
    if not (lo < hi).all():
        raise ValueError(f"allowed needs lo < hi in every pair, got {allowed!r}")
    if (lo[1:] < hi[:-1]).any():
        raise ValueError(f"allowed pieces must be disjoint (they may touch), got {allowed!r}")
    keep = np.r_[True, lo[1:] > hi[:-1]]
    starts = lo[keep]
    ends = hi[np.r_[keep[1:], True]]
    return starts, ends


def _pieces(lo, hi, ndim):
    """Reshape the piece ends to broadcast against a ``ndim``-dimensional ``q`` (pieces on axis 0)."""
    shape = (len(lo),) + (1,) * ndim
    return lo.reshape(shape), hi.reshape(shape)


def _log_masses(q, scale, lo, hi):
    """``log N_k(q)``: the Laplace(q, scale) mass of each piece, on a leading axis."""
    a, b = _pieces(lo, hi, np.ndim(q))
    _, ea, eb, d = _clip_parts(q, scale, a, b)
    return np.log(0.5 * _half_mass(ea, eb)) - d


def _log_normalizer(q, scale, lo, hi):
    return special.logsumexp(_log_masses(q, scale, lo, hi), axis=0)


def _mixture(q, scale, lo, hi):
    """Weights, biases and variances of the pieces' truncated laws, and the mixture's bias."""
    a, b = _pieces(lo, hi, np.ndim(q))
    log_m = _log_masses(q, scale, lo, hi)
    w = np.exp(log_m - special.logsumexp(log_m, axis=0))
    c, offset, second = _truncated_moments(q, scale, a, b)
    bias_k = (c - q) + offset
    var_k = np.maximum(second - offset**2, 0.0)
    return w, bias_k, var_k, np.sum(w * bias_k, axis=0)


def _bias(q, scale, lo, hi):
    return _mixture(q, scale, lo, hi)[3]


def _variance(q, scale, lo, hi):
    w, bias_k, var_k, bias = _mixture(q, scale, lo, hi)
    return np.sum(w * (var_k + (bias_k - bias) ** 2), axis=0)


def _cdf(x, q, scale, lo, hi):
    x, q = np.broadcast_arrays(x, q)
    a, b = _pieces(lo, hi, x.ndim)
    top = np.clip(x, a, b)
    empty = top <= a
    top = np.where(empty, b, top)
    _, ea, eb, d = _clip_parts(q, scale, a, top)
    log_part = np.where(empty, -np.inf, np.log(0.5 * _half_mass(ea, eb)) - d)
    with np.errstate(divide="ignore"):
        out = np.exp(special.logsumexp(log_part, axis=0) - _log_normalizer(q, scale, lo, hi))
    return np.where(x >= hi[-1], 1.0, np.minimum(out, 1.0))


def _inside(x, lo, hi):
    k = np.searchsorted(lo, x, side="right") - 1
    return (k >= 0) & (x <= hi[np.maximum(k, 0)])


def _logpdf(x, q, scale, lo, hi):
    x, q = np.broadcast_arrays(x, q)
    inside = _inside(x, lo, hi)
    xs = np.where(inside, x, q)
    return np.where(inside, laplace_logpdf(xs, q, scale) - _log_normalizer(q, scale, lo, hi), -np.inf)


def _ppf(p, q, scale, lo, hi, floor):
    """Quantiles at the uniforms ``p`` (overwritten: they serve as scratch); ``q``, ``scale`` broadcast to ``p``.

    Each ``p`` picks the piece whose slot of the cumulative weights holds it, is rescaled to a uniform
    inside that slot and goes through one truncated-quantile pass (:func:`dpbook.truncation` quantile)
    with its own piece's ``c``, ``lower`` and ``upper``.  For one ``q`` the pieces' windows are looked
    up per point, block by block so that the temporaries stay small.
    """
    if len(lo) == 1:
        with np.errstate(divide="ignore"):
            return _quantile_in_place(p, np.clip(q, lo[0], hi[0]), scale, lo[0], hi[0], floor=floor)
    q, scale = np.broadcast_arrays(np.asarray(q, dtype=float), np.asarray(scale, dtype=float))
    lead = (1,) * (p.ndim - q.ndim)
    q, scale = q.reshape(lead + q.shape), scale.reshape(lead + scale.shape)
    log_m = _log_masses(q, scale, lo, hi)
    cum = np.cumsum(np.exp(log_m - log_m.max(axis=0)), axis=0)
    cum /= cum[-1]
    start = np.concatenate([np.zeros_like(cum[:1]), cum[:-1]])
    width = cum - start
    width[width == 0] = 1.0
    a, b = _pieces(lo, hi, q.ndim)
    c = np.clip(q, a, b)
    with np.errstate(divide="ignore"):
        if q.size == 1:
            edges, piece, c, scale = cum.ravel()[:-1], (start.ravel(), width.ravel()), c.ravel(), scale.item()
            flat = p.reshape(-1)
            for i in range(0, flat.size, _BLOCK):
                u = flat[i:i + _BLOCK]
                flat[i:i + _BLOCK] = _quantile_in_place(u, c, scale, lo, hi, floor=floor, piece=(_piece_index(edges, u), *piece))
            return flat.reshape(p.shape)
        k = np.sum(cum[:-1] <= p, axis=0)
        pick = lambda v: np.take_along_axis(np.broadcast_to(v, cum.shape[:1] + p.shape), k[None], axis=0)[0]
        p -= pick(start)
        p /= pick(width)
        return _quantile_in_place(p, pick(c), scale, np.take(lo, k), np.take(hi, k), floor=floor)


def _piece_index(edges, p):
    """The number of ``edges`` (sorted, one fewer than the pieces) at or below each ``p``: its piece."""
    if len(edges) <= _FEW_PIECES:
        return np.sum(edges[:, None] <= p, axis=0, dtype=np.int8).astype(np.intp)
    return np.searchsorted(edges, p, side="right")


def _ends(p, x, lo, hi):
    return np.where(p == 0, lo[0], np.where(p == 1, hi[-1], x))


# --------------------------------------------------------------------------------------------------
# public formula functions (validated)

def _args(q, scale, allowed):
    return check.finite_array("q", q), check.positive("scale", scale), _allowed(allowed)


def normalized_log_normalizer(q, scale, allowed):
    """``log`` of the Laplace(q, scale) mass of the feasible set: minus the log of Croft's (6).

    Croft, Sack & Shi, (4)-(6): their factor is ``1/(1 - (L + R))`` with ``L``, ``R`` the masses of the
    constraints; here ``1 - (L + R)`` is summed over the feasible pieces, in log space, so it stays
    finite when the mass underflows.
    """
    q, scale, (lo, hi) = _args(q, scale, allowed)
    return _float(_log_normalizer(q, scale, lo, hi))


def normalized_logpdf(x, q, scale, allowed):
    """Log-density of the truncated-and-normalized Laplace law (Croft, Sack & Shi, §3.2), ``-inf`` off the set."""
    x = check.real_array("x", x)
    q, scale, (lo, hi) = _args(q, scale, allowed)
    return _float(_logpdf(x, q, scale, lo, hi))


def normalized_cdf(x, q, scale, allowed):
    """``P(M(q) <= x)`` for the truncated-and-normalized Laplace law (Croft, Sack & Shi, §3.2)."""
    x = check.real_array("x", x)
    q, scale, (lo, hi) = _args(q, scale, allowed)
    return _float(_cdf(x, q, scale, lo, hi))


def normalized_bias(q, scale, allowed):
    """``E[M(q)] - q``: the mass-weighted mean of the pieces' truncated biases (:func:`dpbook.truncated_bias`)."""
    q, scale, (lo, hi) = _args(q, scale, allowed)
    return _float(_bias(q, scale, lo, hi))


def normalized_mean(q, scale, allowed):
    """``E[M(q)]`` of the truncated-and-normalized Laplace law."""
    q, scale, (lo, hi) = _args(q, scale, allowed)
    return _float(q + _bias(q, scale, lo, hi))


def normalized_variance(q, scale, allowed):
    """``Var[M(q)]``: within-piece variances plus the spread of the piece means (law of total variance)."""
    q, scale, (lo, hi) = _args(q, scale, allowed)
    return _float(_variance(q, scale, lo, hi))


def normalized_ppf(p, q, scale, allowed):
    """The quantile function of the truncated-and-normalized Laplace law at ``p`` in ``[0, 1]``."""
    p = check.real_array("p", p)
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    q, scale, (lo, hi) = _args(q, scale, allowed)
    out = np.array(np.broadcast_to(p, np.broadcast(p, q).shape), dtype=float)
    return _float(_ends(p, _ppf(out, q, scale, lo, hi, floor=0.0), lo, hi))


class _NormalizedFamily(Mechanism):
    """Shared methods; subclasses define ``_lo``, ``_hi`` and ``_scale(q)``."""

    @property
    def domain(self):
        return (float(self._lo[0]), float(self._hi[-1]))

    @property
    def support(self):
        return (float(self._lo[0]), float(self._hi[-1]))

    def log_normalizer(self, q):
        """``log N(q)``, the log Laplace mass of the feasible set (Croft's (6) is ``1/N(q)``)."""
        q = self._q(q)
        return _float(_log_normalizer(q, self._scale(q), self._lo, self._hi))

    def bias(self, q):
        q = self._q(q)
        return _float(_bias(q, self._scale(q), self._lo, self._hi))

    def variance(self, q):
        q = self._q(q)
        return _float(_variance(q, self._scale(q), self._lo, self._hi))

    def cdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        return _float(_cdf(x, q, self._scale(q), self._lo, self._hi))

    def logpdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        return _float(_logpdf(x, q, self._scale(q), self._lo, self._hi))

    def ppf(self, p, q):
        """The quantile function of M(q) at ``p`` in ``[0, 1]``."""
        p = check.real_array("p", p)
        if ((p < 0) | (p > 1)).any():
            raise ValueError(f"p must lie in [0, 1], got {p!r}")
        q = self._q(q)
        out = np.array(np.broadcast_to(p, np.broadcast(p, q).shape), dtype=float)
        return _float(_ends(p, _ppf(out, q, self._scale(q), self._lo, self._hi, floor=0.0), self._lo, self._hi))

    def _sample(self, q, shape, rng):
        q = _compact(q) if np.ndim(q) else q
        return _ppf(rng.random(shape), q, self._scale(q), self._lo, self._hi, floor=RESOLUTION)


class Normalized(_NormalizedFamily):
    """``q + L_b`` truncated to a union of intervals and normalized (Croft, Sack & Shi, §3.1-3.2, (4)-(6)).

    The density is ``e^{-|x - q|/b} / (2b N(q))`` on the feasible set, ``N(q)`` its Laplace mass.  With
    one interval this is :class:`dpbook.Truncated`.

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0`` (Croft's uniform ``σ``; see :func:`croft_uniform_scale`).
    allowed : sequence of (lo, hi)
        Disjoint closed intervals, ends possibly infinite, in any order.  Pieces that touch are merged
        (a shared end point has no mass); overlapping pieces are an error.

    ``domain`` and ``support`` are the hull of the feasible set; every finite real ``q`` is accepted
    (for ``q`` in a gap the law is still well defined).

    >>> round(Normalized(1.0, [(0.0, np.inf)]).mean(0.0), 12)
    1.0
    """

    def __init__(self, scale, allowed):
        self.scale = check.positive("scale", scale)
        self._lo, self._hi = _allowed(allowed)
        self.allowed = tuple((float(a), float(b)) for a, b in zip(self._lo, self._hi))

    def _scale(self, q):
        return self.scale


# --------------------------------------------------------------------------------------------------
# single infinite constraint: the data-dependent scale (Section 4.1)

def _eps_delta(epsilon, sensitivity):
    return check.positive("epsilon", epsilon), check.positive("sensitivity", sensitivity)


def croft_boundary_scale(epsilon, sensitivity):
    """The scale at the boundary of a single infinite constraint: Croft, Sack & Shi, (32).

    ``σ1 = -Δ / (W(-1/(2e)) e ε) = 1.585954 Δ/ε`` (principal Lambert W branch).

    >>> round(croft_boundary_scale(1.0, 1.0), 6)
    1.585954
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    return _SIGMA1 * (sensitivity / epsilon)


def _log_minus_w(excess, branch):
    """``ω = log(-W_k(-e^{-1-P}))`` for ``P = excess >= 0``: ``ω <= 0`` on the principal branch, ``>= 0`` on -1.

    It solves ``e^ω - 1 - ω = P``; Newton's method on ``sign(ω) sqrt(2(e^ω - 1 - ω))``, which is smooth
    with slope 1 through the branch point, keeps full precision there, where ``W`` itself has a
    square-root singularity.
    """
    root = np.sqrt(2.0 * excess)
    big = excess > 1.0
    far = np.where(branch < 0, -(1.0 + excess), np.log1p(excess + np.log1p(excess)))
    omega = np.where(big, far, np.where(branch < 0, -root, root))
    target = np.where(branch < 0, -root, root)
    for _ in range(50):
        h = np.maximum(np.expm1(omega) - omega, 0.0)
        g = np.copysign(np.sqrt(2.0 * h), omega)
        tiny = np.abs(omega) < 1e-6
        slope = np.where(tiny, 1.0 + omega / 3.0, np.expm1(omega) / np.where(tiny, 1.0, g))
        step = (g - target) / slope
        omega = omega - step
        if (np.abs(step) <= 1e-15 * np.maximum(1.0, np.abs(omega))).all():
            break
    return omega


def croft_scale(distance, epsilon, sensitivity):
    """The data-dependent scale at ``distance >= 0`` from a single infinite constraint: Croft, Sack & Shi, (33).

    With ``i = distance/Δ`` and ``σ1`` from :func:`croft_boundary_scale`, (33) reads
    ``σ2 = -iΔ e^{iε} σ1 / (W_Z(-(2iΔ e^{-iε}/σ1) e^{-iΔ e^{-iε}/σ1}) e^{iε} σ1 + iΔ)``, the solution of
    ``(σ2/σ1)(2 e^{iΔ/σ2} - 1) = e^{iε}`` (their (25) with ``ΔL1 = 0``, as an equality).  The principal
    branch ``Z = 0`` applies for ``i <= 1/ε`` and the ``-1`` branch beyond (Theorem 1's proof); the
    argument of ``W`` reaches ``-1/e`` exactly at ``i = 1/ε``, so the two pieces join smoothly.

    Sign: the LaTeX of (33) carries the leading minus and, evaluated as above, is positive (its
    denominator is negative); the paper's plain-text rendering drops every minus sign, and read that
    way it gives the negative of the scale.  dpbook returns the positive scale, which satisfies the
    defining equation above (tested).  It equals ``σ1`` at distance 0, decreases, is
    ``(Δ/ε)/(1 + W(-1/(2e))) = 1.302 Δ/ε`` at distance ``Δ/ε`` and tends to ``Δ/ε``.  ``W`` is evaluated through ``log(-W)`` by
    Newton's method so that the result keeps full precision at the branch switch.

    >>> round(croft_scale(0.0, 1.0, 1.0), 6), round(croft_scale(1e6, 1.0, 1.0), 4)
    (1.585954, 1.0)
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    distance = check.finite_array("distance", distance)
    if (distance < 0).any():
        raise ValueError(f"distance must be >= 0, got {distance!r}")
    return _float(_croft_scale(distance, epsilon, sensitivity))


def _croft_scale(distance, epsilon, sensitivity):
    unit = sensitivity / epsilon
    s = np.asarray(distance / unit, dtype=float)
    zero = s <= 0
    s = np.where(zero, 1.0, s)
    near = np.abs(s - 1.0) < 0.5
    h = np.where(near, np.log1p(np.where(near, s - 1.0, 0.0)) - (s - 1.0), np.log(s) + 1.0 - s)
    excess = np.maximum(_Y0 * np.expm1(h) - h, 0.0)
    omega = _log_minus_w(excess, np.where(s <= 1.0, -1, 1))
    t = np.exp(omega) - _Y0 * np.exp(h)
    return np.where(zero, _SIGMA1, s / t) * unit


class CroftLaplace(_NormalizedFamily):
    """Croft, Sack & Shi's mechanism for one infinite constraint (§4.1, Theorem 1), feasible set ``[lower, inf)``.

    The Laplace law centred at ``q``, truncated to ``[lower, inf)`` and normalized, with the
    data-dependent scale :func:`croft_scale` at distance ``q - lower`` (``σ1`` on the boundary).  It meets
    Croft's guarantee (ratio ``<= e^{iε}`` for true values ``iΔ`` apart) for outputs between the boundary
    and the data; far beyond the data the two Laplace tails of different weight make the ratio grow
    without bound (log-ratio 21.05 at output 200 for true values 0.5 and 1.5 when ε = Δ = 1;
    :func:`dpbook.privacy_loss` finds it), so the mechanism is not ε-DP on all outputs.

    ``domain`` is ``(lower, inf)``.  For ``q < lower`` the scale is ``σ1`` (distance taken as 0); the law
    is then exactly the law at ``q = lower`` (truncating ``q + L_b`` to ``[lower, inf)`` for ``q <=
    lower`` always leaves the exponential law ``lower + Exp(b)``), so nothing beyond ``lower`` leaks.

    Parameters
    ----------
    epsilon, sensitivity : float
        Croft's ``ε`` and ``ΔF``.
    lower : float
        The boundary; the constraint is ``(-inf, lower)``.
    """

    def __init__(self, epsilon, sensitivity, lower=0.0):
        self.epsilon, self.sensitivity = _eps_delta(epsilon, sensitivity)
        self.lower = check.finite("lower", lower)
        self._lo, self._hi = np.array([self.lower]), np.array([np.inf])

    def _scale(self, q):
        return _croft_scale(np.maximum(q - self.lower, 0.0), self.epsilon, self.sensitivity)

    def scale_at(self, q):
        """The scale used at true value ``q``: :func:`croft_scale` of ``max(q - lower, 0)``."""
        q = self._q(q)
        return _float(self._scale(q))


# --------------------------------------------------------------------------------------------------
# one scale for every q (Sections 4.2-4.3)

def _endpoint_probabilities(sigma, lo, hi):
    """For each end of each feasible piece, the chance that the normalized law lands on the piece's side.

    At a right end ``e``: ``P(M <= e) = A_L / (A_L + A_R)`` with ``A_L``, ``A_R`` the feasible Laplace
    masses on either side of ``e``; at a left end the mirror image; an infinite end contributes its
    limit 1/2.  The masses come from running log-sums over the pieces (O(n) for all ends).
    """
    finite = np.concatenate([lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
    centre = 0.5 * (finite.min() + finite.max()) if finite.size else 0.0
    lo, hi = (lo - centre) / sigma, (hi - centre) / sigma
    m = len(lo)
    width = hi - lo
    log_len = np.where(width > math.log(2), np.log1p(-np.exp(-width)), np.log(-np.expm1(-np.minimum(width, 1.0))))
    with np.errstate(invalid="ignore"):
        left = np.logaddexp.accumulate(hi + log_len)
        right = np.logaddexp.accumulate((log_len - lo)[::-1])[::-1]
    right_next = np.r_[right[1:], -np.inf]
    left_prev = np.r_[-np.inf, left[:-1]]
    out = np.full(2 * m, 0.5)
    fr = np.isfinite(hi)
    out[:m][fr] = special.expit((left[fr] - hi[fr]) - (right_next[fr] + hi[fr]))
    fl = np.isfinite(lo)
    out[m:][fl] = special.expit((right[fl] + lo[fl]) - (left_prev[fl] - lo[fl]))
    return out


def _uniform_fast(epsilon, sensitivity, lo, hi):
    unit = sensitivity / epsilon
    top = 2.0 * unit

    def gap(sigma):
        return sigma - top * _endpoint_probabilities(sigma, lo, hi).max()

    if gap(unit) >= 0:
        return unit
    return optimize.brentq(gap, unit, top, xtol=1e-14 * unit, rtol=4 * np.finfo(float).eps, maxiter=200)


def _forbidden(lo, hi):
    """The constraints (complement of the feasible set) as ``(left, right)`` ends, possibly infinite."""
    left = np.r_[-np.inf, hi]
    right = np.r_[lo, np.inf]
    keep = left < right
    return left[keep], right[keep]


def _paper_sums(q, sigma, c_left, c_right):
    """Croft's ``L`` and ``R`` at location ``q``: formulas (4) and (5), one term per constraint (O(n))."""
    is_left = c_right <= q
    with np.errstate(over="ignore"):
        near_l = np.exp(-(q - c_right[is_left]) / sigma)
        far_l = np.exp(-(q - c_left[is_left]) / sigma)
        near_r = np.exp(-(c_left[~is_left] - q) / sigma)
        far_r = np.exp(-(c_right[~is_left] - q) / sigma)
    return 0.5 * np.sum(near_l - far_l), 0.5 * np.sum(near_r - far_r)


def _paper_check(sigma, epsilon, sensitivity, lo, hi, c_left, c_right):
    """Whether ``sigma`` meets all 3n+2 inequalities of Theorem 2: (60)/(61) in both forms and (70)."""
    for j in range(len(lo)):
        for q, form in ((hi[j], "regular"), (lo[j], "symmetric")):
            if math.isinf(q):
                ratio = 1.0
            else:
                left, right = _paper_sums(q, sigma, c_left, c_right)
                near = left if form == "regular" else right
                ratio = (1 - 2 * near) / (1 - (left + right))
            if sensitivity * ratio / sigma > epsilon:
                return False
    for j in range(len(lo) - 1):
        q2, q1 = hi[j], lo[j + 1]
        width = q1 - q2
        l1, r1 = _paper_sums(q1, sigma, c_left, c_right)
        l2, r2 = _paper_sums(q2, sigma, c_left, c_right)
        if math.log(1 - (l2 + r2)) - math.log(1 - (l1 + r1)) + width / sigma > epsilon * width / sensitivity:
            return False
    return True


def _uniform_paper(epsilon, sensitivity, lo, hi, digits):
    unit = sensitivity / epsilon
    c_left, c_right = _forbidden(lo, hi)
    if digits is None:
        digits = 13 - math.floor(math.log10(unit))
    low, high = 0.0, 2.0 * unit
    while high - low > 10.0 ** (-digits):
        mid = 0.5 * (low + high)
        if mid in (low, high):
            break
        if _paper_check(mid, epsilon, sensitivity, lo, hi, c_left, c_right):
            high = mid
        else:
            low = mid
    return high


def croft_uniform_scale(epsilon, sensitivity, allowed, method="fast", digits=None):
    """The smallest scale that, used for every true value, meets Croft's guarantee (38) on ``allowed``.

    Croft, Sack & Shi, §4.2-4.3: Lemmas 7 and 9 give lower bounds on ``σ``, Theorem 2 takes the largest
    of ``3n + 2`` of them (``n`` finite constraints), Theorem 3 finds it by binary search in
    ``O(n^2 (d + log(Δ/ε)))``, Corollary 1 extends this to infinite constraints.

    ``method="paper"`` is that search: bisection on ``(0, 2Δ/ε]`` (Lemma 10) down to ``10^-digits``,
    each step checking (60) (the rearranged (61)) at every piece's right end, its mirror form at every
    left end, and (70) across every gap, with ``L`` and ``R`` summed term by term from (4)-(5), so
    ``O(n)`` per location and ``O(n^2)`` per step.  Lemma 7's bound is stated for "a span"; the
    condition must hold for every location in it, and ``(1 - 2L)/N`` increases along a piece (for a fixed
    ``σ``), so the binding location is its right end (left end for the mirror form).  (70) is evaluated as the
    equivalent ``log N(q2) - log N(q1) + w/σ <= wε/Δ``, which does not overflow.

    ``method="fast"`` uses what the conditions reduce to: the guarantee holds for all pairs and all
    outputs iff at every end ``e`` of a piece ``σ >= (2Δ/ε) p_e(σ)``, where ``p_e`` is the probability
    that the normalized law centred at ``e`` falls on the piece's side of ``e`` (``p = 1/2`` at an
    infinite end).  This is (60) written with feasible masses: ``(1 - 2L)/N = 2 p``.  All ``p_e`` come
    from running log-sums in ``O(n)``, and a bracketing root finder on ``[Δ/ε, 2Δ/ε]`` needs about ten
    evaluations: ``O(n log(1/tol))`` in all.  Two consequences, both tested: (i) Lemma 9's gap bounds
    never bind: ``log N(q)`` is convex in ``q`` across a gap, so its slope there lies between its slopes
    at the gap's two ends, where (60) and its mirror bound it, and (70) (the slope integrated over the
    gap) follows;
    (ii) if the feasible set is bounded on either side (any infinite constraint), the end next to it has
    ``p = 1`` and the answer is exactly ``2Δ/ε``, not an approximation (Table 2's "≤" is attained).

    Parameters
    ----------
    epsilon, sensitivity : float
    allowed : sequence of (lo, hi)
        The feasible pieces (see :class:`Normalized`).
    method : {"fast", "paper"}
    digits : int, optional
        Paper method only: absolute precision ``10^-digits``; default about 13 significant digits.

    >>> croft_uniform_scale(1.0, 1.0, [(0.0, np.inf)])
    2.0
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    lo, hi = _allowed(allowed)
    if method == "fast":
        return float(_uniform_fast(epsilon, sensitivity, lo, hi))
    if method == "paper":
        if digits is not None and (not isinstance(digits, (int, np.integer)) or isinstance(digits, bool) or digits < 0):
            raise ValueError(f"digits must be an int >= 0, got {digits!r}")
        return float(_uniform_paper(epsilon, sensitivity, lo, hi, digits))
    raise ValueError(f"method must be 'fast' or 'paper', got {method!r}")


def croft_lower_bounds(epsilon, sensitivity, allowed):
    """Each of Theorem 2's lower bounds on a uniform ``σ``, for the book's tables.

    Returns a list of ``(lemma, form, location, bound)``: Lemma 7 at every finite piece end
    (``form`` ``"regular"`` at right ends, ``"symmetric"`` at left ends; an infinite end gives ``Δ/ε``),
    Lemma 9 for every gap (``"gap"``, location = the gap's left end).  Each bound is the root of its
    inequality taken as an equality, found on ``(0, 2Δ/ε]``; ``0.0`` if the inequality always holds.
    Their maximum is :func:`croft_uniform_scale`.
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    lo, hi = _allowed(allowed)
    unit = sensitivity / epsilon
    top = 2.0 * unit
    c_left, c_right = _forbidden(lo, hi)

    def end_excess(q, form):
        def f(sigma):
            left, right = _paper_sums(q, sigma, c_left, c_right)
            near = left if form == "regular" else right
            return sigma - unit * (1 - 2 * near) / (1 - (left + right))
        return f

    def gap_excess(q2, q1):
        width = q1 - q2

        def f(sigma):
            l1, r1 = _paper_sums(q1, sigma, c_left, c_right)
            l2, r2 = _paper_sums(q2, sigma, c_left, c_right)
            return width * epsilon / sensitivity - width / sigma - (math.log(1 - (l2 + r2)) - math.log(1 - (l1 + r1)))
        return f

    def solve(f):
        tiny = 1e-6 * unit
        if f(tiny) >= 0:
            return 0.0
        if f(top) <= 0:  # binding at the top: an end next to an infinite constraint needs exactly 2Δ/ε
            return top
        return float(optimize.brentq(f, tiny, top, xtol=1e-14 * unit))

    rows = []
    for j in range(len(lo)):
        for q, form in ((hi[j], "regular"), (lo[j], "symmetric")):
            bound = unit if math.isinf(q) else solve(end_excess(q, form))
            rows.append((7, form, float(q), bound))
    for j in range(len(lo) - 1):
        rows.append((9, "gap", float(hi[j]), solve(gap_excess(hi[j], lo[j + 1]))))
    return rows


def croft_table2(epsilon=1.0, sensitivity=1.0):
    """Croft, Sack & Shi's Table 2 (bounds on ``σ`` per constraint configuration), recomputed by dpbook.

    Returns a list of dicts with ``configuration``, ``scale`` (the paper's formula or section),
    ``printed`` (the bound as printed, in units of ``Δ/ε``) and ``computed`` (dpbook's value in units of
    ``Δ/ε``): ``σ1 = 1.585954`` (printed 1.586); ``σ2 < σ1`` (dpbook: ``sup`` over distances > 0 is
    ``σ1``, not attained, ``inf`` is 1); finite constraints ``σ < 2`` (dpbook: approached by two
    half-lines far apart, shown for a gap of ``40Δ/ε``); arbitrary constraints ``σ <= 2`` (dpbook:
    exactly 2 whenever a constraint is infinite, here ``[0, 1] ∪ [3, inf)``).
    """
    epsilon, sensitivity = _eps_delta(epsilon, sensitivity)
    unit = sensitivity / epsilon
    s1 = croft_boundary_scale(epsilon, sensitivity) / unit
    near = float(croft_scale(1e-9 * unit, epsilon, sensitivity)) / unit
    finite = croft_uniform_scale(epsilon, sensitivity, [(-np.inf, 0.0), (40.0 * unit, np.inf)]) / unit
    arbitrary = croft_uniform_scale(epsilon, sensitivity, [(0.0, unit), (3.0 * unit, np.inf)]) / unit
    return [
        {"configuration": "single infinite constraint", "scale": "sigma_1: formula (32)",
         "printed": "sigma_1 = 1.586", "computed": s1},
        {"configuration": "single infinite constraint", "scale": "sigma_2: formula (33)",
         "printed": "sigma_2 < 1.586", "computed": near},
        {"configuration": "arbitrary finite constraints", "scale": "Section 4.2",
         "printed": "sigma < 2", "computed": finite},
        {"configuration": "arbitrary constraints", "scale": "Section 4.2",
         "printed": "sigma <= 2", "computed": arbitrary},
    ]
