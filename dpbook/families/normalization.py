"""Truncation and normalization of the Laplace law to a union of intervals (Croft, Sack & Shi).

Croft, Sack & Shi release a draw from the Laplace density centred at the true value ``q``, cut to the
*feasible* set (the complement of their *constraints*) and divided by the Laplace mass of that set,
their normalization factor (4)-(6).  dpbook describes the feasible set directly as a union of
disjoint closed intervals ``allowed = [(a1, b1), (a2, b2), ...]``.  The law is the mixture, with
weights proportional to the Laplace masses ``N_k(q)`` of the pieces, of the single-interval
truncated laws of ``dpbook.families.truncation``; every formula below is built from those.

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
from scipy import special

from .._kernels import validation as check
from .._kernels.arrays import _compact, _float
from .._kernels.croft import _allowed, _croft_scale, _eps_delta
from .._kernels.inversion import _normalized_root
from .._kernels.laplace import (
    RESOLUTION,
    _laplace_logpdf,
    _piece_log_mass,
    _piece_quantile_in_place,
    _piece_table,
    _quantile_in_place,
    _truncated_moments_units,
)
from .._kernels.sampling import _uniform_blocks
from .._kernels.strips import _laplace_strip_draws
from ..audit.description import PrivacyDescription, corner_pairs, union_description
from ..mechanism import Mechanism

__all__ = ["CroftLaplace", "Normalized"]


#: up to this many piece edges a draw's piece is found by comparing with all of them, faster than bisection
_FEW_PIECES = 16


#: draws per block when sampling a union for one ``q`` (temporaries of 256 kB)
_BLOCK = 2**15


# --------------------------------------------------------------------------------------------------
# the feasible set


def _pieces(lo, hi, ndim):
    """Reshape the piece ends to broadcast against a ``ndim``-dimensional ``q`` (pieces on axis 0)."""
    shape = (len(lo),) + (1,) * ndim
    return lo.reshape(shape), hi.reshape(shape)


def _log_masses(q, scale, lo, hi):
    """``log N_k(q)``: the Laplace(q, scale) mass of each piece, on a leading axis."""
    a, b = _pieces(lo, hi, np.ndim(q))
    return _piece_log_mass(q, scale, a, b)


def _hull(q, lo, hi):
    """``r = clip(q)`` into the hull of the feasible set.  For every feasible ``x``, ``|x - q| = |x - r| + |r - q|``,
    so the normalized law at ``q`` IS the law at ``r`` (as for one interval, ``dpbook.families.truncation``); only
    the mass kept, ``e^{-|q - r|/b} N(r)``, depends on how far outside ``q`` is.  Every shape computation
    is made at ``r``: far outside, nothing then depends on the difference of two huge distances."""
    return np.clip(q, lo[0], hi[-1])


def _log_normalizer(q, scale, lo, hi):
    r = _hull(q, lo, hi)
    with np.errstate(over="ignore"):
        far = np.abs(q - r) / scale
    return special.logsumexp(_log_masses(r, scale, lo, hi), axis=0) - far


def _mixture(q, scale, lo, hi):
    """Weights, nearest points ``c``, mean offsets ``E - c`` and variances of the pieces' truncated laws."""
    a, b = _pieces(lo, hi, np.ndim(q))
    r = _hull(q, lo, hi)
    log_m = _log_masses(r, scale, lo, hi)
    w = np.exp(log_m - special.logsumexp(log_m, axis=0))
    c, offset, length, spread = _truncated_moments_units(r, scale, a, b)
    return w, c, offset, (length, spread)


def _bias(q, scale, lo, hi):
    w, c, offset, _ = _mixture(q, scale, lo, hi)
    return np.sum(w * ((c - q) + offset), axis=0)


def _mean(q, scale, lo, hi):
    """The mixture's mean from the pieces' means, never as ``q + bias`` (which cancels far outside)."""
    w, c, offset, _ = _mixture(q, scale, lo, hi)
    return np.clip(np.sum(w * (c + offset), axis=0), lo[0], hi[-1])


def _variance(q, scale, lo, hi):
    """Law of total variance: within-piece variances plus the spread of the piece means about the mean."""
    w, c, offset, var_k = _mixture(q, scale, lo, hi)
    r = _hull(q, lo, hi)
    mean_k = (
        (c - r) + offset
    )  # about r: pieces a few scales apart far from 0 keep their separation's digits
    mean = np.sum(w * mean_k, axis=0)
    with np.errstate(over="ignore"):
        length, spread = (
            var_k  # w_k Var_k as (sqrt(w_k) ℓ_k)^2 times the unit variance: no inf * 0
        )
        within = (np.sqrt(w) * length) ** 2 * spread
        return np.sum(within, axis=0) + np.sum(
            (np.sqrt(w) * (mean_k - mean)) ** 2, axis=0
        )


