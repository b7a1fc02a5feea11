"""Views of Part I, chapters 4–5: Liu's (2019) two simulation studies."""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats

from dpbook import BIT, Truncated
from dpbook_book.data import COVARIANCE_SETTINGS, STUDY2_N, STUDY2_PI
from dpbook_book.plotting import COLORS, figure
from dpbook_book.studies import (
    bias_rmse,
    clipped_bivariate_normal,
    combine_releases,
    coverage,
    max_sample_variance,
    sanitize_covariance,
    simulate_proportions,
    wald_coverage,
    wald_interval,
)

from . import view

__all__ = [
    "plot_bands",
    "draw_covariance_release",
    "draw_proportions_study",
    "draw_multiple_synthesis",
]


_LABELS = {"var1": r"$\tilde s_1^2$", "var2": r"$\tilde s_2^2$", "corr": r"$\tilde r$"}
_PCOLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")
#: the mechanism family behind each ``kind`` option key (keys, not labels, pick the family)
_FAMILIES = {"bit": BIT, "truncated": Truncated}


def plot_bands(ax, x, releases, original, color, label, show_original=True):
    """Draw the mean and the 2.5–97.5% and 25–75% percentile bands of ``releases`` (shape
    ``(len(x), reps)``, NaN entries ignored) against ``x``, with the original values dashed
    (labelled when ``show_original``)."""
    lo, q1, q3, hi = np.nanpercentile(releases, [2.5, 25, 75, 97.5], axis=1)
    ax.fill_between(x, lo, hi, color=color, alpha=0.15, lw=0)
    ax.fill_between(x, q1, q3, color=color, alpha=0.35, lw=0)
    ax.plot(
        x,
        np.nanmean(releases, axis=1),
        color=color,
        marker="o",
        ms=3,
        label=f"{label}: mean",
    )
    ax.plot(
        x,
        original,
        color=COLORS["simulation"],
        ls="--",
        lw=1.2,
        label="original" if show_original else None,
    )
    ax.set_xscale("log")
    ax.set_xticks(x, [str(v) for v in x])
    ax.minorticks_off()


@view(
    n=(50, 800, 50),
    epsilon=(0.2, 5.0, 0.1),
    rho=[0.0, -0.5, 0.9],
    statistic=["corr", "var1", "var2"],
    grid={"statistic": None, "rho": None, "epsilon": (0.5, 1.0, 2.0)},
)
def draw_covariance_release(n=100, epsilon=1.0, rho=0.9, statistic="corr", reps=150):
    """Histograms of BIT and truncated releases of ``s_1^2``, ``s_2^2`` or ``r`` for one data set."""
    rng = np.random.default_rng([int(n), int(round(100 * rho)) % 1000, 4])
    s = COVARIANCE_SETTINGS
    x, lower, upper = clipped_bivariate_normal(
        int(n), rho, sd=s["sd"], bound=s["bound"], rng=rng
    )
    j = {"var1": 0, "var2": 1, "corr": 3}[statistic]
    edges = (
        (-1.0, 1.0)
        if statistic == "corr"
        else (0.0, max_sample_variance(lower[j], upper[j], n))
    )
    fig, ax = figure()
    for kind in ("bit", "truncated"):
        out = sanitize_covariance(
            x,
            lower,
            upper,
            epsilon,
            _FAMILIES[kind],
            reps,
            rng=rng,
            conditional_mean=False,
        )
        released = out[statistic][np.isfinite(out[statistic])]
        ax.hist(
            released,
            bins=np.linspace(*edges, 41),
            histtype="step",
            lw=1.5,
            color=COLORS[kind],
            label=kind,
        )
    ax.axvline(
        out["original"][j],
        color=COLORS["simulation"],
        ls="--",
        lw=1.2,
        label="original",
    )
    ax.set(
        xlabel=_LABELS[statistic],
        ylabel=f"count of {reps} releases",
        title=f"n = {n}, ρ = {rho}, ε = {epsilon:g} (ε/3 per statistic)",
    )
    ax.legend(loc="best")
    return fig


def _study2_metric(epsilon, method, kind, metric, reps, rng):
    rows, base = [], []
    for n in STUDY2_N:
        out = simulate_proportions(
            STUDY2_PI, n, epsilon, _FAMILIES[kind], method, reps, rng=rng
        )
        rel, ph = out["release"], out["phat"]
        if metric == "coverage":
            rows.append(coverage(*wald_interval(rel, n), STUDY2_PI)[0])
            base.append([wald_coverage(p, n) for p in STUDY2_PI])
        else:
            b, r = bias_rmse(rel, STUDY2_PI)
            rows.append(b if metric == "bias" else r)
            base.append(bias_rmse(ph, STUDY2_PI)[0 if metric == "bias" else 1])
    return np.array(rows), np.array(base)


