"""Interactive views of Part II (chapters 6–9): McGlinchey & Mason's nonnegative mechanisms.

Every number drawn here comes from a dpbook mechanism or formula function; this module only
arranges them on axes (Chapter 9's post-processing functions are in :mod:`dpbook.families.postprocessing`).
"""

from __future__ import annotations

import functools

import numpy as np
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
from scipy import stats

import dpbook
from dpbook import piecewise_linear_phi, softplus_phi, translated_ramp_phi
from dpbook_book.plotting import COLORS, figure

from . import view

__all__ = [
    "FAMILIES",
    "draw_nonnegative_bias",
    "draw_log_laplace",
    "draw_translated_ramp",
    "draw_quantile_coupling",
    "draw_postprocessing_bias",
]


def _plain_log(*axes, subs=(1.0,)):
    """Label log axes with plain numbers and drop their minor ticks (mathtext tick labels and the many
    minor ticks of a log axis make redraws slow)."""
    for axis in axes:
        axis.set_major_locator(LogLocator(base=10.0, subs=subs, numticks=8))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_locator(NullLocator())


def _frozen(a):
    """``a`` as a read-only array, so that a cached curve cannot be changed by whoever draws it."""
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


#: the post-processing families of Chapter 9: option key -> label shown to the reader
FAMILIES = {
    "ramp": "ramp",
    "translated_ramp": "translated ramp",
    "softplus": "softplus",
    "piecewise_linear": "piecewise linear",
}


def _family_phi(family, shift, width, slope, offset):
    """The keyword arguments of :class:`dpbook.PostProcessed` for the option ``family`` (a key of
    :data:`FAMILIES`); the functions themselves live in :mod:`dpbook.families.postprocessing`.  Parameters a
    family does not use are ignored."""
    if family == "ramp":
        return translated_ramp_phi(0.0)
    if family == "translated_ramp":
        return translated_ramp_phi(shift)
    if family == "softplus":
        return softplus_phi(shift, width)
    if family == "piecewise_linear":
        return piecewise_linear_phi(shift, slope, offset)
    raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")


# --- Chapter 6: clamping against restriction ---------------------------------------------------
@view(
    epsilon=(0.1, 3.0, 0.05),
    sensitivity=(0.2, 3.0, 0.1),
    q=(0.0, 5.0, 0.1),
    grid={"epsilon": (0.5, 1.0, 2.0), "q": (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)},
)
def draw_nonnegative_bias(epsilon=1.0, sensitivity=1.0, q=1.0):
    """Bias of the ramp (BIT) and of restriction against q, and their ratio (9) (McGlinchey–Mason §3)."""
    b = dpbook.laplace_scale(epsilon, sensitivity)
    qs = np.linspace(0.0, max(5.0, 5.0 * b), 300)
    ramp, restr1, restr2 = dpbook.BIT(b), dpbook.Truncated(b), dpbook.Truncated(2 * b)
    fig, (ax, ax2) = figure(ncols=2)
    ax.plot(
        qs, ramp.bias(qs), color=COLORS["ramp"], label=r"ramp, $b=\Delta/\varepsilon$"
    )
    ax.plot(
        qs,
        restr1.bias(qs),
        color=COLORS["restricted"],
        ls="--",
        label=r"restriction, $b=\Delta/\varepsilon$",
    )
    ax.plot(
        qs,
        restr2.bias(qs),
        color=COLORS["restricted"],
        label=r"restriction, $b=2\Delta/\varepsilon$",
    )
    for m, c in (
        (ramp, COLORS["ramp"]),
        (restr1, COLORS["restricted"]),
        (restr2, COLORS["restricted"]),
    ):
        ax.plot([q], [m.bias(q)], "o", color=c, ms=5)
    ax.set_xlabel(r"true value $q$")
    ax.set_ylabel(r"bias $\mathbb{E}[\hat Y_q]-q$")
    ax.set_title(rf"$\varepsilon={epsilon:.2f}$, $\Delta={sensitivity:.2f}$")
    ax.legend()
    ratio = dpbook.restriction_ramp_bias_ratio(qs, epsilon, sensitivity)
    ax2.semilogy(qs, ratio, color=COLORS["simulation"], label=r"ratio (9), $B_2/B_1$")
    ax2.axhline(4.0, color=COLORS["bound"], ls="--", label="4 (its minimum)")
    ax2.axhline(2.0, color=COLORS["bound"], ls=":", label="2 (the paper's bound)")
    ax2.plot(
        [q],
        [dpbook.restriction_ramp_bias_ratio(q, epsilon, sensitivity)],
        "o",
        color=COLORS["simulation"],
        ms=5,
    )
    ax2.set_xlabel(r"true value $q$")
    ax2.set_ylabel(r"$B_2/B_1$ at equal privacy $\varepsilon$")
    _plain_log(ax2.yaxis, subs=(1.0, 2.0, 5.0))
    ax2.legend(loc="best")
    return fig


