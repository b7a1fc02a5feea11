"""The exact bias and MSE of each post-processing of a noisy histogram, for a given true histogram.

For ``n = 2`` and ``3`` cells every value is computed exactly (up to a bounded or estimated
numerical error, reported in ``error``); beyond, :func:`simulate_histogram_moments` simulates and
says so.  What makes it possible (Zhu, Van Hentenryck & Fioretto 2021, reference ``zhu2021`` for the
question):

* ``"raw"`` is unbiased with the noise's variance; ``"clamp"`` acts cell by cell, so each cell is the
  one-count family :class:`dpbook.BIT` (Laplace noise) or :class:`dpbook.DiscreteBIT` (discrete
  noise) with ``lower = 0``, whose closed forms are the one home of these numbers.
* ``"simplex"`` and ``"integer_simplex"`` with a known total ``T`` depend on the noisy vector only
  through its differences ``y_i - y_j`` (adding a constant to ``y`` moves neither), so the
  expectation is over ``n - 1`` differences of noises.  With discrete noise it is a lattice sum
  over them with their joint law in closed form, cut where the neglected mass is below ``1e-17``
  (certified: the outputs lie in ``[0, T]``).  With Laplace noise on two cells,
  ``x_1 = clip((y_1 - y_2 + T)/2, 0, T)`` and the difference of two Laplace laws has density
  ``(1 + |d|/b) e^{-|d|/b}/(4b)``, which gives closed forms (:func:`histogram_moments`); on three
  cells the projection is piecewise linear in the two differences, with kinks on the lines
  ``|S| y_j = Σ_{i∈S} y_i - T``, and the integer projection is constant between the lines
  ``y_i - y_j = k`` (``k`` an integer: the nearest points of the triangular lattice change there), so a
  Gauss–Legendre rule split at those lines (and at the density's kinks) converges fast.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from .._kernels import validation as check
from ..families.clamping import BIT
from ..families.discrete import DiscreteBIT
from ..families.laplace import Laplace
from ._engine import (
    EPS,
    LatticeSum,
    counts_array,
    difference_interval_prob,
    n_sims_count,
    noise_family,
    post_function,
    quadrature3,
    tail_integral,
    total_array,
)
from .release import NEEDS_TOTAL, POSTPROCESSINGS

__all__ = ["HistogramMoments", "histogram_moments", "simulate_histogram_moments"]

#: Laplace scales above this are refused by the exact computation (``b²`` must stay finite)
_MAX_SCALE = 1e100

#: the largest total whose integer projection on two cells is summed value by value
_MAX_TOTAL_TERMS = 10**7


class HistogramMoments(NamedTuple):
    """The mean, bias and MSE of each cell of a post-processed noisy histogram.

    Attributes
    ----------
    mean, bias, mse : numpy.ndarray
        ``E[x_i]``, ``E[x_i] - c_i`` and ``E[(x_i - c_i)²]`` for the release ``x`` of the true counts
        ``c``, of shape ``(n,)`` (``(..., n)`` when simulated).
    exact : bool
        Computed exactly (``error`` bounds the numerical error) or simulated (``se`` holds the
        standard errors).
    error : float or None
        For an exact value, a bound on the absolute numerical error of every entry of ``mean``,
        ``bias`` and ``mse``: the neglected tail of a lattice sum or of the quadrature's domain is
        bounded rigorously, rounding by a generous allowance (a few ulps per operation), and the
        quadrature on three cells adds the difference of two rules (an estimate); ``None`` when
        simulated.
    se : numpy.ndarray or None
        Standard errors of the simulated ``bias`` (and ``mean``); ``None`` when exact.
    method : str
        How the values were computed.
    mse_se : numpy.ndarray or None
        Standard errors of the simulated ``mse``; ``None`` when exact.
    """

    mean: np.ndarray
    bias: np.ndarray
    mse: np.ndarray
    exact: bool
    error: object
    se: object
    method: str
    mse_se: object = None


# --- the kinks of the two projections on three cells ----------------------------------------------


def _simplex_lines(total):
    """``|S| y_j - Σ_{i∈S} y_i + T = 0`` for every nonempty ``S`` and ``j``: where the support changes."""
    rows = []
    for size in (1, 2, 3):
        for s in itertools.combinations(range(3), size):
            for j in range(3):
                g = -np.isin(np.arange(3), s).astype(float)
                g[j] += size
                if g.any():
                    rows.append([*g, float(total)])
    return np.unique(np.array(rows), axis=0)


def _integer_lines(c, total, beta):
    """``y_i - y_j = k`` for integers ``|k| <= T + 1`` within the quadrature's reach of ``c_i - c_j``."""
    rows = []
    reach = 100.0 * beta + 2.0
    for i, j in ((0, 1), (0, 2), (1, 2)):
        mid = c[i] - c[j]
        lo = max(-total - 1, math.floor(mid - reach))
        hi = min(total + 1, math.ceil(mid + reach))
        if hi - lo > 4000:
            raise ValueError(
                f"counts/total: the exact quadrature of integer_simplex would cross {hi - lo} lines "
                "(at most 4000); use simulate_histogram_moments"
            )
        for k in range(int(lo), int(hi) + 1):
            g = np.zeros(4)
            g[i], g[j], g[3] = 1.0, -1.0, -float(k)
            rows.append(g)
    return np.array(rows).reshape(-1, 4)


