"""Interactive views of Part III (chapters 10–12): Croft, Sack & Shi's truncated and normalized Laplace.

Every number drawn here comes from a dpbook mechanism, formula function or the privacy auditor;
this module only arranges them on axes.  The sensitivity is ``Δ = 1`` throughout (every view is
drawn in units of ``Δ``).  Curves that do not depend on a control are cached, so moving a control
redraws quickly.
"""

from __future__ import annotations

import functools

import numpy as np

import dpbook
from dpbook_book.data import AGE_BOUNDS, CLINIC
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = [
    "WIDTHS",
    "draw_normalization_leak",
    "draw_true_epsilon",
    "draw_guarantee_vs_dp",
    "draw_croft_scale",
    "draw_croft_audit",
    "draw_croft_comparison",
    "draw_clinic",
    "draw_age_release",
    "plot_timings",
]

#: the interval widths ``w = (u - l)/Δ`` offered by :func:`draw_true_epsilon` (the values), with their labels
WIDTHS = {
    np.inf: "one-sided, [0, ∞)",
    10.0: "[0, 10Δ]",
    5.0: "[0, 5Δ]",
    3.0: "[0, 3Δ]",
    2.0: "[0, 2Δ]",
}

#: the nominal ε values of the curves of :func:`draw_true_epsilon`
EPS_GRID = tuple(float(e) for e in np.round(np.linspace(0.05, 3.0, 24), 4))


# --- Chapter 10: why normalization leaks -------------------------------------------------------
@view(
    epsilon=(0.1, 3.0, 0.05),
    i=(0.1, 3.0, 0.1),
    grid={"i": (0.5, 1.0, 2.0, 3.0), "epsilon": (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)},
)
def draw_normalization_leak(epsilon=1.0, i=1.0):
    """Croft–Sack–Shi's motivating example (22)–(24): truncation to ``[0, ∞)`` at the fixed scale ``Δ/ε``.

    Top: the normalized densities for the true values ``0`` (on the boundary) and ``iΔ``, with the
    Laplace densities before normalization (dotted).  Bottom: the log-ratio of the two normalized
    densities against the output, with the requirement ``iε`` of their guarantee and the exact loss of
    the pair from :func:`dpbook.pair_loss`, ``log(2e^{iε} - 1)``, attained at the boundary output ``x = 0``.
    """
    b = dpbook.laplace_scale(epsilon, 1.0)
    q1, q2 = 0.0, float(i)
    mech, lap = dpbook.Truncated(b), dpbook.Laplace(b)
    x = np.linspace(-2.0 * b, q2 + 4.0 * b, 600)
    fig, (ax, ax2) = figure(ncols=2)
    for q, ls, name in ((q1, "-", "q_1=0"), (q2, "--", rf"q_2={q2:.1f}\Delta")):
        ax.plot(
            x,
            np.exp(mech.logpdf(x, q)),
            color=COLORS["truncated"],
            ls=ls,
            label=rf"normalized, ${name}$",
        )
        ax.plot(x, np.exp(lap.logpdf(x, q)), color=COLORS["laplace"], ls=":", lw=1.2)
    ax.axvspan(x[0], 0.0, color=COLORS["bound"], alpha=0.15, lw=0)
    ax.set_xlabel(r"output $x$")
    ax.set_ylabel("density")
    ax.set_title(
        rf"$b=\Delta/\varepsilon$, $\varepsilon={epsilon:.2f}$ (dotted: before normalization)"
    )
    ax.legend(loc="best")
    xs = np.linspace(0.0, q2 + 4.0 * b, 400)
    ratio = mech.logpdf(xs, q1) - mech.logpdf(xs, q2)
    loss = dpbook.pair_loss(mech, q1, q2)
    ax2.plot(xs, ratio, color=COLORS["truncated"], label=r"$\ln p_{q_1}(x)/p_{q_2}(x)$")
    ax2.axhline(
        i * epsilon,
        color=COLORS["bound"],
        ls="--",
        label=rf"required: $i\varepsilon={i * epsilon:.2f}$",
    )
    ax2.plot([0.0], [loss], "o", color=COLORS["simulation"], ms=6)
    ax2.annotate(
        rf"$\ln(2e^{{i\varepsilon}}-1)={loss:.3f}$",
        (0.0, loss),
        textcoords="offset points",
        xytext=(8, 4),
    )
    ax2.set_xlabel(r"output $x$")
    ax2.set_ylabel("log-likelihood ratio")
    ax2.set_ylim(min(ratio.min(), 0.0) - 0.1 * loss, 1.3 * loss)
    ax2.legend(loc="best")
    return fig