def _mse(q, scale, lo, hi):
    with np.errstate(over="ignore"):
        return _variance(q, scale, lo, hi) + _bias(q, scale, lo, hi) ** 2


def _logcdf(x, q, scale, lo, hi):
    """``log P(M(q) <= x)``: the pieces' log-masses below ``x`` (:func:`_piece_log_mass`) over the normalizer."""
    x, q = np.broadcast_arrays(x, _hull(q, lo, hi))
    a, b = _pieces(lo, hi, x.ndim)
    top = np.clip(x, a, b)
    empty = top <= a
    top = np.where(empty, b, top)
    log_part = np.where(empty, -np.inf, _piece_log_mass(q, scale, a, top))
    with np.errstate(divide="ignore"):
        out = special.logsumexp(log_part, axis=0) - _log_normalizer(q, scale, lo, hi)
    return np.where(x >= hi[-1], 0.0, np.minimum(out, 0.0))


def _cdf(x, q, scale, lo, hi):
    return np.exp(_logcdf(x, q, scale, lo, hi))


def _inside(x, lo, hi):
    k = np.searchsorted(lo, x, side="right") - 1
    return (k >= 0) & (x <= hi[np.maximum(k, 0)])


def _logpdf(x, q, scale, lo, hi):
    x, q = np.broadcast_arrays(x, _hull(q, lo, hi))
    inside = _inside(x, lo, hi)
    xs = np.where(inside, x, q)
    return np.where(
        inside,
        _laplace_logpdf(xs, q, scale) - _log_normalizer(q, scale, lo, hi),
        -np.inf,
    )


def _ppf(p, q, scale, lo, hi, floor):
    """Quantiles at the uniforms ``p`` (overwritten: they serve as scratch); ``q``, ``scale`` broadcast to ``p``.

    Each ``p`` picks the piece whose slot of the cumulative weights holds it, is rescaled to a uniform
    inside that slot and goes through one truncated-quantile pass (``dpbook._kernels.laplace._quantile_in_place``)
    with its own piece's ``c``, ``lower`` and ``upper``.  For one ``q`` the pieces' windows are looked
    up per point (:func:`_quantile_map`), block by block so that the temporaries stay small.
    """
    if len(lo) > 1 and np.size(q) == 1 and np.size(scale) == 1:
        quantiles, blocks = _quantile_map(q, scale, lo, hi, floor)
        flat = p.reshape(-1)
        step = _BLOCK if blocks else max(flat.size, 1)
        for i in range(0, flat.size, step):
            flat[i : i + step] = quantiles(flat[i : i + step])
        return flat.reshape(p.shape)
    q = _hull(q, lo, hi)
    if len(lo) == 1:
        with np.errstate(divide="ignore"):
            return _quantile_in_place(
                p, np.clip(q, lo[0], hi[0]), scale, lo[0], hi[0], floor=floor
            )
    q, scale = np.broadcast_arrays(
        np.asarray(q, dtype=float), np.asarray(scale, dtype=float)
    )
    lead = (1,) * (p.ndim - q.ndim)
    q, scale = q.reshape(lead + q.shape), scale.reshape(lead + scale.shape)
    cum, start, width, c = _slots(q, scale, lo, hi)
    k = np.sum(cum[:-1] <= p, axis=0)
    pick = lambda v: np.take_along_axis(
        np.broadcast_to(v, cum.shape[:1] + p.shape), k[None], axis=0
    )[0]
    p -= pick(start)
    p /= pick(width)
    with np.errstate(divide="ignore"):
        return _quantile_in_place(
            p, pick(c), scale, np.take(lo, k), np.take(hi, k), floor=floor
        )


def _slots(q, scale, lo, hi):
    """The pieces' slots of the uniform, ``[start, cum)`` of width ``width`` (``1`` where below ``1e-300``: a
    slot this narrow is (almost) never hit and ``1/width`` would overflow), and their nearest points ``c``."""
    log_m = _log_masses(q, scale, lo, hi)
    cum = np.cumsum(np.exp(log_m - log_m.max(axis=0)), axis=0)
    cum /= cum[-1]
    start = np.concatenate([np.zeros_like(cum[:1]), cum[:-1]])
    width = cum - start
    width[width < 1e-300] = 1.0
    a, b = _pieces(lo, hi, np.ndim(q))
    return cum, start, width, np.clip(q, a, b)