# --- the exact computations -----------------------------------------------------------------------


def _moments_of(x_fn, c):
    """``y -> [x, (x - c)²]`` for the lattice sum and the quadrature."""

    def g(y):
        x = x_fn(y)
        return np.concatenate([x, (x - c) ** 2], axis=1)

    return g


def _result(c, first, second, error, method):
    n = c.size
    mean = np.asarray(first, dtype=float)[:n]
    mse = np.asarray(second, dtype=float)[:n]
    return HistogramMoments(mean, mean - c, mse, True, float(error), None, method)


def _laplace_two_cells_simplex(c, total, b):
    """``x_1 - c_1 = Y = clip(V, L, H)``, ``V = e0 + D``, ``D = (K_1 - K_2)/2`` (scale ``β = b/2``),
    ``L = -c_1``, ``H = T - c_1``, ``e0 = (T - c_1 - c_2)/2``; ``x_2 - c_2 = 2 e0 - Y``.

    ``E[Y] = ∫_0^∞ P(Y > t) dt - ∫_{-∞}^0 P(Y < t) dt`` and ``E[Y²] = ∫ 2|t| P(|Y| beyond t) dt``, the
    tails of ``V`` integrated in closed form (:func:`dpbook.histograms._engine.tail_integral`)."""
    beta = b / 2
    lo, hi = -c[0], total - c[0]
    e0 = (total - c[0] - c[1]) / 2
    pos_hi, neg_lo = max(hi, 0.0), -min(hi, 0.0)
    if (
        e0 == 0 and hi >= 0
    ):  # the usual case (T = c_1 + c_2): one tail integral, no cancellation
        a, m0 = tail_integral(0, min(hi, -lo), max(hi, -lo), 0.0, beta)
        ey = a if hi > -lo else -a
    else:
        p, m1 = tail_integral(0, 0.0, pos_hi, e0, beta)
        q, m2 = tail_integral(0, neg_lo, -lo, -e0, beta)
        ey, m0 = p - q - max(-hi, 0.0), m1 + m2 + max(-hi, 0.0)
    p2, m3 = tail_integral(1, 0.0, pos_hi, e0, beta)
    q2, m4 = tail_integral(1, neg_lo, -lo, -e0, beta)
    ey2 = 2 * p2 + 2 * q2 + (hi * hi if hi < 0 else 0.0)
    mag = m0 + 2 * (m3 + m4) + hi * hi + 4 * e0 * e0 + 4 * abs(e0) * m0
    bias = np.array([ey, 2 * e0 - ey])
    mse = np.array([ey2, 4 * e0 * e0 - 4 * e0 * ey + ey2])
    error = 64 * EPS * (mag + np.abs(c).max())
    return HistogramMoments(
        c + bias,
        bias,
        mse,
        True,
        float(error),
        None,
        "closed form (two cells: x_1 = clip((y_1 - y_2 + T)/2, 0, T))",
    )


def _laplace_two_cells_integer(c, total, b):
    """``P(x_1 = k) = P(k - 1/2 < c_1 + V < k + 1/2)`` (ends open), ``V = e0 + (K_1 - K_2)/2``: a sum over
    ``k = 0, ..., T`` of the law of a difference of two Laplace laws."""
    if total > _MAX_TOTAL_TERMS:
        raise ValueError(
            f"total={total!r} needs one term per unit (at most {_MAX_TOTAL_TERMS}); use "
            "simulate_histogram_moments"
        )
    beta = b / 2
    e0 = (total - c[0] - c[1]) / 2
    k = np.arange(int(total) + 1, dtype=float)
    lo = np.where(k == 0, -np.inf, k - 0.5 - c[0] - e0)
    hi = np.where(k == total, np.inf, k + 0.5 - c[0] - e0)
    p = difference_interval_prob(lo, hi, beta)
    d1, d2 = (k - c[0]) ** 2, (total - k - c[1]) ** 2
    mean1 = p @ k
    mean = np.array([mean1, total - mean1])
    mse = np.array([p @ d1, p @ d2])
    weight = np.maximum(np.maximum(k, d1), d2)
    error = (32 + math.log2(k.size)) * EPS * (weight @ (p + EPS))
    return HistogramMoments(
        mean,
        mean - c,
        mse,
        True,
        float(error),
        None,
        "closed form (two cells: the law of x_1 from the difference of two Laplace laws)",
    )


