"""A release card: what a publisher states next to one bounded release (issue 11).

:func:`release_card` gathers, for one release ``x`` of a mechanism, the facts a reader needs to use it:
the mechanism and its parameters, the bounds, the **audited** privacy loss (:func:`dpbook.privacy_loss`,
so a mechanism that is not ε-DP at its nominal ε is charged what it really costs) or, given a ``delta``, the
(ε, δ) pair with ε the smallest the certified privacy profile allows at that δ
(:func:`dpbook.epsilon_for_delta`; a Gaussian mechanism has no finite pure ε), the released value,
the exact confidence interval (:func:`dpbook.confidence_interval`), and the exact bias and MSE at their
worst over the true values inside that interval.  Its ``str`` is plain text and its ``_repr_html_`` a
plain ``<table>`` that reads at 400 px.

The card documents the items NIST SP 800-226 (*Guidelines for Evaluating Differential Privacy
Guarantees*) asks a publisher of differentially private statistics to make explicit: the privacy
parameter ε and the unit of privacy it protects (here: true values ``sensitivity`` apart), the
mechanism and its noise, the bounds the data were clamped or truncated to (a source of bias), and the
accuracy of the result (bias, error, uncertainty).  They are listed in :attr:`ReleaseCard.nist_items`.

**Worst cases over the interval.**  ``|bias|``: for the families whose bias is monotone in ``q``
(Laplace, BIT, truncation, the translated ramp, restriction, log-Laplace; proofs in their
``max_abs_bias`` docstrings and in McGlinchey–Mason Thm 4.1 and Prop. 6) it is the larger of the two
ends, exactly.  Otherwise, and for the MSE always, a grid of 1025 true values with a certified bound
between grid points: for a family whose law at ``q`` has a score ``∂_q log p_q`` bounded by ``c/b`` (the
Laplace kernel: ``c = 1`` for the Laplace mechanism and every post-processing of it, ``c = 2`` for a
truncation or normalization, whose log-normalizer moves by at most ``1/b``), the root-MSE ``u(q)``
satisfies ``|u'| <= c u/(2b) + 1``, so within ``h/2`` of a grid value ``u_0`` it is at most
``(u_0 + 2b/c) e^{c h/(4b)} - 2b/c``; and ``|bias'| <= c u/b + 1``.  The card reports these upper
bounds (never below the truth); where no score bound is known it reports the grid's largest value and
says the figure is not certified.

**Counts.**  For an integer-valued family (:class:`~dpbook.DiscreteLaplace`, :class:`~dpbook.DiscreteBIT`,
:class:`~dpbook.DiscreteTruncated`) the true values are the integers of the interval, so both worst cases
are exact maxima over them (at most ``2^22`` integers; a longer interval is refused with a
``ValueError``), the sensitivity must be an integer, and the card prints the release, bounds and
interval as integers.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

import numpy as np

from .._kernels import validation as check
from ..audit._profile import epsilon_for_delta
from ..audit._search import privacy_report
from ..inference.intervals import ConfidenceInterval, confidence_interval

__all__ = ["ReleaseCard", "release_card"]


_NIST_ITEMS = (
    "privacy parameters: the audited epsilon (and delta) of the mechanism as run, and whether the audit is exact",
    "unit of privacy: neighbouring true values differ by at most the sensitivity",
    "mechanism: the noise family and its parameters",
    "bounds: the range the release is clamped or truncated to (a source of bias)",
    "accuracy: the exact confidence interval, worst-case bias and MSE over it",
)


@dataclass(frozen=True)
class ReleaseCard:
    """The facts published with one release (see the module docstring).

    Attributes
    ----------
    mechanism : str
        The family's name.
    parameters : dict
        Its public parameters.
    lower, upper : float
        The bounds of the true values (the mechanism's domain).
    sensitivity : float
        The ``Δ`` the privacy loss is audited for.
    epsilon : float
        The audited privacy loss (:func:`dpbook.privacy_loss`) when ``delta`` is 0; else the ε of the
        (ε, δ) guarantee, :func:`dpbook.epsilon_for_delta` (certified: never below the smallest such ε).
    epsilon_exact : bool
        Whether the audit is exact (False: an upper bound, or a search; always False with a ``delta``).
    release : float
        The released value.
    interval : ConfidenceInterval
        The exact confidence interval for the true value.
    worst_abs_bias, worst_mse : float
        ``sup |bias(q)|`` and ``sup MSE(q)`` over ``q`` in the interval (upper bounds when not exact).
    worst_method : str
        How those were obtained.
    certified : bool
        Whether the two worst cases are exact or certified upper bounds.
    nist_items : tuple of str
        The NIST SP 800-226 items the card documents.
    integer : bool
        The release and the true values are integers (a count): printed without exponent.
    delta : float
        The δ of the guarantee: 0.0 for pure ε-DP.
    """

    mechanism: str
    parameters: dict
    lower: float
    upper: float
    sensitivity: float
    epsilon: float
    epsilon_exact: bool
    release: float
    interval: ConfidenceInterval
    worst_abs_bias: float
    worst_mse: float
    worst_method: str
    certified: bool
    nist_items: tuple = field(default=_NIST_ITEMS)
    integer: bool = False
    delta: float = 0.0

    def rows(self):
        """The card as ``(label, value)`` pairs of strings, in display order."""
        ci = self.interval
        audit = "exact" if self.epsilon_exact else "upper bound"
        bound = "" if self.certified else " (not certified)"
        num = _fmt_count if self.integer else _fmt
        params = ", ".join(
            f"{k}={num(v) if k in ('lower', 'upper') else _fmt(v)}"
            for k, v in self.parameters.items()
        )
        return [
            ("Mechanism", f"{self.mechanism}({params})"),
            ("Bounds", f"[{num(self.lower)}, {num(self.upper)}]"),
            ("Sensitivity", _fmt(self.sensitivity)),
            self._privacy_row(audit),
            ("Released value", num(self.release)),
            (
                f"{ci.level:.0%} interval",
                (f"[{num(ci.low)}, {num(ci.high)}]" if ci.low <= ci.high else "empty")
                + f" ({'exact' if ci.exact else 'conservative'} coverage)",
            ),
            ("Worst |bias| in interval", _fmt(self.worst_abs_bias) + bound),
            ("Worst MSE in interval", _fmt(self.worst_mse) + bound),
        ]

    def _privacy_row(self, audit):
        if self.delta > 0:
            return (
                "Privacy (ε, δ) (audited)",
                f"epsilon = {_fmt_up(self.epsilon)}, delta = {_fmt(self.delta)} "
                "(certified upper bound on epsilon)",
            )
        if math.isinf(self.epsilon):
            return (
                "Privacy loss (audited)",
                f"epsilon = inf ({audit}): no finite pure epsilon; pass delta= for an (ε, δ) guarantee",
            )
        return ("Privacy loss (audited)", f"epsilon = {_fmt(self.epsilon)} ({audit})")

    def __str__(self):
        rows = self.rows()
        width = max(len(k) for k, _ in rows)
        lines = [f"{k:<{width}}  {v}" for k, v in rows]
        lines.append(f"{'Worst cases':<{width}}  {self.worst_method}")
        lines.append("Documents (NIST SP 800-226): " + "; ".join(self.nist_items))
        return "\n".join(lines)

    def _repr_html_(self):
        body = "".join(
            f'<tr><th scope="row" style="text-align:left">{html.escape(k)}</th>'
            f'<td style="overflow-wrap:anywhere">{html.escape(v)}</td></tr>'
            for k, v in self.rows()
        )
        items = "".join(f"<li>{html.escape(i)}</li>" for i in self.nist_items)
        return (
            '<table class="dpbook-release-card" style="max-width:100%">'
            "<caption>Release card</caption>" + body + "</table>"
            f"<p>Worst cases: {html.escape(self.worst_method)}</p>"
            f"<details><summary>NIST SP 800-226 items documented</summary><ul>{items}</ul></details>"
        )


def _fmt(v):
    if isinstance(v, (bool, str)):
        return str(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f"{f:.6g}"


def _fmt_up(v):
    """``v`` to 6 significant digits rounded upwards: a privacy parameter is never printed below its value."""
    f = float(v)
    if not math.isfinite(f) or f <= 0:
        return _fmt(f)
    if float(_fmt(f)) >= f:
        return _fmt(f)
    d = Decimal(f)
    return _fmt(
        float(d.quantize(Decimal(1).scaleb(d.adjusted() - 5), rounding=ROUND_CEILING))
    )


def _fmt_count(v):
    """An integer (or an infinite bound) in full: a count of 1234567 is not ``1.23457e+06``."""
    f = float(v)
    return (
        f"{int(f)}"
        if math.isfinite(f) and f == math.floor(f) and abs(f) < 2**53
        else _fmt(f)
    )


def _parameters(mechanism):
    return {
        k: v
        for k, v in vars(mechanism).items()
        if not k.startswith("_") and not callable(v)
    }


def _worst(mechanism, low, high, points=1025):
    """``(worst |bias|, worst MSE, method, certified)`` over ``q`` in ``[low, high]``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return math.inf, math.inf, "the interval is unbounded", True
    if mechanism.integer_valued:
        return _worst_integers(mechanism, low, high)
    grid = np.linspace(low, high, points) if high > low else np.array([low])
    bias = np.abs(np.asarray(mechanism.bias(grid), dtype=float)).reshape(-1)
    mse = np.asarray(mechanism.mse(grid), dtype=float).reshape(-1)
    h = (high - low) / (points - 1) if high > low else 0.0
    score = mechanism.score_bound()  # |d/dq log p_q| <= c/b, or None
    if (
        mechanism.mse_scales_as_q_squared and h > 0.0
    ):  # MSE = q^2 times a constant: largest at the top end
        worst_mse, certified, score = float(mse[-1]), True, None
        how_mse = "MSE: at the top end (it is proportional to q²)"
    elif score is None or h == 0.0:
        worst_mse, certified = float(mse.max()), h == 0.0
        how_mse = "MSE: largest of a 1025-point grid" + (
            "" if certified else " (not certified)"
        )
    else:
        c, b = score
        u = np.sqrt(mse)
        grow = math.exp(c * h / (4 * b))
        cells = np.maximum(u[:-1], u[1:])
        u_max = (cells + 2 * b / c) * grow - 2 * b / c
        worst_mse, certified = float(np.max(u_max) ** 2), True
        how_mse = (
            "MSE: largest of a 1025-point grid, certified between points by "
            f"|d√MSE/dq| ≤ c·√MSE/(2b) + 1 with c = {c:g}"
        )
    if mechanism.bias_monotone:
        worst_bias = float(max(bias[0], bias[-1]))
        how_bias = "|bias|: the larger end (the bias is monotone in q)"
    elif score is not None and h > 0:
        c, b = score
        ends = np.maximum(bias[:-1], bias[1:])
        worst_bias = float(
            np.max(ends + 0.5 * h * (c * float(np.max(u_max)) / b + 1.0))
        )
        how_bias = "|bias|: largest of a 1025-point grid, certified between points by |d bias/dq| ≤ c·√MSE/b + 1"
    else:
        worst_bias = float(bias.max())
        certified = certified and h == 0.0
        how_bias = "|bias|: largest of a 1025-point grid (not certified)"
    return worst_bias, worst_mse, how_bias + "; " + how_mse, certified


#: integer true values an exact worst case over a count's interval may enumerate
_MAX_INTEGERS = 2**22


def _worst_integers(mechanism, low, high):
    """Exact worst ``|bias|`` and MSE over the integers of ``[low, high]`` (an integer-valued family)."""
    lo, hi = math.ceil(low), math.floor(high)
    if hi < lo:  # a randomized set can be empty (dpbook.randomized_interval)
        return (
            math.nan,
            math.nan,
            "the randomized interval is empty: no true value to bound",
            True,
        )
    if hi - lo + 1 > _MAX_INTEGERS:
        raise ValueError(
            f"the interval [{low!r}, {high!r}] holds {hi - lo + 1:.3g} integer true values; the exact "
            f"worst cases over them are limited to {_MAX_INTEGERS}"
        )
    q = np.arange(lo, hi + 1.0)
    bias = float(np.max(np.abs(np.asarray(mechanism.bias(q), dtype=float))))
    mse = float(np.max(np.asarray(mechanism.mse(q), dtype=float)))
    return (
        bias,
        mse,
        f"|bias| and MSE: exact maxima over the {q.size} integer true values of the interval",
        True,
    )


def release_card(
    mechanism,
    x,
    *,
    sensitivity,
    level=0.95,
    randomize=False,
    rng=None,
    increasing=None,
    delta=None,
):
    """The release card of one release ``x`` of ``mechanism``.

    Parameters
    ----------
    mechanism : Mechanism
        The family that made the release.
    x : float
        The released value (finite, inside the support).
    sensitivity : float, keyword-only
        ``Δ > 0``: neighbouring data sets move the true value by at most this much.
    level : float, keyword-only
        Confidence level of the interval.
    randomize, rng, increasing : keyword-only
        As in :func:`dpbook.confidence_interval`.
    delta : float, keyword-only
        ``0 <= δ < 1``: the card states (ε, δ) with ``ε =`` :func:`dpbook.epsilon_for_delta` ``(mechanism,
        sensitivity, δ)``, on its upper side (certified).  ``None`` or 0: the pure ε
        (:func:`dpbook.privacy_loss`); for a family with no finite pure ε (the Gaussian ones) the card says so
        and points to ``delta=``.

    Returns
    -------
    ReleaseCard

    Raises
    ------
    ValueError
        For a non-scalar or bad ``x``, a bad ``level``, ``sensitivity`` or ``delta`` (naming the parameter).
    NotImplementedError
        With a ``delta``, for a family :func:`dpbook.privacy_profile` does not cover.

    Examples
    --------
    >>> from dpbook import Truncated
    >>> card = release_card(Truncated(0.2, lower=0.0, upper=1.0), 0.3, sensitivity=0.1, level=0.9)
    >>> round(card.epsilon, 6), card.epsilon_exact  # audited: more than 0.1/0.2 = 0.5
    (0.830553, True)
    >>> print(str(card).splitlines()[5])
    90% interval              [0, 0.74258] (exact coverage)
    >>> card._repr_html_().startswith("<table")
    True
    >>> from dpbook import Gaussian
    >>> print(str(release_card(Gaussian(2.0), 0.3, sensitivity=1.0)).splitlines()[3])
    Privacy loss (audited)    epsilon = inf (exact): no finite pure epsilon; pass delta= for an (ε, δ) guarantee
    >>> card = release_card(Gaussian(2.0), 0.3, sensitivity=1.0, delta=1e-5)
    >>> print(str(card).splitlines()[3])
    Privacy (ε, δ) (audited)  epsilon = 1.9931, delta = 1e-05 (certified upper bound on epsilon)
    """

    xa = check.finite_array("x", x)
    if xa.ndim != 0:
        raise ValueError(f"x must be one released value, got shape {xa.shape}")
    sens = check.positive("sensitivity", sensitivity)
    if delta is not None:
        delta = check.nonnegative("delta", delta)
        if not delta < 1:
            raise ValueError(f"delta must be < 1, got {delta!r}")
    ci = confidence_interval(
        mechanism, xa, level, randomize=randomize, rng=rng, increasing=increasing
    )
    lower, upper = (float(t) for t in mechanism.domain)
    report = privacy_report(mechanism, sens, domain=(lower, upper))
    epsilon, exact = float(report.epsilon), bool(report.exact)
    if delta:  # (ε, δ): the smallest ε the certified profile allows
        epsilon = float(
            epsilon_for_delta(mechanism, sens, delta, domain=(lower, upper))
        )
        exact = False
    worst_bias, worst_mse, how, certified = _worst(
        mechanism, float(ci.low), float(ci.high)
    )
    return ReleaseCard(
        mechanism=type(mechanism).__name__,
        parameters=_parameters(mechanism),
        lower=lower,
        upper=upper,
        sensitivity=sens,
        epsilon=epsilon,
        epsilon_exact=exact,
        release=float(xa),
        interval=ci,
        worst_abs_bias=worst_bias,
        worst_mse=worst_mse,
        worst_method=how,
        certified=certified,
        integer=bool(mechanism.integer_valued),
        delta=float(delta or 0.0),
    )
