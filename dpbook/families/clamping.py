"""Boundary inflated truncation (BIT, clamping): release ``clip(q + L_b, lower, upper)``.

Liu (2019), Def. 2(b), bias eq. (7); with ``lower = 0`` and ``upper = inf`` it is the ramp
post-processing of McGlinchey & Mason, eqs. (4), (5).  Every out-of-range Laplace draw is moved
to the nearest bound, so the law has a point mass at each finite bound and the Laplace density
in between.

The formulas hold for every real ``q``, also outside ``[lower, upper]``.  They are written around
the point ``c = clip(q, lower, upper)`` of the interval nearest to ``q``: with ``A' = (c - lower)/b``,
``B' = (upper - c)/b`` and the distance ``d = |q - c|/b`` (zero inside), the release satisfies

* ``E[M(q)] - c = (b/2) e^{-d} (e^{-A'} - e^{-B'})``,
* ``E[(M(q) - c)^2] = b^2 e^{-d} (G(A') + G(B'))`` with ``G(z) = 1 - (1 + z) e^{-z}``,

which for ``d = 0`` are Liu's (7) and the MSE of formulas.md, and for ``q`` outside follow from
``E[(M - c)^2] = int 2y P(M - c > y) dy`` over the part of the interval beyond ``c``.
Only non-positive arguments are ever exponentiated.  The sampler clamps an inverse-CDF Laplace
draw (one uniform and one logarithm per draw).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._kernels.arrays import _bound_in_place, _compact
from .._kernels.inversion import _both_ends, _laplace_root
from .._kernels.laplace import (
    _clip_parts,
    _g,
    _laplace_cdf,
    _laplace_isf,
    _laplace_logcdf,
    _laplace_logpdf,
    _laplace_logsf,
    _laplace_ppf,
    _laplace_sf,
    _offsets_in_place,
    _short,
    _times_exp,
)
from .._kernels.sampling import _uniform_blocks
from ..audit.description import (
    corner_pairs,
    laplace_cdf_curvature,
    laplace_description,
    laplace_log_cdf_ratio,
)
from ..mechanism import IntervalMechanism

__all__ = ["BIT"]


def _exp_difference(a, b):
    """``e^{-a} - e^{-b}`` for ``a, b >= 0`` (possibly infinite), accurate also when ``a ~ b``."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    finite = np.isfinite(hi)
    gap = np.subtract(
        hi, lo, out=np.full(np.broadcast(lo, hi).shape, np.inf), where=finite
    )
    sign = np.where(a < b, 1.0, np.where(a > b, -1.0, 0.0))
    return sign * np.exp(-lo) * -np.expm1(-gap)


def _bit_moments(q, scale, lower, upper):
    """``(c, E[M] - c, Var M)`` for validated arguments (see the module docstring).

    ``Var M = b^2 e^{-d} (G(A') + G(B') - e^{-d} D^2/4)`` with ``D = e^{-A'} - e^{-B'}``; the factors
    ``b e^{-d}`` and ``(b e^{-d/2})^2`` are formed without underflowing ``e^{-d}`` alone.  For an interval
    shorter than ``b`` on both sides of ``c`` the same is written in units of ``ℓ``
    (``dpbook._kernels.laplace._short``),
    with ``G(z) = z^2 g_2(z)`` and ``D = (B' - A') e^{-min(A', B')} (1 - e^{-|B' - A'|})/|B' - A'|``, so that
    nothing underflows when ``A'``, ``B'`` do.
    """
    c, a, b, d = _clip_parts(q, scale, lower, upper)
    short, unit, alpha, beta = _short(c, a, b, lower, upper)
    diff = np.where(short, 0.0, _exp_difference(a, b))
    second = special.gammainc(2, a) + special.gammainc(2, b)
    with np.errstate(invalid="ignore"):
        gap = np.where(short, np.abs(b - a), 0.0)
    near_diff = (beta - alpha) * np.exp(-np.minimum(a, b)) * special.exprel(-gap)
    diff = np.where(short, near_diff, diff)
    second = np.where(short, alpha**2 * _g(2, a) + beta**2 * _g(2, b), second)
    length = np.where(short, unit, scale)
    offset = 0.5 * _times_exp(length, d) * diff
    spread = np.maximum(second - np.exp(-d) * diff**2 / 4, 0.0)
    with np.errstate(over="ignore"):
        half = _times_exp(length, d / 2)
        variance = half * (half * spread)
    return c, offset, variance


