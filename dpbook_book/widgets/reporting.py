"""The view of Part IV, chapter 17: the exact confidence interval behind one bounded release.

Every number comes from :mod:`dpbook`: the interval from :func:`dpbook.confidence_interval`, the
coverage curves from :func:`dpbook.interval_coverage` (exact, by summing the law), the plug-in interval
from :func:`dpbook.plugin_interval` and the scales from :func:`dpbook.laplace_scale` and
:func:`dpbook.truncated_scale` (the truncated mechanism is calibrated to its audited ε).  This module
only draws.
"""

from __future__ import annotations

import functools

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = ["reporting_mechanism", "draw_release_interval"]

#: the view's option keys (never shown: the dropdown shows the labels)
MECHANISMS = {"clamping": "clamping (BIT)", "truncation": "truncated Laplace"}

#: the sensitivity of the statistic the view releases, on the domain [0, upper]
SENSITIVITY = 0.1

#: how many true values the coverage curve evaluates (its cost is one exact coverage per point)
COVERAGE_POINTS = 41


def reporting_mechanism(
    mechanism="clamping", epsilon=1.0, upper=1.0, sensitivity=SENSITIVITY
):
    """The mechanism of the view: BIT or truncated Laplace on ``[0, upper]``, audited at ``epsilon``.

    BIT gets ``b = Δ/ε`` (:func:`dpbook.laplace_scale`); truncation the smallest scale at which it is
    ε-DP on the interval (:func:`dpbook.truncated_scale`), not the nominal ``Δ/ε``.
    """
    if mechanism not in MECHANISMS:
        raise ValueError(
            f"mechanism must be one of {sorted(MECHANISMS)}, got {mechanism!r}"
        )
    if not (np.isfinite(upper) and upper > 0):
        raise ValueError(f"upper must be a positive finite number, got {upper!r}")
    if mechanism == "clamping":
        return dpbook.BIT(
            dpbook.laplace_scale(epsilon, sensitivity), lower=0.0, upper=upper
        )
    scale = dpbook.truncated_scale(epsilon, sensitivity, 0.0, upper)
    return dpbook.Truncated(scale, lower=0.0, upper=upper)


@functools.lru_cache(maxsize=64)
def _coverage_curves(mechanism, epsilon, upper, level):
    """Exact coverage over a grid of true values of the exact and the plug-in intervals (cached)."""
    mech = reporting_mechanism(mechanism, epsilon, upper)
    q = np.linspace(0.0, upper, COVERAGE_POINTS)
    exact = dpbook.interval_coverage(mech, dpbook.ExactInterval(mech, level), q)
    plugin = dpbook.interval_coverage(
        mech, lambda x: dpbook.plugin_interval(mech, x, level), q
    )
    return q, np.asarray(exact), np.asarray(plugin)


@view(
    mechanism=[(label, key) for key, label in MECHANISMS.items()],
    epsilon=(0.2, 3.0, 0.1),
    release=(0.0, 1.0, 0.01),
    upper=(0.5, 3.0, 0.5),
    level=(0.5, 0.99, 0.01),
    grid={"mechanism": None, "epsilon": (0.5, 1.0), "release": (0.0, 0.05, 0.3)},
)
def draw_release_interval(
    mechanism="clamping", epsilon=1.0, release=0.05, upper=1.0, level=0.95
):
    """The exact interval for the true value behind one release, and the coverage over the true value.

    Top: for the release ``x``, the two tails ``P_q(M <= x)`` and ``P_q(M >= x)`` against the true
    value ``q``; the interval holds the ``q`` where both are at least ``α/2``.  Bottom: the exact
    coverage of that interval and of the plug-in interval over ``q``.
    """
    mech = reporting_mechanism(mechanism, epsilon, upper)
    x = float(np.clip(release, 0.0, upper))
    alpha = 1.0 - level
    ci = dpbook.confidence_interval(mech, x, level)
    q = np.linspace(0.0, upper, 401)
    below = np.asarray(mech.cdf(x, q))
    above = np.asarray(mech.sf(np.nextafter(x, -np.inf), q))
    fig, (ax, ax2) = figure(ncols=2)
    ax.axvspan(
        ci.low,
        ci.high,
        color=COLORS["bit"],
        alpha=0.18,
        lw=0,
        label=rf"interval $[{ci.low:.3f}, {ci.high:.3f}]$",
    )
    ax.plot(q, below, color=COLORS["laplace"], label=r"$P_q(M \leq x)$")
    ax.plot(q, above, color=COLORS["truncated"], ls="--", label=r"$P_q(M \geq x)$")
    ax.axhline(
        alpha / 2,
        color=COLORS["bound"],
        ls=":",
        lw=1.2,
        label=rf"$\alpha/2 = {alpha / 2:.3g}$",
    )
    ax.axvline(x, color=COLORS["simulation"], lw=0.8)
    ax.set_xlabel(r"true value $q$")
    ax.set_ylabel("probability")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(
        rf"{MECHANISMS[mechanism]}, $b={mech.scale:.3g}$, release $x={x:.3g}$",
        fontsize=10,
    )
    ax.legend(loc="best")
    grid, exact, plugin = _coverage_curves(
        mechanism, float(epsilon), float(upper), float(level)
    )
    ax2.plot(
        grid, exact, color=COLORS["bit"], marker="o", ms=2.5, label="exact interval"
    )
    ax2.plot(
        grid,
        plugin,
        color=COLORS["laplace"],
        ls=":",
        marker="o",
        ms=2.5,
        label="plug-in interval",
    )
    ax2.axhline(
        level, color=COLORS["bound"], ls="--", lw=1, label=rf"level ${level:.2f}$"
    )
    ax2.set_xlabel(r"true value $q$")
    ax2.set_ylabel(r"exact coverage $P_q(q \in C(M))$")
    ax2.set_ylim(min(0.75, float(plugin.min()) - 0.02), 1.005)
    ax2.set_title(
        rf"$\varepsilon={epsilon:.2g}$, $\Delta={SENSITIVITY:g}$, $q\in[0, {upper:g}]$",
        fontsize=10,
    )
    ax2.legend(loc="best")
    return fig