@functools.lru_cache(maxsize=16)
def _truncation_loss_curve(width):
    """The audited loss of truncation to ``[0, width]`` at ``b = Δ/ε`` (Δ = 1), for each ε of :data:`EPS_GRID`."""
    return np.array(
        [
            dpbook.privacy_loss(dpbook.Truncated(1.0 / e, lower=0.0, upper=width), 1.0)
            for e in EPS_GRID
        ]
    )


@view(
    epsilon=(0.05, 3.0, 0.05),
    width=[(label, w) for w, label in WIDTHS.items()],
    grid={"width": None, "epsilon": (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)},
)
def draw_true_epsilon(epsilon=1.0, width=np.inf):
    """The exact privacy loss of truncation at Liu's scale ``b = Δ/ε`` against the nominal ε.

    The curve comes from the auditor :func:`dpbook.privacy_loss` (truncation to ``[0, wΔ]``, Δ = 1,
    ``width`` one of :data:`WIDTHS`),
    drawn with the diagonal (what Liu Def. 2(a) claims, and what BIT attains) and McGlinchey–Mason's
    Prop. 2 bound ``2ε``.  The marker is the audited loss at ``epsilon``.
    """
    if width not in WIDTHS:
        raise ValueError(f"width must be one of {list(WIDTHS)}, got {width!r}")
    eps = np.array(EPS_GRID)
    loss = _truncation_loss_curve(width)
    here = dpbook.privacy_loss(
        dpbook.Truncated(1.0 / epsilon, lower=0.0, upper=width), 1.0
    )
    fig, ax = figure()
    ax.plot(
        eps,
        2 * eps,
        color=COLORS["bound"],
        ls="--",
        label=r"McGlinchey–Mason Prop. 2: $2\varepsilon$",
    )
    ax.plot(
        eps,
        loss,
        color=COLORS["truncated"],
        marker=".",
        label=rf"truncation to {WIDTHS[width]}, exact loss",
    )
    ax.plot(
        eps,
        eps,
        color=COLORS["bit"],
        ls=":",
        label=r"Liu Def. 2: $\varepsilon$ (BIT attains it)",
    )
    ax.plot([epsilon], [here], "o", color=COLORS["simulation"], ms=6)
    ax.annotate(
        f"{here:.3f}", (epsilon, here), textcoords="offset points", xytext=(6, -14)
    )
    ax.set_xlabel(r"nominal $\varepsilon$ (scale $b=\Delta/\varepsilon$)")
    ax.set_ylabel(r"exact privacy loss $\varepsilon'$")
    ax.legend(loc="best")
    return fig


@functools.lru_cache(maxsize=64)
def _scales(epsilon):
    """Liu's ``Δ/ε``, the exact ε-DP scale of truncation to ``[0, ∞)`` and Croft's uniform scale (Δ = 1)."""
    return (
        dpbook.laplace_scale(epsilon, 1.0),
        dpbook.truncated_scale(epsilon, 1.0),
        dpbook.croft_uniform_scale(epsilon, 1.0, [(0.0, np.inf)]),
    )


