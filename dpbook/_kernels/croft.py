"""Private kernels of Croft, Sack & Shi's scales: the Lambert W scale of one infinite constraint and the
validation of a feasible set (a union of closed intervals)."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from . import validation as check

#: ``y0 = -W(-1/(2e)) = 0.2319...``, the principal Lambert W value behind Croft's (32)
_Y0 = float(-special.lambertw(-0.5 / math.e).real)

#: Croft's (32) in units of ``Δ/ε``: ``-1/(W(-1/(2e)) e) = 1.585954...``
_SIGMA1 = 1.0 / (math.e * _Y0)

# --------------------------------------------------------------------------------------------------
# Croft, Sack & Shi (the feasible set, one infinite constraint, one scale for every q)


def _allowed(allowed):
    """Validate ``allowed`` and return it as sorted float arrays ``(lo, hi)``; touching pieces merge."""
    try:
        arr = np.array(allowed, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"allowed must be a list of (lo, hi) pairs, got {allowed!r}"
        ) from None
    if arr.ndim == 1 and arr.shape == (2,):
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(
            f"allowed must be a non-empty list of (lo, hi) pairs, got {allowed!r}"
        )
    if np.isnan(arr).any():
        raise ValueError(f"allowed must not contain NaN, got {allowed!r}")
    arr = arr[np.argsort(arr[:, 0], kind="stable")]
    lo, hi = arr[:, 0], arr[:, 1]
    if not (lo < hi).all():
        raise ValueError(f"allowed needs lo < hi in every pair, got {allowed!r}")
    if (lo[1:] < hi[:-1]).any():
        raise ValueError(
            f"allowed pieces must be disjoint (they may touch), got {allowed!r}"
        )
    keep = np.r_[True, lo[1:] > hi[:-1]]
    starts = lo[keep]
    ends = hi[np.r_[keep[1:], True]]
    return starts, ends


def _eps_delta(epsilon, sensitivity):
    return check.positive("epsilon", epsilon), check.positive(
        "sensitivity", sensitivity
    )


def _log_minus_w(excess, branch):
    """``ω = log(-W_k(-e^{-1-P}))`` for ``P = excess >= 0``: ``ω <= 0`` on the principal branch, ``>= 0`` on -1.

    It solves ``e^ω - 1 - ω = P``; Newton's method on ``sign(ω) sqrt(2(e^ω - 1 - ω))``, which is smooth
    with slope 1 through the branch point, keeps full precision there, where ``W`` itself has a
    square-root singularity.
    """
    root = np.sqrt(2.0 * excess)
    big = excess > 1.0
    far = np.where(branch < 0, -(1.0 + excess), np.log1p(excess + np.log1p(excess)))
    omega = np.where(big, far, np.where(branch < 0, -root, root))
    target = np.where(branch < 0, -root, root)
    for _ in range(50):
        h = np.maximum(np.expm1(omega) - omega, 0.0)
        g = np.copysign(np.sqrt(2.0 * h), omega)
        tiny = np.abs(omega) < 1e-6
        slope = np.where(
            tiny, 1.0 + omega / 3.0, np.expm1(omega) / np.where(tiny, 1.0, g)
        )
        step = (g - target) / slope
        omega = omega - step
        if (np.abs(step) <= 1e-15 * np.maximum(1.0, np.abs(omega))).all():
            break
    return omega


def _croft_scale(distance, epsilon, sensitivity):
    unit = sensitivity / epsilon
    with np.errstate(over="ignore"):
        s = np.asarray(distance / unit, dtype=float)
    zero = (
        s <= 1e-300
    )  # σ1 to every digit there; the Newton path would divide by a subnormal's square root
    # far from the boundary the defining equation reads s/x = s - y0 - log x + log1p(e^{-(s - 1 - log(x y0))})
    # for x = scale/unit: a contraction (factor ~1/s), iterated from x = 1; it is x = 1 + y0/s + ... exactly
    far = s > 40.0
    s_far = np.where(far, s, 41.0)
    x = np.ones_like(s_far)
    for _ in range(60):
        with np.errstate(invalid="ignore"):
            new = s_far / (
                s_far
                - _Y0
                - np.log(x)
                + np.log1p(np.exp(-(s_far - 1.0 - np.log(x * _Y0))))
            )
        new = np.where(np.isfinite(s_far), new, 1.0)
        done = np.all(np.abs(new - x) <= 1e-16 * x)
        x = new
        if done:
            break
    s = np.where(zero | far, 1.0, s)
    near = np.abs(s - 1.0) < 0.5
    h = np.where(
        near, np.log1p(np.where(near, s - 1.0, 0.0)) - (s - 1.0), np.log(s) + 1.0 - s
    )
    excess = np.maximum(_Y0 * np.expm1(h) - h, 0.0)
    omega = _log_minus_w(excess, np.where(s <= 1.0, -1, 1))
    t = np.exp(omega) - _Y0 * np.exp(h)
    return np.where(zero, _SIGMA1, np.where(far, x, s / t)) * unit