def _quantile_map(q, scale, lo, hi, floor):
    """The quantile function at one true value ``q`` as a map of 1-D uniforms (overwritten) to quantiles, its piece
    table computed once, and whether it is to be applied block by block (a mixture: :func:`_ppf` to blocks of its
    points, the sampler to each block of fresh uniforms) or to all points at once (one interval, whose
    window costs more per call than the few passes save in the cache)."""
    q = float(_hull(np.asarray(q, dtype=float).reshape(()), lo, hi))
    scale = float(np.asarray(scale).reshape(()))
    if len(lo) == 1:
        c, lower, upper = np.clip(q, lo[0], hi[0]), lo[0], hi[0]
    else:
        cum, start, width, c = (v.ravel() for v in _slots(q, scale, lo, hi))
        live = np.flatnonzero(cum - start > 0)
        if len(live) != 1:
            edges = cum[:-1]
            table = _piece_table(c, scale, lo, hi, start, width)

            def quantiles(u):
                with np.errstate(divide="ignore"):
                    k = _piece_index(edges, u)
                    return _piece_quantile_in_place(u, k, table, scale, floor)

            return quantiles, True
        # every other piece's mass is 0 in the doubles: one interval
        c, lower, upper = c[live[0]], lo[live[0]], hi[live[0]]

    def quantiles(u):
        with np.errstate(divide="ignore"):
            return _quantile_in_place(u, c, scale, lower, upper, floor=floor)

    return quantiles, False


def _piece_index(edges, p):
    """The number of ``edges`` (sorted, one fewer than the pieces) at or below each ``p``: its piece."""
    if len(edges) <= _FEW_PIECES:
        k = (p >= edges[0]).astype(np.intp)
        for edge in edges[1:]:
            k += p >= edge
        return k
    return np.searchsorted(edges, p, side="right")


def _ends(p, x, lo, hi):
    return np.where(p == 0, lo[0], np.where(p == 1, hi[-1], x))


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

    def _bias(self, q):
        return _bias(q, self._scale(q), self._lo, self._hi)

    def _mean(self, q):
        return _mean(q, self._scale(q), self._lo, self._hi)

    def _mse(self, q):
        return _mse(q, self._scale(q), self._lo, self._hi)

    def _variance(self, q):
        return _variance(q, self._scale(q), self._lo, self._hi)

    def _cdf(self, x, q):
        return _cdf(x, q, self._scale(q), self._lo, self._hi)

    def _logpdf(self, x, q):
        return _logpdf(x, q, self._scale(q), self._lo, self._hi)

    def _sf(self, x, q):
        """``P(M(q) > x)``: the cdf of the reflected law (true value ``-q``, pieces reflected) at ``-x``."""
        return _cdf(-x, -q, self._scale(q), -self._hi[::-1], -self._lo[::-1])

    def _logcdf(self, x, q):
        """``log P(M(q) <= x)`` in log space (finite wherever the probability is, however small)."""
        return _logcdf(x, q, self._scale(q), self._lo, self._hi)

    def _logsf(self, x, q):
        """``log P(M(q) > x)``: the reflected law's :meth:`logcdf`."""
        return _logcdf(-x, -q, self._scale(q), -self._hi[::-1], -self._lo[::-1])

    def _ppf(self, p, q):
        """The quantile function of M(q) at ``p`` in ``[0, 1]``: the piece holding ``p``, then its truncated
        quantile."""
        out = np.array(np.broadcast_to(p, np.broadcast(p, q).shape), dtype=float)
        return _ends(
            p,
            _ppf(out, q, self._scale(q), self._lo, self._hi, floor=0.0),
            self._lo,
            self._hi,
        )

    def _isf(self, p, q):
        """``ppf(1 - p, q)``: minus the quantile of the reflected law at ``p`` (small ``p`` as ``ppf``'s: to about
        ``1e-16`` on an unbounded side, infinite below)."""
        lo, hi = -self._hi[::-1], -self._lo[::-1]
        out = np.array(np.broadcast_to(p, np.broadcast(p, q).shape), dtype=float)
        return -_ends(p, _ppf(out, -q, self._scale(q), lo, hi, floor=0.0), lo, hi)

    def _kinks(self, q):
        return [q, *self._lo[np.isfinite(self._lo)], *self._hi[np.isfinite(self._hi)]]

    def _sample(self, q, shape, rng):
        """For one true value, a union of two pieces or more and ``2^18`` draws or more, exact rejection from the
        strips of :mod:`dpbook._kernels.strips` (no logarithm, no look-up of a piece's numbers on 99% of the draws);
        else the inverse cdf of one uniform per draw (:func:`_ppf`): for one true value the piece table is computed
        once and, for a mixture, the uniforms are drawn and mapped block by block (``dpbook._kernels.sampling``).
        (One interval stays with the inverse cdf: its numbers are scalars, and it measured 1.4x numpy's Laplace
        sampler where the strips, which spend more on an open end's tail, measured 1.0-1.3x.)"""
        q = _compact(q) if np.ndim(q) else q
        scale = self._scale(q)
        if np.size(q) == 1 and len(self._lo) > 1:  # many draws of a mixture: the strips
            at = float(
                _hull(np.asarray(q, dtype=float).reshape(()), self._lo, self._hi)
            )
            x = _laplace_strip_draws(
                rng,
                math.prod(shape),
                at,
                float(np.reshape(scale, ())),
                self._lo,
                self._hi,
            )
            if x is not None:
                return x.reshape(shape)
        if np.size(q) == 1:
            quantiles, blocks = _quantile_map(q, scale, self._lo, self._hi, RESOLUTION)
            if blocks:
                return _uniform_blocks(rng, shape, q, lambda u, _: quantiles(u))
            u = np.asarray(rng.random(shape))
            return quantiles(u.reshape(-1)).reshape(shape)
        return _ppf(rng.random(shape), q, scale, self._lo, self._hi, floor=RESOLUTION)


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

    Examples
    --------
    >>> round(Normalized(1.0, [(0.0, np.inf)]).mean(0.0), 12)
    1.0
    """

    def stochastic_order(self):
        return (
            True,
            "the Laplace location family conditioned on a fixed set keeps its monotone likelihood ratio",
        )

    def score_bound(self):
        return 2.0, self.scale

    def __init__(self, scale, allowed):
        self.scale = check.positive("scale", scale)
        self._lo, self._hi = _allowed(allowed)
        self.allowed = tuple((float(a), float(b)) for a, b in zip(self._lo, self._hi))

    def _scale(self, q):
        return self.scale

    def _quantile_in_q(self, x, p, v, upper):
        """The root in ``q`` of the transform, a quadratic in ``e^{q/b}`` between consecutive piece ends and
        the release, with a width certified at run time where it can be (a
        :class:`dpbook._kernels.inversion.Root`, :func:`dpbook._kernels.inversion._normalized_root`; NaN
        elsewhere: the intervals then search from the root on the law)."""
        return _normalized_root(x, p, upper, self.scale, self._lo, self._hi)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace kernel of scale ``b`` on the union of the pieces, normalized by ``N(q)``.

        With one piece this is :class:`dpbook.Truncated` and its worst pair is a corner (see
        :meth:`dpbook.Truncated.privacy_description`).  With several no worst pair is claimed: the
        auditor's certified search runs along the edge ``(u, u ± Δ)``, with the curvature bound of
        ``log N`` (``dpbook.audit.description.laplace_mass_curvature``).
        """
        one = len(self._lo) == 1
        return union_description(
            self.scale,
            self._lo,
            self._hi,
            worst_pairs=corner_pairs((self._lo[0], self._hi[0])) if one else None,
        )