@view(
    epsilon=(0.1, 3.0, 0.1),
    grid={"epsilon": (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)},
)
def draw_guarantee_vs_dp(epsilon=1.0):
    """The worst log-ratio between true values ``h`` apart against ``h``, for truncation to ``[0, ∞)``.

    For three scales (Liu's ``Δ/ε``, the smallest exact ε-DP scale :func:`dpbook.truncated_scale`,
    Croft–Sack–Shi's uniform scale), the loss of the pair ``(0, h)`` from :func:`dpbook.pair_loss` (the
    worst pair at distance ``h``: Chapter 10 checks this with the auditor).  ε-DP asks the curve to stay
    below ``ε`` up to ``h = Δ`` (shaded box); Croft's guarantee asks it to stay below the line ``hε/Δ``
    for every ``h``.
    """
    h = np.linspace(0.0, 3.0, 301)
    fig, ax = figure()
    ax.fill_between(
        [0.0, 1.0],
        0.0,
        epsilon,
        color=COLORS["bound"],
        alpha=0.15,
        lw=0,
        label=r"$\varepsilon$-DP: $\leq\varepsilon$ for $h\leq\Delta$",
    )
    ax.plot(
        h,
        epsilon * h,
        color=COLORS["simulation"],
        ls="--",
        label=r"Croft's guarantee: $\leq h\varepsilon/\Delta$",
    )
    names = (
        r"$b=\Delta/\varepsilon$ (Liu)",
        r"$b=$ truncated_scale (exact $\varepsilon$-DP)",
        r"$b=$ Croft's uniform scale",
    )
    styles = (":", "-", "-.")
    for b, name, ls in zip(_scales(epsilon), names, styles):
        ax.plot(
            h,
            dpbook.pair_loss(dpbook.Truncated(b), 0.0, h),
            color=COLORS["truncated"],
            ls=ls,
            label=f"{name}, {b * epsilon:.3f}" + r"$\Delta/\varepsilon$",
        )
    ax.set_xlabel(r"distance $h$ between the true values (units of $\Delta$)")
    ax.set_ylabel(r"worst log-ratio $\ln p_0(x)/p_h(x)$")
    ax.set_xlim(0.0, 3.0)
    ax.set_ylim(0.0, 3.5 * epsilon)
    ax.legend(loc="best")
    return fig


# --- Chapter 11: one infinite constraint --------------------------------------------------------
@view(epsilon=(0.1, 3.0, 0.05), grid={"epsilon": (0.25, 0.5, 1.0, 2.0, 3.0)})
def draw_croft_scale(epsilon=1.0):
    """Croft–Sack–Shi's data-dependent scale (33) against the distance to the boundary (Δ = 1).

    The scale :func:`dpbook.croft_scale` starts at ``σ1`` (32) on the boundary, follows the principal
    Lambert-W branch up to the distance ``Δ/ε`` and the −1 branch beyond, and decreases to the Laplace
    scale ``Δ/ε``; drawn with the uniform scales of Chapter 10.
    """
    d = np.linspace(0.0, 6.0 / epsilon, 400)
    sigma = dpbook.croft_scale(d, epsilon, 1.0)
    s1 = dpbook.croft_boundary_scale(epsilon, 1.0)
    b_liu, b_star, b_croft = _scales(epsilon)
    fig, ax = figure()
    ax.axhline(
        b_croft * epsilon,
        color=COLORS["bound"],
        ls="-.",
        label=r"uniform, Croft's guarantee: $2$",
    )
    ax.axhline(
        b_star * epsilon,
        color=COLORS["truncated"],
        ls="-",
        lw=1.2,
        label=rf"uniform, exact $\varepsilon$-DP: {b_star * epsilon:.3f}",
    )
    ax.axhline(b_liu * epsilon, color=COLORS["laplace"], ls=":", label=r"Laplace: $1$")
    ax.plot(
        d * epsilon,
        sigma * epsilon,
        color=COLORS["croft"],
        lw=2.2,
        label=r"Croft's $\sigma(d)$, (32)–(33)",
    )
    ax.plot([0.0], [s1 * epsilon], "o", color=COLORS["croft"], ms=6)
    ax.annotate(
        rf"$\sigma_1={s1 * epsilon:.4f}\,\Delta/\varepsilon$",
        (0.0, s1 * epsilon),
        textcoords="offset points",
        xytext=(8, 6),
    )
    ax.axvline(1.0, color=COLORS["bound"], lw=1.0, ls=":")
    ax.annotate(
        "branch switch\n" + r"$d=\Delta/\varepsilon$",
        (1.0, 1.05),
        textcoords="offset points",
        xytext=(5, 0),
    )
    ax.set_xlabel(
        r"distance to the boundary $d = q - l$ (units of $\Delta/\varepsilon$)"
    )
    ax.set_ylabel(r"scale (units of $\Delta/\varepsilon$)")
    ax.set_ylim(0.9, 2.1)
    ax.legend(loc="best")
    return fig


