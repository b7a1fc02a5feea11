"""The view of Part V, chapter 19: the best ε-DP count mechanism for one user, next to GRS's.

Every number comes from :mod:`dpbook`: the optimum over all ε-DP mechanisms from
:func:`dpbook.optimal_count_mechanism` (a linear program), the truncated geometric mechanism and the
user's best remap of it from :func:`dpbook.remapped_geometric`.  This module holds the chapter's
users (their priors and losses) and draws.
"""

from __future__ import annotations

import functools

import numpy as np
from matplotlib.ticker import MaxNLocator
from scipy import stats

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = ["PRIORS", "LOSSES", "count_prior", "count_loss", "draw_count_optimal"]

#: the chapter's priors over the true count (keys are never shown: the dropdown shows the labels)
PRIORS = {
    "uniform": "uniform",
    "binomial": "binomial(n, 0.3)",
    "spike": "all mass at n // 3",
}

#: the chapter's losses, by key: (label, the loss function of dpbook)
LOSSES = {
    "absolute": ("absolute error", dpbook.absolute_loss),
    "squared": ("squared error", dpbook.squared_loss),
    "zero_one": ("0-1 loss", dpbook.zero_one_loss),
}


def count_prior(kind, n):
    """The prior over ``{0, …, n}`` named ``kind``: uniform, binomial(n, 0.3), or all mass at n // 3."""
    if kind not in PRIORS:
        raise ValueError(f"kind must be one of {sorted(PRIORS)}, got {kind!r}")
    k = np.arange(n + 1)
    if kind == "uniform":
        return np.full(n + 1, 1.0 / (n + 1))
    if kind == "binomial":
        return stats.binom.pmf(k, n, 0.3)
    return (k == n // 3).astype(float)


def count_loss(kind):
    """The loss function named ``kind`` (a function of dpbook)."""
    if kind not in LOSSES:
        raise ValueError(f"kind must be one of {sorted(LOSSES)}, got {kind!r}")
    return LOSSES[kind][1]


@functools.lru_cache(maxsize=128)
def _solve(prior, loss, epsilon, n):
    """What a redraw shows for one user: the prior, and ``(matrix, expected loss)`` of the program's
    optimum and of GRS's mechanism.  Cached (each is a linear program), so its arrays are read-only."""
    p, ell = count_prior(prior, n), count_loss(loss)
    lp = dpbook.optimal_count_mechanism(n, epsilon, prior=p, loss=ell)
    grs = dpbook.remapped_geometric(n, epsilon, prior=p, loss=ell)
    for a in (p, lp.matrix, grs.matrix):
        a.flags.writeable = False
    return p, (lp.matrix, lp.value), (grs.matrix, grs.value)


def _squares(ax, matrix, color, title):
    """Each entry ``P(report r | count i)`` as a square centred at ``(r, i)`` with area proportional to it.

    (A Hinton diagram, drawn as one ``fill_between`` so that a redraw builds and draws one artist, not
    ``(n+1)²`` rectangles, and a kept figure updates it in place.  Each row of squares is one of its
    polygons: the row's squares in turn, joined along the row's centre line, which has no area.)
    """
    size = matrix.shape[0]
    i, r = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    side = 0.92 * np.sqrt(np.clip(matrix, 0.0, 1.0))
    left, bottom, mid = r - side / 2, i - side / 2, i.astype(float)
    right, top = left + side, bottom + side

    def rows(
        *corners,
    ):  # per row: each square's four corners in turn, then a gap before the next row
        row = np.stack(corners, axis=-1).reshape(size, 4 * size)
        return np.column_stack([row, row[:, -1]]).ravel()

    ax.fill_between(
        rows(left, left, right, right),
        rows(mid, bottom, bottom, mid),
        rows(mid, top, top, mid),
        where=np.tile(np.arange(4 * size + 1) < 4 * size, size),
        color=color,
        alpha=0.8,
        lw=0,
    )
    ax.set_xlim(-0.7, size - 0.3)
    ax.set_ylim(size - 0.3, -0.7)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(r"report $r$")
    ax.set_title(title, fontsize=9.5)


@view(
    prior=[(label, key) for key, label in PRIORS.items()],
    loss=[(label, key) for key, (label, _) in LOSSES.items()],
    epsilon=(0.25, 3.0, 0.25),
    n=(2, 20, 1),
    grid={"prior": None, "loss": None, "epsilon": (0.5, 1.0, 2.0)},
)
def draw_count_optimal(prior="binomial", loss="absolute", epsilon=1.0, n=10):
    """The best ε-DP count mechanism for one user (linear program) and GRS's (geometric, then remap).

    Top: the user's prior over the true count ``i``.  Middle: an optimal mechanism of the program
    over all ε-DP mechanisms on ``{0, …, n}``, each probability ``P(r | i)`` a square of that area.
    Bottom: the truncated geometric mechanism followed by the user's best remap.  The titles give
    each one's expected loss: equal, as Ghosh, Roughgarden and Sundararajan proved.
    """
    p, (lp_matrix, lp_value), (grs_matrix, grs_value) = _solve(
        prior, loss, float(epsilon), int(n)
    )
    fig, (ax0, ax1, ax2) = figure(
        ncols=3, gridspec_kw={"width_ratios": [1.0, 1.6, 1.6]}
    )
    size = int(n) + 1
    ax0.barh(np.arange(size), p, color=COLORS["bound"], height=0.7)
    ax0.set_ylim(size - 0.3, -0.7)
    ax0.set_xlim(0.0, 1.05 * float(p.max()))
    ax0.set_xlabel(r"prior $p(i)$")
    ax0.set_ylabel(r"true count $i$")
    ax0.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax0.set_title(f"prior: {PRIORS[prior]}", fontsize=9.5)
    _squares(
        ax1,
        lp_matrix,
        COLORS["laplace"],
        f"best ε-DP mechanism\nexpected loss {lp_value:.4f}",
    )
    _squares(
        ax2,
        grs_matrix,
        COLORS["bit"],
        f"geometric + best remap\nexpected loss {grs_value:.4f}",
    )
    for ax in (ax1, ax2):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(r"true count $i$")
    height = fig.get_figheight()
    fig.suptitle(
        rf"{LOSSES[loss][0]}, $\varepsilon = {float(epsilon):g}$, counts $0, \ldots, {int(n)}$",
        fontsize=10,
        y=1 - 0.12 / height,
    )
    # the panels are stacked: room above for the title, and between them for two-line panel titles
    fig.subplots_adjust(top=1 - 0.85 / height, hspace=0.45)
    return fig
