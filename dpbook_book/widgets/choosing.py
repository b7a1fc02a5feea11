"""Interactive views of Part IV (chapters 13–14): choosing a mechanism, and the best post-processing.

Chapter 13's view draws every range-adherent mechanism of the book on the same axes at the same exact
ε, as :mod:`dpbook.choosing` calibrates and compares them.  Chapter 14's views draw the step
post-processings of :mod:`dpbook.design.least_bias`.  Every number comes from a dpbook mechanism or formula.
"""

from __future__ import annotations

import numpy as np

import dpbook
from dpbook_book.choosing import (
    DEFAULT_SENSITIVITY,
    DOMAIN_LABELS,
    DOMAINS,
    METRICS,
    calibrated_mechanisms,
    domain_bounds,
)
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = [
    "draw_choosing",
    "draw_threshold_postprocessing",
    "draw_program",
]

_STYLE = {
    "laplace": (COLORS["laplace"], ":"),
    "clamping": (COLORS["bit"], "-"),
    "ramp": (COLORS["translated_ramp"], "-"),
    "optimal": (COLORS["simulation"], "-"),
    "truncated": (COLORS["truncated"], "-"),
}


@view(
    epsilon=(0.2, 3.0, 0.1),
    domain=[(DOMAIN_LABELS[d], d) for d in DOMAINS],
    metric=list(METRICS),
    grid={"domain": None, "metric": None, "epsilon": (0.5, 1.0, 2.0)},
)
def draw_choosing(epsilon=1.0, domain=DOMAINS[0], metric="bias", sensitivity=None):
    """Bias, variance or MSE against the true value for every mechanism calibrated to the same ε."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    cands = calibrated_mechanisms(epsilon, sensitivity, domain)
    lo, hi = domain_bounds(domain)
    q = (
        np.linspace(0.0, 6.0 * cands[0].scale, 300)
        if hi == np.inf
        else np.linspace(lo, hi, 300)
    )
    fig, ax = figure()
    for c in cands:
        color, ls = _STYLE[c.key]
        ax.plot(
            q,
            getattr(c.mechanism, metric)(q),
            color=color,
            ls=ls,
            label=f"{c.name}, scale {c.scale:.3g}",
        )
    ax.axhline(0.0, color="k", lw=0.6)
    sym = {
        "bias": r"bias $E[M(q)]-q$",
        "variance": r"variance $\mathrm{Var}[M(q)]$",
        "mse": r"MSE $E[(M(q)-q)^2]$",
    }
    delta = DEFAULT_SENSITIVITY[domain] if sensitivity is None else sensitivity
    ax.set_xlabel(r"true value $q$")
    ax.set_ylabel(sym[metric])
    ax.set_title(
        rf"all audited at $\varepsilon={epsilon:.2f}$, $\Delta={delta:g}$, $q\in{DOMAIN_LABELS[domain]}$"
    )
    ax.legend(loc="best")
    return fig


@view(
    threshold=(0.0, 3.0, 0.02),
    shift=(0.0, 0.8, 0.01),
    grid={
        "shift": (0.0, 0.2785, 0.5),
        "threshold": (0.5, 0.75, 1.0, 1.2785, 1.5, 2.0, 2.5),
    },
)
def draw_threshold_postprocessing(threshold=1.2785, shift=0.2785, scale=1.0):
    """The threshold post-processing ``φ(x) = (x - d) 1{x > a}`` and its exact bias, against Prop. 5's floor."""
    b = scale
    a = max(threshold, shift) * b
    mech = dpbook.StepPostProcessed(b, [a], [0.0], shift * b)
    floor = dpbook.bias_lower_bound(b)
    star = dpbook.optimal_ramp_shift(b)
    worst = dpbook.verify_bias(mech, step=b / 100)
    fig, (ax, ax2) = figure(ncols=2)
    x = np.linspace(-1.0 * b, 4.0 * b, 501)
    ax.plot(
        x,
        mech.phi(x),
        color=COLORS["simulation"],
        label=rf"$\varphi(x)$, $a={a / b:.2f}b$, $d={shift:.2f}b$",
    )
    ax.plot(
        x,
        np.maximum(x - star, 0.0),
        color=COLORS["translated_ramp"],
        ls=":",
        label=r"$\tau_{\alpha^*}(x)$",
    )
    ax.set_xlabel(r"Laplace output $x$ (units of $b$)")
    ax.set_ylabel(r"released value $\varphi(x)$")
    ax.legend(loc="best")
    q = np.linspace(0.0, 5.0 * b, 400)
    ax2.plot(
        q,
        mech.bias(q),
        color=COLORS["simulation"],
        label=rf"$\beta_\varphi(q)$, worst ${worst.value / b:.4f}\,b$",
    )
    ax2.plot(
        q,
        dpbook.TranslatedRamp(b, star).bias(q),
        color=COLORS["translated_ramp"],
        ls=":",
        label=rf"ramp at $\alpha^*$, worst ${star / b:.4f}\,b$",
    )
    for sgn in (1, -1):
        ax2.axhline(
            sgn * floor,
            color=COLORS["bound"],
            ls="--",
            lw=1,
            label=r"$\pm bW(1/e)$" if sgn > 0 else None,
        )
    ax2.axhline(0.0, color="k", lw=0.6)
    ax2.set_xlabel(r"true value $q$ (units of $b$)")
    ax2.set_ylabel(r"bias $\beta_\varphi(q)$")
    # room above the data for the legend: inside the data, every placement covers the dashed band or a curve
    low, high = ax2.get_ylim()
    ax2.set_ylim(low, high + 0.75 * (high - low))
    ax2.legend(loc="upper right")
    return fig


