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

__all__ = ["analytic_gaussian_scale", "gaussian_delta"]

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
