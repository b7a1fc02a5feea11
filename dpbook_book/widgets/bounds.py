"""The view of Part IV, "Where the bounds come from": clipping bias against noise as the upper clip moves.

Every number comes from :mod:`dpbook`: each curve's points from :func:`dpbook.clipped_mean_mse`
(the exact clipping bias, sampling variance and Laplace noise of the clipped mean) and the marked optimum
from :func:`dpbook.optimal_clip`.  This module holds the chapter's data laws and draws.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = ["LAWS", "clipping_law", "clipping_curves", "draw_clipping_tradeoff"]

#: the chapter's data laws, all nonnegative (clipped below at 0): key -> (label, frozen scipy law)
LAWS = {
    "lognorm": ("lognormal, σ = 1", stats.lognorm(1.0)),
    "pareto": ("Pareto, shape 3", stats.pareto(3.0)),
    "halfnorm": ("half-normal", stats.halfnorm()),
    "expon": ("exponential", stats.expon()),
}

#: the fixed lower clip of every law (the data are nonnegative)
LOWER = 0.0

#: how many upper clips each curve evaluates (each one exact MSE)
POINTS = 60


def clipping_law(kind):
    """The data law named ``kind`` (a frozen ``scipy.stats`` law; see :data:`LAWS`)."""
    if kind not in LAWS:
        raise ValueError(f"kind must be one of {sorted(LAWS)}, got {kind!r}")
    return LAWS[kind][1]


@functools.lru_cache(maxsize=64)
def clipping_curves(kind, n, epsilon):
    """The upper clips ``u``, the :class:`dpbook.ClippedMeanMSE` at each, and the optimum (cached).

    The clips run on a log scale over a range fixed for each law (from an eighth of its median to its
    ``1 - 10^{-6}`` quantile, widened to hold the optimum), so the axis stays put as ``n`` and ``ε``
    move and the library integrates each window once for every frame.
    """
    law = clipping_law(kind)
    best = dpbook.optimal_clip(law, n, epsilon, lower=LOWER)
    lo = min(float(law.median()) / 8, best.upper / 2)
    hi = max(float(law.isf(1e-6)), 2 * best.upper)
    u = np.geomspace(lo, hi, POINTS)
    parts = [dpbook.clipped_mean_mse(law, n, LOWER, x, epsilon) for x in u]
    return u, tuple(parts), best


@view(
    law=[(label, key) for key, (label, _) in LAWS.items()],
    n=(10, 10000, 10),
    epsilon=(0.1, 2.0, 0.05),
    grid={"law": None, "epsilon": (0.1, 0.5, 2.0)},
)
def draw_clipping_tradeoff(law="lognorm", n=1000, epsilon=0.5):
    """The MSE of a private clipped mean against the upper clip u: clipping bias², sampling variance, noise.

    ``n`` records of the chosen law are clipped to ``[0, u]``, averaged and released with Laplace noise
    of scale ``u/(nε)``; the curves are the three terms of the exact MSE about ``E X`` and their sum,
    and the point marks the MSE-optimal ``u``.
    """
    u, parts, best = clipping_curves(law, int(n), float(epsilon))
    bias2 = np.array([p.bias**2 for p in parts])
    sampling = np.array([p.sampling_variance for p in parts])
    noise = np.array([p.noise_mse for p in parts])
    total = np.array([p.mse for p in parts])
    fig, ax = figure()
    ax.plot(u, bias2, color=COLORS["bit"], ls="--", label="clipping bias²")
    ax.plot(u, sampling, color=COLORS["truncated"], ls="-.", label="sampling variance")
    ax.plot(u, noise, color=COLORS["laplace"], ls=":", label="Laplace noise")
    ax.plot(u, total, color=COLORS["simulation"], label="MSE (sum)")
    ax.plot(
        [best.upper],
        [best.mse.mse],
        ls="none",
        marker="o",
        ms=6,
        color=COLORS["translated_ramp"],
        label=rf"best $u = {best.upper:.3g}$",
    )
    ax.axvline(best.upper, color=COLORS["translated_ramp"], lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(best.mse.mse / 100, 1e4 * best.mse.mse)  # room for the legend
    ax.set_xlim(u[0], u[-1])
    ax.set_xlabel(r"upper clip $u$ (lower clip $l = 0$)")
    ax.set_ylabel("MSE of the mean")
    ax.set_title(
        rf"{LAWS[law][0]}, $n = {int(n)}$, $\varepsilon = {float(epsilon):.3g}$",
        fontsize=10,
    )
    ax.legend(loc="upper center", ncol=2, fontsize=9.5)
    return fig
