"""Truncation (restriction): the law of ``q + L_b`` conditioned on landing in ``[lower, upper]``.

Liu (2019), Def. 2(a), mean eq. (6); McGlinchey & Mason, eq. (8) and Corollary 1 for
``[0, inf)``.  This is what rejection sampling produces; here it is sampled by inverse CDF.

Every real ``q`` is allowed.  The conditional density is proportional to ``e^{-|x - q|/b}`` on the
interval; when ``q`` lies outside, ``|x - q| = |x - c| + |c - q|`` for every ``x`` in the interval,
where ``c = clip(q, lower, upper)`` is the bound nearest to ``q``, so the constant factor
``e^{-|c - q|/b}`` cancels: **the truncated law at q equals the truncated law at c** (a truncated
exponential on the interval).  Only the mass kept, ``N(q) = e^{-|q - c|/b} N(c)``, depends on how far
outside ``q`` is.  All formulas below are therefore evaluated at ``c``, with ``A' = (c - lower)/b`` and
``B' = (upper - c)/b``, both ``>= 0``; with ``P_k`` the regularized lower incomplete gamma function,

* ``N(c) = (1 - e^{-A'})/2 + (1 - e^{-B'})/2``,
* ``E[M] - c = b (P_2(B') - P_2(A')) / (2 N(c))``, which is Liu's (6),
* ``E[(M - c)^2] = 2 b^2 (P_3(A') + P_3(B')) / (2 N(c))``, the MSE of formulas.md,

since ``int_0^z x^k e^{-x} dx = k! P_{k+1}(z)``.  Only non-positive arguments are exponentiated.
The sampler inverts the cdf at ``c`` (one uniform, one logarithm per draw), so it is exact and as
fast 5000 scales outside the interval as inside it.
"""

from __future__ import annotations

import numpy as np

from .._kernels.arrays import _compact, _float
from .._kernels.inversion import _truncated_root
from .._kernels.laplace import (
    _clip_parts,
    _half_mass,
    _laplace_logpdf,
    _log_two_n,
    _piece_log_mass,
    _quantile_in_place,
    _truncated_moments_units,
)
from ..audit.description import corner_pairs, union_description
from ..mechanism import IntervalMechanism

__all__ = ["Truncated"]


def _truncated_moments(q, scale, lower, upper):
    """``(c, E[M] - c, Var M)``; see :func:`_truncated_moments_units`."""
    c, offset, length, spread = _truncated_moments_units(q, scale, lower, upper)
    with np.errstate(over="ignore"):
        return c, offset, length * (length * spread)


def _truncated_cdf(x, q, scale, lower=0.0, upper=np.inf):
    """``P(M(q) <= x)`` for the truncated Laplace law (Liu Def. 2(a); McGlinchey–Mason (8))."""
    c, a, b, _ = _clip_parts(q, scale, lower, upper)
    xc = np.clip(x, lower, upper)
    with np.errstate(invalid="ignore", over="ignore"):
        z = (xc - c) / scale
        below = np.exp(np.minimum(z, 0.0)) * -np.expm1(-(xc - lower) / scale)
        above = -np.expm1(-a) - np.expm1(-np.maximum(z, 0.0))
    short = np.maximum(a, b) < 1.0
    core = np.where(z <= 0, below, above) / np.where(short, 1.0, _half_mass(a, b))
    if short.any():  # an interval much shorter than b: the ratio of the two masses, in units of the interval
        top = np.where(xc > lower, xc, upper)
        cp, ap, bp, dp = _clip_parts(c, scale, lower, top)
        part = _log_two_n(cp, ap, bp, scale, lower, top) - dp
        core = np.where(
            short,
            np.exp(np.minimum(part - _log_two_n(c, a, b, scale, lower, upper), 0.0)),
            core,
        )
    return np.where(xc <= lower, 0.0, np.where(xc >= upper, 1.0, np.minimum(core, 1.0)))