# --- Chapter 7: the multiplicative mechanism ------------------------------------------------
@view(
    K=(0.05, 2.0, 0.05),
    epsilon=(0.1, 3.0, 0.05),
    grid={"K": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 2.0)},
)
def draw_log_laplace(K=1.25, epsilon=1.0, n=20_000, seed=7):
    """Running mean of ``e^{L_b}`` (the release ``Q e^{L_b}`` over ``Q``), ``b = K/ε``, and the relative bias.

    McGlinchey–Mason Prop. 3: the mean is finite iff ``K < ε``; the variance iff ``K < ε/2``.
    """
    b = dpbook.log_laplace_scale(epsilon, K)
    mech = dpbook.LogLaplace(b)
    draws = mech.sample(1.0, size=n, rng=np.random.default_rng(seed))
    running = np.cumsum(draws) / np.arange(1, n + 1)
    shown = np.unique(np.geomspace(1, n, 1500).astype(int)) - 1
    fig, (ax, ax2) = figure(ncols=2)
    ax.loglog(
        shown + 1,
        running[shown],
        color=COLORS["log_laplace"],
        label=r"running mean of $e^{L_b}$",
    )
    exact = mech.mean(1.0)
    if np.isfinite(exact):
        ax.axhline(
            exact, color=COLORS["bound"], ls="--", label=rf"$1/(1-b^2)={exact:.3f}$"
        )
    else:
        ax.text(0.05, 0.9, r"$\mathbb{E}[e^{L_b}]=\infty$", transform=ax.transAxes)
    ax.set_xlabel("number of releases $n$")
    ax.set_ylabel("running mean / $Q$")
    ax.set_title(
        rf"$K={K:.2f}$, $\varepsilon={epsilon:.2f}$, $b=K/\varepsilon={b:.2f}$"
    )
    ax.legend(loc="best")
    bs = np.linspace(0.01, 0.99, 200)
    ax2.semilogy(
        bs,
        [dpbook.relative_bias(v) for v in bs],
        color=COLORS["log_laplace"],
        label="relative bias",
    )
    ax2.axvline(
        0.5,
        color=COLORS["bound"],
        ls=":",
        label=r"variance infinite beyond $K/\varepsilon=1/2$",
    )
    ax2.axvline(
        1.0,
        color=COLORS["bound"],
        ls="--",
        label=r"mean infinite beyond $K/\varepsilon=1$",
    )
    if b < 1:
        ax2.plot([b], [dpbook.relative_bias(b)], "o", color=COLORS["simulation"], ms=5)
    ax2.set_xlim(0, 1.05)
    _plain_log(ax.xaxis, ax2.yaxis)
    _plain_log(ax.yaxis, subs=(1.0, 2.0, 5.0))
    ax2.set_xlabel(r"$b=K/\varepsilon$")
    ax2.set_ylabel(r"$\mathbb{E}[Qe^{L_b}]/Q-1$")
    ax2.legend(loc="best")
    return fig


