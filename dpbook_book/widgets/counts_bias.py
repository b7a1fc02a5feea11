"""The view of Part V, chapter 20: nonnegative counts in many small areas, and the least-bias map.

The lab: ``AREAS_PER_COUNT`` areas at each true count ``0, 1, …, max_count``, each released at
``ε`` (scale ``b = 1/ε``, sensitivity 1) by one of the methods of :data:`METHODS`.  Every exact number
comes from :mod:`dpbook`: the laws :class:`dpbook.DiscreteLaplace`, :class:`dpbook.DiscreteBIT` and
:class:`dpbook.DiscreteTruncated`, and the least-bias post-processing
:func:`dpbook.optimal_count_postprocessing`.  The bias of clamping the *sum* of the raw releases is
:func:`dpbook.clamped_sum_bias`.  This module only draws.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import positive_epsilon, view

__all__ = [
    "METHODS",
    "AREAS_PER_COUNT",
    "lab_counts",
    "count_mechanisms",
    "lab_table",
    "draw_least_bias",
    "draw_small_areas",
]

#: the methods of the lab, by key: their labels
METHODS = {
    "raw": "raw release",
    "clamp": "clamp at 0",
    "condition": "condition on ≥ 0",
    "least": "least-bias φ*",
    "unbiased": "least-bias, unbiased tail",
    "total": "sum raw, then clamp",
}

#: the methods' short names, for the bar chart's axis
SHORT = {
    "raw": "raw",
    "clamp": "clamp",
    "condition": "condition",
    "least": "φ*",
    "unbiased": "φ*, unbiased tail",
    "total": "sum, then clamp",
}

#: how many areas the lab has at each true count
AREAS_PER_COUNT = 20

_STYLE = {
    "raw": dict(color=COLORS["laplace"], ls=":"),
    "clamp": dict(color=COLORS["bit"], ls="-"),
    "condition": dict(color=COLORS["truncated"], ls="--"),
    "least": dict(color=COLORS["log_laplace"], ls="-"),
    "unbiased": dict(color=COLORS["normalized"], ls="-"),
    "total": dict(color=COLORS["croft"], ls="-."),
}


def lab_counts(max_count=10, per_count=AREAS_PER_COUNT):
    """The lab's true counts: ``per_count`` areas at each count ``0, …, max_count`` (int64 array)."""
    for name, value, low in (("max_count", max_count, 0), ("per_count", per_count, 1)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or value < low
        ):
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return np.repeat(np.arange(int(max_count) + 1, dtype=np.int64), int(per_count))


def count_mechanisms(epsilon):
    """The per-area methods at ``ε`` (scale ``1/ε``): raw, clamped, conditioned, and the two least-bias
    maps of :func:`dpbook.least_count_bias` (integer outputs): the closed-form ``φ*`` and the one
    with an unbiased tail."""
    b = 1.0 / positive_epsilon(epsilon)
    least = dpbook.least_count_bias(b, integer=True)
    return {
        "raw": dpbook.DiscreteLaplace(b),
        "clamp": dpbook.DiscreteBIT(b, lower=0),
        "condition": dpbook.DiscreteTruncated(b, lower=0),
        "least": least.optimum,
        "unbiased": least.unbiased,
    }


@functools.lru_cache(maxsize=64)
def lab_table(epsilon=0.5, max_count=10):
    """Exact total bias and RMSE of the total, over the lab's areas, for each method of :data:`METHODS`.

    Returns ``{key: (total_bias, total_rmse, largest |bias| among the lab's counts)}``; areas are
    independent, so the total's
    MSE is the sum of the areas' variances plus the squared total bias.  For "sum raw, then clamp"
    the RMSE is the raw one, an upper bound (clamping a total toward the nonnegative truth only
    shortens its error), and there is no per-area release.
    """
    q = lab_counts(max_count)
    out = {}
    for key, mech in count_mechanisms(epsilon).items():
        bias = np.asarray(mech.bias(q), dtype=float)
        var = np.asarray(mech.mse(q), dtype=float) - bias**2
        out[key] = (
            float(bias.sum()),
            float(math.sqrt(var.sum() + bias.sum() ** 2)),
            float(np.max(np.abs(mech.bias(np.arange(max_count + 1))))),
        )
    b = 1.0 / positive_epsilon(epsilon)
    out["total"] = (
        dpbook.clamped_sum_bias(b, int(q.sum()), q.size),
        out["raw"][1],
        math.nan,
    )
    return out