def histogram_moments(post, counts, mechanism, *, total=None):
    """The exact mean, bias and MSE of each cell of a post-processed noisy histogram of 2 or 3 cells.

    The release is ``POSTPROCESSINGS[post](c + K, T)`` for true counts ``c`` and independent noise
    ``K`` from ``mechanism`` (:func:`dpbook.release_histogram`).  Exact methods (module docstring):
    closed forms for ``'raw'`` and ``'clamp'`` (each cell is :class:`dpbook.BIT` or
    :class:`dpbook.DiscreteBIT` with ``lower = 0``); for ``'simplex'`` and ``'integer_simplex'`` a
    lattice sum over the differences of the noises (discrete noise; neglected mass below ``1e-17``,
    the neglected part bounded in ``error``), closed forms on two cells and Gauss–Legendre quadrature split
    at the kinks on three (Laplace noise; ``error`` then an estimate from two rules).  The question
    is Zhu, Van Hentenryck & Fioretto (2021)'s (reference ``zhu2021``).

    Parameters
    ----------
    post : {'raw', 'clamp', 'simplex', 'integer_simplex'}
        The post-processing (:data:`dpbook.POSTPROCESSINGS`).
    counts : array_like, shape (n,)
        The true counts, ``n`` = 2 or 3 (``>= 0``; integers for discrete noise).
    mechanism : dpbook.Laplace or dpbook.DiscreteLaplace
        The input mechanism.
    total : float or int, keyword-only
        The public total the projections keep (default: the true total ``sum(counts)``, the invariant;
        an integer for ``'integer_simplex'``).  Unused by ``'raw'`` and ``'clamp'``.

    Returns
    -------
    HistogramMoments
        With ``exact=True``.

    Raises
    ------
    ValueError
        For ``n`` other than 2 or 3 (naming ``counts``: use :func:`simulate_histogram_moments`), and
        for a lattice or quadrature too large to evaluate (naming ``mechanism`` or ``counts``).

    Examples
    --------
    >>> from dpbook import DiscreteLaplace, Laplace, histogram_moments
    >>> m = histogram_moments("simplex", [1, 9], Laplace(2.0))
    >>> m.bias.round(4).tolist(), m.exact     # the small count up, the large one down
    ([0.3675, -0.3675], True)
    >>> m = histogram_moments("integer_simplex", [0, 2, 8], DiscreteLaplace(1.0))
    >>> bool(m.bias[0] > 0 > m.bias[2]), m.error < 1e-10
    (True, True)
    """
    fn = post_function(post, POSTPROCESSINGS)
    mech = noise_family(mechanism)
    c = counts_array(counts, mech)
    if c.ndim != 1 or c.size not in (2, 3):
        raise ValueError(
            "counts must be one histogram of 2 or 3 cells for the exact moments (use "
            f"simulate_histogram_moments beyond), got {counts!r}"
        )
    laplace = isinstance(mech, Laplace)
    b = mech.scale
    if laplace and b > _MAX_SCALE:
        raise ValueError(
            f"mechanism: scale must be <= {_MAX_SCALE:g} for the exact moments, got {mechanism!r}"
        )
    if post == "raw":
        var = mech.variance(0.0)
        return HistogramMoments(
            c.copy(),
            np.zeros(c.size),
            np.full(c.size, var),
            True,
            0.0,
            None,
            "closed form (unbiased noise)",
        )
    if post == "clamp":
        cell = BIT(b, lower=0.0, upper=np.inf) if laplace else DiscreteBIT(b, lower=0)
        mean = np.asarray(cell.mean(c), dtype=float)
        return HistogramMoments(
            mean,
            mean - c,
            np.asarray(cell.mse(c), dtype=float),
            True,
            0.0,
            None,
            f"closed form per cell ({type(cell).__name__}(scale, lower=0))",
        )
    integer = post == "integer_simplex"
    t = float(total_array(total, c, integer=integer))

    def x_fn(y):
        return np.asarray(fn(y, t), dtype=float)

    g = _moments_of(x_fn, c)
    worst = float(np.maximum(c, np.abs(t - c)).max())
    if not laplace:
        lattice = LatticeSum(g, c, 1.0 / b, shift_invariant=True)
        # outputs in [0, T]: the neglected part of a mean is <= T·tail, of an MSE <= max|T - c, c|²·tail
        # plus the rounding of the sums and of the projections themselves (a few ulps of the values)
        error = (
            max(t, worst * worst) * lattice.tail
            + float(lattice.rounding().max())
            + 32 * EPS * (t + float(c.max()) + 1.0) * (1.0 + 2.0 * worst)
        )
        return _result(
            c,
            lattice.sums[: c.size],
            lattice.sums[c.size :],
            error,
            f"lattice sum over the noise differences ({lattice.points} points, "
            f"neglected mass <= {lattice.tail:.1e})",
        )
    if c.size == 2:
        return (
            _laplace_two_cells_integer(c, t, b)
            if integer
            else _laplace_two_cells_simplex(c, t, b)
        )
    lines = _integer_lines(c, t, b) if integer else _simplex_lines(t)
    # the noisy values are about |c| + T + 3b: rounding moves a projection by a few ulps of that
    rounding = 16 * EPS * (float(np.abs(c).max()) + t + 3 * b)
    if rounding > 1e-6 * max(t, 1.0):
        raise ValueError(
            f"mechanism: scale={b!r} swamps total={t!r} in floating point (noisy counts of size "
            f"{3 * b:.2g} cannot resolve it); use simulate_histogram_moments"
        )
    value, diff, tail = quadrature3(g, c, b, lines)
    error = (
        float(diff.max())
        + max(t, worst * worst) * tail
        + rounding * max(1.0, 2 * worst)
    )
    return _result(
        c,
        value[: c.size],
        value[c.size :],
        error,
        "Gauss-Legendre quadrature over the two noise differences, split at the kinks "
        "(error: 10- vs 16-point rules + the neglected mass)",
    )


