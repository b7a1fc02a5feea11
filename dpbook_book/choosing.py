"""Choosing a range-adherent mechanism: every mechanism of the book at the same exact ε (Chapter 13).

:func:`calibrated_mechanisms` builds each mechanism with its scale set so that the auditor
:func:`dpbook.privacy_loss` returns ε; :func:`compare_mechanisms` tabulates their bias, variance, MSE
and worst cases over the true value; :func:`decision_table` reads the choice off those numbers.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from dpbook import (
    BIT,
    Laplace,
    TranslatedRamp,
    Truncated,
    laplace_scale,
    optimal_postprocessing,
    optimal_ramp_shift,
    privacy_loss,
    truncated_scale,
)
from dpbook._kernels import validation as check

__all__ = [
    "DOMAINS",
    "DOMAIN_LABELS",
    "DEFAULT_SENSITIVITY",
    "METRICS",
    "Candidate",
    "calibrated_mechanisms",
    "compare_mechanisms",
    "decision_table",
    "domain_bounds",
]

#: the two settings of Chapter 13, by key: a nonnegative statistic (a count) and a proportion
DOMAINS = ("count", "proportion")
#: how each setting is shown to readers (never used as a key)
DOMAIN_LABELS = {"count": "[0, ∞)", "proportion": "[0, 1]"}
_BOUNDS = {"count": (0.0, np.inf), "proportion": (0.0, 1.0)}
#: the sensitivity used for each setting unless given: one record changes a count by 1 and a
#: proportion over n = 20 records by 1/20
DEFAULT_SENSITIVITY = {"count": 1.0, "proportion": 0.05}
#: what Chapter 13's view can draw against the true value
METRICS = ("bias", "variance", "mse")


class Candidate(NamedTuple):
    """A mechanism calibrated to ε: its key, its name for readers, the mechanism, its scale, the audited
    privacy loss and how it was audited."""

    key: str
    name: str
    mechanism: object
    scale: float
    loss: float
    audit: str


def domain_bounds(domain):
    """``(lower, upper)`` of a setting given by its key (one of :data:`DOMAINS`)."""
    if domain not in _BOUNDS:
        raise ValueError(f"domain must be one of {DOMAINS}, got {domain!r}")
    return _BOUNDS[domain]


def calibrated_mechanisms(epsilon=1.0, sensitivity=None, domain=DOMAINS[0]):
    """Every range-adherent mechanism of the book for ``domain``, each calibrated to exactly ε-DP.

    Laplace-based post-processings (clamping, the translated ramp at ``α* = b W(1/2)`` and the optimal
    ``φ*`` of Chapter 14, the last two only on ``[0, ∞)``) use ``b = Δ/ε``; truncation (which is also
    Croft–Sack–Shi's normalized Laplace with a uniform scale) uses :func:`dpbook.truncated_scale`, the
    root of ``privacy_loss = ε`` by Brent's method.  Each loss is then audited with
    :func:`dpbook.privacy_loss`; a step post-processing has no audit of its own, so the Laplace it
    post-processes is audited (post-processing cannot increase the loss).  The unconstrained Laplace
    mechanism comes first, as the reference.

    ``sensitivity=None`` takes :data:`DEFAULT_SENSITIVITY` for the domain.  Results are cached.

    Returns
    -------
    tuple of Candidate
    """
    lo, hi = domain_bounds(domain)
    eps = check.positive("epsilon", epsilon)
    delta = (
        DEFAULT_SENSITIVITY[domain]
        if sensitivity is None
        else check.positive("sensitivity", sensitivity)
    )
    return _calibrated(eps, delta, domain)


@functools.lru_cache(maxsize=256)
def _calibrated(eps, delta, domain):
    lo, hi = domain_bounds(domain)
    b = laplace_scale(eps, delta)
    laplace = Laplace(b)
    out = [
        Candidate(
            "laplace",
            "Laplace (not range-adherent)",
            laplace,
            b,
            privacy_loss(laplace, delta),
            "exact",
        )
    ]
    bit = BIT(b, lower=lo, upper=hi)
    out.append(
        Candidate(
            "clamping",
            "clamping (BIT, ramp)",
            bit,
            b,
            privacy_loss(bit, delta),
            "exact",
        )
    )
    if hi == np.inf:
        ramp = TranslatedRamp(b, optimal_ramp_shift(b))
        out.append(
            Candidate(
                "ramp",
                "translated ramp at α*",
                ramp,
                b,
                privacy_loss(ramp, delta),
                "exact",
            )
        )
        out.append(
            Candidate(
                "optimal",
                "optimal φ* (Ch. 14)",
                optimal_postprocessing(b),
                b,
                privacy_loss(laplace, delta),
                "post-processing of the audited Laplace",
            )
        )
    bt = truncated_scale(eps, delta, lower=lo, upper=hi)
    trunc = Truncated(bt, lower=lo, upper=hi)
    out.append(
        Candidate(
            "truncated",
            "truncation, calibrated",
            trunc,
            bt,
            privacy_loss(trunc, delta),
            "exact",
        )
    )
    return tuple(out)


def _q_grid(domain, candidates, n=801):
    lo, hi = domain_bounds(domain)
    if hi == np.inf:
        top = 60.0 * max(c.scale for c in candidates)
        return np.concatenate(
            [
                np.linspace(0.0, 10.0 * candidates[0].scale, n),
                np.linspace(0.0, top, n)[1:],
            ]
        )
    return np.linspace(lo, hi, n)


def compare_mechanisms(epsilon=1.0, sensitivity=None, domain=DOMAINS[0]):
    """Worst-case bias and MSE, and the MSE at the boundary ``q = 0``, of every calibrated mechanism.

    The worst cases are maxima over a grid of true values (on ``[0, ∞)``: 801 points up to ``10 Δ/ε``
    and 800 up to 60 times the largest scale, where every bias has reached its limit to within
    ``e^{-60}``).

    Returns
    -------
    list of dict
        One per :func:`calibrated_mechanisms` candidate, with keys ``key``, ``name``, ``scale``, ``loss``,
        ``worst_bias``, ``worst_mse``, ``mse_at_0``, ``mse_far`` (at the largest grid value, or at
        ``q = 1/2`` on ``[0, 1]``).
    """
    cands = calibrated_mechanisms(epsilon, sensitivity, domain)
    q = _q_grid(domain, cands)
    far = q.max() if domain_bounds(domain)[1] == np.inf else 0.5
    rows = []
    for c in cands:
        m = c.mechanism
        rows.append(
            {
                "key": c.key,
                "name": c.name,
                "scale": c.scale,
                "loss": c.loss,
                "worst_bias": float(np.max(np.abs(m.bias(q)))),
                "worst_mse": float(np.max(m.mse(q))),
                "mse_at_0": float(m.mse(0.0)),
                "mse_far": float(m.mse(far)),
            }
        )
    return rows


_CRITERIA = (
    (
        "worst_bias",
        "smallest worst-case absolute bias (a release as unbiased as possible)",
    ),
    ("worst_mse", "smallest worst-case MSE (guaranteed accuracy)"),
    ("mse_at_0", "smallest MSE at the boundary q = 0 (rare counts, tiny proportions)"),
    ("mse_far", "smallest MSE far from the boundary"),
)


def decision_table(epsilon=1.0, sensitivity=None, domain=DOMAINS[0], tol=1e-9):
    """For each criterion, the range-adherent mechanisms that are best, read off :func:`compare_mechanisms`.

    Mechanisms within the relative tolerance ``tol`` of the best value are tied.  The unconstrained
    Laplace mechanism is not a candidate (its releases leave the range).

    Returns
    -------
    list of dict
        Keys ``criterion`` (a key), ``label`` (its sentence for readers), ``best`` (list of mechanism
        keys) and ``best_names`` (their names for readers), ``value``, ``runner_up`` (key),
        ``runner_up_name``, ``runner_up_value``.
    """
    rows = [
        r
        for r in compare_mechanisms(epsilon, sensitivity, domain)
        if r["key"] != "laplace"
    ]
    out = []
    for key, label in _CRITERIA:
        vals = np.array([r[key] for r in rows])
        best = float(vals.min())
        tied = [r for r, v in zip(rows, vals) if v <= best * (1 + tol) + 1e-300]
        others = sorted(
            ((v, k) for k, (r, v) in enumerate(zip(rows, vals)) if r not in tied)
        )
        runner = rows[others[0][1]] if others else None
        out.append(
            {
                "criterion": key,
                "label": label,
                "best": [r["key"] for r in tied],
                "best_names": [r["name"] for r in tied],
                "value": best,
                "runner_up": runner["key"] if runner else "",
                "runner_up_name": runner["name"] if runner else "",
                "runner_up_value": float(others[0][0]) if others else float("nan"),
            }
        )
    return out