@view(
    epsilon=(0.1, 3.0, 0.05),
    q=(0.0, 5.0, 0.1),
    grid={"epsilon": (0.5, 1.0, 2.0), "q": (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)},
)
def draw_croft_audit(epsilon=1.0, q=0.5, reach=200.0):
    """The log-likelihood ratio of Croft's release for the neighbours ``q`` and ``q + Δ`` (Δ = 1, ``l = 0``).

    Drawn in both directions against the output ``x`` in ``[0, reach]`` from the mechanism's ``logpdf``,
    with the level ``ε``.  Near the data it stays below ``ε`` (Theorem 1); beyond, the release nearer the
    boundary has the larger scale and so the heavier tail, and the ratio grows linearly without bound.
    The right panel zooms on the outputs near the data.
    """
    mech = dpbook.CroftLaplace(epsilon, 1.0)
    q1, q2 = float(q), float(q) + 1.0
    x = np.linspace(0.0, reach, 800)
    up = mech.logpdf(x, q1) - mech.logpdf(x, q2)
    down = -up
    fig, (ax, ax2) = figure(ncols=2)
    for a in (ax, ax2):
        a.plot(
            x,
            up,
            color=COLORS["croft"],
            label=rf"$\ln p_{{{q1:g}}}(x)/p_{{{q2:g}}}(x)$",
        )
        a.plot(
            x,
            down,
            color=COLORS["croft"],
            ls="--",
            label=rf"$\ln p_{{{q2:g}}}(x)/p_{{{q1:g}}}(x)$",
        )
        a.axhline(epsilon, color=COLORS["bound"], ls=":", label=r"$\varepsilon$")
        a.set_xlabel(r"output $x$")
    ax.set_ylabel("log-likelihood ratio")
    ax.set_title(
        rf"$\varepsilon={epsilon:.2f}$, scales $\sigma({q1:g})={mech.scale_at(q1):.3f}$, "
        rf"$\sigma({q2:g})={mech.scale_at(q2):.3f}$"
    )
    ax.legend(loc="best")
    near = q2 + 10.0
    ax2.set_xlim(0.0, near)
    zoom = up[x <= near]
    ax2.set_ylim(min(-zoom.max(), zoom.min()) - 0.2, max(zoom.max(), epsilon) + 0.4)
    ax2.set_title(r"near the data")
    return fig


@functools.lru_cache(maxsize=64)
def _comparison_curves(epsilon):
    """The four releases of :func:`draw_croft_comparison` at ``ε`` with their MSE and bias curves.

    Returns ``(qs, [(label, mechanism, colour, linestyle, mse, bias)])``.  Cached: moving ``q`` only
    evaluates the four laws at ``q``.
    """
    b_liu, b_star, b_croft = _scales(epsilon)
    mechs = (
        (
            r"Croft, variable $\sigma$",
            dpbook.CroftLaplace(epsilon, 1.0),
            COLORS["croft"],
            "-",
        ),
        (
            r"truncation, $2\Delta/\varepsilon$",
            dpbook.Truncated(b_croft),
            COLORS["truncated"],
            "-.",
        ),
        (
            rf"truncation, {b_star * epsilon:.3f}$\Delta/\varepsilon$",
            dpbook.Truncated(b_star),
            COLORS["truncated"],
            "-",
        ),
        (r"BIT, $\Delta/\varepsilon$", dpbook.BIT(b_liu), COLORS["bit"], "-"),
    )
    qs = np.linspace(0.0, 5.0 / epsilon, 200)
    return qs, [(name, m, c, ls, m.mse(qs), m.bias(qs)) for name, m, c, ls in mechs]


