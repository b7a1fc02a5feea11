"""The view of Part VI, "The Gaussian on a bounded range": Laplace or Gaussian for k bounded releases.

A proportion of :data:`N_PEOPLE` people (sensitivity :data:`SENSITIVITY`) lies in :data:`RANGE`; it is
released ``k`` times under one total budget ``(ε, δ)``, :data:`DELTA` for δ, each release clamped to the
range.  The Laplace releases take ``b = kΔ/ε`` each (basic composition: ``k`` releases at ``ε/k`` are
ε-DP, and δ = 0); the Gaussian releases take the σ of :func:`dpbook.analytic_gaussian_scale` at the
sensitivity ``√k Δ`` (``k`` Gaussian releases of sensitivity ``Δ`` together have exactly the privacy
profile of one Gaussian release of sensitivity ``√k Δ``: the chapter proves it).  Clamping is a
post-processing, so the clamped releases keep those guarantees.  Every MSE is the library's exact one
(:meth:`dpbook.BIT.mse`, :meth:`dpbook.GaussianBIT.mse`): this module only chooses the scales and draws.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import positive_epsilon, view

__all__ = [
    "RANGE",
    "N_PEOPLE",
    "SENSITIVITY",
    "DELTA",
    "release_scales",
    "clamped_mse",
    "crossing_k",
    "draw_laplace_or_gaussian",
]

#: the range of the released statistic, a proportion
RANGE = (0.0, 1.0)

#: the number of people behind the proportion
N_PEOPLE = 100

#: one person changes the proportion by at most this much
SENSITIVITY = 1.0 / N_PEOPLE

#: the δ of the whole release (the Laplace releases spend none of it)
DELTA = 1e-5

#: true values at which the view evaluates the exact MSEs
_Q = np.linspace(*RANGE, 101)


def _releases(k, name="k"):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {k!r}")
    return int(k)


@functools.lru_cache(maxsize=64)
def _unit_scale(epsilon, delta):
    return dpbook.analytic_gaussian_scale(epsilon, delta, 1.0)


def release_scales(epsilon, k=1, *, delta=DELTA, sensitivity=SENSITIVITY):
    """``(b, σ)``: the scale of each of ``k`` Laplace releases and of each of ``k`` Gaussian ones.

    Together the ``k`` releases are ε-DP (Laplace, ``b = kΔ/ε``: basic composition) and (ε, δ)-DP
    (Gaussian, ``σ`` = :func:`dpbook.analytic_gaussian_scale` ``(ε, δ, √k Δ)``).  The Gaussian's δ(ε)
    depends on ``Δ/σ`` only, so that σ is ``√k Δ`` times the library's σ at ``Δ = 1``, computed once
    per ``(ε, δ)`` (one call of the calibration takes a tenth of a second).
    """
    eps, k = positive_epsilon(epsilon), _releases(k)
    b = k * sensitivity / eps
    sigma = math.sqrt(k) * sensitivity * _unit_scale(eps, float(delta))
    return b, sigma


def clamped_mse(epsilon, k, q, *, delta=DELTA, sensitivity=SENSITIVITY):
    """The exact MSE at ``q`` of one of ``k`` clamped Laplace releases and of one of ``k`` clamped Gaussian ones.

    Returns ``(laplace, gaussian)``, shaped like ``q``: :meth:`dpbook.BIT.mse` and
    :meth:`dpbook.GaussianBIT.mse` on :data:`RANGE` at the scales of :func:`release_scales`.
    """
    b, sigma = release_scales(epsilon, k, delta=delta, sensitivity=sensitivity)
    lower, upper = RANGE
    laplace = dpbook.BIT(b, lower=lower, upper=upper).mse(q)
    gaussian = dpbook.GaussianBIT(sigma, lower=lower, upper=upper).mse(q)
    return laplace, gaussian


def crossing_k(epsilon, q, *, delta=DELTA, sensitivity=SENSITIVITY, k_max=1000):
    """The smallest ``k`` at which the clamped Gaussian release has the smaller exact MSE at ``q``.

    ``q`` may be an array (the answer has its shape, as floats); ``nan`` (or ``None`` for a scalar ``q``)
    where the Laplace release keeps the smaller MSE up to ``k_max`` releases.
    """
    k_max = _releases(k_max, "k_max")
    q = np.asarray(q, dtype=float)
    out = np.full(q.shape, np.nan)
    for k in range(1, k_max + 1):
        laplace, gaussian = clamped_mse(
            epsilon, k, q, delta=delta, sensitivity=sensitivity
        )
        out = np.where(np.isnan(out) & (gaussian < laplace), k, out)
        if not np.isnan(out).any():
            break
    if out.ndim == 0:
        return None if np.isnan(out) else int(out)
    return out


@functools.lru_cache(maxsize=64)
def _curves(epsilon, k):
    return clamped_mse(epsilon, k, _Q)


@view(
    epsilon=(0.25, 4.0, 0.25),
    k=(1, 40, 1),
    grid={"epsilon": (0.5, 1.0, 4.0), "k": (1, 4, 7, 20)},
)
def draw_laplace_or_gaussian(epsilon=1.0, k=1):
    """Laplace or Gaussian: the exact MSE of one of k clamped releases of a proportion under one (ε, δ).

    ``k`` releases of a proportion of :data:`N_PEOPLE` people share the budget ``(ε, δ)`` with
    ``δ`` = :data:`DELTA`; each is clamped to ``[0, 1]``.  The solid curves are the exact MSE of one
    release against the true value ``q``; the dotted lines are the MSE without clamping (``2b²`` and
    ``σ²``), where they fit on the axis.
    """
    epsilon, k = positive_epsilon(epsilon), _releases(k)
    b, sigma = release_scales(epsilon, k)
    laplace, gaussian = _curves(epsilon, k)
    fig, ax = figure()
    ax.plot(_Q, laplace, color=COLORS["laplace"], label=rf"Laplace, $b = {b:.3g}$")
    ax.plot(
        _Q, gaussian, color=COLORS["bit"], label=rf"Gaussian, $\sigma = {sigma:.3g}$"
    )
    ax.axhline(2 * b**2, color=COLORS["laplace"], ls=":", lw=1.2)
    ax.axhline(sigma**2, color=COLORS["bit"], ls=":", lw=1.2)
    ax.set_yscale("log")
    ax.set_ylim(1e-6, 10.0)  # room for the legend
    ax.set_xlim(*RANGE)
    ax.set_xlabel(r"true proportion $q$")
    ax.set_ylabel("MSE of one release")
    mid = len(_Q) // 2
    better = "Gaussian" if gaussian[mid] < laplace[mid] else "Laplace"
    ax.set_title(
        rf"$\varepsilon = {epsilon:.3g}$, $\delta = 10^{{-5}}$, $k = {k}$:"
        f" {better} better at q = 0.5",
        fontsize=10,
    )
    ax.legend(loc="upper center", ncol=2)
    return fig