def draw_program(result, q_step=None, label="program"):
    """A solved program of :func:`dpbook.min_bias_postprocessing`: its ``φ`` and its exact bias.

    The left panel draws ``φ``; the right one the exact bias on a fine grid, the band ``±`` the
    program's objective, the program's grid of true values (every ``q_step``, if given) and the
    verified worst case.  A plain figure function (no controls).
    """
    mech = result.mechanism
    b = mech.scale
    fig, (ax, ax2) = figure(ncols=2)
    x = np.linspace(-2.0 * b, 8.0 * b, 2001)
    ax.plot(
        x,
        mech.phi(x),
        color=COLORS["simulation"],
        lw=1.2,
        label=rf"$\varphi$ ({label})",
    )
    ax.plot(x, np.maximum(x, 0.0), color=COLORS["bound"], ls=":", label=r"$\max(x,0)$")
    ax.set_xlabel(r"Laplace output $x$ (units of $b$)")
    ax.set_ylabel(r"$\varphi(x)$")
    ax.legend(loc="best")
    top = 8.0 * b
    if np.isfinite(result.bias.argmax):
        top = max(top, result.bias.argmax + 2.0 * b)
    q = np.linspace(0.0, top, 4001)
    ax2.plot(
        q,
        mech.bias(q),
        color=COLORS["simulation"],
        lw=1.2,
        label=r"exact bias $\beta_\varphi(q)$",
    )
    for sgn in (1, -1):
        ax2.axhline(
            sgn * result.objective,
            color=COLORS["truncated"],
            ls="--",
            lw=1,
            label=rf"$\pm$ objective ${result.objective / b:.4f}\,b$"
            if sgn > 0
            else None,
        )
        ax2.axhline(
            sgn * result.bias.value,
            color=COLORS["translated_ramp"],
            ls=":",
            lw=1,
            label=rf"$\pm$ verified ${result.bias.value / b:.4f}\,b$"
            if sgn > 0
            else None,
        )
    if q_step is not None:
        qs = np.arange(0.0, top + 1e-9, q_step * b)
        ax2.plot(
            qs,
            mech.bias(qs),
            "o",
            ms=3,
            color=COLORS["truncated"],
            label="program's grid",
        )
    ax2.set_xlabel(r"true value $q$ (units of $b$)")
    ax2.set_ylabel(r"bias $\beta_\varphi(q)$")
    ax2.set_ylim(-1.15 * result.bias.value, 2.7 * result.bias.value)
    # two rows of entries in the room above the verified band, so the legend covers no line
    ax2.legend(loc="upper center", ncol=2)
    return fig
