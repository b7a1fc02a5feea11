"""The view of Part VI, chapter 26: Geng et al.'s truncated Laplacian against the Gaussian at one (ε, δ).

For a budget ``ε`` (:data:`EPSILONS` on the published page) and every ``δ`` in :data:`DELTA_RANGE`, the
noise amplitude ``E|Z|`` and power ``E Z²`` of the truncated Laplacian mechanism calibrated to
``(ε, δ)`` (:func:`dpbook.geng_truncated_laplace`) are divided by those of the Gaussian mechanism with the
smallest σ that is (ε, δ)-DP (Balle & Wang's analytic Gaussian).  The curve is traced along the
Gaussian's σ (sensitivity ``Δ = 1``; both ratios do not depend on ``Δ``): each σ of :func:`sigma_grid` has
the exact δ(ε) of :func:`dpbook.gaussian_delta`, so that σ is the analytic Gaussian's scale at that δ, and
no calibration is searched.  Every number is the library's: this module only draws.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import positive_epsilon, view

__all__ = [
    "DELTA_RANGE",
    "EPSILONS",
    "comparison",
    "draw_noise_vs_gaussian",
    "sigma_grid",
]

#: the budgets ε the published page offers
EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0)

#: the δ drawn: from 1e-12 to just below 1/2, where Geng et al.'s calibration stops (it needs δ < 1/2)
DELTA_RANGE = (1e-12, 0.4999)

#: points along each curve (the σ between the two ends of :data:`DELTA_RANGE`), and on the coarse grid
#: that finds those ends
POINTS, COARSE = 36, 32


def _delta(sigma, eps):
    return float(dpbook.gaussian_delta(float(sigma), eps, 1.0))


def sigma_grid(epsilon):
    """The Gaussian scales σ (``Δ = 1``) along which the curve at ``ε`` is traced, log-spaced.

    A coarse log grid from ``σ = 0.01`` to ``1 + 8/ε`` (past the σ whose δ(ε) is 1e-12: the classical
    ``√(2 log(1.25/δ))/ε`` is below ``8/ε`` there) brackets the two ends of :data:`DELTA_RANGE`; the
    curve's :data:`POINTS` scales are log-spaced between the brackets (their ends fall just outside the
    range and are dropped by :func:`comparison`).
    """
    eps = positive_epsilon(epsilon)
    coarse = np.geomspace(0.01, 1.0 + 8.0 / eps, COARSE)
    delta = np.array([_delta(s, eps) for s in coarse])
    lo, hi = DELTA_RANGE
    start = coarse[max(int(np.argmax(delta < hi)) - 1, 0)]
    stop = coarse[min(int(np.argmax(delta < lo)), COARSE - 1)]
    return np.geomspace(start, stop, POINTS)


def comparison(epsilon=1.0):
    """The two ratios along δ at budget ``ε``: ``{"delta", "sigma", "amplitude", "power"}`` (arrays).

    ``amplitude`` is ``E|Z|`` of Geng et al.'s noise at ``(ε, δ)`` over ``E|σN| = σ√(2/π)`` of the
    Gaussian; ``power`` is ``E Z²`` over ``σ²``.  Below 1 the truncated Laplacian adds less noise.
    """
    return _comparison(positive_epsilon(epsilon))


@functools.lru_cache(maxsize=32)
def _comparison(eps):
    lo, hi = DELTA_RANGE
    rows = []
    for sigma in sigma_grid(eps):
        delta = _delta(sigma, eps)
        if not lo <= delta <= hi:
            continue
        geng = dpbook.geng_truncated_laplace(eps, delta, 1.0)
        rows.append(
            (
                delta,
                sigma,
                geng.mean_absolute_noise() / (sigma * math.sqrt(2.0 / math.pi)),
                float(geng.variance(0.0)) / sigma**2,
            )
        )
    delta, sigma, amplitude, power = (np.array(c) for c in zip(*rows, strict=True))
    return {"delta": delta, "sigma": sigma, "amplitude": amplitude, "power": power}


@view(epsilon=(0.1, 5.0, 0.1), grid={"epsilon": EPSILONS})
def draw_noise_vs_gaussian(epsilon=1.0):
    """The truncated Laplacian's noise amplitude and power over the analytic Gaussian's, along δ, at one ε.

    Both mechanisms are calibrated to the same (ε, δ); a ratio below 1 means Geng et al.'s mechanism adds
    less noise than the best Gaussian.  Exact (the library's closed forms), sensitivity 1.
    """
    eps = positive_epsilon(epsilon)
    c = comparison(eps)
    fig, ax = figure()
    ax.plot(c["delta"], c["amplitude"], color=COLORS["laplace"], label="amplitude E|Z|")
    ax.plot(
        c["delta"], c["power"], color=COLORS["truncated"], ls="--", label="power E Z²"
    )
    ax.axhline(1.0, color=COLORS["bound"], lw=0.9)
    ax.set_xscale("log")
    ax.set_xlim(*DELTA_RANGE)
    ax.set_ylim(0.0, 1.4)
    ax.set_xlabel(r"$\delta$")
    ax.set_ylabel("truncated Laplacian / Gaussian")
    ax.set_title(
        rf"both calibrated to $(\varepsilon, \delta)$, $\varepsilon = {eps:.3g}$"
    )
    ax.legend(loc="upper left")
    return fig