class BIT(IntervalMechanism):
    """Boundary inflated truncation ``clip(q + L_b, lower, upper)`` (Liu Definition 2(b); McGlinchey–Mason (4)).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    lower, upper : float, keyword-only
        The bounds, ``lower < upper``; either may be infinite.

    Examples
    --------
    >>> BIT(scale=1.0).max_abs_bias()
    0.5
    >>> law = BIT(1.0, lower=0.0, upper=1.0).at(0.25)
    >>> round(law.pmf(0.0), 6), round(law.pmf(1.0), 6)  # e^{-A/b}/2 and e^{-B/b}/2
    (0.3894, 0.236183)
    """

    bias_monotone = True

    def stochastic_order(self):
        return True, "a nondecreasing map of the Laplace location family"

    def score_bound(self):
        return 1.0, self.scale

    def _mean(self, q):
        """``E[clip(q + L_b, lower, upper)]``: Liu (7) plus ``q``; McGlinchey–Mason (5) for ``[0, inf)``."""
        c, offset, _ = _bit_moments(q, *self._params())
        return c + offset

    def _bias(self, q):
        """``(b/2)(e^{-A/b} - e^{-B/b})`` inside the bounds: Liu (2019) eq. (7); for ``[0, inf)`` McGlinchey–Mason's
        ramp bias ``(b/2) e^{-q/b}``, eq. (5).  Outside the bounds it adds the distance to the nearest bound."""
        c, offset, _ = _bit_moments(q, *self._params())
        return (c - q) + offset

    def _variance(self, q):
        """``Var M(q)``, computed about ``clip(q)`` so it stays exact far outside; with the bias, the MSE inside
        the bounds is ``2b^2 - b(A+b)e^{-A/b} - b(B+b)e^{-B/b}`` (Liu, App. B)."""
        return _bit_moments(q, *self._params())[2]

    def _atoms(self, q):
        """The point masses ``(lower, P(M(q) = lower))`` and ``(upper, P(M(q) = upper))`` at the finite bounds.

        They are the Laplace tails beyond each bound (Liu Def. 2(b)): ``e^{-A/b}/2`` and ``e^{-B/b}/2``
        inside the interval; outside it the mass on the near bound exceeds 1/2.  ``pmf(lower, q)`` and
        ``pmf(upper, q)`` give them vectorized over ``q`` (0 at an infinite bound).
        """
        lo, hi = (
            _laplace_cdf(self.lower, q, self.scale),
            _laplace_sf(self.upper, q, self.scale),
        )
        return [
            (x, p) for x, p in ((self.lower, lo), (self.upper, hi)) if np.isfinite(x)
        ]

    def _cdf(self, x, q):
        inside = _laplace_cdf(np.clip(x, self.lower, self.upper), q, self.scale)
        return np.where(x < self.lower, 0.0, np.where(x >= self.upper, 1.0, inside))

    def _sf(self, x, q):
        inside = _laplace_sf(np.clip(x, self.lower, self.upper), q, self.scale)
        return np.where(x < self.lower, 1.0, np.where(x >= self.upper, 0.0, inside))

    def _logcdf(self, x, q):
        """``log P(M(q) <= x)``: the Laplace log-cdf on ``[lower, upper)`` (the atom at ``lower`` included),
        ``0`` from ``upper`` on, ``-inf`` below ``lower``; finite also where the probability underflows."""
        inside = _laplace_logcdf(np.clip(x, self.lower, self.upper), q, self.scale)
        return np.where(x < self.lower, -np.inf, np.where(x >= self.upper, 0.0, inside))

    def _logsf(self, x, q):
        """``log P(M(q) > x)``: the Laplace log-survival function on ``[lower, upper)`` (at ``lower`` it is
        ``log P(M > lower)``, the atom excluded), ``0`` below ``lower``, ``-inf`` from ``upper`` on."""
        inside = _laplace_logsf(np.clip(x, self.lower, self.upper), q, self.scale)
        return np.where(x < self.lower, 0.0, np.where(x >= self.upper, -np.inf, inside))

    def _ppf(self, p, q):
        """The Laplace quantile clipped to ``[lower, upper]``: exact, and equal to a bound on its whole jump."""
        x = np.clip(_laplace_ppf(p, q, self.scale), self.lower, self.upper)
        return np.where(p == 0, self.lower, x)

    def _isf(self, p, q):
        """``ppf(1 - p, q)`` from the Laplace survival side, accurate for small ``p``."""
        x = np.clip(_laplace_isf(p, q, self.scale), self.lower, self.upper)
        return np.where(p == 1, self.lower, x)

    def _logpdf(self, x, q):
        """Log-density of the continuous part: the Laplace density on ``[lower, upper]``, ``-inf`` outside."""
        inside = (x >= self.lower) & (x <= self.upper)
        return np.where(
            inside,
            _laplace_logpdf(np.clip(x, self.lower, self.upper), q, self.scale),
            -np.inf,
        )

    def _quantile_in_q(self, x, p, v, upper):
        """The roots in ``q`` of the transform (Chapter 17's closed form): the Laplace quantile at ``p``
        between the bounds; at a bound the atom's tail ``v e^{-(q - lower)/b}/2`` (resp. at ``upper``)
        solved the same way, with the proved width of the zone where the computed transform may cross
        ``p`` (:func:`dpbook._kernels.inversion._laplace_root`)."""
        return _laplace_root(x, p, v, upper, self.scale, self.lower, self.upper)

    def _quantiles_in_q(self, x, p, v_top, v_bottom):
        """Both ends' roots, the positions of the releases on the bounds found once
        (:func:`dpbook._kernels.inversion._both_ends`)."""
        return _both_ends(
            _laplace_root, x, p, v_top, v_bottom, (self.scale,), self.lower, self.upper
        )

    def max_abs_bias(self):
        """``sup |bias(q)|`` over ``q`` in ``[lower, upper]`` (McGlinchey–Mason def. (3)).

        Inside the bounds ``d bias/dq = -(e^{-A/b} + e^{-B/b})/2 < 0``: the bias decreases, so the
        sup is at an end, and the reflection ``x -> lower + upper - x`` makes both ends equal:
        ``(b/2)(1 - e^{-(upper - lower)/b})``, i.e. ``b/2`` for a one-sided bound (the ramp), ``0``
        for the plain Laplace mechanism.
        """
        if np.isinf(self.lower) and np.isinf(self.upper):
            return 0.0
        return float(
            -0.5 * self.scale * np.expm1(-(self.upper - self.lower) / self.scale)
        )

    def _sample(self, q, shape, rng):
        """``clip(q + L_b, lower, upper)``, ``L_b`` by inverse cdf from one uniform per draw, block by block
        (``dpbook._kernels.sampling``)."""
        b, lower, upper = self.scale, self.lower, self.upper

        def draw(t, q):
            t *= 2.0
            t -= 1.0
            x = _offsets_in_place(t, b, out=t)
            x += q
            return _bound_in_place(x, lower, upper)

        return _uniform_blocks(rng, shape, _compact(q), draw)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace density on ``[lower, upper]`` plus atoms at the finite bounds.

        Worst pairs: the loss of a pair is ``|q1 - q2|/b`` wherever the two lie.  It is at most that
        (a post-processing of the Laplace mechanism), and the density ratio attains it at the bound on the
        far side of both true values: at ``lower`` when ``lower <= min(q1, q2)`` and ``q1 < q2``, at
        ``upper`` when ``q1 > q2`` (an infinite bound: the ratio is constant beyond both centres), and one
        of the two orders always qualifies.  So a corner pair of the domain is a worst pair.
        """
        b, lo, hi = self.scale, self.lower, self.upper
        atoms = []
        if np.isfinite(lo):
            atoms.append(
                (
                    lo,
                    lambda q: _laplace_logcdf(lo, q, b),
                    lambda q1, q2: laplace_log_cdf_ratio(lo, q1, q2, b),
                )
            )
        if np.isfinite(hi):
            atoms.append(
                (
                    hi,
                    lambda q: _laplace_logsf(hi, q, b),
                    lambda q1, q2: laplace_log_cdf_ratio(hi, q1, q2, b, upper=True),
                )
            )
        return laplace_description(
            b,
            ((lo, hi),),
            atoms=tuple(atoms),
            landmarks=(lo, hi),
            worst_pairs=corner_pairs(),
            curvature=laplace_cdf_curvature(b, (lo,), (hi,)),
        )
