"""The book's shared figure style: one look for every figure, one colour per mechanism.

Figures use fixed margins rather than a layout engine: constrained layout more than doubles the
cost of a redraw, and every widget redraw must stay below 100 ms.  For the same reason titles sit at a
fixed height (``axes.titley``) instead of being lifted over whatever is above the axes, which costs a
second layout of the tick labels on every draw; nothing of the book's figures is above the axes.
"""

from __future__ import annotations

import contextlib

import matplotlib as mpl
import matplotlib.pyplot as plt

#: one colour per mechanism family, used by every chapter
COLORS = {
    "laplace": "#4c72b0",
    "bit": "#dd8452",
    "truncated": "#55a868",
    "ramp": "#dd8452",
    "translated_ramp": "#c44e52",
    "restricted": "#55a868",
    "log_laplace": "#8172b3",
    "croft": "#937860",
    "normalized": "#da8bc3",
    "bound": "#8c8c8c",
    "simulation": "#222222",
}

STYLE = {
    "figure.figsize": (7.0, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.subplot.left": 0.1,
    "figure.subplot.right": 0.97,
    "figure.subplot.bottom": 0.15,
    "figure.subplot.top": 0.9,
    "figure.subplot.wspace": 0.3,
    "figure.subplot.hspace": 0.35,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 11,
    "axes.titley": 1.0,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "font.size": 10,
}


def use_style():
    """Apply the book's style globally (chapters call it once in their set-up cell)."""
    mpl.rcParams.update(STYLE)


@contextlib.contextmanager
def style():
    """The book's style inside a ``with`` block only.

    Only the keys of :data:`STYLE` are restored afterwards (``mpl.rc_context`` would also restore
    pyplot's interactive flag, so a kernel's first figure made inside it would switch automatic
    display off).
    """
    saved = {k: mpl.rcParams[k] for k in STYLE}
    mpl.rcParams.update(STYLE)
    try:
        yield
    finally:
        mpl.rcParams.update(saved)


def figure(ncols=1, nrows=1, width=None, height=None, **kwargs):
    """A new figure in the book's style: returns ``(fig, axes)`` like ``plt.subplots``."""
    w, h = STYLE["figure.figsize"]
    with style():
        return plt.subplots(nrows, ncols, figsize=(width or w, height or h), **kwargs)
