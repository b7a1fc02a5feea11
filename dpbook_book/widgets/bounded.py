"""Views of Part I (chapters 1–3): the Laplace mechanism, bounded releases, their accuracy."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter, NullLocator

import dpbook
from dpbook import (
    covariance_sensitivity,
    mean_sensitivity,
    neighbour_changes,
    sample_covariance,
    sample_variance,
    variance_sensitivity,
)
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = [
    "draw_likelihood_ratio",
    "draw_neighbour_changes",
    "draw_bounded_laws",
    "draw_mse_rates",
]


def _log_label(v, _pos=None):
    if v <= 0:
        return ""
    return f"{v:.0f}" if 1 <= v < 1e5 else f"1e{round(np.log10(v)):d}"


def _plain_log_labels(*axes):
    """Label log axes as 1e-3 rather than with mathtext, and without minor ticks: both dominate the redraw time."""
    for axis in axes:
        axis.set_major_formatter(FuncFormatter(_log_label))
        axis.set_minor_locator(NullLocator())


@view(
    epsilon=(0.1, 3.0, 0.05),
    sensitivity=(0.1, 3.0, 0.1),
    q=(-3.0, 3.0, 0.1),
    grid={
        "sensitivity": (0.5, 1.0, 2.0),
        "epsilon": (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0),
    },
)
def draw_likelihood_ratio(epsilon=1.0, sensitivity=1.0, q=0.0):
    """Densities of ``q + L_b`` and ``q + Δ + L_b`` at ``b = Δ/ε`` and their log-ratio, within ``±ε``."""
    b = dpbook.laplace_scale(epsilon, sensitivity)
    q2 = q + sensitivity
    x = np.linspace(q - 4 * b - 1, q2 + 4 * b + 1, 801)
    lap = dpbook.Laplace(b)
    log_p, log_p2 = lap.logpdf(x, q), lap.logpdf(x, q2)
    fig, (ax1, ax2) = figure(ncols=2)
    ax1.plot(x, np.exp(log_p), color=COLORS["laplace"], label=r"$D$: $q + L_b$")
    ax1.plot(
        x,
        np.exp(log_p2),
        color=COLORS["bit"],
        ls="--",
        label=r"$D'$: $q + \Delta + L_b$",
    )
    ax1.set(xlabel="output $x$", ylabel="density", title=f"b = Δ/ε = {b:.3g}")
    ax1.legend(loc="best")
    ax2.plot(
        x,
        log_p - log_p2,
        color=COLORS["simulation"],
        label=r"$\log p_D(x) - \log p_{D'}(x)$",
    )
    for s in (-1, 1):
        ax2.axhline(
            s * epsilon,
            color=COLORS["bound"],
            ls=":",
            label=r"$\pm\varepsilon$" if s > 0 else None,
        )
    ax2.set(
        xlabel="output $x$",
        ylabel="log-likelihood ratio",
        ylim=(-1.6 * epsilon, 1.6 * epsilon),
    )
    ax2.legend(loc="best")
    return fig


_STATISTICS = {
    "mean": (lambda d: d.mean(axis=1), lambda n: mean_sensitivity(0.0, 1.0, n), False),
    "variance": (sample_variance, lambda n: variance_sensitivity(0.0, 1.0, n), False),
    "covariance": (
        sample_covariance,
        lambda n: covariance_sensitivity((0.0, 1.0), (0.0, 1.0), n),
        True,
    ),
}


@view(
    statistic=["mean", "variance", "covariance"],
    n=(3, 6, 1),
    relation=[
        ("substitution (one record replaced)", "substitution"),
        ("add or remove one record", "add_remove"),
    ],
    grid={"statistic": None, "relation": None, "n": (3, 4, 5, 6)},
)
def draw_neighbour_changes(statistic="variance", n=5, relation="substitution"):
    """Histogram of ``|f(D) - f(D')|`` over every neighbouring pair of data sets on a grid in [0, 1]."""
    f, closed_form, pairs = _STATISTICS[statistic]
    grid = np.linspace(0.0, 1.0, 5)
    values = (
        np.array([(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0), (0.5, 0.5)])
        if pairs
        else grid
    )
    changes = neighbour_changes(f, values, n, relation=relation)[0]
    bound = closed_form(n)
    fig, ax = figure()
    counts, edges = np.histogram(changes, bins=np.linspace(0, 1.05 * bound, 43))
    ax.stairs(counts, edges, fill=True, color=COLORS["laplace"], alpha=0.8)
    ax.axvline(
        bound, color=COLORS["bit"], ls="--", label=f"closed form Δ = {bound:.4g}"
    )
    ax.axvline(
        changes.max(),
        color=COLORS["simulation"],
        ls=":",
        label=f"largest change = {changes.max():.4g}",
    )
    ax.set(
        xlabel=r"$|f(D) - f(D')|$",
        ylabel="number of neighbouring pairs",
        yscale="log",
        ylim=(0.7, 2.0 * counts.max()),
        title=f"{statistic}, n = {n}, {relation}: {changes.size} pairs of data sets on a grid in [0, 1]",
    )
    _plain_log_labels(ax.yaxis)
    ax.legend(loc="best")
    return fig


@view(
    lower=(-2.0, 0.0, 0.1),
    upper=(0.5, 3.0, 0.1),
    q=(-1.0, 2.0, 0.05),
    epsilon=(0.05, 3.0, 0.05),
    grid={
        "epsilon": (0.5, 1.0, 2.0),
        "q": (-0.4, -0.2, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2),
    },
)
def draw_bounded_laws(lower=0.0, upper=1.0, q=0.2, epsilon=2.0, sensitivity=0.5):
    """BIT and truncated Laplace laws on [l, u] at ``b = Δ/ε`` (point masses as stems) and their biases."""
    if not lower < upper:
        upper = lower + 0.5
    b = dpbook.laplace_scale(epsilon, sensitivity)
    bit, trunc = (
        dpbook.BIT(b, lower=lower, upper=upper),
        dpbook.Truncated(b, lower=lower, upper=upper),
    )
    x = np.linspace(lower, upper, 401)[1:-1]
    fig, (ax1, ax2) = figure(ncols=2, width=8.0)
    ax1.plot(
        x, np.exp(trunc.logpdf(x, q)), color=COLORS["truncated"], label="truncated"
    )
    ax1.plot(
        x, np.exp(bit.logpdf(x, q)), color=COLORS["bit"], label="BIT (density part)"
    )
    p_lo, p_hi = (bit.pmf(bit.lower, q), bit.pmf(bit.upper, q))
    ax1.vlines([lower, upper], 0, [p_lo, p_hi], color=COLORS["bit"], lw=3)
    ax1.plot(
        [lower, upper], [p_lo, p_hi], "o", color=COLORS["bit"], label="BIT point masses"
    )
    ax1.axvline(q, color=COLORS["simulation"], ls=":", lw=1, label="true value $q$")
    ax1.set(xlabel="output", ylabel="density / probability", title=f"b = Δ/ε = {b:.3g}")
    ax1.legend(loc="best")
    qs = np.linspace(lower, upper, 201)
    ax2.plot(qs, trunc.bias(qs), color=COLORS["truncated"], label="truncated, Liu (6)")
    ax2.plot(qs, bit.bias(qs), color=COLORS["bit"], label="BIT, Liu (7)")
    ax2.axhline(0, color=COLORS["bound"], lw=1)
    if lower <= q <= upper:
        ax2.plot([q, q], [trunc.bias(q), bit.bias(q)], "o", color=COLORS["simulation"])
    ax2.set(xlabel="true value $q$", ylabel="bias")
    ax2.legend(loc="best")
    return fig


@view(
    epsilon=(0.1, 3.0, 0.1),
    position=(0.0, 0.5, 0.01),
    mechanism=["bit", "truncated"],
    grid={"mechanism": None, "position": (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)},
)
def draw_mse_rates(epsilon=1.0, position=0.1, mechanism="bit"):
    """MSE of a sanitized mean of data in [0, 1] against n (log-log), with Liu's bound 2b², b = 1/(nε)."""
    n = np.unique(np.geomspace(5, 5000, 60).astype(int))
    fig, ax = figure()
    mse = np.empty(n.size)
    for i, m in enumerate(n):
        b = dpbook.laplace_scale(epsilon, mean_sensitivity(0.0, 1.0, int(m)))
        mech = (
            dpbook.BIT(b, lower=0.0, upper=1.0)
            if mechanism == "bit"
            else dpbook.Truncated(b, lower=0.0, upper=1.0)
        )
        mse[i] = mech.mse(position)
    bound = 2 * (1.0 / (n * epsilon)) ** 2
    ax.loglog(
        n,
        bound,
        color=COLORS["laplace"],
        ls="--",
        label=r"$2b^2$ (Laplace, Liu Prop. 2 bound)",
    )
    ax.loglog(
        n,
        mse,
        color=COLORS[mechanism],
        label=f"{mechanism}: exact MSE at $q$ = {position:g}",
    )
    ax.set(
        xlabel="sample size $n$ (data in [0, 1], $b = 1/(n\\varepsilon)$)",
        ylabel="MSE of the release about $q$",
    )
    _plain_log_labels(ax.xaxis, ax.yaxis)
    ax.legend(loc="best")
    return fig
