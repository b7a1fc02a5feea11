"""The registry of dpbook's mechanism families: one row per family, as scipy's ``distcont`` table.

Every generic suite (``tests/families/test_conformance.py``: law identities, the extremes sweep, the
auditor against brute force, interval coverage, the sampler's goodness of fit, bad input) is driven by
this table, so a family is tested by adding its row.  A test fails when a public family (a subclass of
:class:`dpbook.Mechanism` in ``dpbook.__all__``) has no row.

A row holds

* ``name`` and ``family``: the row's id and the public class it tests (a class may have several rows,
  e.g. :class:`dpbook.Restricted` with a normal, a logistic and a Student t base);
* ``typical``: cases at ordinary parameters; ``extreme``: cases at the ends of the doubles (scales
  ``1e-300 .. 1e300``, true values to ``±1e300``, widths down to ``1e-300``, ε ``1e-15 .. 1e6``);
* the family's traits: ``integer_valued``, ``has_atoms``, ``has_density`` (a general post-processing has
  no computed density), ``closed_form`` (``False``: the law is computed by quadrature or a numerical
  inverse), ``audit`` (what :func:`dpbook.privacy_report` must answer: ``'exact'``, ``'certified'`` an
  upper bound with its slack, ``'post-processing'`` the base's loss as an upper bound, or
  ``'unsupported'`` a ``NotImplementedError``), ``sampler_fast`` (``False``: the law or the sampler is
  costly at some parameters, as for a Student t base, whose law is numerical and which, but for 3 degrees
  of freedom, samples through scipy's t quantile; its goodness-of-fit test draws 10^5, not 10^6, and its
  law identities run in the slow suite; the sampler benchmark times every row alike), ``neighbours``
  (the family's default neighbour relation: ``'log'`` for a multiplicative family), ``noise`` (``'laplace'`` or
  ``'gauss'``: the noise the release adds, whose numpy generator the sampler benchmark times it against).

A :class:`Case` holds a factory of the instance (built afresh by each test), a small grid of true values
and, where one is known, a reference for the privacy loss and for the law at that point (a limit the
law must reach at the extremes, e.g. the uniform law of a truncation far narrower than its scale).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from scipy import stats

import dpbook


def ramp(x):
    """``max(x, 0)``: the ramp post-processing (module level, so that a mechanism holding it pickles)."""
    return np.maximum(x, 0.0)


@dataclass(frozen=True)
class Case:
    """One instance of a family, the true values to test it at, and what is known about it exactly.

    ``loss`` is the exact privacy loss at ``sensitivity`` over ``audit`` (keyword arguments of
    :func:`dpbook.privacy_report`), when it has a closed form.  ``mean`` and ``ppf`` are references the
    law must match at this case, ``mean(q)`` and ``ppf(p, q)`` (to ``rtol`` of ``scale_of_x``, the size of
    the law's outputs), typically a limit the law has reached to every digit of a double.  ``audit_error``
    is the message of the ``ValueError`` the audit must raise (and nothing else: no warning first), e.g. for
    a finite loss beyond the doubles.  ``exact=False``: the audit may answer an upper bound with its slack
    (in a row whose audit is otherwise exact), e.g. where the rounding allowance is wider than ``1e-12``.
    """

    id: str
    build: Callable[[], object]
    qs: tuple
    sensitivity: float = 1.0
    audit: dict = field(default_factory=dict)
    loss: Optional[float] = None
    mean: Optional[Callable[[float], float]] = None
    ppf: Optional[Callable[[np.ndarray, float], np.ndarray]] = None
    scale_of_x: float = 1.0
    rtol: float = 1e-9
    audit_error: Optional[str] = None
    exact: bool = True


@dataclass(frozen=True)
class Row:
    name: str
    family: type
    typical: tuple
    extreme: tuple = ()
    integer_valued: bool = False
    has_atoms: bool = False
    has_density: bool = True
    closed_form: bool = True
    audit: str = "exact"
    sampler_fast: bool = True
    neighbours: str = "additive"
    noise: str = "laplace"

    def cases(self):
        return self.typical + self.extreme


def _uniform_ppf(lo, hi):
    return lambda p, q: lo + np.asarray(p) * (hi - lo)


def _truncated_half_line_loss(b, delta):
    """Truncation to ``[0, inf)``: ``Δ/b + log(2 - e^{-Δ/b})`` (the module docstring of the auditor)."""
    e = delta / b
    return e + math.log(2 - math.exp(-e))


_LAPLACE = Row(
    "laplace",
    dpbook.Laplace,
    typical=(
        Case("b=1.3", lambda: dpbook.Laplace(1.3), (0.0, -2.0, 1e3), loss=1 / 1.3),
    ),
    extreme=(
        Case(
            "b=1e-300",
            lambda: dpbook.Laplace(1e-300),
            (0.0, 1e300, -1e300),
            sensitivity=1e-300,
            loss=1.0,
            mean=lambda q: q,
            scale_of_x=1e-300,
        ),
        Case(
            "b=1e300",
            lambda: dpbook.Laplace(1e300),
            (0.0, 1e300, -1e300),
            sensitivity=1e285,
            loss=1e-15,
            mean=lambda q: q,
            scale_of_x=1e300,
        ),
        Case(
            "eps=1e6",
            lambda: dpbook.Laplace(1.0),
            (0.0, 1e6),
            sensitivity=1e6,
            loss=1e6,
        ),
        Case(
            "eps=1e-15",
            lambda: dpbook.Laplace(1.0),
            (0.0,),
            sensitivity=1e-15,
            loss=1e-15,
        ),
    ),
)

_BIT = Row(
    "bit",
    dpbook.BIT,
    has_atoms=True,
    typical=(
        Case(
            "b=1,[0,2]",
            lambda: dpbook.BIT(1.0, lower=0.0, upper=2.0),
            (0.5, -0.7, 3.0),
            loss=1.0,
        ),
        Case(
            "b=0.8,[0,inf)",
            lambda: dpbook.BIT(0.8, lower=0.0),
            (0.3, 5.0),
            loss=1 / 0.8,
        ),
    ),
    extreme=(
        Case(
            "b=1e300,[0,1]",
            lambda: dpbook.BIT(1e300, lower=0.0, upper=1.0),
            (0.5,),
            loss=1e-300,
            mean=lambda q: 0.5,
        ),
        Case(
            "b=1e-300,[0,1]",
            lambda: dpbook.BIT(1e-300, lower=0.0, upper=1.0),
            (0.25, -1e300, 1e300),
            sensitivity=1e-300,
            audit={"domain": (0.0, 1e-296)},
            loss=1.0,
            exact=False,
            mean=lambda q: min(max(q, 0.0), 1.0),
        ),
        Case(
            "width=1e-300",
            lambda: dpbook.BIT(1.0, lower=0.0, upper=1e-300),
            (0.0, 5e-301),
            sensitivity=1e-300,
            loss=1e-300,
            mean=lambda q: 5e-301,
            scale_of_x=1e-300,
            rtol=1e-6,
        ),
        Case(
            "loss-beyond-doubles",
            lambda: dpbook.BIT(1e-300, lower=0.0, upper=1e300),
            (0.5,),
            sensitivity=1e300,
            audit_error="exceeds the float range",
        ),
    ),
)

_TRUNCATED = Row(
    "truncated",
    dpbook.Truncated,
    typical=(
        Case(
            "b=1,[0,2]", lambda: dpbook.Truncated(1.0, lower=0.0, upper=2.0), (0.5, 2.5)
        ),
        Case(
            "b=0.7,[0,inf)",
            lambda: dpbook.Truncated(0.7, lower=0.0),
            (0.2, 3.0),
            loss=_truncated_half_line_loss(0.7, 1.0),
        ),
    ),
    extreme=(
        # far narrower than its scale: the law is uniform on [lower, upper] to every digit (issue 25)
        Case(
            "b=1e20,[0,1]",
            lambda: dpbook.Truncated(1e20, lower=0.0, upper=1.0),
            (0.0, 0.3, 1.0),
            mean=lambda q: 0.5,
            ppf=_uniform_ppf(0.0, 1.0),
        ),
        Case(
            "b=1,width=1ulp",
            lambda: dpbook.Truncated(
                1.0, lower=0.3, upper=float(np.nextafter(0.3, 1.0))
            ),
            (0.3,),
            sensitivity=1e-17,
            audit_error="below the float resolution",
            mean=lambda q: 0.3,
            scale_of_x=1e-16,
            rtol=1.0,
        ),
        Case(
            "b=1,width=1e-300",
            lambda: dpbook.Truncated(1.0, lower=0.0, upper=1e-300),
            (0.0, 1e-300, 7.0),
            sensitivity=1e-300,
            mean=lambda q: 5e-301,
            ppf=_uniform_ppf(0.0, 1e-300),
            scale_of_x=1e-300,
            rtol=1e-6,
        ),
        Case(
            "b=1e300,[0,1e-300]",
            lambda: dpbook.Truncated(1e300, lower=0.0, upper=1e-300),
            (0.0,),
            sensitivity=1e-300,
            exact=False,
            mean=lambda q: 5e-301,
            ppf=_uniform_ppf(0.0, 1e-300),
            scale_of_x=1e-300,
            rtol=1e-6,
        ),
        Case(
            "b=1e-300,[0,1]",
            lambda: dpbook.Truncated(1e-300, lower=0.0, upper=1.0),
            (0.3, -1e300),
            sensitivity=1e-300,
            audit={"domain": (0.0, 1e-296)},
            mean=lambda q: min(max(q, 0.0), 1.0),
            rtol=1e-12,
        ),
        Case(
            "loss-beyond-doubles",
            lambda: dpbook.Truncated(1e-300, lower=0.0, upper=1e300),
            (0.5,),
            sensitivity=1e300,
            audit_error="exceeds the float range",
        ),
    ),
)

_RAMP = Row(
    "translated-ramp",
    dpbook.TranslatedRamp,
    has_atoms=True,
    typical=(
        Case(
            "b=1,opt",
            lambda: dpbook.TranslatedRamp(1.0, dpbook.optimal_ramp_shift(1.0)),
            (0.0, 1.5),
            loss=1.0,
        ),
    ),
    extreme=(
        # scale 1e15, shift 3e14: exact=True with slack 0 while 12% above the truth (issue 25)
        Case(
            "b=1e15,shift=3e14",
            lambda: dpbook.TranslatedRamp(1e15, 3e14),
            (0.0, 1.0),
            loss=1e-15,
            exact=False,
        ),
        Case(
            "b=1e-300,shift=1e-300",
            lambda: dpbook.TranslatedRamp(1e-300, 1e-300),
            (1.0, -1e300),
            sensitivity=1e-300,
            loss=1.0,
            mean=lambda q: max(q, 0.0),
            rtol=1e-12,
        ),
        Case(
            "loss-beyond-doubles",
            lambda: dpbook.TranslatedRamp(1e-300, 1e-300),
            (1.0,),
            sensitivity=1e300,
            audit_error="exceeds the float range",
        ),
    ),
)

_POSTPROCESSED = Row(
    "postprocessed-ramp",
    dpbook.PostProcessed,
    has_atoms=True,
    has_density=False,
    closed_form=False,
    audit="post-processing",
    sampler_fast=True,
    typical=(
        Case(
            "b=1,ramp",
            lambda: dpbook.PostProcessed(1.0, ramp, breakpoints=[0.0], tail=(0.0, 0.0)),
            (0.5,),
            loss=1.0,
        ),
    ),
    extreme=(
        Case(
            "b=1e-300,ramp",
            lambda: dpbook.PostProcessed(
                1e-300, ramp, breakpoints=[0.0], tail=(0.0, 0.0)
            ),
            (1.0, -1e300),
            sensitivity=1e-300,
            loss=1.0,
            mean=lambda q: max(q, 0.0),
            rtol=1e-12,
        ),
    ),
)

_STEP = Row(
    "step",
    dpbook.StepPostProcessed,
    has_atoms=True,
    audit="post-processing",
    typical=(
        Case(
            "b=1",
            lambda: dpbook.StepPostProcessed(
                1.0, edges=[0.0, 1.0], values=[0.0, 0.5], shift=0.5
            ),
            (0.3, 2.0),
            loss=1.0,
        ),
    ),
    extreme=(
        Case(
            "b=1e300",
            lambda: dpbook.StepPostProcessed(
                1e300, edges=[0.0, 1.0], values=[0.0, 0.5], shift=0.5
            ),
            (0.3,),
            loss=1e-300,
            scale_of_x=1e300,
        ),
    ),
)

_RESTRICTED_NORMAL = Row(
    "restricted-normal",
    dpbook.Restricted,
    noise="gauss",
    typical=(
        Case(
            "norm",
            lambda: dpbook.Restricted(stats.norm),
            (0.5, 3.0),
            audit={"window": (0.0, 5.0)},
        ),
    ),
    extreme=(
        Case(
            "norm(scale=1e-300)",
            lambda: dpbook.Restricted(stats.norm(scale=1e-300)),
            (1.0,),
            sensitivity=1e-300,
            audit={"window": (0.0, 5.0)},
            mean=lambda q: q,
        ),
    ),
)

_RESTRICTED_LOGISTIC = Row(
    "restricted-logistic",
    dpbook.Restricted,
    audit="unsupported",
    closed_form=False,
    typical=(Case("logistic", lambda: dpbook.Restricted(stats.logistic), (0.5, 3.0)),),
)

_RESTRICTED_T = Row(
    "restricted-t",
    dpbook.Restricted,
    audit="unsupported",
    sampler_fast=False,
    closed_form=False,
    typical=(Case("t(df=3)", lambda: dpbook.Restricted(stats.t(df=3)), (0.5, 3.0)),),
)

_LOG_LAPLACE = Row(
    "log-laplace",
    dpbook.LogLaplace,
    neighbours="log",
    typical=(Case("b=0.3", lambda: dpbook.LogLaplace(0.3), (1.0, 5.0), loss=1 / 0.3),),
    extreme=(
        Case(
            "b=1e-300",
            lambda: dpbook.LogLaplace(1e-300),
            (1.0, 1e300),
            sensitivity=1e-300,
            loss=1.0,
            mean=lambda q: q,
            rtol=1e-12,
        ),
    ),
)

_NORMALIZED = Row(
    "normalized",
    dpbook.Normalized,
    typical=(
        Case(
            "b=1,2-pieces",
            lambda: dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 4.0)]),
            (1.5, -1.0),
        ),
    ),
    extreme=(
        Case(
            "b=1e300,2-pieces",
            lambda: dpbook.Normalized(1e300, [(0.0, 1.0), (2.0, 4.0)]),
            (0.5,),
            mean=lambda q: (0.5 + 2 * 3.0) / 3,
            ppf=lambda p, q: np.where(
                np.asarray(p) <= 1 / 3, 3 * np.asarray(p), 1.0 + 3 * np.asarray(p)
            ),
        ),
        Case(
            "b=1,width=1e-300",
            lambda: dpbook.Normalized(1.0, [(0.0, 1e-300)]),
            (0.0,),
            sensitivity=1e-300,
            mean=lambda q: 5e-301,
            ppf=_uniform_ppf(0.0, 1e-300),
            scale_of_x=1e-300,
            rtol=1e-6,
        ),
        Case(
            "loss-beyond-doubles",
            lambda: dpbook.Normalized(1e-300, [(0.0, 1.0), (2.0, 1e300)]),
            (0.5,),
            sensitivity=1e300,
            audit_error="exceeds the float range",
        ),
    ),
)

_CROFT = Row(
    "croft",
    dpbook.CroftLaplace,
    audit="certified",
    typical=(
        Case(
            "eps=1,delta=1",
            lambda: dpbook.CroftLaplace(1.0, 1.0),
            (0.5, 3.0),
            audit={"domain": (0.0, 2.0), "window": (0.0, 3.0)},
        ),
    ),
    extreme=(
        Case(
            "eps=1e-15",
            lambda: dpbook.CroftLaplace(1e-15, 1.0),
            (0.5,),
            scale_of_x=1e15,
            audit={"domain": (0.0, 2.0), "window": (0.0, 3.0)},
        ),
    ),
)

_DISCRETE_LAPLACE = Row(
    "discrete-laplace",
    dpbook.DiscreteLaplace,
    integer_valued=True,
    has_atoms=True,
    has_density=False,
    typical=(
        Case("b=1.5", lambda: dpbook.DiscreteLaplace(1.5), (0, -3, 1000), loss=1 / 1.5),
    ),
    extreme=(
        Case(
            "b=1e-300",
            lambda: dpbook.DiscreteLaplace(1e-300),
            (0, 10**15),
            mean=lambda q: q,
        ),
        Case(
            "b=1e6",
            lambda: dpbook.DiscreteLaplace(1e6),
            (0,),
            loss=1e-6,
            mean=lambda q: q,
            scale_of_x=1e6,
        ),
    ),
)

_DISCRETE_BIT = Row(
    "discrete-bit",
    dpbook.DiscreteBIT,
    integer_valued=True,
    has_atoms=True,
    has_density=False,
    typical=(
        Case(
            "b=1,[0,5]",
            lambda: dpbook.DiscreteBIT(1.0, lower=0, upper=5),
            (0, 2, 5),
            loss=1.0,
        ),
    ),
    extreme=(
        Case(
            "b=1e15,[0,10]",
            lambda: dpbook.DiscreteBIT(1e15, lower=0, upper=10),
            (5,),
            mean=lambda q: 5.0,
        ),
    ),
)

_DISCRETE_TRUNCATED = Row(
    "discrete-truncated",
    dpbook.DiscreteTruncated,
    integer_valued=True,
    has_atoms=True,
    has_density=False,
    typical=(
        Case(
            "b=1,[0,5]",
            lambda: dpbook.DiscreteTruncated(1.0, lower=0, upper=5),
            (0, 2, 5),
        ),
    ),
    extreme=(
        Case(
            "b=1e15,[0,10]",
            lambda: dpbook.DiscreteTruncated(1e15, lower=0, upper=10),
            (5, 0),
            mean=lambda q: 5.0,
        ),
    ),
)

_ROUNDED = Row(
    # exact with a clamped base (a discrete description); the base's loss as an upper bound for a Laplace base
    "rounded",
    dpbook.Rounded,
    integer_valued=True,
    has_atoms=True,
    has_density=False,
    typical=(
        Case(
            "laplace(1)",
            lambda: dpbook.Rounded(dpbook.Laplace(1.0)),
            (0, 3),
            exact=False,
            loss=1.0,
        ),
        Case(
            "bit(1,[0,5])",
            lambda: dpbook.Rounded(dpbook.BIT(1.0, lower=0.0, upper=5.0)),
            (0, 2, 5),
        ),
    ),
    extreme=(
        Case(
            "laplace(1e-300)",
            lambda: dpbook.Rounded(dpbook.Laplace(1e-300)),
            (3, -(10**15)),
            exact=False,
            mean=lambda q: q,
        ),
    ),
)

_COUNT_POSTPROCESSED = Row(
    # with integer=True the releases are integers too (integer_valued): the intervals invert it over integer q;
    # with real releases (integer=False) only the law, moments and audit are checked here
    "count-postprocessed",
    dpbook.CountPostProcessed,
    has_atoms=True,
    has_density=False,
    audit="post-processing",
    integer_valued=True,
    typical=(
        Case(
            "clamp-at-0",
            lambda: dpbook.CountPostProcessed(
                1.0, values=[0.0], shift=0.0, integer=True
            ),
            (0, 3),
        ),
        Case(
            "ramp-values",
            lambda: dpbook.CountPostProcessed(
                2.0, values=[0.0, 0.4, 1.7], shift=0.5, integer=True
            ),
            (0, 2, 9),
        ),
    ),
)

_FOLDED = Row(
    # a post-processing of q + L_b: the auditor reports Δ/b as an upper bound; the loss is log cosh(w/b) -
    # log cosh((w - Δ)/b) with two finite bounds, Δ/b with one (tests/families/test_folded.py)
    "folded-laplace",
    dpbook.FoldedLaplace,
    audit="post-processing",
    typical=(
        Case(
            "b=1,[0,1]",
            lambda: dpbook.FoldedLaplace(1.0, lower=0.0, upper=1.0),
            (0.3, -0.4, 2.7),
            loss=math.log(math.cosh(1.0)),
        ),
        Case(
            "b=0.8,[0,inf)",
            lambda: dpbook.FoldedLaplace(0.8, lower=0.0, upper=np.inf),
            (0.2, 3.0, -1.0),
            loss=1 / 0.8,
        ),
        Case(
            "b=1,(-inf,2]",
            lambda: dpbook.FoldedLaplace(1.0, lower=-np.inf, upper=2.0),
            (1.0, 5.0),
            loss=1.0,
        ),
    ),
    extreme=(
        # far narrower than its scale: uniform on [lower, upper] to every digit, at any true value
        Case(
            "b=1e20,[0,1]",
            lambda: dpbook.FoldedLaplace(1e20, lower=0.0, upper=1.0),
            (0.0, 0.3, 1.0, 1e300),
            mean=lambda q: 0.5,
            ppf=_uniform_ppf(0.0, 1.0),
        ),
        Case(
            "b=1,width=1e-300",
            lambda: dpbook.FoldedLaplace(1.0, lower=0.0, upper=1e-300),
            (0.0, 7.0),
            sensitivity=1e-300,
            mean=lambda q: 5e-301,
            ppf=_uniform_ppf(0.0, 1e-300),
            scale_of_x=1e-300,
            rtol=1e-6,
        ),
        Case(
            "b=1e-300,[0,1]",
            lambda: dpbook.FoldedLaplace(1e-300, lower=0.0, upper=1.0),
            (0.3, -1e300),
            loss=1e300,
            mean=lambda q: 0.3 if q == 0.3 else 0.0,
            rtol=1e-12,
        ),
        Case(
            "b=1e300,[0,inf)",
            lambda: dpbook.FoldedLaplace(1e300, lower=0.0, upper=np.inf),
            (0.0,),
            sensitivity=1e285,
            loss=1e-15,
            mean=lambda q: 1e300,
            scale_of_x=1e300,
        ),
    ),
)


def _gaussian_bit_loss(scale, lower, upper, delta, domain=None):
    """GaussianBIT on a finite range over the domain ``[lo, hi]`` (default ``[lower, upper]``): the larger of the
    atom at ``lower`` for the pair ``(hi - Δ, hi)`` and the atom at ``upper`` for ``(lo + Δ, lo)``."""
    lo, hi = (lower, upper) if domain is None else domain
    at_lower = stats.norm.logcdf((lower - hi + delta) / scale) - stats.norm.logcdf(
        (lower - hi) / scale
    )
    at_upper = stats.norm.logcdf((lo + delta - upper) / scale) - stats.norm.logcdf(
        (lo - upper) / scale
    )
    return float(max(at_lower, at_upper))


_GAUSSIAN = Row(
    "gaussian",
    dpbook.Gaussian,
    noise="gauss",
    typical=(
        Case("s=1.3", lambda: dpbook.Gaussian(1.3), (0.0, -2.0, 1e3), loss=math.inf),
    ),
    extreme=(
        Case(
            "s=1e-300",
            lambda: dpbook.Gaussian(1e-300),
            (0.0, 1e300, -1e300),
            sensitivity=1e-300,
            loss=math.inf,
            mean=lambda q: q,
            scale_of_x=1e-300,
        ),
        Case(
            "s=1e300",
            lambda: dpbook.Gaussian(1e300),
            (0.0, 1e300, -1e300),
            sensitivity=1e285,
            loss=math.inf,
            mean=lambda q: q,
            scale_of_x=1e300,
        ),
    ),
)

_GAUSSIAN_BIT = Row(
    "gaussian-bit",
    dpbook.GaussianBIT,
    noise="gauss",
    has_atoms=True,
    typical=(
        Case(
            "s=1,[0,2]",
            lambda: dpbook.GaussianBIT(1.0, lower=0.0, upper=2.0),
            (0.5, -0.7, 3.0),
            loss=_gaussian_bit_loss(1.0, 0.0, 2.0, 1.0),
        ),
        Case(
            "s=0.8,[0,inf)",
            lambda: dpbook.GaussianBIT(0.8, lower=0.0),
            (0.3, 5.0, -4.0),
            loss=math.inf,
        ),
    ),
    extreme=(
        Case(
            "s=1e300,[0,1]",
            lambda: dpbook.GaussianBIT(1e300, lower=0.0, upper=1.0),
            (0.5,),
            mean=lambda q: 0.5,
        ),
        # (σ = 1e-150, not 1e-300: the auditor's Gaussian kernel divides by σ², which underflows below 1e-154;
        # the law at σ = 1e-300 is swept in tests/families/test_gaussian.py)
        Case(
            "s=1e-150,[0,2e-149]",
            lambda: dpbook.GaussianBIT(1e-150, lower=0.0, upper=2e-149),
            (1e-149, -1e300, 1e300),
            sensitivity=1e-150,
            loss=_gaussian_bit_loss(1e-150, 0.0, 2e-149, 1e-150),
            mean=lambda q: min(max(q, 0.0), 2e-149),
            scale_of_x=1e-149,
        ),
        Case(
            "width=1e-300",
            lambda: dpbook.GaussianBIT(1.0, lower=0.0, upper=1e-300),
            (0.0, 5e-301),
            sensitivity=1e-300,
            mean=lambda q: 5e-301,
            scale_of_x=1e-300,
            rtol=1e-6,
        ),
    ),
)

_GAUSSIAN_TRUNCATED = Row(
    "gaussian-truncated",
    dpbook.GaussianTruncated,
    noise="gauss",
    typical=(
        Case(
            "s=1,[0,2]",
            lambda: dpbook.GaussianTruncated(1.0, lower=0.0, upper=2.0),
            (0.5, 2.5, -3.0),
        ),
        Case(
            "s=0.7,[0,inf)",
            lambda: dpbook.GaussianTruncated(0.7, lower=0.0),
            (0.2, 3.0, -2.0),
            loss=math.inf,
        ),
    ),
    extreme=(
        # far narrower than its scale: the law is uniform on [lower, upper] to every digit
        Case(
            "s=1e20,[0,1]",
            lambda: dpbook.GaussianTruncated(1e20, lower=0.0, upper=1.0),
            (0.0, 0.3, 1.0),
            mean=lambda q: 0.5,
            ppf=_uniform_ppf(0.0, 1.0),
            # a loss of ~1e-40 next to log-normalizers rounded to ~1e-16: an upper bound with its slack
            # (the family has no accurate log-normalizer ratio for close laws yet)
            exact=False,
        ),
        Case(
            "s=1,width=1e-300",
            lambda: dpbook.GaussianTruncated(1.0, lower=0.0, upper=1e-300),
            (0.0, 1e-300, 7.0),
            sensitivity=1e-300,
            mean=lambda q: 5e-301,
            ppf=_uniform_ppf(0.0, 1e-300),
            scale_of_x=1e-300,
            rtol=1e-6,
            exact=False,  # as the case above: a tiny loss next to the log-normalizers' rounding
        ),
        Case(
            "s=1e-150,[0,1]",
            lambda: dpbook.GaussianTruncated(1e-150, lower=0.0, upper=1.0),
            # (its density at 0 is about |q|/σ²: beyond the doubles for q below -1.8e8 σ; σ as in GaussianBIT's row)
            (0.3, -1e-142, 1.0 + 1e-142),
            sensitivity=1e-150,
            audit={"domain": (0.0, 1e-149)},
            mean=lambda q: min(max(q, 0.0), 1.0),
            rtol=1e-12,
        ),
    ),
)


def _laplace_ppf(scale):
    return lambda p, q: stats.laplace.ppf(p, loc=q, scale=scale)


_TRUNCATED_LAPLACE_NOISE = Row(
    # Geng et al.'s truncated Laplacian: q + Z, |Z| <= A; the support moves with q, so the loss is infinite
    # (tests/families/test_bounded_noise.py: the law against quadrature, the exact privacy profile)
    "truncated-laplace-noise",
    dpbook.TruncatedLaplaceNoise,
    typical=(
        Case(
            "b=1.3,A=4",
            lambda: dpbook.TruncatedLaplaceNoise(1.3, bound=4.0),
            (0.0, -2.0, 1e3),
            loss=math.inf,
        ),
        Case(
            "geng(1,1e-5)",
            lambda: dpbook.geng_truncated_laplace(1.0, 1e-5, 1.0),
            (0.5, -3.0),
            loss=math.inf,
        ),
        Case(
            "b=2,A=0.5",
            lambda: dpbook.TruncatedLaplaceNoise(2.0, bound=0.5),
            (0.0, 7.0),
            sensitivity=0.25,
            loss=math.inf,
        ),
    ),
    extreme=(
        Case(
            "b=1e-300,A=1e-299",
            lambda: dpbook.TruncatedLaplaceNoise(1e-300, bound=1e-299),
            (0.0, 1e300, -1e300),
            sensitivity=1e-300,
            loss=math.inf,
            mean=lambda q: q,
            scale_of_x=1e-300,
        ),
        # a bound far below the scale: uniform on [q - A, q + A] to every digit
        Case(
            "b=1e300,A=1",
            lambda: dpbook.TruncatedLaplaceNoise(1e300, bound=1.0),
            (0.0, 0.3),
            loss=math.inf,
            mean=lambda q: q,
            ppf=lambda p, q: q - 1.0 + 2.0 * np.asarray(p),
        ),
        Case(
            "b=1e300,A=1e-300",
            lambda: dpbook.TruncatedLaplaceNoise(1e300, bound=1e-300),
            (0.0,),
            sensitivity=1e-300,
            loss=math.inf,
            mean=lambda q: q,
            ppf=lambda p, q: q + 1e-300 * (2.0 * np.asarray(p) - 1.0),
            scale_of_x=1e-300,
            rtol=1e-6,
        ),
        # a bound far above the scale: the Laplace law to every digit
        Case(
            "b=1,A=1e300",
            lambda: dpbook.TruncatedLaplaceNoise(1.0, bound=1e300),
            (0.0, -2.0),
            loss=math.inf,
            mean=lambda q: q,
            ppf=_laplace_ppf(1.0),
            # (the sweep reads isf at 1 - 1e-9, rounded: its quantile is 2e-8 from that at 1e-9)
            rtol=1e-7,
        ),
        Case(
            "b=1e-300,A=1e300",
            lambda: dpbook.TruncatedLaplaceNoise(1e-300, bound=1e300),
            (0.0, 1e300),
            sensitivity=1e-300,
            loss=math.inf,
            mean=lambda q: q,
            scale_of_x=1e-300,
        ),
        Case(
            "b=1e300,A=1e300",
            lambda: dpbook.TruncatedLaplaceNoise(1e300, bound=1e300),
            (0.0, -1e300),
            sensitivity=1e285,
            loss=math.inf,
            mean=lambda q: q,
            scale_of_x=1e300,
        ),
        Case(
            "eps=1e-15",
            lambda: dpbook.geng_truncated_laplace(1e-15, 1e-5, 1.0),
            (0.0,),
            loss=math.inf,
            mean=lambda q: q,
        ),
        Case(
            "eps=1e6",
            lambda: dpbook.geng_truncated_laplace(1e6, 1e-5, 1.0),
            (0.0, 1e6),
            loss=math.inf,
            mean=lambda q: q,
        ),
    ),
)

ROWS = (
    _LAPLACE,
    _BIT,
    _TRUNCATED,
    _RAMP,
    _POSTPROCESSED,
    _STEP,
    _RESTRICTED_NORMAL,
    _RESTRICTED_LOGISTIC,
    _RESTRICTED_T,
    _LOG_LAPLACE,
    _NORMALIZED,
    _CROFT,
    _DISCRETE_LAPLACE,
    _DISCRETE_BIT,
    _DISCRETE_TRUNCATED,
    _ROUNDED,
    _COUNT_POSTPROCESSED,
    _FOLDED,
    _GAUSSIAN,
    _GAUSSIAN_BIT,
    _GAUSSIAN_TRUNCATED,
    _TRUNCATED_LAPLACE_NOISE,
)


#: an instance of every scipy base that :class:`dpbook.Restricted` draws from by its generic strips
#: (``Restricted._UNIMODAL_BASES`` and ``_BIMODAL_BASES``), shape parameters where it has them; not registry
#: rows (their laws are numerical and their generic suites would only repeat ``restricted-t``'s), but the
#: sampler benchmark's ``restricted-scipy`` cases and ``tests/_kernels/test_strips.py`` read them here
STRIP_BASES = {
    "gumbel_r": lambda: stats.gumbel_r(loc=-np.euler_gamma),
    "gumbel_l": lambda: stats.gumbel_l(),
    "hypsecant": lambda: stats.hypsecant(),
    "genlogistic": lambda: stats.genlogistic(0.2),
    "skewnorm": lambda: stats.skewnorm(3),
    "exponnorm": lambda: stats.exponnorm(2),
    "gennorm": lambda: stats.gennorm(0.5),
    "loggamma": lambda: stats.loggamma(2),
    "moyal": lambda: stats.moyal(),
    "powernorm": lambda: stats.powernorm(3),
    "laplace_asymmetric": lambda: stats.laplace_asymmetric(2),
    "t": lambda: stats.t(5),
    "nct": lambda: stats.nct(5, 2),
    "jf_skew_t": lambda: stats.jf_skew_t(3, 5),
    "johnsonsu": lambda: stats.johnsonsu(1, 2),
    "norminvgauss": lambda: stats.norminvgauss(2, 1),
    "crystalball": lambda: stats.crystalball(2, 3),
    "genhyperbolic": lambda: stats.genhyperbolic(0.5, 1.5, -0.5),
    "pearson3": lambda: stats.pearson3(0.1),
    "dgamma": lambda: stats.dgamma(2),
    "dweibull": lambda: stats.dweibull(2),
}


def public_families():
    """The public mechanism families: every subclass of :class:`dpbook.Mechanism` in ``dpbook.__all__``."""
    out = set()
    for name in dpbook.__all__:
        obj = getattr(dpbook, name)
        if (
            isinstance(obj, type)
            and issubclass(obj, dpbook.Mechanism)
            and obj is not dpbook.Mechanism
        ):
            out.add(obj)
    return out
