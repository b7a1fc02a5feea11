"""The Laplace law and the Laplace mechanism (McGlinchey & Mason, Proposition 1).

``L_b`` has density ``exp(-|x|/b) / (2b)``; the Laplace mechanism releases ``q + L_b`` and is
ε-DP when ``b = Δ/ε`` (:func:`laplace_scale`).  The functions below are the law's building
blocks, written so that they never overflow: every exponential has a non-positive argument.
"""

from __future__ import annotations

import numpy as np

from . import _validation as check
from .mechanism import Mechanism, _compact, _float
from ._privacy_interface import corner_pairs, laplace_cdf_curvature, laplace_description
from .calibration import laplace_scale  # its home is dpbook.calibration

__all__ = ["Laplace", "laplace_scale"]

LOG_HALF = np.log(0.5)




def _laplace_logpdf(x, loc, scale):
    """log of the Laplace(loc, scale) density at x."""
    x, loc = np.asarray(x, dtype=float), np.asarray(loc, dtype=float)
    with np.errstate(over="ignore"):
        return -np.abs(x - loc) / scale - np.log(2 * scale)


def _laplace_pdf(x, loc, scale):
    """The Laplace(loc, scale) density at x."""
    return np.exp(_laplace_logpdf(x, loc, scale))


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
        return np.where(u < 0.5, loc + scale * np.log(2 * u), loc - scale * np.log(2 * (1 - u)))


def _laplace_isf(u, loc, scale):
    """The inverse survival function of Laplace(loc, scale) at u in [0, 1] (``ppf(1 - u)``, accurate for small u)."""
    u = np.asarray(u, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(u < 0.5, loc - scale * np.log(2 * u), loc + scale * np.log(2 * (1 - u)))


#: a double-precision uniform resolves ``1 - |t|`` down to 2^-53: draws stop 53 log 2 = 36.7 scales out,
#: as numpy's own Laplace sampler does, so a sampler never returns an infinity
RESOLUTION = 2.0**-53


def _offsets_in_place(t, scale, floor=RESOLUTION):
    """Overwrite centred probabilities ``t`` in ``[-1, 1]`` with Laplace quantile offsets.

    ``t = 2u - 1`` maps to ``-b sign(t) log(1 - |t|)``, the Laplace(0, b) quantile at ``u``; ``1 - |t|``
    is kept ``>= floor``.  The samplers' kernel: one logarithm per draw, no masks, no branches.
    """
    w = np.abs(t, out=np.empty_like(t))
    np.subtract(1.0, w, out=w)
    if floor:
        np.clip(w, floor, 1.0, out=w)
    np.log(w, out=w)
    np.copysign(w, t, out=w)
    w *= scale
    return w


def _draw_offsets(rng, shape, scale):
    """``shape`` draws of ``L_b`` from one uniform each (inverse cdf, see :func:`_offsets_in_place`)."""
    t = rng.random(shape)
    t *= 2.0
    t -= 1.0
    return _offsets_in_place(t, scale)


class Laplace(Mechanism):
    """The Laplace mechanism ``q + L_b`` (McGlinchey–Mason Proposition 1; Liu §2.2).

    ``L_b`` has density ``exp(-|x|/b) / (2b)``; the release at ``q`` is ``scipy.stats.laplace(loc=q,
    scale=b)``, and every function of its law is in closed form, written so that no exponential has a
    positive argument (the tails keep their relative accuracy).

    Parameters
    ----------
    scale : float
        ``b > 0``; use :func:`laplace_scale` for ``Δ/ε``.

    Examples
    --------
    >>> Laplace(scale=2.0).variance(0.0)
    8.0
    >>> Laplace(scale=2.0).at(0.0).interval(0.5)
    (-1.3862943611198906, 1.3862943611198906)
    """

    _bias_monotone = True

    def stochastic_order(self):
        return True, "a log-concave location family has a monotone likelihood ratio"

    def _score_bound(self):
        return 1.0, self.scale

    def __init__(self, scale):
        self.scale = check.positive("scale", scale)

    def bias(self, q):
        return _float(np.zeros_like(self._q(q)))

    def variance(self, q):
        with np.errstate(over="ignore"):
            return _float(np.full_like(self._q(q), 2 * np.float64(self.scale) ** 2))

    def cdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        return _float(_laplace_cdf(x, q, self.scale))

    def sf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        return _float(_laplace_sf(x, q, self.scale))

    def logcdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        return _float(_laplace_logcdf(x, q, self.scale))

    def logsf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        return _float(_laplace_logsf(x, q, self.scale))

    def logpdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        return _float(_laplace_logpdf(x, q, self.scale))

    def ppf(self, p, q):
        """``q + b log(2p)`` below the median, ``q - b log(2(1 - p))`` above."""
        p, q = self._p(p), self._q(q)
        return _float(_laplace_ppf(p, q, self.scale))

    def isf(self, p, q):
        """``ppf(1 - p, q)``: ``q - b log(2p)`` above the median, so small ``p`` keep their accuracy."""
        p, q = self._p(p), self._q(q)
        return _float(_laplace_isf(p, q, self.scale))

    def _sample(self, q, shape, rng):
        return rng.laplace(_compact(q), self.scale, size=shape)

    # --- privacy description (dpbook.privacy) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace kernel of scale ``b`` centred at ``q`` on the whole line.

        The loss of a pair is ``|q1 - q2|/b`` (the log-ratio ``(|x - q2| - |x - q1|)/b`` reaches it beyond
        both), so every pair ``Δ`` apart is a worst pair, in particular a corner of the domain.
        """
        return laplace_description(self.scale, worst_pairs=corner_pairs(), curvature=laplace_cdf_curvature(self.scale))
