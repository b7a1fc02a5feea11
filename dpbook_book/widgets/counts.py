"""The view of Part V, chapter 18: a count on {0, ..., n} released four ways, bias and RMSE exactly.

The four mechanisms, all exactly ε-DP for a count (sensitivity 1):

* clamping the discrete Laplace release (:class:`dpbook.DiscreteBIT`, scale ``1/ε``);
* conditioning it on {0, ..., n} (:class:`dpbook.DiscreteTruncated`) at the smallest scale that makes
  it ε-DP (:func:`dpbook.discrete_truncated_scale`);
* Part I's continuous clamping (:class:`dpbook.BIT`, scale ``1/ε``) rounded to the nearest integer
  (:class:`dpbook.Rounded`);
* Part I's continuous truncation (:class:`dpbook.Truncated`) at its audited scale
  (:func:`dpbook.truncated_scale`), rounded.

Every bias and MSE is the library's: the discrete families' closed forms, and for the rounded ones
:class:`dpbook.Rounded`'s exact sums over the ``n + 1`` cells ``(k - 1/2, k + 1/2]``.  This module only
draws.
"""

from __future__ import annotations

import functools

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = ["count_mechanisms", "draw_count_boundary"]

#: the view's mechanisms, by key (the labels are what the legend shows)
LABELS = {
    "discrete_bit": "discrete, clamped",
    "discrete_truncated": "discrete, conditioned",
    "rounded_bit": "continuous clamped, rounded",
    "rounded_truncated": "continuous truncated, rounded",
}

STYLES = {
    "discrete_bit": dict(color=COLORS["bit"], marker="o", ls="-"),
    "discrete_truncated": dict(color=COLORS["truncated"], marker="s", ls="-"),
    "rounded_bit": dict(color=COLORS["bit"], marker="", ls=":"),
    "rounded_truncated": dict(color=COLORS["truncated"], marker="", ls="--"),
}


def count_mechanisms(epsilon=1.0, n=10):
    """The four ε-DP mechanisms of the view for a count on ``{0, ..., n}``, keyed as :data:`LABELS`.

    Returns a dict of dpbook mechanisms with integer releases; the two continuous ones are rounded
    (:class:`dpbook.Rounded`).
    """
    eps = float(epsilon)
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    n = int(n)
    b = dpbook.laplace_scale(eps, 1.0)
    return {
        "discrete_bit": dpbook.DiscreteBIT(b, lower=0, upper=n),
        "discrete_truncated": dpbook.DiscreteTruncated(
            dpbook.discrete_truncated_scale(eps, lower=0, upper=n), lower=0, upper=n
        ),
        "rounded_bit": dpbook.Rounded(dpbook.BIT(b, lower=0.0, upper=float(n))),
        "rounded_truncated": dpbook.Rounded(
            dpbook.Truncated(
                dpbook.truncated_scale(eps, 1.0, 0.0, float(n)),
                lower=0.0,
                upper=float(n),
            )
        ),
    }


@functools.lru_cache(maxsize=64)
def _curves(epsilon, n):
    mechs = count_mechanisms(epsilon, n)
    q = np.arange(n + 1)
    out = {
        key: (np.asarray(mech.bias(q)), np.asarray(mech.mse(q)))
        for key, mech in mechs.items()
    }
    return q, out


@view(
    epsilon=(0.25, 3.0, 0.05),
    n=(2, 40, 1),
    grid={"epsilon": (0.5, 1.0, 2.0), "n": (5, 10, 30)},
)
def draw_count_boundary(epsilon=1.0, n=10):
    """Bias (left) and root mean squared error (right) over the true count ``q ∈ {0, ..., n}``.

    Four ε-DP releases of a count: the discrete Laplace release clamped or conditioned, and Part I's
    continuous clamping and truncation rounded to integers (each truncation at its audited scale).
    """
    q, curves = _curves(float(epsilon), int(n))
    fig, (ax, ax2) = figure(ncols=2)
    for key, (bias, mse) in curves.items():
        style = dict(STYLES[key], ms=3.5 if n <= 15 else 2.0, lw=1.4)
        ax.plot(q, bias, label=LABELS[key], **style)
        ax2.plot(q, np.sqrt(mse), label=LABELS[key], **style)
    b = dpbook.laplace_scale(float(epsilon), 1.0)
    lap_rmse = np.sqrt(dpbook.DiscreteLaplace(b).variance(0))
    ax.axhline(0.0, color=COLORS["bound"], lw=0.8)
    ax2.axhline(
        lap_rmse,
        color=COLORS["laplace"],
        lw=1.0,
        ls="-.",
        label="discrete Laplace, unbounded",
    )
    ax.set_xlabel(r"true count $q$")
    ax.set_ylabel(r"bias $\mathbb{E}\,M(q) - q$")
    ax2.set_xlabel(r"true count $q$")
    ax2.set_ylabel("root mean squared error")
    ax.set_title(
        rf"$\varepsilon={epsilon:.2g}$, counts in $\{{0,\dots,{n}\}}$", fontsize=10
    )
    ax2.set_title(r"each mechanism $\varepsilon$-DP", fontsize=10)
    ax2.set_ylim(bottom=0.0)
    ax.legend(loc="best")
    ax2.legend(loc="best")
    return fig