# --------------------------------------------------------------------------------------------------
# single infinite constraint: the data-dependent scale (Section 4.1)


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

    def stochastic_order(self):
        return False, (
            "its scale depends on q: the law narrows as q moves away from the boundary, which raises "
            "P_q(M <= x) for x above q while the shift lowers it"
        )

    def __init__(self, epsilon, sensitivity, *, lower=0.0):
        self.epsilon, self.sensitivity = _eps_delta(epsilon, sensitivity)
        self.lower = check.finite("lower", lower)
        self._lo, self._hi = np.array([self.lower]), np.array([np.inf])

    def _scale(self, q):
        return _croft_scale(
            np.maximum(q - self.lower, 0.0), self.epsilon, self.sensitivity
        )

    def scale_at(self, q):
        """The scale used at true value ``q``: :func:`croft_scale` of ``max(q - lower, 0)``."""
        q = self._q(q)
        return _float(self._scale(q))

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace kernel of the data-dependent scale ``croft_scale(q - lower)`` on
        ``[lower, inf)``, normalized.  The scale varies with ``q``: two true values with different scales
        have an infinite loss in the right tail, and with a window the auditor searches the band.
        """
        lo = self.lower
        return PrivacyDescription(
            scale=self._scale,
            uniform=False,
            pieces=((lo, np.inf),),
            log_norm=self.log_normalizer,
            enclosure=self._enclosure,
            # Croft's (25) as an equality: p(lower; q) = e^{-ε max(q - lower, 0)/Δ}/σ1
            linear_outputs=((lo, self.epsilon / self.sensitivity, lo),),
            landmarks=(lo, lo + self.sensitivity / self.epsilon),
            length=float(self._scale(np.array(lo))),
        )

    def _enclosure(self, x, y):
        """Centre, scale and log-normalizer over true values in ``[x, y]``: the scale does not increase with
        ``q`` (:func:`croft_scale`) and ``N(q)`` does not decrease (``(q - lower)/σ(q)`` increases), so the
        bounds are their values at the ends."""
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        sx, sy = self._scale(x), self._scale(y)
        return (
            x,
            y,
            sy,
            sx,
            _log_normalizer(x, sx, self._lo, self._hi),
            _log_normalizer(y, sy, self._lo, self._hi),
        )