# --- Chapter 8: translated ramps --------------------------------------------------------------
@view(
    alpha=(0.0, 1.0, 0.01),
    grid={"alpha": (0.0, 0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)},
)
def draw_translated_ramp(alpha=0.35, scale=1.0):
    """The bias ``β_α(q)`` of the translated ramp and ``B(α)`` with Theorem 4.1's optimum marked."""
    b = scale
    mech = dpbook.TranslatedRamp(b, alpha)
    qs = np.linspace(0.0, 5.0 * b, 300)
    fig, (ax, ax2) = figure(ncols=2)
    beta = mech.bias(qs)
    ax.plot(
        qs,
        beta,
        color=COLORS["translated_ramp"],
        label=rf"$\beta_\alpha(q)$, $\alpha={alpha:.2f}b$",
    )
    ax.plot(
        qs,
        dpbook.BIT(b).bias(qs),
        color=COLORS["ramp"],
        ls=":",
        label=r"ramp, $\alpha=0$",
    )
    ax.axhline(
        mech.max_abs_bias(),
        color=COLORS["bound"],
        ls="--",
        lw=1,
        label=r"$\pm B(\alpha)$",
    )
    ax.axhline(-mech.max_abs_bias(), color=COLORS["bound"], ls="--", lw=1)
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xlabel(r"true value $q$ (units of $b$)")
    ax.set_ylabel(r"bias $\beta_\alpha(q)$")
    ax.legend(loc="best")
    alphas = np.linspace(0.0, 1.0 * b, 101)
    worst = np.array([dpbook.TranslatedRamp(b, a).max_abs_bias() for a in alphas])
    star = dpbook.optimal_ramp_shift(b)
    ax2.plot(
        alphas,
        worst,
        color=COLORS["translated_ramp"],
        label=r"$B(\alpha)=\max\{\frac{b}{2}e^{-\alpha/b},\alpha\}$",
    )
    ax2.plot(
        [star],
        [dpbook.TranslatedRamp(b, star).max_abs_bias()],
        "*",
        color=COLORS["simulation"],
        ms=11,
        label=rf"$\alpha^*=bW(1/2)={star / b:.4f}\,b$",
    )
    ax2.plot([alpha], [mech.max_abs_bias()], "o", color=COLORS["translated_ramp"], ms=5)
    ax2.set_xlabel(r"shift $\alpha$ (units of $b$)")
    ax2.set_ylabel(r"worst bias $B(\alpha)$")
    ax2.legend(loc="best")
    return fig


# --- Chapter 9: bias is inevitable ------------------------------------------------------------
_BASES = {"laplace": stats.laplace(scale=1.0), "gaussian": stats.norm(scale=1.0)}


@view(
    q=(0.0, 3.0, 0.05),
    base=list(_BASES),
    grid={"base": None, "q": tuple(0.5 * k for k in range(7))},
)
def draw_quantile_coupling(q=0.5, base="laplace"):
    """The quantile coupling of Prop. 6: ``u ↦ Y_q(u)`` and ``u ↦ Ŷ_q(u)`` with the region ``S_q``."""
    if base not in _BASES:
        raise ValueError(f"base must be one of {sorted(_BASES)}, got {base!r}")
    mech = dpbook.Restricted(_BASES[base])
    u = np.linspace(0.002, 0.998, 400)
    y, yhat = mech.coupling(q, u)
    fig, ax = figure()
    ax.plot(u, y, color=COLORS["laplace"], label=r"$Y_q(u)=F_q^{-1}(u)$ (unrestricted)")
    ax.plot(
        u,
        yhat,
        color=COLORS["restricted"],
        label=r"$\hat Y_q(u)=(F^R_q)^{-1}(u)$ (restricted)",
    )
    alpha = float(mech.base.cdf(-q))
    ax.fill_between(
        u,
        y,
        yhat,
        where=u <= alpha,
        color=COLORS["restricted"],
        alpha=0.25,
        label=rf"$S_q=(0,F_q(0))$, $F_q(0)={alpha:.3f}$",
    )
    ax.fill_between(u, y, yhat, where=u > alpha, color=COLORS["bound"], alpha=0.15)
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_ylim(-3.0, 4.0 + q)
    ax.set_xlabel(r"uniform draw $u$")
    ax.set_ylabel("coupled releases")
    ax.set_title(
        rf"{base} base, $q={q:.2f}$: $\mathbb{{E}}\hat Y_q-q={mech.bias(q):.3f}$"
    )
    ax.legend(loc="best")
    return fig


