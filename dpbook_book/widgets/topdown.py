"""The view of Part V, chapter 23: who pays for nonnegative, total-preserving counts.

Three areas of different sizes (:data:`AREAS`) share a fund (:data:`FUNDS`) in proportion to their
released counts, among the areas whose released count reaches an eligibility threshold ``τ``
(:func:`dpbook.allocate`).  The counts are released with geometric noise at ``ε`` (scale ``1/ε``,
:class:`dpbook.DiscreteLaplace`) and post-processed by one of :data:`POSTS`.  Every number is the
library's exact expected misallocation on three areas (:func:`dpbook.expected_misallocation`): this
module only draws.
"""

from __future__ import annotations

import functools

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import positive_epsilon, view

__all__ = ["AREAS", "FUNDS", "POSTS", "misallocation_table", "draw_misallocation"]

#: the true counts of the three areas: a small one, a middle one and a large one
AREAS = (1, 14, 45)

#: the fund shared among the eligible areas (10 per person when every area is eligible)
FUNDS = 600.0

#: the post-processings compared, by their key in ``dpbook.POSTPROCESSINGS``: their labels.  Clamping
#: is left out: it allocates exactly as the raw counts do (a negative release is not eligible, a zero
#: one receives nothing), which the chapter shows.
POSTS = {
    "raw": "raw noisy counts",
    "simplex": "simplex projection",
    "integer_simplex": "nearest integer counts",
}

#: the post-processings that need the public total
NEEDS_TOTAL = ("simplex", "integer_simplex")

_COLOR = {
    "raw": COLORS["laplace"],
    "simplex": COLORS["truncated"],
    "integer_simplex": COLORS["log_laplace"],
}


def _threshold(threshold):
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, np.integer))
        or threshold < 0
    ):
        raise ValueError(f"threshold must be an integer >= 0, got {threshold!r}")
    return int(threshold)


@functools.lru_cache(maxsize=128)
def misallocation_table(epsilon=1.0, threshold=0):
    """The exact expected misallocation of each area under each post-processing of :data:`POSTS`.

    Returns ``{post: dpbook.Misallocation}`` for the counts :data:`AREAS` released with geometric
    noise at ``ε`` (scale ``1/ε``), the fund :data:`FUNDS` and the eligibility threshold ``τ``;
    the simplex projections hold the true total fixed (it is public).
    """
    mechanism = dpbook.DiscreteLaplace(1.0 / positive_epsilon(epsilon))
    counts = np.array(AREAS, dtype=np.int64)
    out = {}
    for post in POSTS:
        total = int(counts.sum()) if post in NEEDS_TOTAL else None
        out[post] = dpbook.expected_misallocation(
            post, counts, mechanism, FUNDS, threshold=_threshold(threshold), total=total
        )
    return out


@view(
    epsilon=(1.0, 4.0, 0.1),
    threshold=(0, 20, 1),
    grid={"epsilon": (1.0, 2.0, 4.0), "threshold": (0, 14, 15)},
)
def draw_misallocation(epsilon=1.0, threshold=0):
    """Who pays: the exact expected misallocation of a fund shared by three areas, per post-processing.

    The fund :data:`FUNDS` is shared in proportion to the released counts of the three areas
    :data:`AREAS` whose released count is at least ``τ``; the bars are ``E[allocation of the
    release] − allocation of the true counts`` for each area and each post-processing, exact.
    """
    table = misallocation_table(float(epsilon), int(threshold))
    counts = np.array(AREAS, dtype=np.int64)
    fair = dpbook.allocate(counts, FUNDS, threshold=int(threshold))
    fig, ax = figure()
    x = np.arange(len(AREAS))
    width = 0.8 / len(POSTS)
    for k, (post, label) in enumerate(POSTS.items()):
        ax.bar(
            x + (k - (len(POSTS) - 1) / 2) * width,
            np.asarray(table[post].expected, dtype=float),
            width=width,
            color=_COLOR[post],
            label=label,
        )
    ax.axhline(0.0, color=COLORS["bound"], lw=0.8)
    ax.set_xticks(
        x, [f"q = {q}, fair {s:.0f}" for q, s in zip(AREAS, fair, strict=True)]
    )
    ax.set_xlabel("area: true count and fair share")
    ax.set_ylabel("expected misallocation")
    ax.set_title(
        rf"$\varepsilon={epsilon:.3g}$, eligible if count $\geq \tau={threshold}$",
        fontsize=10,
    )
    ax.legend(loc="best")
    return fig