def draw_least_bias(epsilon=0.5):
    """The least-bias map of Chapter 21's theorem against clamping (a static figure, not a view).

    Top: the maps ``k ↦ φ(k)`` (least-bias ``φ*``, clamping, the identity).  Bottom: their exact biases
    over the true count, with the band ``±B*`` of the theorem and the conditioned release.
    """
    b = 1.0 / positive_epsilon(epsilon)
    star = dpbook.optimal_count_postprocessing(b)
    B = dpbook.least_count_bias(b).value
    t = star.window - 1
    k = np.arange(-3, t + 8)
    fig, (ax, ax2) = figure(ncols=2)
    ax.plot(k, k, color=COLORS["bound"], lw=0.8, ls=":", label="identity")
    ax.step(k, np.maximum(k, 0), where="mid", **_STYLE["clamp"], label="clamp at 0")
    ax.plot(
        k,
        star.phi(k),
        marker="o",
        ms=3.5,
        **_STYLE["least"],
        label=r"least-bias $\varphi^*$",
    )
    ax.axvline(t, color=COLORS["bound"], lw=0.6)
    ax.annotate(rf"$t={t}$", (t, 0), xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel(r"release $k = q + K$")
    ax.set_ylabel(r"$\varphi(k)$")
    ax.set_title(rf"$\varepsilon={epsilon:.2g}$, $b={b:.3g}$", fontsize=10)
    ax.legend(loc="best")
    q = np.arange(0, t + 8)
    mechs = count_mechanisms(epsilon)
    ax2.axhspan(
        -B,
        B,
        color=_STYLE["least"]["color"],
        alpha=0.12,
        lw=0,
        label=rf"$\pm B^* = \pm{B:.3f}$",
    )
    for key in ("clamp", "condition", "least"):
        ax2.plot(
            q, mechs[key].bias(q), marker="o", ms=3, **_STYLE[key], label=METHODS[key]
        )
    ax2.axhline(0.0, **_STYLE["raw"], label=METHODS["raw"])
    ax2.set_xlabel(r"true count $q$")
    ax2.set_ylabel(r"exact bias $E\,M(q) - q$")
    ax2.legend(loc="best")
    return fig


@functools.lru_cache(maxsize=64)
def _area_biases(epsilon, max_count):
    """The exact bias at each true count ``0, …, max_count`` of the per-area methods drawn by
    :func:`draw_small_areas` (cached: the least-bias maps are linear programs)."""
    q = np.arange(max_count + 1)
    mechs = count_mechanisms(epsilon)
    return q, {
        key: np.asarray(mechs[key].bias(q))
        for key in ("clamp", "condition", "least", "unbiased")
    }


@view(
    epsilon=(0.2, 2.0, 0.1),
    max_count=(2, 20, 1),
    grid={"epsilon": (0.25, 0.5, 1.0, 2.0), "max_count": (5, 10, 20)},
)
def draw_small_areas(epsilon=0.5, max_count=10):
    """Many small areas released at ``ε``: the exact bias per true count, and of the total over all areas.

    Top: the exact bias at each true count of the per-area methods.  Bottom: the exact bias of the total
    over ``AREAS_PER_COUNT`` areas at each count ``0, …, max_count``, with error bars of one exact
    standard deviation of the total (RMSE for the "sum, then clamp" bar, an upper bound).
    """
    q, biases = _area_biases(float(epsilon), int(max_count))
    table = lab_table(float(epsilon), int(max_count))
    fig, (ax, ax2) = figure(ncols=2)
    for key, bias in biases.items():
        ax.plot(q, bias, marker="o", ms=3, **_STYLE[key], label=METHODS[key])
    ax.axhline(0.0, **_STYLE["raw"], label=METHODS["raw"])
    ax.set_xlabel(r"true count $q$ of an area")
    ax.set_ylabel(r"exact bias per area")
    ax.set_title(rf"$\varepsilon={epsilon:.2g}$ per area", fontsize=10)
    ax.legend(loc="best")
    keys = list(METHODS)[::-1]  # top to bottom in the order of METHODS
    bias = np.array([table[k][0] for k in keys])
    sd = np.array(
        [math.sqrt(max(table[k][1] ** 2 - table[k][0] ** 2, 0.0)) for k in keys]
    )
    rows = np.arange(len(keys))
    ax2.barh(
        rows, bias, height=0.6, color=[_STYLE[k]["color"] for k in keys], alpha=0.85
    )
    ax2.hlines(rows, bias - sd, bias + sd, color=COLORS["simulation"], lw=1.2)
    ax2.axvline(0.0, color=COLORS["bound"], lw=0.8)
    ax2.set_yticks(rows, [SHORT[k] for k in keys])
    ax2.set_xlabel("exact bias of the total (± 1 sd)")
    n, total = lab_counts(max_count).size, int(lab_counts(max_count).sum())
    ax2.set_title(rf"{n} areas, true total {total}", fontsize=10)
    fig.subplots_adjust(
        left=0.3
    )  # room for the method names beside the bars (the panels are stacked)
    return fig