@view(
    epsilon=(0.1, 3.0, 0.1),
    q=(0.0, 5.0, 0.1),
    grid={"epsilon": (0.5, 1.0, 2.0), "q": (0.0, 0.5, 1.0, 2.0, 3.0, 5.0)},
)
def draw_croft_comparison(epsilon=1.0, q=0.5):
    """MSE and bias against the true value for four releases on ``[0, ∞)`` at the same ε (Δ = 1).

    Croft's variable scale (:class:`dpbook.CroftLaplace`), truncation at Croft's uniform scale ``2Δ/ε``,
    truncation at the smallest exactly ε-DP scale (:func:`dpbook.truncated_scale`) and BIT at ``Δ/ε``.
    """
    qs, curves = _comparison_curves(float(epsilon))
    fig, (ax, ax2) = figure(ncols=2)
    for name, m, c, ls, mse, bias in curves:
        ax.plot(qs * epsilon, mse * epsilon**2, color=c, ls=ls, label=name)
        ax.plot([q * epsilon], [m.mse(q) * epsilon**2], "o", color=c, ms=4)
        ax2.plot(qs * epsilon, bias * epsilon, color=c, ls=ls, label=name)
        ax2.plot([q * epsilon], [m.bias(q) * epsilon], "o", color=c, ms=4)
    ax.set_xlabel(r"true value $q$ (units of $\Delta/\varepsilon$)")
    ax.set_ylabel(r"MSE (units of $(\Delta/\varepsilon)^2$)")
    ax.legend(loc="best")
    ax2.set_xlabel(r"true value $q$ (units of $\Delta/\varepsilon$)")
    ax2.set_ylabel(r"bias (units of $\Delta/\varepsilon$)")
    ax2.set_title(rf"$\varepsilon={epsilon:.2f}$")
    return fig


# --- Chapter 12: finite and arbitrary constraints ------------------------------------------------


@functools.lru_cache(maxsize=64)
def _clinic_scales(epsilon, sensitivity):
    (
        """Croft's uniform scale for :data:`dpbook_book.data.CLINIC` and Theorem 2's lower bounds.

    Cached: moving ``q`` is cheap.
    """
        ""
    )
    return (
        dpbook.croft_uniform_scale(epsilon, sensitivity, CLINIC),
        tuple(dpbook.croft_lower_bounds(epsilon, sensitivity, CLINIC)),
    )


@view(
    epsilon=(0.1, 3.0, 0.05),
    sensitivity=(1.0, 14.0, 1.0),
    q=(0.0, 400.0, 1.0),
    grid={
        "sensitivity": (1.0, 7.0, 14.0),
        "q": (20.0, 62.0, 100.0, 190.0, 211.0, 300.0, 355.0, 390.0),
    },
)
def draw_clinic(epsilon=1.0, sensitivity=7.0, q=190.0):
    """The clinic example: Croft's uniform scale on a union of open periods, and Theorem 2's lower bounds.

    Top: the release density (:class:`dpbook.Normalized` at :func:`dpbook.croft_uniform_scale`) for the
    true day ``q``, closed periods shaded.  Bottom: the ``3n + 2`` lower bounds of
    :func:`dpbook.croft_lower_bounds` at their locations (Lemma 7 at the ends of the open periods,
    Lemma 9 across each closure), in units of ``Δ/ε``; their maximum is the uniform scale.
    """
    unit = sensitivity / epsilon
    scale, rows = _clinic_scales(float(epsilon), float(sensitivity))
    mech = dpbook.Normalized(scale, CLINIC)
    x = np.linspace(-40.0, 440.0, 1500)
    fig, (ax, ax2) = figure(ncols=2, width=8.0)
    for (_, hi), (lo, _) in zip(CLINIC[:-1], CLINIC[1:]):
        for a in (ax, ax2):
            a.axvspan(hi, lo, color=COLORS["bound"], alpha=0.2, lw=0)
    ax.plot(
        x,
        np.exp(mech.logpdf(x, q)),
        color=COLORS["normalized"],
        label=rf"Croft uniform, $\sigma={scale:.2f}$",
    )
    ax.plot(
        x,
        np.exp(dpbook.Laplace(scale).logpdf(x, q)),
        color=COLORS["laplace"],
        ls=":",
        lw=1.2,
        label="before truncation",
    )
    ax.axvline(q, color=COLORS["simulation"], lw=1.0)
    ax.set_xlabel(r"released day $x$")
    ax.set_ylabel("density")
    ax.set_title(
        rf"true day $q={q:g}$, $\Delta={sensitivity:g}$, $\varepsilon={epsilon:.2f}$"
    )
    ax.legend(loc="best")
    marks = {
        "regular": ("v", "Lemma 7, right end"),
        "symmetric": ("^", "Lemma 7, left end"),
        "gap": ("s", "Lemma 9, across a closure"),
    }
    for form, (m, name) in marks.items():
        pts = [(loc, b) for _, f, loc, b in rows if f == form and np.isfinite(loc)]
        if pts:
            loc, b = np.array(pts).T
            ax2.plot(
                loc,
                b / unit,
                m,
                color=COLORS["normalized"] if form != "gap" else COLORS["bound"],
                ms=7,
                label=name,
            )
    ax2.axhline(
        scale / unit,
        color=COLORS["normalized"],
        ls="--",
        label=f"maximum: {scale / unit:.4f}",
    )
    ax2.axhline(2.0, color=COLORS["bound"], ls=":", label="Lemma 10: 2")
    ax2.set_xlim(x[0], x[-1])
    ax2.set_ylim(0.9, 2.1)
    ax2.set_xlabel("location (day)")
    ax2.set_ylabel(r"lower bound on $\sigma$ (units of $\Delta/\varepsilon$)")
    ax2.legend(loc="best")
    return fig


