"""The Gaussian mechanism's exact (ε, δ) and its analytic calibration (Balle & Wang 2018).

The Gaussian mechanism ``q + σZ`` with sensitivity ``Δ`` is (ε, δ)-DP exactly for
``δ ≥ δ(ε) = Φ(Δ/(2σ) - εσ/Δ) - e^ε Φ(-Δ/(2σ) - εσ/Δ)`` (Balle & Wang 2018, Theorem 8): the hockey-stick
divergence between ``N(0, σ²)`` and ``N(Δ, σ²)``.  With ``μ = Δ/σ`` and ``s = ε/μ - μ/2`` the two terms
are ``Φ̄(s)`` and ``e^ε Φ̄(s + μ) = φ(s) K_0(s + μ)`` (``K_0 = Φ̄/φ``, Mills' ratio), so

``δ(ε) = φ(s) (K_0(s) - K_0(s + μ)) = φ(s) ∫_s^{s+μ} K_1(v) dv``,

with ``K_1 = -K_0' > 0``; :func:`gaussian_delta` evaluates it in log space, by the difference where the two
Mills ratios differ by a fixed factor, by Gauss–Legendre quadrature of the positive ``K_1`` where they
are close, and as ``Φ̄(s)`` minus a term below ``Φ(s)`` for ``s < -1``, so neither ``e^ε`` overflows nor
the difference cancels, at any ε and down to ``δ`` of ``1e-300``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._kernels import validation as check
from .._kernels.arrays import _float, _invert_cdf
from .._kernels.gaussian import _log1mexp, _log_k0, _log_k012, _log_phi
from ..families.gaussian import GaussianTruncated

__all__ = ["analytic_gaussian_scale", "bounded_gaussian_scale", "gaussian_delta"]

_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_GL_X, _GL_W = 0.5 * (_GL_X + 1.0), 0.5 * _GL_W  # on [0, 1]
# the calibration's margin: a computed δ within this relative distance of the target counts as above it
_MARGIN = 2.0**-40


def _log_k1(v):
    """``log K_1(v) = log(1 - v K_0(v))`` for every real ``v`` (a sum of positive terms left of 0)."""
    v = np.asarray(v, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.logaddexp(
            0.0, np.log(-np.minimum(v, 0.0)) + _log_k0(np.minimum(v, 0.0))
        )
    right = _log_k012(np.maximum(v, 0.0))[1]
    return np.where(v < 0, left, right)


def _log_delta(mu, eps):
    """``log δ(ε)`` for ``μ = Δ/σ > 0`` and ``ε >= 0`` (arrays, broadcast)."""
    mu, eps = np.broadcast_arrays(
        np.asarray(mu, dtype=float), np.asarray(eps, dtype=float)
    )
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        s = eps / mu - 0.5 * mu
        s = np.where(np.isnan(s), np.inf, s)  # (inf/inf: ε and μ both infinite)
        short = np.where(s > 1.0, mu <= s / 3.0, mu <= 1.0 / 3.0) & (s >= -1.0)
        # close Mills ratios: Gauss–Legendre of the positive K_1 over [s, s + μ]
        ss, ms = np.where(short, s, 0.0), np.where(short, mu, 1.0)
        nodes = ss[..., None] + ms[..., None] * _GL_X
        quad = np.log(ms) + special.logsumexp(_log_k1(nodes) + np.log(_GL_W), axis=-1)
        # distant ones: their difference
        far_s = np.where(short, 0.0, s)
        high = _log_k0(far_s)
        low = _log_k0(far_s + np.where(short, 1.0, mu))
        diff = high + _log1mexp(np.minimum(low - high, 0.0))
        out = _log_phi(s) + np.where(short, quad, diff)
        # s < -1: Φ̄(s) > 0.84 and the second term is at most Φ(s) < 0.16: the plain difference, in logs
        neg = np.minimum(s, -1.0)
        first = special.log_ndtr(-neg)
        plain = first + _log1mexp(
            np.minimum(
                _log_phi(neg) + _log_k0(neg + np.where(s < -1.0, mu, 0.0)) - first, 0.0
            )
        )
        out = np.where(s < -1.0, plain, out)
    out = np.where(np.isinf(s) & (s > 0), -np.inf, out)  # ε/μ beyond the doubles: δ = 0
    out = np.where(
        np.isinf(mu) & np.isfinite(eps), 0.0, out
    )  # Δ/σ beyond the doubles: δ = 1
    return np.minimum(out, 0.0)


def gaussian_delta(scale, epsilon, sensitivity=1.0):
    """The exact δ(ε) of the Gaussian mechanism ``q + σZ`` (Balle & Wang 2018, Theorem 8).

    ``δ(ε) = Φ(Δ/(2σ) - εσ/Δ) - e^ε Φ(-Δ/(2σ) - εσ/Δ)``: the smallest δ for which the mechanism is (ε, δ)-DP
    for neighbours ``Δ`` apart (the hockey-stick divergence of ``N(0, σ²)`` from ``N(Δ, σ²)``), computed in
    log space (module docstring): accurate to a few units in the last place at every ``ε`` and for ``δ`` far
    below the doubles' ``1e-16`` resolution of 1.

    Parameters
    ----------
    scale : float
        ``σ > 0``, the standard deviation of the noise.
    epsilon : float or array_like
        ``ε >= 0`` (``inf`` allowed: ``δ = 0``); vectorized.
    sensitivity : float, optional
        ``Δ > 0`` (default 1).

    Returns
    -------
    float or numpy.ndarray
        ``δ(ε)`` in ``[0, 1]``, shaped like ``epsilon``.

    Examples
    --------
    >>> round(gaussian_delta(1.0, 0.0), 6)  # ε = 0: the total variation 2Φ(1/2) - 1
    0.382925
    >>> f"{gaussian_delta(1.0, 30.0):.6e}"  # far below 1e-16, to every digit
    '4.709326e-193'
    """
    scale = check.positive("scale", scale)
    sensitivity = check.positive("sensitivity", sensitivity)
    eps = check.real_array("epsilon", epsilon)
    if (eps < 0).any():
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    with np.errstate(over="ignore"):
        mu = sensitivity / scale
    if mu == 0:  # Δ/σ below the doubles: the two laws are the same
        return _float(np.zeros(eps.shape))
    return _float(np.exp(_log_delta(mu, eps)))


def analytic_gaussian_scale(epsilon, delta, sensitivity=1.0):
    """The smallest σ for which the Gaussian mechanism is (ε, δ)-DP (Balle & Wang 2018, Algorithm 1).

    The answer is found over the doubles: the smallest double ``σ`` whose δ(ε) (:func:`gaussian_delta`) is at
    most ``delta`` with a margin of ``2^-40`` of it, so that the δ of the returned σ is never above
    ``delta`` (the rounding of the computed δ is well inside the margin), and the double below it would not
    do.  It is smaller than the classical ``Δ√(2 log(1.25/δ))/ε`` (Dwork & Roth, Theorem A.1, for ε < 1), and
    defined for every ``ε >= 0``.

    Parameters
    ----------
    epsilon : float
        ``ε >= 0``.
    delta : float
        ``0 < δ < 1``.
    sensitivity : float, optional
        ``Δ > 0`` (default 1).

    Returns
    -------
    float

    Examples
    --------
    >>> sigma = analytic_gaussian_scale(1.0, 1e-5)
    >>> round(sigma, 6), bool(gaussian_delta(sigma, 1.0) <= 1e-5)
    (3.730632, True)
    >>> round(math.sqrt(2 * math.log(1.25 / 1e-5)), 6)  # the classical scale (for ε < 1)
    4.844805
    """
    eps = check.nonnegative("epsilon", epsilon)
    delta = check.positive("delta", delta)
    if not delta < 1:
        raise ValueError(f"delta must be < 1, got {delta!r}")
    sensitivity = check.positive("sensitivity", sensitivity)
    target = math.log(delta) + math.log1p(-_MARGIN)

    def reached(sigma, _):
        with np.errstate(over="ignore"):
            mu = sensitivity / sigma
        return _log_delta(mu, np.full(np.shape(sigma), eps)) <= target

    hi = float(np.finfo(float).max)
    if not reached(np.array(hi), None):
        raise ValueError(
            f"delta={delta!r} is below the δ of every σ up to {hi:.3g} at epsilon={epsilon!r} "
            f"and sensitivity={sensitivity!r}"
        )
    return float(_invert_cdf(reached, np.array(0.0), 0.0, hi))


def bounded_gaussian_scale(epsilon, delta, sensitivity, lower, upper):
    """The σ of Chen & Hale's bounded Gaussian mechanism on ``[lower, upper]`` (their univariate condition).

    The bounded Gaussian mechanism releases ``q + σZ`` conditioned on ``[l, u]``, the law of
    :class:`~dpbook.GaussianTruncated` ``(σ, lower=l, upper=u)`` (Chen & Hale 2024).  Its calibration bounds the
    log-ratio of two neighbouring densities by a quadratic term and the ratio of the normalizers
    ``C(c) = Φ((u - c)/σ) - Φ((l - c)/σ)``, and asks for

    ``σ² >= (u - l + Δ/2) Δ / (ε - log ΔC(σ))``,  ``ΔC(σ) = sup C(c')/C(c)`` over ``c, c'`` in ``[l, u]``,
    ``|c - c'| <= Δ``,

    which σ appears on both sides of; it is solved here for the smallest σ.  ``C`` is log-concave and symmetric
    about the midpoint, so ``ΔC(σ) = C(l + min(Δ, (u - l)/2)) / C(l)`` exactly (the normalizers' logs are
    :meth:`~dpbook.GaussianTruncated.log_mass_kept`).  The condition in the form ``(u - l + Δ/2)Δ/σ² +
    log ΔC(σ) <= ε`` falls as σ grows (checked on grids by the tests), so the smallest double σ meeting it
    with a margin of ``2^-40`` of ε is found by bisection over the doubles and returned: the upper side.

    Source of the condition.  Only the opening of the paper (arXiv 2211.17230, ar5iv) could be read offline
    when this was written; the condition is the one the first author's public code solves (repository
    ``Bo-ChenUF/distributed_rt_with_dp``, ``model/differential_privacy/bounded_mechanisms.py``,
    ``boundedGaussianMech.computeDistParameter`` with ``delta = 0``, a fixed point in ``σ²`` of the form above,
    ``‖u - l‖`` the range and ``ΔC`` maximized over the shift).  It is a valid sufficient condition for
    **pure** ε-DP: for outputs and true values in ``[l, u]`` the quadratic part of the log-ratio is at most
    ``Δ(2(u - l) - Δ)/(2σ²) <= (u - l + Δ/2)Δ/σ²`` and the normalizers' part at most ``log ΔC(σ)``.  So the σ
    returned is ε-DP with δ = 0, hence (ε, δ)-DP for every δ: ``delta`` is validated and does not enter the
    condition.  (That code's branch for ``delta > 0`` subtracts ``log δ`` from the denominator; the exact
    profile shows that σ is not (ε, δ)-DP, e.g. ``δ(1) = 0.52`` at ``δ = 1e-5`` on ``[0, 1]`` with ``Δ = 1``,
    so it is not offered here.)  :func:`dpbook.profile_scale` gives the smallest σ the exact profile allows at
    the same (ε, δ): with ``Δ = 1`` at ``δ = 1e-5`` and ε from 0.5 to 2, their σ is 1.8 times it on
    ``[0, 1]`` and 1.3 to 1.6 times it on ``[0, 5]``, and the exact pure loss at their σ is 0.31 ε (``[0, 1]``)
    to 0.51 ε (``[0, 5]``).

    Parameters
    ----------
    epsilon : float
        ``ε > 0``.
    delta : float
        ``0 <= δ < 1`` (the condition is pure ε-DP: see above).
    sensitivity : float
        ``Δ > 0``.
    lower, upper : float
        The finite range ``lower < upper`` (the condition involves ``u - l``: a one-sided range raises
        ``ValueError``).

    Returns
    -------
    float
        σ, to be used as ``GaussianTruncated(σ, lower=lower, upper=upper)``.

    Examples
    --------
    >>> from dpbook import GaussianTruncated, privacy_loss
    >>> sigma = bounded_gaussian_scale(1.0, 1e-5, 1.0, 0.0, 1.0)
    >>> round(sigma, 6)
    1.272282
    >>> loss = privacy_loss(GaussianTruncated(sigma, lower=0.0, upper=1.0), 1.0)
    >>> bool(loss <= 1.0), round(loss, 4)  # ε-DP, with room to spare
    (True, 0.3089)
    """
    eps = check.positive("epsilon", epsilon)
    delta = check.nonnegative("delta", delta)
    if not delta < 1:
        raise ValueError(f"delta must be < 1, got {delta!r}")
    sensitivity = check.positive("sensitivity", sensitivity)
    lower, upper = check.bounds(lower, upper)
    if not (math.isfinite(lower) and math.isfinite(upper)):
        raise ValueError(
            f"lower={lower!r}, upper={upper!r}: Chen & Hale's condition is stated for a finite range "
            "(it involves upper - lower); use dpbook.profile_scale for a one-sided range"
        )
    width = upper - lower
    with np.errstate(over="ignore"):
        quad = (width + 0.5 * sensitivity) * sensitivity
    if not math.isfinite(quad) or not math.isfinite(width):
        raise ValueError(
            f"(upper - lower + sensitivity/2) * sensitivity overflows for lower={lower!r}, "
            f"upper={upper!r}, sensitivity={sensitivity!r}"
        )
    shift = lower + min(sensitivity, 0.5 * width)
    target = eps * (1.0 - _MARGIN)

    def reached(sigma, _):
        s = float(sigma)
        law = GaussianTruncated(s, lower=lower, upper=upper)
        log_ratio = float(law.log_mass_kept(shift) - law.log_mass_kept(lower))
        with np.errstate(over="ignore", under="ignore"):
            return quad / s / s + log_ratio <= target

    return float(_invert_cdf(reached, np.array(0.0), 0.0, float(np.finfo(float).max)))
