"""The view of Part VI, chapter 24: privacy profiles of the bounded Laplace releases of Part III.

Three releases of a true value in ``[0, wΔ]`` at the scale ``b = Δ/ε₀`` that pure ``ε₀``-DP asks of the
Laplace mechanism (:data:`AIMED`): the Laplace mechanism itself, clamping to the range (BIT) and
truncation to it (conditioning, Liu's Definition 2(a)).  Their privacy profiles ``δ(ε)`` over the grid
:data:`EPS_GRID` are the library's :func:`dpbook.privacy_profile` (certified upper bounds, never below
the truth, exact up to rounding for the Laplace and the clamped laws): this module only draws them.
The sensitivity is ``Δ = 1`` throughout.
"""

from __future__ import annotations

import functools
import math

import numpy as np

import dpbook
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = [
    "AIMED",
    "EPS_GRID",
    "RELEASES",
    "WIDTHS",
    "draw_profiles",
    "profile",
    "release",
]

#: the ε that the scale b = Δ/ε₀ aims for (pure ε₀-DP for the Laplace mechanism and its clamping)
AIMED = 1.0

#: the range widths w (the range is [0, wΔ]) the published page offers
WIDTHS = (1.0, 2.0, 5.0, 10.0, math.inf)

#: the ε at which the profiles are drawn (it holds AIMED)
EPS_GRID = tuple(float(e) for e in np.round(np.linspace(0.0, 2.0, 81), 6))

#: the releases drawn, with their labels
RELEASES = {
    "Laplace": "Laplace, no range",
    "BIT": "clamped to the range (BIT)",
    "Truncated": "truncated to the range",
}

_COLOR = {
    "Laplace": COLORS["laplace"],
    "BIT": COLORS["bit"],
    "Truncated": COLORS["truncated"],
}


def _width(width):
    if (
        isinstance(width, bool)
        or not isinstance(width, (int, float, np.number))
        or math.isnan(width)
        or width <= 0
    ):
        raise ValueError(f"width must be a positive number or inf, got {width!r}")
    return float(width)


def release(name, width):
    """The release ``name`` (a key of :data:`RELEASES`) on ``[0, wΔ]`` at the scale ``Δ/ε₀``."""
    if name not in RELEASES:
        raise ValueError(f"name must be one of {sorted(RELEASES)}, got {name!r}")
    width = _width(width)
    scale = dpbook.laplace_scale(AIMED, 1.0)
    if name == "Laplace":
        return dpbook.Laplace(scale)
    family = dpbook.BIT if name == "BIT" else dpbook.Truncated
    return family(scale, lower=0.0, upper=width)


@functools.lru_cache(maxsize=32)
def profile(name, width):
    """``δ(ε)`` of :func:`release` ``(name, width)`` over :data:`EPS_GRID`, from :func:`dpbook.privacy_profile`.

    The Laplace mechanism does not depend on the width; its curve is computed once.
    """
    width = math.inf if name == "Laplace" else _width(width)
    mech = release(name, width)
    out = np.asarray(dpbook.privacy_profile(mech, 1.0, np.array(EPS_GRID)), dtype=float)
    out.setflags(write=False)
    return out


def _range_text(width):
    return "[0, ∞)" if math.isinf(width) else f"[0, {width:g}Δ]"


@view(width=[(_range_text(w), w) for w in WIDTHS], grid={"width": None})
def draw_profiles(width=5.0):
    """Privacy profiles δ(ε) of the Laplace mechanism, its clamping and its truncation at b = Δ/ε₀.

    The three releases of :data:`RELEASES` on the range ``[0, wΔ]``, all at the scale ``Δ/ε₀`` with
    ``ε₀ =`` :data:`AIMED`: the Laplace mechanism and its clamping are ``ε₀``-DP (``δ(ε₀) = 0``);
    truncation is not, and its profile at ``ε₀`` is the δ it costs there.
    """
    width = _width(width)
    eps = np.array(EPS_GRID)
    fig, ax = figure()
    for name, label in RELEASES.items():
        ax.plot(
            eps,
            profile(name, width),
            color=_COLOR[name],
            lw=1.6,
            ls="--" if name == "BIT" else "-",
            label=label,
        )
    at = profile("Truncated", width)[EPS_GRID.index(AIMED)]
    ax.axvline(AIMED, color=COLORS["bound"], lw=0.8, ls=":")
    ax.plot([AIMED], [at], "o", color=_COLOR["Truncated"], ms=5)
    ax.annotate(
        f"δ(ε₀) = {at:.3f}",
        (AIMED, at),
        xytext=(8, 10),
        textcoords="offset points",
    )
    ax.set_xlim(0.0, eps[-1])
    ax.set_ylim(0.0, 0.5)
    ax.set_xlabel(r"$\varepsilon$")
    ax.set_ylabel(r"$\delta(\varepsilon)$")
    ax.set_title(
        rf"range {_range_text(width)}, scale $b = \Delta/\varepsilon_0$, "
        rf"$\varepsilon_0 = {AIMED:g}$"
    )
    ax.legend(loc="upper right")
    return fig