@view(
    epsilon=(0.1, 3.0, 0.05),
    n=(10, 500, 10),
    grid={"n": (10, 50, 100, 500), "epsilon": (0.1, 0.25, 0.5, 1.0, 2.0, 3.0)},
)
def draw_age_release(epsilon=0.5, n=100):
    """The mean age of ``n`` people aged 18 to 90 (``Δ = 72/n``): MSE against the true mean for three releases.

    Truncation at Croft's uniform scale (``2Δ/ε`` for an interval, Corollary 1), truncation at the
    smallest exactly ε-DP scale (:func:`dpbook.truncated_scale`) and BIT at ``Δ/ε``.
    """
    lo, hi = AGE_BOUNDS
    delta = (hi - lo) / n
    b_croft = dpbook.croft_uniform_scale(epsilon, delta, [AGE_BOUNDS])
    b_star = dpbook.truncated_scale(epsilon, delta, lower=lo, upper=hi)
    q = np.linspace(lo, hi, 300)
    fig, ax = figure()
    for name, m, c, ls in (
        (
            rf"truncation, Croft's uniform scale {b_croft / delta * epsilon:.3f}$\Delta/\varepsilon$",
            dpbook.Truncated(b_croft, lower=lo, upper=hi),
            COLORS["normalized"],
            "-.",
        ),
        (
            rf"truncation, exact $\varepsilon$-DP scale {b_star / delta * epsilon:.3f}$\Delta/\varepsilon$",
            dpbook.Truncated(b_star, lower=lo, upper=hi),
            COLORS["truncated"],
            "-",
        ),
        (
            r"BIT, $\Delta/\varepsilon$",
            dpbook.BIT(dpbook.laplace_scale(epsilon, delta), lower=lo, upper=hi),
            COLORS["bit"],
            "-",
        ),
    ):
        ax.plot(q, np.sqrt(m.mse(q)), color=c, ls=ls, label=name)
    ax.set_xlabel(r"true mean age $q$ (years)")
    ax.set_ylabel("root mean squared error (years)")
    ax.set_title(rf"$n={n}$, $\Delta={delta:.3g}$, $\varepsilon={epsilon:.2f}$")
    ax.set_ylim(bottom=0.0)
    ax.legend(loc="best")
    return fig


def plot_timings(sizes, paper, fast):
    """Seconds per call of the paper's search and of dpbook's fast method against the number of constraints.

    A plain plot of measured times (Chapter 12 measures them with ``time.perf_counter``), log–log.
    """
    fig, ax = figure()
    ax.loglog(
        sizes,
        paper,
        "o-",
        color=COLORS["croft"],
        label="paper: bisection over 3n+2 bounds (Theorem 3)",
    )
    ax.loglog(
        sizes,
        fast,
        "s-",
        color=COLORS["normalized"],
        label="dpbook: endpoint probabilities + root finder",
    )
    ax.set_xlabel(r"number of finite constraints $n$")
    ax.set_ylabel("seconds per call")
    ax.legend(loc="best")
    return fig
