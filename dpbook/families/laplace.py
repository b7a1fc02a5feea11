"""The Laplace law and the Laplace mechanism (McGlinchey & Mason, Proposition 1).

``L_b`` has density ``exp(-|x|/b) / (2b)``; the Laplace mechanism releases ``q + L_b`` and is
ε-DP when ``b = Δ/ε`` (:func:`laplace_scale`).  The functions below are the law's building
blocks, written so that they never overflow: every exponential has a non-positive argument.
"""

from __future__ import annotations

import numpy as np

from .._kernels import validation as check
from .._kernels.arrays import _compact
from .._kernels.inversion import _laplace_root
from .._kernels.laplace import (
    _laplace_cdf,
    _laplace_isf,
    _laplace_logcdf,
    _laplace_logpdf,
    _laplace_logsf,
    _laplace_ppf,
    _laplace_sf,
)
from ..audit.description import corner_pairs, laplace_cdf_curvature, laplace_description
from ..mechanism import Mechanism

__all__ = ["Laplace"]


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

    bias_monotone = True

    def stochastic_order(self):
        return True, "a log-concave location family has a monotone likelihood ratio"

    def score_bound(self):
        return 1.0, self.scale

    def __init__(self, scale):
        self.scale = check.positive("scale", scale)

    def _bias(self, q):
        return np.zeros_like(q)

    def _variance(self, q):
        with np.errstate(over="ignore"):
            return np.full_like(q, 2 * np.float64(self.scale) ** 2)

    def _cdf(self, x, q):
        return _laplace_cdf(x, q, self.scale)

    def _sf(self, x, q):
        return _laplace_sf(x, q, self.scale)

    def _logcdf(self, x, q):
        return _laplace_logcdf(x, q, self.scale)

    def _logsf(self, x, q):
        return _laplace_logsf(x, q, self.scale)

    def _logpdf(self, x, q):
        return _laplace_logpdf(x, q, self.scale)

    def _ppf(self, p, q):
        """``q + b log(2p)`` below the median, ``q - b log(2(1 - p))`` above."""
        return _laplace_ppf(p, q, self.scale)

    def _isf(self, p, q):
        """``ppf(1 - p, q)``: ``q - b log(2p)`` above the median, so small ``p`` keep their accuracy."""
        return _laplace_isf(p, q, self.scale)

    def _quantile_in_q(self, x, p, v, upper):
        """``q = x - b log(2p)``-type roots: ``P(L_b <= x - q) = p`` solved on the Laplace tail, with the
        proved width of the zone where the computed transform may cross ``p``
        (:func:`dpbook._kernels.inversion._laplace_root`)."""
        return _laplace_root(x, p, v, upper, self.scale)

    def _sample(self, q, shape, rng):
        # one true value as a float: numpy's scalar loop, not its broadcasting one
        q = _compact(q)
        return rng.laplace(q.item() if q.size == 1 else q, self.scale, size=shape)

    # --- privacy description (dpbook.audit) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace kernel of scale ``b`` centred at ``q`` on the whole line.

        The loss of a pair is ``|q1 - q2|/b`` (the log-ratio ``(|x - q2| - |x - q1|)/b`` reaches it beyond
        both), so every pair ``Δ`` apart is a worst pair, in particular a corner of the domain.
        """
        return laplace_description(
            self.scale,
            worst_pairs=corner_pairs(),
            curvature=laplace_cdf_curvature(self.scale),
        )