def _truncated_ppf(p, q, scale, lower=0.0, upper=np.inf):
    """The quantile function of the truncated Laplace law at ``p`` in ``[0, 1]``.

    With ``c = clip(q)``, ``t = 2N(c) p - (1 - e^{-A'})`` runs over ``(e^{-A'} - 1, 1 - e^{-B'})`` and the
    quantile is ``c + b sign(t) (-log(1 - |t|))``: the Laplace quantile of the window of the cdf that
    the interval covers, one logarithm per point.  ``p`` is resolved to double precision on the
    scale of 1: quantiles at ``min(p, 1 - p) < 1e-16`` of an unbounded side come out as ``+-inf``.
    """
    shape = np.broadcast(p, q).shape
    out = np.array(np.broadcast_to(p, shape), dtype=float)
    with np.errstate(divide="ignore"):
        x = _quantile_in_place(
            out, np.clip(q, lower, upper), scale, lower, upper, floor=0.0
        )
    return np.where(p == 0, lower, np.where(p == 1, upper, x))


class Truncated(IntervalMechanism):
    """Truncation/restriction: ``q + L_b`` conditioned on ``[lower, upper]`` (Liu Definition 2(a);
    McGlinchey–Mason (8)).

    Parameters
    ----------
    scale : float
        Laplace scale ``b > 0``.
    lower, upper : float, keyword-only
        The bounds, ``lower < upper``; either may be infinite.

    Examples
    --------
    >>> Truncated(scale=1.0).max_abs_bias()
    1.0
    >>> law = Truncated(1.0, lower=0.0, upper=1.0).at(0.25)
    >>> round(law.median(), 6), round(law.cdf(law.median()), 12)
    (0.416311, 0.5)
    """

    bias_monotone = True

    def stochastic_order(self):
        return (
            True,
            "the Laplace location family conditioned on a fixed set keeps its monotone likelihood ratio",
        )

    def score_bound(self):
        return 2.0, self.scale

    def _mean(self, q):
        """Liu (2019) eq. (6): ``q + [(A+b)e^{-A/b} - (B+b)e^{-B/b}] / [2 - e^{-A/b} - e^{-B/b}]`` inside the bounds."""
        c, offset, _ = _truncated_moments(q, *self._params())
        return c + offset

    def _bias(self, q):
        """For ``[0, inf)`` McGlinchey–Mason's ``(q + b)/(2e^{q/b} - 1)`` (Cor. 1); in general ``_mean(q) - q``."""
        c, offset, _ = _truncated_moments(q, *self._params())
        return (c - q) + offset

    def _variance(self, q):
        """Variance of the truncated Laplace law, computed about ``c = clip(q)``; with the bias, the MSE inside the
        bounds is ``[2b^2 - (A^2+2bA+2b^2)e^{-A/b}/2 - (B^2+2bB+2b^2)e^{-B/b}/2] / N(q)`` (Liu, App. B)."""
        return _truncated_moments(q, *self._params())[2]

    def mass_kept(self, q):
        """``N(q) = P(lower <= q + L_b <= upper)``, the normalizer of Liu Def. 2(a) / McGlinchey–Mason (8)."""
        return _float(np.exp(self.log_mass_kept(q)))

    def log_mass_kept(self, q):
        """``log N(q)``, finite even when ``N(q)`` underflows: ``-|q - c|/b + log N(c)``."""
        return _float(_piece_log_mass(self._q(q), *self._params()))

    def _cdf(self, x, q):
        return _truncated_cdf(x, q, *self._params())

    def _logcdf(self, x, q):
        """``log P(M(q) <= x)``: the log-mass of ``[lower, x]`` over that of ``[lower, upper]`` at the clipped
        true value (``dpbook._kernels.laplace._piece_log_mass``), finite wherever the probability is."""
        return self._log_tail(x, q, below=True)

    def _logsf(self, x, q):
        """``log P(M(q) > x)``, as :meth:`logcdf` with the mass of ``[x, upper]``."""
        return self._log_tail(x, q, below=False)

    def _log_tail(self, x, q, below):
        lower, upper = self.lower, self.upper
        x, c = np.broadcast_arrays(x, np.clip(q, lower, upper))
        inside = (x > lower) & (x < upper)
        xs = np.where(
            inside,
            x,
            0.5 * lower + 0.5 * upper
            if np.isfinite(lower + upper)
            else (
                lower + 1.0
                if np.isfinite(lower)
                else upper - 1.0
                if np.isfinite(upper)
                else 0.0
            ),
        )
        ends = (lower, xs) if below else (xs, upper)
        with np.errstate(invalid="ignore"):
            part = _piece_log_mass(c, self.scale, *ends) - _piece_log_mass(
                c, self.scale, lower, upper
            )
        full, empty = (x >= upper, x <= lower) if below else (x <= lower, x >= upper)
        return np.where(
            full, 0.0, np.where(empty | ~inside, -np.inf, np.minimum(part, 0.0))
        )

    def _sf(self, x, q):
        """``P(M(q) > x)``: the cdf of the reflected law ``-M(q)`` (true value ``-q`` on ``[-upper,
        -lower]``) at ``-x``."""
        return _truncated_cdf(-x, -q, self.scale, -self.upper, -self.lower)

    def _ppf(self, p, q):
        """The quantile function of M(q) at ``p`` in ``[0, 1]``, in closed form (one logarithm per point)."""
        return _truncated_ppf(p, q, *self._params())

    def _isf(self, p, q):
        """``ppf(1 - p, q)``: minus the quantile of the reflected law at ``p``.

        Accurate for small ``p`` down to about ``1e-16`` on an unbounded side, where, as for ``ppf``, the
        quantile comes out infinite (the closed-form quantile resolves ``p`` on the scale of 1).
        """
        return -np.asarray(_truncated_ppf(p, -q, self.scale, -self.upper, -self.lower))

    def _quantile_in_q(self, x, p, v, upper):
        """The roots in ``q`` of the transform: a quadratic in ``e^{-|q - x|/b}`` on each side of the
        release, the upper tail by reflection, with the proved width of the zone where the computed
        transform may cross ``p`` (:func:`dpbook._kernels.inversion._truncated_root`); a starting point
        that the intervals polish on the law where the width is not proved (an interval shorter than
        ``2.5`` scales, a root where the tail is flat near a bound, a release next to a bound)."""
        return _truncated_root(x, p, v, upper, self.scale, self.lower, self.upper)

    def _logpdf(self, x, q):
        """``log(e^{-|x-q|/b} / (2b N(q)))`` on ``[lower, upper]``, ``-inf`` outside."""
        c = np.clip(q, self.lower, self.upper)
        log_n = _piece_log_mass(c, *self._params())
        inside = (x >= self.lower) & (x <= self.upper)
        xc = np.clip(x, self.lower, self.upper)
        return np.where(inside, _laplace_logpdf(xc, c, self.scale) - log_n, -np.inf)

    def max_abs_bias(self):
        """``sup |bias(q)|`` over ``q`` in ``[lower, upper]`` (McGlinchey–Mason def. (3)).

        On the domain, with ``S = sign(M - q)``, ``d E[M]/dq = Cov(M, S)/b
        = 2 P(S=1) P(S=-1) (m(A) + m(B))/b``, where ``m(w) = b - w/(e^{w/b} - 1) < b`` is the mean of an
        exponential truncated to ``[0, w]``; as ``P(S=1)P(S=-1) <= 1/4`` this is ``< 1``, so the bias
        decreases and the sup sits at an end.  Reflection makes both ends equal: the mean of an
        exponential truncated to the interval's width, ``b`` for a one-sided bound, ``0`` for the
        plain Laplace mechanism.
        """
        if np.isinf(self.lower) and np.isinf(self.upper):
            return 0.0
        return float(
            self.bias(self.lower) if np.isfinite(self.lower) else -self.bias(self.upper)
        )

    def _sample(self, q, shape, rng):
        u = rng.random(shape)
        return _quantile_in_place(
            u,
            np.clip(_compact(q), self.lower, self.upper),
            self.scale,
            self.lower,
            self.upper,
        )

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace kernel on ``[lower, upper]`` normalized by ``N(q)``.

        Worst pairs: outside the interval the law is the law at the nearest bound (module docstring),
        and for ``lower <= q1 < q2 <= upper`` the worst output is ``lower`` with log-ratio
        ``∫_{q1}^{q2} ψ'`` where ``ψ'(q) = (2/b)/(1 + R)``, ``R = (1 - e^{-A/b})/(1 - e^{-B/b})`` increases
        with ``q`` (:func:`dpbook.truncated_scale`): the integral over a window of length ``Δ`` is largest
        at the lowest window, and the other order is the mirror image.  So the worst pair is a corner
        of the domain clipped to ``[lower, upper]``.
        """
        return union_description(
            self.scale,
            [self.lower],
            [self.upper],
            worst_pairs=corner_pairs((self.lower, self.upper)),
        )
