"""Interactive views of Part IV, chapters 15–16: dpbook next to diffprivlib, and floating-point leaks.

Every number drawn comes from dpbook, from diffprivlib's own methods (through :mod:`dpbook.peers`)
or from dpbook's samplers; this module only arranges them on axes.  Sensitivity ``Δ = 1``.
"""

from __future__ import annotations

import numpy as np

import dpbook
from dpbook_book import peers
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = ["PEER_FAMILIES", "draw_peer_bias", "draw_lowest_bits"]

#: the diffprivlib classes the view offers -> the colour of their dpbook counterpart
PEER_FAMILIES = {"LaplaceTruncated": "bit", "LaplaceBoundedDomain": "truncated"}


@view(
    family=list(PEER_FAMILIES),
    epsilon=(0.2, 3.0, 0.1),
    width=(1.0, 10.0, 0.5),
    grid={"family": None, "epsilon": (0.5, 1.0), "width": (1.0, 2.0, 4.0, 6.0, 10.0)},
)
def draw_peer_bias(family="LaplaceBoundedDomain", epsilon=1.0, width=4.0):
    """diffprivlib's ``bias(q)`` against dpbook's for the same law, inside and outside ``[0, width]``.

    Top: the two bias curves over true values from ``-width/2`` to ``1.5 width`` (the shaded band is
    outside the bounds).  Bottom: diffprivlib's ``bias`` minus dpbook's.
    """
    from diffprivlib import mechanisms

    mech = getattr(mechanisms, family)(
        epsilon=epsilon, sensitivity=1.0, lower=0.0, upper=float(width)
    )
    ours = peers.dpbook_counterpart(mech)
    q = np.linspace(-0.5 * width, 1.5 * width, 161)
    theirs = peers.peer_property(mech, "bias", q)
    exact = ours.bias(q)
    fig, (ax, ax2) = figure(ncols=2)
    for a in (ax, ax2):
        a.axvspan(q[0], 0.0, color=COLORS["bound"], alpha=0.15, lw=0)
        a.axvspan(width, q[-1], color=COLORS["bound"], alpha=0.15, lw=0)
        a.set_xlabel(r"true value $q$")
    ax.plot(
        q,
        exact,
        color=COLORS[PEER_FAMILIES[family]],
        label=f"dpbook {type(ours).__name__}",
    )
    ax.plot(
        q,
        theirs,
        color=COLORS["simulation"],
        ls="--",
        label=f"diffprivlib {family}.bias",
    )
    lim = 1.3 * np.max(np.abs(exact))
    ax.set_ylim(-lim, lim)
    ax.set_ylabel(r"bias $E[M(q)] - q$")
    ax.set_title(
        rf"$[l, u] = [0, {width:g}]$, $\varepsilon = {epsilon:.1f}$, $b = {ours.scale:.3f}$"
    )
    ax.legend(loc="best")
    ax2.plot(q, theirs - exact, color=COLORS["simulation"])
    ax2.set_ylabel("diffprivlib minus dpbook")
    ax2.set_title("zero inside the bounds only")
    return fig


@view(
    q1=(0.0, 4.0, 0.25),
    q2=(0.0, 4.0, 0.25),
    scale=(0.25, 4.0, 0.25),
    grid={"scale": (0.5, 1.0, 2.0), "q2": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)},
)
def draw_lowest_bits(q1=1.0, q2=2.0, scale=1.0, x0=0.25, draws=100_000, seed=16):
    """Where the last set bit of dpbook's BIT release sits, for outputs in ``[x0, 2 x0)``.

    ``draws`` releases of :class:`dpbook.BIT` on ``[0, inf)`` at each true value; bars: the share of
    the outputs in the binade ``[x0, 2 x0)`` whose lowest set bit is ``2^k``, for each ``k``.
    """
    rng = np.random.default_rng(seed)
    mech = dpbook.BIT(scale, lower=0.0, upper=np.inf)
    fig, ax = figure()
    shares = []
    for q in (q1, q2):
        x = mech.sample(q, size=draws, rng=rng)
        k = peers.lowest_bit(x, (x0, 2 * x0))
        shares.append((q, k))
    lo = int(min(np.min(k) if k.size else 0 for _, k in shares))
    ks = np.arange(lo, lo + 8)
    width = 0.38
    for j, ((q, k), color) in enumerate(
        zip(shares, (COLORS["bit"], COLORS["laplace"]))
    ):
        share = np.array([np.mean(k == v) if k.size else 0.0 for v in ks])
        ax.bar(
            ks + (j - 0.5) * width,
            share,
            width=width,
            color=color,
            label=rf"$q = {q:g}$ ({k.size} outputs in window)",
        )
    ax.set_xticks(ks)
    ax.set_xlabel(r"lowest set bit $2^k$ of the output: $k$")
    ax.set_ylabel("share of outputs")
    ax.set_title(
        rf"BIT on $[0,\infty)$, $b = {scale:g}$, outputs in $[{x0:g}, {2 * x0:g})$"
    )
    ax.legend(loc="best")
    return fig
