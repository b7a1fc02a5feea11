"""The multiplicative (log-Laplace) mechanism ``q e^{L_b}`` for positive queries (McGlinchey–Mason §3.1).

Le Ny and Pappas release a positive query ``Q`` as ``exp(log Q + L_b)``.  When neighbouring
databases satisfy ``|Q(d) - Q(d')| <= K min{Q(d), Q(d')}`` (McGlinchey–Mason assumption (10)),
``log Q`` has sensitivity at most ``K`` (since ``log(1 + K) <= K``), so ``b = K/ε`` gives ε-DP.
The release is always positive but, by McGlinchey–Mason Prop. 3, its mean is finite only when
``b < 1`` (``K < ε``) and its variance only when ``b < 1/2``.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels import validation as check
from .._kernels.arrays import _compact
from .._kernels.inversion import _log_root
from .._kernels.laplace import (
    _laplace_cdf,
    _laplace_isf,
    _laplace_logcdf,
    _laplace_logpdf,
    _laplace_logsf,
    _laplace_ppf,
    _laplace_sf,
    _offsets_in_place,
)
from .._kernels.sampling import _uniform_blocks
from ..audit.description import corner_pairs, laplace_description
from ..mechanism import Mechanism

__all__ = ["LogLaplace", "log_laplace_moment", "relative_bias"]

#: ``37 > -log(RESOLUTION) = 53 log 2``: no Laplace draw of scale ``b`` exceeds ``37 b`` in size
_REACH = 37.0


def log_laplace_moment(scale, *, order=1):
    """``E[e^{k L_b}] = 1/(1 - k²b²)`` for ``k b < 1``, ``inf`` otherwise (McGlinchey–Mason Proposition 3).

    The right tail of ``e^{kx} e^{-|x|/b}`` decays like ``e^{-(1/b - k)x}``, so the integral is finite
    exactly when ``k b < 1``.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    order : float
        ``k >= 0`` (1 for the mean, 2 for the second moment).

    Examples
    --------
    >>> log_laplace_moment(0.5, order=1)
    1.3333333333333333
    >>> log_laplace_moment(0.5, order=2)
    inf
    """
    b = check.positive("scale", scale)
    k = check.nonnegative("order", order)
    kb = k * b
    return 1.0 / ((1.0 - kb) * (1.0 + kb)) if kb < 1 else np.inf


def relative_bias(scale):
    """The relative bias ``E[q e^{L_b}]/q - 1 = b²/(1 - b²)`` (``inf`` for ``b >= 1``), McGlinchey–Mason Proposition 3.

    >>> relative_bias(0.5)
    0.3333333333333333
    """
    b = check.positive("scale", scale)
    return b * b / ((1.0 - b) * (1.0 + b)) if b < 1 else np.inf


class LogLaplace(Mechanism):
    """The multiplicative mechanism ``q e^{L_b}`` for ``q > 0`` (McGlinchey–Mason §3.1, Proposition 3; Le Ny & Pappas).

    Its mean ``q/(1 - b²)`` is finite iff ``b < 1`` and its variance iff ``b < 1/2``; the
    quantities that diverge are returned as ``inf``.

    Parameters
    ----------
    scale : float
        ``b > 0``; use :func:`log_laplace_scale` for ``K/ε``.

    Examples
    --------
    >>> LogLaplace(scale=0.5).mean(3.0)
    4.0
    """

    bias_monotone = True
    mse_scales_as_q_squared = True

    def stochastic_order(self):
        return (
            True,
            "a nondecreasing map of the Laplace location family (q e^L = exp(log q + L))",
        )

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def __init__(self, scale):
        self.scale = check.positive("scale", scale)

    def _q(self, q):
        q = check.finite_array("q", q)
        if (q <= 0).any():
            raise ValueError(
                f"q must be > 0 for the multiplicative mechanism, got {q!r}"
            )
        return q

    def _bias(self, q):
        with np.errstate(over="ignore"):
            return q * relative_bias(self.scale)

    def _mean(self, q):
        with np.errstate(over="ignore"):
            return q * log_laplace_moment(self.scale, order=1)

    def _variance(self, q):
        b = self.scale
        if b >= 0.5:
            return np.full_like(q, np.inf)
        # (q b)^2 times the rest: b^2 alone is subnormal for b < 1e-154
        rest = (2.0 + b * b) / (
            (1.0 - 2 * b) * (1.0 + 2 * b) * ((1.0 - b) * (1.0 + b)) ** 2
        )
        with np.errstate(over="ignore"):
            return (q * b) * ((q * b) * rest)

    def _cdf(self, x, q):
        with np.errstate(divide="ignore", invalid="ignore"):
            logx = np.log(np.where(x > 0, x, 1.0))
        return np.where(x > 0, _laplace_cdf(logx, np.log(q), self.scale), 0.0)

    def _sf(self, x, q):
        with np.errstate(divide="ignore", invalid="ignore"):
            logx = np.log(np.where(x > 0, x, 1.0))
        return np.where(x > 0, _laplace_sf(logx, np.log(q), self.scale), 1.0)

    def _logcdf(self, x, q):
        """``log P(q e^{L_b} <= x)``: the Laplace log-cdf of ``log x`` around ``log q`` (``-inf`` for ``x <= 0``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            logx = np.log(np.where(x > 0, x, 1.0))
        return np.where(x > 0, _laplace_logcdf(logx, np.log(q), self.scale), -np.inf)

    def _logsf(self, x, q):
        """``log P(q e^{L_b} > x)``: the Laplace log-survival function of ``log x`` (``0`` for ``x <= 0``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            logx = np.log(np.where(x > 0, x, 1.0))
        return np.where(x > 0, _laplace_logsf(logx, np.log(q), self.scale), 0.0)

    def _ppf(self, p, q):
        """``q e^{Laplace quantile}``: exact (``ppf(0) = 0``)."""
        with np.errstate(over="ignore"):
            return np.exp(_laplace_ppf(p, np.log(q), self.scale))

    def _isf(self, p, q):
        with np.errstate(over="ignore"):
            return np.exp(_laplace_isf(p, np.log(q), self.scale))

    def _quantile_in_q(self, x, p, v, upper):
        """``q = e^R`` for the Laplace root ``R`` in ``log q`` at ``log x``, with the proved width of the zone
        where the computed transform may cross ``p``, carried through ``exp`` with the rounding of both
        logarithms (:func:`dpbook._kernels.inversion._log_root`)."""
        return _log_root(x, p, v, upper, self.scale)

    def _logpdf(self, x, q):
        """Density of ``q e^{L_b}`` at ``x > 0``: the Laplace density of ``log x`` around ``log q``, over ``x``."""
        inside = (x > 0) & np.isfinite(x)
        logx = np.log(np.where(inside, x, 1.0))
        return np.where(
            inside, _laplace_logpdf(logx, np.log(q), self.scale) - logx, -np.inf
        )

    def _sample(self, q, shape, rng):
        """``q e^{L_b}`` by inverse cdf: the Laplace quantile of one uniform per draw, exponentiated and times ``q``
        (to the last bit of the product; ``e^{L_b + log q}`` only where ``e^{L_b}`` alone over- or underflows),
        block by block (``dpbook._kernels.sampling``).  The draws stop at ``|L_b| = 53 b log 2``
        (``dpbook._kernels.laplace.RESOLUTION``): when ``q (2 e^{37 b})^{±1}`` is finite and positive for every
        ``q``, so is every product (whatever the last bit of ``np.exp``), and the blocks skip that check."""
        b = self.scale
        q = _compact(q) if np.ndim(q) else q
        safe = _REACH * b < 700.0
        if safe:
            reach = 2.0 * math.exp(_REACH * b)
            with np.errstate(over="ignore", under="ignore"):
                low, high = np.min(q, initial=np.inf), np.max(q, initial=0.0)
                safe = bool(low / reach > 0 and np.isfinite(high * reach))

        def draw(u, q):
            u *= 2.0
            u -= 1.0
            x = _offsets_in_place(u, b)
            if safe:
                np.exp(x, out=u)
                u *= q
                return u
            with np.errstate(over="ignore", under="ignore"):
                out = np.exp(x, out=u)
                out *= q
                off = ~np.isfinite(out) | (out == 0)
                if off.any():
                    out = np.where(off, np.exp(x + np.log(q)), out)
            return out

        return _uniform_blocks(rng, shape, q, draw)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: in ``t = log x`` the Laplace kernel of scale ``b`` centred at ``log q``.

        The loss of a pair is ``|log q1 - log q2|/b`` (the Laplace mechanism on ``log q``): with additive
        neighbours it is largest for the smallest true values, the lower corner of the domain; with
        neighbours in ``log q`` (the description ``log_q``) every pair ``K`` apart is a worst pair.  As
        ``q -> 0`` the release tends to 0 surely (``positive``).
        """
        b = self.scale
        in_log = laplace_description(b, worst_pairs=corner_pairs())
        return laplace_description(
            b,
            center=np.log,
            to_q=lambda t: float(np.exp(min(t, 709.0))),
            lipschitz=None,
            curvature=lambda x, y: np.exp(
                np.minimum(math.log(b) - 2 * np.log(np.asarray(x, dtype=float)), 700.0)
            ),  # |(log q)''|/b on [x, y], units b^-2
            log_output=True,
            positive=True,
            worst_pairs=corner_pairs(),
            log_q=in_log,
            neighbours="log",
        )
