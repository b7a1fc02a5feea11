"""The view of Part V, "Many counts at once": the exact bias of post-processing a three-cell histogram.

A histogram of three counts ``(q₁, 5, 15)`` with a public total is released with geometric (discrete
Laplace) noise of scale ``b = Δ/ε``, ``Δ = 2`` (one record replaced moves one unit between two
cells), and post-processed by clamping each cell, by the Euclidean projection onto the nonnegative
vectors with the known total, or by its nearest integer vector.  Every number comes from
:func:`dpbook.histogram_moments` (exact lattice sums, with a certified error); this module only
draws.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = [
    "METHODS",
    "OTHER_COUNTS",
    "SENSITIVITY",
    "histogram_counts",
    "histogram_scale",
    "histogram_bias_table",
    "draw_histogram_bias",
]

#: the post-processings the view compares (keys of ``dpbook.POSTPROCESSINGS``): their labels
METHODS = {
    "raw": "raw",
    "clamp": "clamp at 0",
    "simplex": "simplex projection",
    "integer_simplex": "integer simplex",
}

#: the counts of cells 2 and 3 (cell 1's count ``q₁`` moves)
OTHER_COUNTS = (5, 15)

#: the L1 sensitivity of a histogram when one record is replaced (the total stays put): 2, which is
#: ``n * dpbook.histogram_sensitivity(n, relation="substitution", denominator="public")``
SENSITIVITY = 2.0

_STYLE = {
    "raw": dict(color=COLORS["laplace"]),
    "clamp": dict(color=COLORS["bit"]),
    "simplex": dict(color=COLORS["log_laplace"]),
    "integer_simplex": dict(color=COLORS["truncated"]),
}


def histogram_counts(q1):
    """The view's true histogram ``(q₁, 5, 15)`` as an int64 array (``q1`` an integer >= 0)."""
    if isinstance(q1, bool) or not isinstance(q1, (int, np.integer)) or q1 < 0:
        raise ValueError(f"q1 must be an integer >= 0, got {q1!r}")
    return np.array((int(q1), *OTHER_COUNTS), dtype=np.int64)


def histogram_scale(epsilon):
    """The noise scale ``b = Δ/ε`` with ``Δ = SENSITIVITY`` (``dpbook.laplace_scale``)."""
    return dpbook.laplace_scale(epsilon, SENSITIVITY)


@functools.lru_cache(maxsize=128)
def histogram_bias_table(epsilon=1.0, q1=2):
    """``{method: dpbook.HistogramMoments}`` for the view's histogram at ``ε`` (cached: the frames
    ask for each once).  The total ``q₁ + 20`` is public; the noise is ``DiscreteLaplace(b)``."""
    counts = histogram_counts(q1)
    mechanism = dpbook.DiscreteLaplace(histogram_scale(epsilon))
    total = int(counts.sum())
    return {
        key: dpbook.histogram_moments(key, counts, mechanism, total=total)
        for key in METHODS
    }


@view(
    epsilon=(0.5, 4.0, 0.25),
    q1=(0, 30, 1),
    grid={"epsilon": (0.5, 1.0, 2.0), "q1": (0, 2, 8, 20)},
)
def draw_histogram_bias(epsilon=1.0, q1=2):
    """The exact bias and RMSE of each cell of the histogram (q₁, 5, 15), total public, after four releases.

    The counts are released with geometric noise of scale ``b = 2/ε``.  Top: the exact bias of each
    cell (the raw release is unbiased); bottom: each cell's exact root mean squared error.  Clamping
    lifts the small cells only; the projection and its integer version lift the small cells and pull
    the largest one down, keeping the total.  The integer version breaks ties toward the lower cell
    index, which with integer noise favours cell 1 (Chapter 22 shows how much).
    """
    table = histogram_bias_table(float(epsilon), int(q1))
    counts = histogram_counts(int(q1))
    cells = np.arange(counts.size)
    width = 0.8 / len(METHODS)
    fig, (ax, ax2) = figure(ncols=2)
    for k, key in enumerate(METHODS):
        x = cells + (k - (len(METHODS) - 1) / 2) * width
        moments = table[key]
        ax.bar(x, moments.bias, width=width, **_STYLE[key], label=METHODS[key])
        ax2.bar(x, np.sqrt(moments.mse), width=width, **_STYLE[key])
    ax.axhline(0.0, color=COLORS["bound"], lw=0.8)
    labels = [rf"cell {i + 1}: $q_{i + 1} = {c}$" for i, c in enumerate(counts)]
    for a in (ax, ax2):
        a.set_xticks(cells, labels)
        a.set_xlim(-0.55, counts.size - 0.45)
    ax.set_ylabel("exact bias")
    reach = max(float(np.max(np.abs(table[key].bias))) for key in METHODS)
    ax.set_ylim(-1.2 * reach - 0.05, 2.2 * reach + 0.05)  # room for the legend
    ax.legend(loc="upper center", ncol=2, fontsize=9.5)
    b = histogram_scale(float(epsilon))
    ax.set_title(
        rf"total ${int(counts.sum())}$ public; geometric noise, "
        rf"$\varepsilon = {float(epsilon):.3g}$, $b = {b:.3g}$",
        fontsize=10,
    )
    ax2.set_ylabel("exact RMSE")
    ax2.set_ylim(0.0, 1.15 * math.sqrt(float(np.max(table["raw"].mse))))
    return fig
