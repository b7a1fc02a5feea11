"""Private kernels of the discrete Laplace law ``P(K = k) ∝ α^|k|``, ``α = e^{-1/b}``: its constants and
tail moments in closed form (finite geometric sums), each tail from its own small side."""

from __future__ import annotations

import math

import numpy as np


def _alpha_terms(scale):
    """``α = e^{-1/b}``, ``1 - α`` and ``α/(1 - α)`` without cancellation."""
    one_minus = -math.expm1(-1.0 / scale)
    alpha = math.exp(-1.0 / scale)
    return alpha, one_minus, alpha / one_minus


def _dl_tail(s, scale):
    """``P(K >= s)``, ``P(K < s)``, ``E[K; K >= s]``, ``E[K^2; K >= s]`` for integers ``s`` (arrays).

    For ``s >= 1``: ``P = α^s/(1+α)``, ``E[K; K >= s] = α^s/(1+α) (s + r)`` and
    ``E[K^2; K >= s] = α^s/(1+α) (s^2 + 2 s r + r (1 + α)/(1 - α))`` with ``r = α/(1 - α)`` (finite
    geometric sums); for ``s <= 0`` the same at ``m = 1 - s`` by symmetry, ``E[K; K >= s] =
    E[K; K >= m]`` and ``E[K^2; K >= s] = 2r/(1 - α) - E[K^2; K >= m]``.  Each probability is
    computed from its own small side, so no tail loses relative precision.
    """
    alpha, one_minus, r = _alpha_terms(scale)
    s = np.asarray(s, dtype=float)
    right = s >= 1
    m = np.where(right, s, 1.0 - s)
    w = np.exp(-m / scale) / (1.0 + alpha)
    m1 = w * (m + r)
    m2 = w * (m * m + 2.0 * m * r + r * (1.0 + alpha) / one_minus)
    var = 2.0 * r / one_minus
    p_ge = np.where(right, w, 1.0 - w)
    p_lt = np.where(right, 1.0 - w, w)
    return p_ge, p_lt, m1, np.where(right, m2, var - m2)


def _dl_split(s, scale):
    """``(P(K >= s), P(K < s))`` for integer arrays ``s`` (``±inf`` allowed), each from its own small tail:
    ``P(K >= s) = α^s/(1 + α)`` for ``s >= 1``, ``P(K < s) = α^{1-s}/(1 + α)`` for ``s <= 0``."""
    alpha = math.exp(-1.0 / scale)
    s = np.asarray(s, dtype=float)
    right = s >= 1
    with np.errstate(over="ignore", invalid="ignore"):
        w = np.exp(-np.where(right, s, 1.0 - s) / scale) / (1.0 + alpha)
    return np.where(right, w, 1.0 - w), np.where(right, 1.0 - w, w)