@view(
    epsilon=(0.1, 5.0, 0.1),
    method=[("rescale", "rescale"), ("all but one", "all_but_one"), ("tree", "tree")],
    kind=["bit", "truncated"],
    metric=["bias", "rmse", "coverage"],
    grid={"metric": None, "method": None, "kind": None},
)
def draw_proportions_study(
    epsilon=0.5, method="rescale", kind="bit", metric="coverage", reps=1000
):
    """Bias, RMSE or coverage of the 95% Wald interval of each released proportion against ``n``."""
    rng = np.random.default_rng(5)
    rows, base = _study2_metric(epsilon, method, kind, metric, reps, rng)
    fig, ax = figure()
    n = np.array(STUDY2_N)
    for j, p in enumerate(STUDY2_PI):
        ax.plot(
            n,
            rows[:, j],
            marker="o",
            ms=3,
            color=_PCOLORS[j],
            label=rf"$\pi_{j + 1} = {p:g}$",
        )
        ax.plot(n, base[:, j], ls=":", color=_PCOLORS[j])
    if metric == "coverage":
        ax.axhline(0.95, color=COLORS["bound"], lw=1)
    elif metric == "bias":
        ax.axhline(0.0, color=COLORS["bound"], lw=1)
    ax.set_xscale("log")
    ax.set_xticks(n, [str(v) for v in n])
    ax.minorticks_off()
    names = {
        "bias": "bias of $\\tilde\\pi_j$",
        "rmse": "RMSE of $\\tilde\\pi_j$",
        "coverage": "coverage of 95% interval",
    }
    ax.set(
        xlabel="sample size $n$",
        ylabel=names[metric],
        title=f"{method}, {kind}, ε = {epsilon:g}; dotted: original data",
    )
    ax.legend(loc="best", ncols=2)
    return fig


@functools.lru_cache(maxsize=32)
def _synthesis_coverage(epsilon, kind, releases, reps):
    """The coverages of :func:`draw_multiple_synthesis`: one release, and ``releases`` combined.

    Returns two arrays, ``(len(STUDY2_N), len(STUDY2_PI))``: the seeded simulation (seed 6) of
    :func:`dpbook_book.studies.simulate_proportions`.  Cached on every control, so that moving back
    to a value shown before redraws without simulating again.
    """
    rng = np.random.default_rng(6)
    n_values = np.array(STUDY2_N)
    one, many = [], []
    for n in n_values:
        single = simulate_proportions(
            STUDY2_PI, n, epsilon, _FAMILIES[kind], "rescale", reps, rng=rng
        )["release"]
        one.append(coverage(*wald_interval(single, n), STUDY2_PI)[0])
        rel = simulate_proportions(
            STUDY2_PI,
            n,
            epsilon,
            _FAMILIES[kind],
            "rescale",
            reps,
            releases=releases,
            rng=rng,
        )["release"]
        qbar, T, df = combine_releases(rel, rel * (1 - rel) / n, axis=0)
        half = stats.t.ppf(0.975, df) * np.sqrt(T)
        many.append(coverage(qbar - half, qbar + half, STUDY2_PI)[0])
    return np.array(one), np.array(many)


@view(
    epsilon=(0.1, 5.0, 0.1),
    kind=["bit", "truncated"],
    releases=(2, 10, 1),
    grid={"kind": None, "epsilon": (0.25, 0.5, 1.0), "releases": (2, 3, 5, 7, 10)},
)
def draw_multiple_synthesis(epsilon=0.5, kind="bit", releases=5, reps=600):
    """Coverage of one release at ``ε`` against ``m`` releases at ``ε/m`` combined (re-scaling)."""
    n_values = np.array(STUDY2_N)
    one, many = _synthesis_coverage(epsilon, kind, releases, reps)
    fig, ax = figure()
    for j, p in enumerate(STUDY2_PI):
        ax.plot(n_values, one[:, j], ls=":", marker="o", ms=3, color=_PCOLORS[j])
        ax.plot(
            n_values,
            many[:, j],
            marker="s",
            ms=3,
            color=_PCOLORS[j],
            label=rf"$\pi_{j + 1} = {p:g}$",
        )
    ax.axhline(0.95, color=COLORS["bound"], lw=1)
    ax.set_xscale("log")
    ax.set_xticks(n_values, [str(v) for v in n_values])
    ax.minorticks_off()
    ax.set(
        xlabel="sample size $n$",
        ylabel="coverage of 95% interval",
        title=f"{kind}, ε = {epsilon:g}: dotted one release, solid m = {releases} at ε/m",
    )
    ax.legend(loc="best", ncols=2)
    return fig