@functools.lru_cache(maxsize=64)
def _family_bias(family, shift, width, slope, offset, scale, q_max):
    """Bias of the post-processed ``φ(q + L_b)`` at 13 points of ``[0, q_max b]``, and ``B(φ)``.

    ``family`` is a key of :data:`FAMILIES`.

    Parameters as in :func:`draw_postprocessing_bias` (units of ``b``).  The ramp, the translated ramp
    and the piecewise-linear family are combinations of translated ramps,
    ``s τ_a(x) - (s - 1) τ_{x_1}(x)`` (``s = 1, a = x_1 = α`` for the first two), so their bias curve
    is read from :class:`dpbook.TranslatedRamp`'s closed form by linearity of the mean; the softplus
    has none and is integrated by :class:`dpbook.PostProcessed` (cached, as that takes a while).
    ``B(φ)`` is Theorem 4.1's closed form for the ramps and the certified maximum otherwise.
    """
    b = scale
    kw = _family_phi(family, shift * b, width * b, slope, offset * b)
    qs = np.linspace(0.0, q_max * b, 13)
    if family in ("ramp", "translated_ramp"):
        mech = dpbook.TranslatedRamp(b, kw["breakpoints"][0])
        return _frozen(mech.bias(qs)), mech.max_abs_bias()
    mech = dpbook.PostProcessed(b, **kw)
    if family == "piecewise_linear":
        (a, x1), s = kw["breakpoints"], slope
        mean = s * dpbook.TranslatedRamp(b, a).mean(qs) - (
            s - 1
        ) * dpbook.TranslatedRamp(b, x1).mean(qs)
        return _frozen(mean - qs), mech.max_abs_bias()
    return _frozen(mech.bias(qs)), mech.max_abs_bias()


@view(
    family=[(label, key) for key, label in FAMILIES.items()],
    shift=(0.0, 2.0, 0.001),
    width=(0.05, 2.0, 0.05),
    slope=(1.1, 6.0, 0.01),
    offset=(0.0, 0.5, 0.001),
    grid={
        "family": ("piecewise_linear", "translated_ramp", "softplus"),
        "shift": (0.25, 0.5, 1.0, 1.2353, 2.0),
    },
)
def draw_postprocessing_bias(
    family="piecewise_linear",
    shift=1.2353,
    width=0.5,
    slope=3.3426,
    offset=0.074,
    scale=1.0,
    q_max=6.0,
):
    """The bias curve of a post-processed Laplace release ``φ(q + L_b)``, its ``B(φ)``, and ``b W(1/e)``.

    Parameters are in units of ``b``; for the piecewise-linear family ``offset`` is capped at ``shift``.
    """
    b = scale
    offset = min(offset, shift)
    kw = _family_phi(family, shift * b, width * b, slope, offset * b)
    qs = np.linspace(0.0, q_max * b, 13)
    bias, worst = _family_bias(
        family,
        float(shift),
        float(width),
        float(slope),
        float(offset),
        float(b),
        float(q_max),
    )
    fig, (ax, ax2) = figure(ncols=2, width=8.0)
    xs = np.linspace(-1.0 * b, q_max * b, 400)
    ax.plot(xs, kw["phi"](xs), color=COLORS["translated_ramp"], label=r"$\varphi(x)$")
    ax.plot(
        xs, np.maximum(xs, 0.0), color=COLORS["ramp"], ls=":", label=r"ramp $\tau(x)$"
    )
    ax.set_xlabel(r"noisy value $x$ (units of $b$)")
    ax.set_ylabel(r"release $\varphi(x)$")
    ax.set_title(FAMILIES[family])
    ax.legend(loc="best")
    ax2.plot(
        qs,
        bias,
        ".-",
        color=COLORS["translated_ramp"],
        label=r"bias of $\varphi(q+L_b)$",
    )
    bound = dpbook.bias_lower_bound(b)
    ax2.axhline(
        worst,
        color=COLORS["translated_ramp"],
        ls="--",
        lw=1,
        label=rf"$\pm B(\varphi)=\pm{worst / b:.5f}\,b$",
    )
    ax2.axhline(-worst, color=COLORS["translated_ramp"], ls="--", lw=1)
    ax2.axhspan(
        -bound,
        bound,
        color=COLORS["bound"],
        alpha=0.2,
        label=rf"$\pm bW(1/e)=\pm{bound / b:.5f}\,b$",
    )
    ax2.axhline(0.0, color="k", lw=0.6)
    ax2.set_xlabel(r"true value $q$ (units of $b$)")
    ax2.set_ylabel(r"bias $\mathbb{E}\varphi(Y_q)-q$")
    ax2.legend(loc="best")
    return fig
