"""Calibrating bounded noise for (ε, δ): Holohan et al.'s bounded Laplace and Geng et al.'s truncated Laplacian.

**Holohan, Antonatos, Braghin & Mac Aonghusa (2020), the bounded Laplace mechanism.**  The release is ``q + L_b``
conditioned on ``[lower, upper]`` (the law of :class:`dpbook.Normalized` with one piece, of
:class:`dpbook.Truncated`), for true values ``q`` in ``[lower, upper]``.  Its normalizer ``C_q`` (the Laplace mass
of the range) depends on ``q``, so the scale must pay for the largest ratio of two normalizers ``Δ`` apart,
``ΔC(b) = (2 - e^{-Δ/b} - e^{-(D - Δ)/b})/(1 - e^{-D/b})`` with ``D = upper - lower``.  Their calibration takes the
smallest ``b`` with

    b >= Δ/(ε - log ΔC(b) - log(1 - δ)),

a fixed point, found by bisection; diffprivlib's ``LaplaceBoundedDomain._find_scale`` (written by the paper's first
author) computes the same fixed point by the same bisection from ``Δ/(ε - log(1 - δ))``.
:func:`bounded_laplace_scale` returns it.  Audited by :func:`dpbook.privacy_profile` (tests/design): the δ holds but
is far from tight.  The scale is within ``1 - O(δ)`` of the pure-ε one (whose loss is ε exactly), and the exact
δ(ε) at it is of order δ² (between 0.2 δ² and 3 δ² on ``[0, 1]``, Δ = 1; 4.7e-7 for δ = 1e-3 at ε = 1 on
``[0, 5]``); the smallest scale the exact profile allows at the same (ε, δ) is smaller (by 14% and 17% in
the tests' cases on ``[0, 1]``).

**Geng, Ding, Guo & Kumar (2020), the truncated Laplacian mechanism.**  ``q + Z`` with ``Z`` of density
``∝ e^{-|z|/λ}`` on ``[-A, A]`` (:class:`dpbook.TruncatedLaplaceNoise`); their Theorem: with ``λ = Δ/ε`` and
``A = (Δ/ε) log(1 + (e^ε - 1)/(2δ))`` it is (ε, δ)-DP.  It is tight: the mass ``Z`` puts on ``[-A, -A + Δ)``,
where the neighbour's release cannot land, is ``(e^ε - 1)/(2(e^{A/λ} - 1)) = δ`` exactly, and at ``ε = Δ/λ`` the
overlap adds nothing, so δ(ε) of the calibrated mechanism is δ (:func:`dpbook.privacy_profile` agrees to rounding).
:func:`geng_truncated_laplace` builds it; :func:`noise_amplitude_power` sets its noise amplitude ``E|Z|`` and
power ``E Z²`` against the analytic Gaussian mechanism's (Balle & Wang 2018) at the same (ε, δ), the comparison
the paper makes: it holds (both ratios below 1) over ε in ``[1e-3, 50]`` and δ up to 0.3, and fails for δ above
about 0.4 (ε = 1 or 2; diffprivlib accepts δ < 1/2).
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels import validation as check
from ..families.bounded_noise import TruncatedLaplaceNoise
from .gaussian import analytic_gaussian_scale

__all__ = ["bounded_laplace_scale", "geng_truncated_laplace", "noise_amplitude_power"]


def _log_delta_c(b, sensitivity, width):
    """``log ΔC(b)``: the log of ``((1 - e^{-Δ/b}) + (1 - e^{-(D - Δ)/b}))/(1 - e^{-D/b})``, no cancellation."""
    with np.errstate(over="ignore", under="ignore"):
        top = -math.expm1(-sensitivity / b) - math.expm1(-(width - sensitivity) / b)
        return math.log(top) - math.log(-math.expm1(-width / b))


def _holohan_bound(b, epsilon, delta, sensitivity, width):
    """``Δ/(ε - log ΔC(b) - log(1 - δ))``, ``inf`` where the denominator is not positive."""
    den = epsilon - _log_delta_c(b, sensitivity, width) - math.log1p(-delta)
    return sensitivity / den if den > 0 else math.inf


def bounded_laplace_scale(epsilon, delta, sensitivity, lower, upper):
    """Holohan et al.'s scale for the bounded Laplace mechanism: the smallest ``b >= Δ/(ε - log ΔC(b) - log(1 - δ))``.

    The bounded Laplace mechanism releases ``q + L_b`` conditioned on ``[lower, upper]`` (``Normalized(b,
    [(lower, upper)])``).  Holohan, Antonatos, Braghin & Mac Aonghusa (2020) prove it (ε, δ)-DP for every ``b`` with
    ``b >= Δ/(ε - log ΔC(b) - log(1 - δ))``, ``ΔC(b) = (2 - e^{-Δ/b} - e^{-(D - Δ)/b})/(1 - e^{-D/b})``,
    ``D = upper - lower`` (module docstring).  ``ΔC(b)`` falls from 2 to 1 as ``b`` grows (it is 1 for
    ``Δ = D``; checked on grids by the tests, not proved here), so the right side falls and the set of such ``b``
    is a half-line; its end is found by bisection over the doubles between a failing and a passing scale
    (diffprivlib's ``LaplaceBoundedDomain`` bisects for the same fixed point), and the value returned satisfies
    the inequality.

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    delta : float
        ``0 <= δ < 1``.
    sensitivity : float
        ``Δ > 0``, at most ``upper - lower``.
    lower, upper : float
        The finite range, ``lower < upper``.

    Returns
    -------
    float
        The scale ``b``.

    Examples
    --------
    >>> b = bounded_laplace_scale(1.0, 1e-3, 1.0, 0.0, 5.0)
    >>> round(b, 6)
    1.587126
    >>> from dpbook import Normalized, privacy_profile
    >>> privacy_profile(Normalized(b, [(0.0, 5.0)]), 1.0, 1.0) < 1e-3  # the δ it promises holds
    True
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.nonnegative("delta", delta)
    if not delta < 1:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}")
    sensitivity = check.positive("sensitivity", sensitivity)
    lower, upper = check.bounds(lower, upper)
    width = upper - lower
    if not math.isfinite(width):
        raise ValueError(
            f"lower, upper must be finite for the bounded Laplace mechanism, got ({lower!r}, {upper!r})"
        )
    if sensitivity > width:
        raise ValueError(
            f"sensitivity must be at most upper - lower = {width!r}, got {sensitivity!r}"
        )

    def passes(b):
        return b >= _holohan_bound(b, epsilon, delta, sensitivity, width)

    # ΔC >= 1, so every solution is at least Δ/(ε - log(1 - δ)); double up to a passing scale
    lo = sensitivity / (epsilon - math.log1p(-delta))
    if passes(lo):
        return lo
    hi = 2.0 * lo
    while not passes(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e300:
            raise ValueError(
                f"epsilon: no scale up to 1e300 meets Holohan et al.'s condition at epsilon={epsilon!r}"
            )
    while True:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            return hi
        if passes(mid):
            hi = mid
        else:
            lo = mid


def _geng_log_ratio(epsilon, delta):
    """``log(1 + (e^ε - 1)/(2δ)) = A/λ``, also where ``e^ε`` overflows."""
    with np.errstate(over="ignore"):
        if epsilon < 700:
            return math.log1p(math.expm1(epsilon) / (2 * delta))
        log_top = epsilon + math.log1p(-math.exp(-epsilon)) - math.log(2 * delta)
        return float(np.logaddexp(0.0, log_top))


def geng_truncated_laplace(epsilon, delta, sensitivity):
    """Geng et al.'s truncated Laplacian mechanism calibrated for (ε, δ): scale ``Δ/ε``, bound
    ``(Δ/ε) log(1 + (e^ε - 1)/(2δ))``.

    Geng, Ding, Guo & Kumar (2020) prove it (ε, δ)-DP; the calibration is tight: its privacy profile at ε is δ
    exactly (module docstring), which :func:`dpbook.privacy_profile` confirms.

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    delta : float
        ``0 < δ < 1``.
    sensitivity : float
        ``Δ > 0``.

    Returns
    -------
    TruncatedLaplaceNoise

    Examples
    --------
    >>> m = geng_truncated_laplace(1.0, 1e-5, 1.0)
    >>> m.scale, round(m.bound, 6)  # log(1 + (e - 1)/2e-5)
    (1.0, 11.361115)
    >>> from dpbook import privacy_profile
    >>> round(privacy_profile(m, 1.0, 1.0) / 1e-5, 9)
    1.0
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.positive("delta", delta)
    if not delta < 1:
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}")
    sensitivity = check.positive("sensitivity", sensitivity)
    scale = sensitivity / epsilon
    return TruncatedLaplaceNoise(scale, scale * _geng_log_ratio(epsilon, delta))


def noise_amplitude_power(epsilon, delta, sensitivity=1.0):
    """The noise amplitude ``E|Z|`` and power ``E Z²`` of Geng et al.'s truncated Laplacian mechanism and of the
    analytic Gaussian mechanism at the same (ε, δ): the comparison of Geng, Ding, Guo & Kumar (2020).

    Both exact: the truncated Laplacian's ``E|Z| = λ P(2, A/λ)/P(1, A/λ)`` and ``E Z² = 2λ² P(3, A/λ)/P(1, A/λ)``
    (:class:`dpbook.TruncatedLaplaceNoise`), the Gaussian's ``σ √(2/π)`` and ``σ²`` with ``σ`` the smallest scale
    that is (ε, δ)-DP (:func:`dpbook.analytic_gaussian_scale`, Balle & Wang 2018).

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    delta : float
        ``0 < δ < 1``.
    sensitivity : float, optional
        ``Δ > 0`` (default 1); amplitudes scale with ``Δ``, powers with ``Δ²``.

    Returns
    -------
    dict
        ``{'truncated_laplace': (amplitude, power), 'gaussian': (amplitude, power)}``.

    Examples
    --------
    >>> out = noise_amplitude_power(1.0, 1e-6)
    >>> [round(v, 4) for v in out["truncated_laplace"] + out["gaussian"]]
    [1.0, 1.9998, 3.3708, 17.8479]
    """
    mech = geng_truncated_laplace(epsilon, delta, sensitivity)
    sigma = analytic_gaussian_scale(epsilon, delta, sensitivity)
    return {
        "truncated_laplace": (mech.mean_absolute_noise(), float(mech.variance(0.0))),
        "gaussian": (sigma * math.sqrt(2.0 / math.pi), sigma * sigma),
    }
