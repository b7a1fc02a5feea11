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

from . import _validation as check
from .laplace import _draw_offsets, laplace_cdf, laplace_logpdf, laplace_sf
from .mechanism import IntervalMechanism, _float
from .truncation import _args, _clip_parts

__all__ = ["BIT", "bit_bias", "bit_mean", "bit_variance", "bit_mse", "bit_point_masses"]


def _exp_difference(a, b):
    """``e^{-a} - e^{-b}`` for ``a, b >= 0`` (possibly infinite), accurate also when ``a ~ b``."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    finite = np.isfinite(hi)
    gap = np.subtract(hi, lo, out=np.full(np.broadcast(lo, hi).shape, np.inf), where=finite)
    sign = np.where(a < b, 1.0, np.where(a > b, -1.0, 0.0))
    return sign * np.exp(-lo) * -np.expm1(-gap)


def _bit_moments(q, scale, lower, upper):
    """``(c, E[M] - c, E[(M - c)^2])`` for validated arguments (see the module docstring)."""
    c, a, b, d = _clip_parts(q, scale, lower, upper)
    shrink = np.exp(-d)
    offset = 0.5 * scale * shrink * _exp_difference(a, b)
    second = scale**2 * shrink * (special.gammainc(2, a) + special.gammainc(2, b))
    return c, offset, second


def bit_point_masses(q, scale, lower=0.0, upper=np.inf):
    """``(P(M(q) = lower), P(M(q) = upper))`` of BIT: the Laplace tails beyond each bound (Liu Def. 2(b)).

    Inside the interval these are ``e^{-A/b}/2`` and ``e^{-B/b}/2``; outside it the mass on the near
    bound exceeds 1/2.  An infinite bound carries no mass.
    """
    q, scale, lower, upper = _args(q, scale, lower, upper)
    return _float(laplace_cdf(lower, q, scale)), _float(laplace_sf(upper, q, scale))


def bit_mean(q, scale, lower=0.0, upper=np.inf):
    """E[clip(q + L_b, lower, upper)]: Liu (7) plus ``q``; McGlinchey–Mason (5) for ``[0, inf)``.

    >>> bit_mean(0.0, 2.0)
    1.0
    """
    q, scale, lower, upper = _args(q, scale, lower, upper)
    c, offset, _ = _bit_moments(q, scale, lower, upper)
    return _float(c + offset)


def bit_bias(q, scale, lower=0.0, upper=np.inf):
    """Bias of BIT, ``(b/2)(e^{-A/b} - e^{-B/b})`` inside the bounds: Liu (2019) eq. (7).

    For ``[0, inf)`` it is McGlinchey–Mason's ramp bias ``(b/2) e^{-q/b}``, eq. (5).  Outside the
    bounds it adds the distance to the nearest bound (see the module docstring).
    """
    q, scale, lower, upper = _args(q, scale, lower, upper)
    c, offset, _ = _bit_moments(q, scale, lower, upper)
    return _float((c - q) + offset)


def bit_variance(q, scale, lower=0.0, upper=np.inf):
    """Var[clip(q + L_b, lower, upper)], computed about ``clip(q)`` so it stays exact far outside."""
    q, scale, lower, upper = _args(q, scale, lower, upper)
    _, offset, second = _bit_moments(q, scale, lower, upper)
    return _float(np.maximum(second - offset**2, 0.0))


def bit_mse(q, scale, lower=0.0, upper=np.inf):
    """E[(M(q) - q)^2]; inside the bounds ``2b^2 - b(A+b)e^{-A/b} - b(B+b)e^{-B/b}`` (Liu, App. B)."""
    return _float(np.asarray(bit_variance(q, scale, lower, upper)) + np.asarray(bit_bias(q, scale, lower, upper)) ** 2)


class BIT(IntervalMechanism):
    """Boundary inflated truncation ``clip(q + L_b, lower, upper)`` (Liu Def. 2(b); McGlinchey–Mason (4)).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    lower, upper : float
        The bounds, ``lower < upper``; either may be infinite.

    >>> BIT(scale=1.0).max_abs_bias()
    0.5
    """

    _bias = staticmethod(bit_bias)
    _mean = staticmethod(bit_mean)
    _variance = staticmethod(bit_variance)
    _mse = staticmethod(bit_mse)

    def point_masses(self, q):
        """``(P(M(q) = lower), P(M(q) = upper))``."""
        return bit_point_masses(q, *self._params())

    def atoms(self, q):
        lo, hi = self.point_masses(q)
        return [(x, p) for x, p in ((self.lower, lo), (self.upper, hi)) if np.isfinite(x)]

    def cdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        inside = laplace_cdf(np.clip(x, self.lower, self.upper), q, self.scale)
        return _float(np.where(x < self.lower, 0.0, np.where(x >= self.upper, 1.0, inside)))

    def logpdf(self, x, q):
        """Log-density of the continuous part: the Laplace density on ``[lower, upper]``, ``-inf`` outside."""
        x, q = check.real_array("x", x), self._q(q)
        inside = (x >= self.lower) & (x <= self.upper)
        return _float(np.where(inside, laplace_logpdf(np.clip(x, self.lower, self.upper), q, self.scale), -np.inf))

    def max_abs_bias(self):
        """sup of |bias(q)| over q in [lower, upper] (McGlinchey–Mason def. (3)).

        Inside the bounds ``d bias/dq = -(e^{-A/b} + e^{-B/b})/2 < 0``: the bias decreases, so the
        sup is at an end, and the reflection ``x -> lower + upper - x`` makes both ends equal:
        ``(b/2)(1 - e^{-(upper - lower)/b})``, i.e. ``b/2`` for a one-sided bound (the ramp), ``0``
        for the plain Laplace mechanism.
        """
        if np.isinf(self.lower) and np.isinf(self.upper):
            return 0.0
        return float(-0.5 * self.scale * np.expm1(-(self.upper - self.lower) / self.scale))

    def _sample(self, q, shape, rng):
        x = _draw_offsets(rng, shape, self.scale)
        x += q
        return np.clip(x, self.lower, self.upper, out=x)