def simulate_histogram_moments(
    post, counts, mechanism, *, total=None, n_sims, rng=None
):
    """The simulated mean, bias and MSE of each cell of a post-processed noisy histogram, with standard errors.

    ``n_sims`` seeded releases (:func:`dpbook.release_histogram`) of ``counts`` (any number of cells,
    leading axes = independent histograms); ``exact=False``, ``se`` the standard errors of the bias,
    ``mse_se`` those of the MSE.  Use it beyond three cells, where :func:`histogram_moments` stops.

    Parameters
    ----------
    post, counts, mechanism, total
        As :func:`histogram_moments` (``counts`` of shape ``(..., n)``, ``total`` broadcasting with
        ``(...,)``; default the true totals).
    n_sims : int, keyword-only
        The number of releases (``>= 2``).
    rng : int, numpy.random.Generator or None, keyword-only
        The random generator (SPEC 7).

    Returns
    -------
    HistogramMoments
        With ``exact=False``.

    Examples
    --------
    >>> from dpbook import Laplace, histogram_moments, simulate_histogram_moments
    >>> sim = simulate_histogram_moments("simplex", [1, 9], Laplace(2.0), n_sims=10**5, rng=7)
    >>> exact = histogram_moments("simplex", [1, 9], Laplace(2.0))
    >>> bool(abs(sim.bias - exact.bias).max() < 5 * sim.se.max()), sim.exact
    (True, False)
    """
    fn = post_function(post, POSTPROCESSINGS)
    mech = noise_family(mechanism)
    c = counts_array(counts, mech)
    n = n_sims_count(n_sims)
    integer = post == "integer_simplex"
    t = total_array(total, c, integer=integer) if post in NEEDS_TOTAL else None
    gen = check.generator(rng)
    rows = max(1, 2**20 // max(1, c.size))
    s1 = s2 = s3 = 0.0
    done = 0
    while done < n:
        m = min(rows, n - done)
        noisy = mech.sample(np.broadcast_to(c, (m,) + c.shape), rng=gen)
        x = np.asarray(fn(np.asarray(noisy), t), dtype=float)
        dev = x - c
        sq = dev * dev
        s1 = s1 + dev.sum(axis=0)
        s2 = s2 + sq.sum(axis=0)
        s3 = s3 + (sq * sq).sum(axis=0)
        done += m
    bias = s1 / n
    mse = s2 / n
    var_dev = np.maximum(s2 / n - bias * bias, 0.0) * n / (n - 1)
    var_sq = np.maximum(s3 / n - mse * mse, 0.0) * n / (n - 1)
    return HistogramMoments(
        c + bias,
        bias,
        mse,
        False,
        None,
        np.sqrt(var_dev / n),
        f"simulation ({n} seeded releases)",
        np.sqrt(var_sq / n),
    )
