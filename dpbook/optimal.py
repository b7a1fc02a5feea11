"""The best nonnegative post-processing of the Laplace mechanism, by linear programming, verified exactly.

McGlinchey & Mason's conclusion (§6) asks for the infimum of the worst-case bias
``B(φ) = sup_{q >= 0} |E φ(q + L_b) - q|`` (their eq. (12)) over nonnegative ``φ``.  Proposition 5's
proof bounds it below by ``b W(1/e)`` (:func:`dpbook.bias_lower_bound`); the best translated ramp
(Theorem 4.1) reaches ``b W(1/2)``.  Here ``φ`` is a *step function with a linear tail*
(:class:`StepPostProcessed`): constant on cells of a grid, the identity shifted by a constant beyond
it.  Its mean is linear in the unknowns, so minimizing the largest ``|bias|`` over a grid of true
values is a linear program (:func:`min_bias_postprocessing`, ``scipy.optimize.linprog`` with HiGHS).

A program constrained on a grid of ``q`` can cheat between the grid points, so every answer is
re-checked a posteriori (:func:`verify_bias`): the bias of a step function has a closed form
(:meth:`StepPostProcessed.bias`, differences of the Laplace distribution function), evaluated on a much finer
grid, with a rigorous bound between grid points and an exact argument beyond the last cell.  Only
the verified value is to be reported.

The program's (tamed) answer has a telling shape: zero up to about ``1.28 b``, then ``x - 0.28 b``.
That is the threshold rule :func:`optimal_postprocessing`, whose worst-case bias is exactly
``b W(1/e)``: Proposition 5's lower bound is attained, which settles the question.  For mechanisms
that are not post-processings of the Laplace release, :func:`dp_bias_lower_bound` gives the
corresponding floor from group privacy.

For counts (Chapter 20) the same question is asked of the discrete Laplace release ``q + K``:
:class:`CountPostProcessed` (a window map with an exact tail), :func:`verify_count_bias` (exact over
every count), :func:`least_count_bias` (a linear program with no truncation error),
:func:`optimal_count_postprocessing` (the closed-form optimum: the group-privacy floor
``max_k k/(1 + e^{k/b})`` is attained), :func:`optimal_count_threshold_rules` and
:func:`clamped_sum_bias`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, sparse, special

from . import _validation as check
from .discrete import DiscreteLaplace
from .laplace import _laplace_cdf, _laplace_logpdf, _laplace_sf
from .mechanism import Mechanism, _float
from ._privacy_interface import _piece_log_mass, corner_pairs, laplace_description

__all__ = [
    "StepPostProcessed",
    "BiasVerification",
    "MSEVerification",
    "OptimalPostProcessing",
    "laplace_cell_masses",
    "verify_bias",
    "verify_mse",
    "min_bias_postprocessing",
    "optimal_postprocessing",
    "dp_bias_lower_bound",
    "CountPostProcessed",
    "CountBiasVerification",
    "LeastCountBias",
    "verify_count_bias",
    "optimal_count_postprocessing",
    "least_count_bias",
    "optimal_count_threshold_rules",
    "clamped_sum_bias",
]


def laplace_cell_masses(q, edges, scale):
    """``P(e_{k-1} < q + L_b <= e_k)`` for the cells ``(-inf, e_0], (e_0, e_1], …, (e_{n-1}, e_n]``.

    Each mass is a difference of Laplace distribution-function values left of ``q`` and of
    survival-function values right of it, so that masses far in either tail keep full
    relative precision.

    Parameters
    ----------
    q : array_like
        True values (any shape).
    edges : array_like
        Increasing finite cut points ``e_0 < … < e_n``.
    scale : float
        ``b > 0``.

    Returns
    -------
    ndarray
        Shape ``q.shape + (n + 1,)``, one mass per cell.
    """
    q = np.asarray(q, dtype=float)[..., None]
    lo = np.concatenate([[-np.inf], edges[:-1]])
    hi = np.asarray(edges, dtype=float)
    right = _laplace_sf(lo, q, scale) - _laplace_sf(hi, q, scale)
    left = _laplace_cdf(hi, q, scale) - _laplace_cdf(lo, q, scale)
    middle = 1.0 - _laplace_cdf(lo, q, scale) - _laplace_sf(hi, q, scale)
    return np.where(lo >= q, right, np.where(hi <= q, left, middle))


def _tail_moments(q, s, scale, units=False):
    """``P``, ``E[L; L > t]``, ``E[L^2; L > t]`` of ``L = L_b`` above ``t = s - q`` (the last two over ``b``, ``b²`` if ``units``)."""
    t = s - np.asarray(q, dtype=float)
    a = np.abs(t)
    with np.errstate(over="ignore"):
        half = 0.5 * np.exp(-a / scale)
    p = np.where(t >= 0, half, 1.0 - half)
    root = np.sqrt(half)
    with np.errstate(over="ignore"):  # in units of b^2, scaled last: a far tail gives 0, not inf * 0 or inf - inf
        z = np.minimum(a / scale, 1e300)  # beyond, the tail mass is 0 anyway
        inner = (z * root) ** 2 + 2 * (z * half) + 2 * half
        m2 = np.where(t >= 0, inner, 2 - inner)
        if units:
            return p, (z + 1) * half, m2
        m1 = (a + scale) * half
        m2 = scale * (scale * m2)
    return p, m1, m2


def _step_args(q, edges, values, shift, scale):
    b = check.positive("scale", scale)
    q = check.finite_array("q", q)
    e = check.finite_array("edges", edges).ravel()
    v = check.finite_array("values", values).ravel()
    if e.size < 1 or np.any(np.diff(e) <= 0):
        raise ValueError(f"edges must be a non-empty increasing sequence, got {edges!r}")
    if v.size != e.size:
        raise ValueError(f"values must have len(edges) = {e.size} entries, got {v.size}")
    if np.any(v < 0):
        raise ValueError(f"values must be >= 0, got min {v.min()!r}")
    d = check.finite("shift", shift)
    if d > e[-1]:
        raise ValueError(f"shift must be <= the last edge {e[-1]!r} (so that phi >= 0), got {shift!r}")
    return q, e, v, d, b


def _step_bias(q, edges, values, shift, scale):
    """The exact bias ``E φ(q + L_b) - q`` of a step post-processing with a linear tail.

    ``φ = values[k]`` on the cell ``(e_{k-1}, e_k]`` (``e_{-1} = -inf``, ``k = 0, …, n``) and ``φ(x) = x - shift``
    for ``x > s = e_n``.  With ``m_k(q)`` the Laplace cell masses (:func:`laplace_cell_masses`),

    ``bias(q) = Σ_k values[k] m_k(q) + (s - shift) P(Y_q > s) + (s - q)^+ + (b/2) e^{-|q - s|/b} - s``,

    using ``E(Y_q - s)^+ = (q - s)^+ + (b/2) e^{-|q-s|/b}``.  This is McGlinchey–Mason eq. (12)'s
    integrand for the class of ``φ`` the linear program searches.

    Parameters
    ----------
    q : array_like
        True values.
    edges : array_like
        Increasing finite cut points ``e_0 < … < e_n``.
    values : array_like
        ``n + 1`` values ``>= 0``, one per cell.
    shift : float
        ``d <= e_n``: beyond the last edge ``φ(x) = x - d``.
    scale : float
        ``b > 0``.
    """
    q, e, v, d, b = _step_args(q, edges, values, shift, scale)
    return _float(_bias(q, e, v, d, b))


def _bias(q, e, v, d, b):
    s = e[-1]
    cells = laplace_cell_masses(q, e, b) @ v
    with np.errstate(over="ignore"):
        return cells + (s - d) * _laplace_sf(s, q, b) + np.maximum(s - q, 0.0) + 0.5 * b * np.exp(-np.abs(q - s) / b) - s


def _step_mse(q, edges, values, shift, scale):
    """The exact MSE ``E[(φ(q + L_b) - q)^2]`` of a step post-processing with a linear tail.

    ``Σ_k m_k(q) (values[k] - q)^2 + E[(L_b - shift)^2; L_b > s - q]``, the last term from the partial
    moments of the Laplace law above ``s - q``.  Parameters as in :meth:`StepPostProcessed.bias`.
    """
    q, e, v, d, b = _step_args(q, edges, values, shift, scale)
    return _float(_mse(q, e, v, d, b))


def _mse(q, e, v, d, b):
    p, m1, m2 = _tail_moments(q, e[-1], b)
    with np.errstate(over="ignore"):  # an MSE beyond the doubles is inf; a cell of no mass adds 0, not inf * 0
        cells = np.sum((np.sqrt(laplace_cell_masses(q, e, b)) * (v - q[..., None])) ** 2, axis=-1)
    with np.errstate(over="ignore", invalid="ignore"):
        return cells + np.nan_to_num((np.sqrt(p) * d) ** 2 - 2 * d * m1 + m2, nan=np.inf, posinf=np.inf)


class StepPostProcessed(Mechanism):
    """``φ(q + L_b)`` with ``φ`` a nonnegative step function and a linear tail (McGlinchey–Mason §5.1, ``V_+``).

    ``φ = values[k]`` on ``(e_{k-1}, e_k]`` (``e_{-1} = -inf``), ``φ(x) = x - shift`` beyond ``e_n``.
    Being a post-processing of the Laplace mechanism it is ε-DP whenever ``b = Δ/ε``.  Bias and MSE
    are exact (:meth:`StepPostProcessed.bias`, :meth:`StepPostProcessed.mse`); the law has an atom at each distinct value and
    the shifted Laplace density beyond ``e_n - shift``.  Its quantiles (``ppf``, ``isf``) have no closed
    form: they are :meth:`Mechanism.ppf`'s exact bisection on the cdf, which lands on the atoms exactly.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    edges, values, shift
        As in :meth:`StepPostProcessed.bias`.

    >>> ramp_like = StepPostProcessed(1.0, edges=[0.0], values=[0.0], shift=0.0)
    >>> round(ramp_like.bias(0.0), 12)
    0.5
    """

    def stochastic_order(self):
        v, e = self.values, self.edges
        if np.all(np.diff(v) >= 0) and v[-1] <= e[-1] - self.shift:
            return True, "a nondecreasing step map (with its linear tail) of the Laplace location family"
        return False, "its step map is not nondecreasing (values decrease, or the tail starts below the last value)"

    def _score_bound(self):
        return 1.0, self.scale

    domain = (0.0, np.inf)
    support = (0.0, np.inf)

    def __init__(self, scale, edges, values, shift):
        _, e, v, d, b = _step_args(0.0, edges, values, shift, scale)
        self.scale, self.edges, self.values, self.shift = b, e, v, d

    def phi(self, x):
        """``φ(x)``, vectorized."""
        x = check.real_array("x", x)
        k = np.searchsorted(self.edges, x, side="left")
        inside = self.values[np.minimum(k, self.values.size - 1)]
        return _float(np.where(x > self.edges[-1], x - self.shift, inside))

    def bias(self, q):
        return _float(_bias(self._q(q), self.edges, self.values, self.shift, self.scale))

    def mse(self, q):
        return _float(_mse(self._q(q), self.edges, self.values, self.shift, self.scale))

    def mean(self, q):
        """``E φ(Y_q) = Σ_k values[k] m_k(q) + (s - shift) P(Y_q > s) + E(Y_q - s)^+`` directly, never as
        ``q + bias`` (which cancels to 0 far below the first edge, where the mean is ``values[0]``)."""
        q = self._q(q)
        e, v, d, b = self.edges, self.values, self.shift, self.scale
        s = e[-1]
        with np.errstate(over="ignore"):
            excess = np.maximum(q - s, 0.0) + 0.5 * b * np.exp(-np.abs(q - s) / b)
            return _float(laplace_cell_masses(q, e, b) @ v + (s - d) * _laplace_sf(s, q, b) + excess)

    def variance(self, q):
        """``Σ_k m_k (values[k] - μ)^2 + E[(L_b - t)^2; L_b > s - q]`` with ``t = μ + shift - q``: about the mean,
        from the partial moments of the tail, not ``mse - bias^2`` (which cancels and overflows far out)."""
        q = self._q(q)
        mu = np.asarray(self.mean(q))
        b = self.scale
        p, m1, m2 = _tail_moments(q, self.edges[-1], b, units=True)
        with np.errstate(over="ignore", invalid="ignore"):
            # in units u = the largest of b, |t| and the values' distances to the mean, scaled last: no
            # term overflows unless the variance does, and none underflows while it is representable
            t = mu - (q - self.shift)
            gaps = self.values - mu[..., None]
            u = np.maximum(np.maximum(b, np.abs(t)), np.max(np.abs(gaps), axis=-1))
            r = b / u
            cells = np.sum((np.sqrt(laplace_cell_masses(q, self.edges, b)) * (gaps / u[..., None])) ** 2, axis=-1)
            tail = (m2 * r) * r - 2 * (t / u) * (m1 * r) + (t / u * np.sqrt(p)) ** 2
            return _float(u * (u * np.maximum(cells + np.nan_to_num(tail, nan=0.0), 0.0)))

    def cdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        x, q = np.broadcast_arrays(x, q)
        masses = laplace_cell_masses(q, self.edges, self.scale)
        steps = np.sum(masses * (self.values <= x[..., None]), axis=-1)
        s = self.edges[-1]
        top = np.maximum(x + self.shift, s)
        line = np.where(q >= s, _laplace_cdf(top, q, self.scale) - _laplace_cdf(s, q, self.scale),
                        _laplace_sf(s, q, self.scale) - _laplace_sf(top, q, self.scale))
        return _float(np.clip(steps + line, 0.0, 1.0))

    def _log_tail(self, x, q, upper):
        """``log P(M <= x)`` (``log P(M > x)`` with ``upper``) in log space: the log-masses of the cells whose
        value is at most (above) ``x`` and of the linear tail's part below (above) ``x``, summed by
        ``logsumexp``, so a tail far below the doubles' smallest number stays finite."""
        x, q = check.real_array("x", x), self._q(q)
        x, q = np.broadcast_arrays(x, q)
        lo = np.concatenate([[-np.inf], self.edges[:-1]])
        cells = _piece_log_mass(q[..., None], self.scale, lo, self.edges)
        taken = (self.values > x[..., None]) if upper else (self.values <= x[..., None])
        s = float(self.edges[-1])
        cut = np.maximum(x + self.shift, s)
        line = (np.where(cut < np.inf, _piece_log_mass(q, self.scale, np.where(cut < np.inf, cut, s), np.inf), -np.inf)
                if upper
                else np.where(cut > s, _piece_log_mass(q, self.scale, s, np.where(cut > s, cut, np.inf)), -np.inf))
        parts = np.concatenate([np.where(taken, cells, -np.inf), line[..., None]], axis=-1)
        return _float(np.minimum(special.logsumexp(parts, axis=-1), 0.0))

    def logcdf(self, x, q):
        """``log P(M(q) <= x)``, in log space (finite wherever the probability is positive)."""
        return self._log_tail(x, q, upper=False)

    def logsf(self, x, q):
        """``log P(M(q) > x)``, in log space (finite wherever the probability is positive)."""
        return self._log_tail(x, q, upper=True)

    def sf(self, x, q):
        """``P(M(q) > x)`` from its log (keeps its digits where ``1 - cdf`` would cancel)."""
        return _float(np.exp(self._log_tail(x, q, upper=True)))

    def logpdf(self, x, q):
        x, q = check.real_array("x", x), self._q(q)
        y = x + self.shift
        return _float(np.where(y > self.edges[-1], _laplace_logpdf(y, q, self.scale), -np.inf))

    def _kinks(self, q):
        return [self.edges[-1] - self.shift, q - self.shift]

    def atoms(self, q):
        """One point mass per distinct value of ``φ`` on the cells: the Laplace masses of its cells."""
        q = self._q(q)
        masses = laplace_cell_masses(q, self.edges, self.scale)
        out = []
        for value in np.unique(self.values):
            out.append((float(value), _float(np.sum(masses[..., self.values == value], axis=-1))))
        return out

    def _sample(self, q, shape, rng):
        return self.phi(rng.laplace(q, self.scale, size=shape))

    # --- privacy description (dpbook.privacy) -------------------------------------------------
    def privacy_description(self):
        """For the auditor: the Laplace base ``q + L_b`` with ``exact=False`` (an upper bound, by post-processing)."""
        return laplace_description(self.scale, worst_pairs=corner_pairs(), exact=False)


class BiasVerification(NamedTuple):
    """The a-posteriori check of a step post-processing (:func:`verify_bias`).

    ``value`` is the largest exact ``|bias|`` found (at ``argmax``; ``inf`` means the limit
    ``q → ∞``), a lower bound of ``B(φ)``; ``upper`` a rigorous upper bound of ``B(φ)`` over all
    ``q >= 0``, valid up to floating-point rounding.
    """

    value: float
    upper: float
    argmax: float
    step: float
    q_max: float


class MSEVerification(NamedTuple):
    """The worst-case MSE of a step post-processing (:func:`verify_mse`): exact on the grid and beyond ``e_n``."""

    value: float
    argmax: float
    step: float
    q_max: float


def _check_grid(mech, step, q_max):
    if not isinstance(mech, StepPostProcessed):
        raise ValueError(f"mech must be a StepPostProcessed, got {mech!r}")
    b, s = mech.scale, float(mech.edges[-1])
    step = b / 200 if step is None else check.positive("step", step)
    q_max = max(s, 0.0) + 10 * b if q_max is None else check.nonnegative("q_max", q_max)
    if q_max < s:
        raise ValueError(f"q_max must be >= the last edge {s!r}, so that the exact tail covers the rest, got {q_max!r}")
    inner = mech.edges[(mech.edges > 0) & (mech.edges < q_max)]
    points = q_max / step
    work = points * (mech.edges.size + 1)  # closed-form cell masses per grid point
    if points * 8 * 10 > 2**30 or work > 3e9:
        raise ValueError(
            f"q_max/step = {points:.3g} grid points would need ~{points * 80 / 2**30:.3g} GiB and ~{work / 5e7:.3g} s "
            f"(limits 1 GiB, a minute); choose a larger step"
        )
    n = max(1, math.ceil(q_max / step))
    grid = np.unique(np.concatenate([np.linspace(0.0, q_max, n + 1), inner]))
    return grid, step, q_max


def _chunks(fn, grid, size=4000):
    return np.concatenate([fn(grid[i:i + size]) for i in range(0, grid.size, size)])


def verify_bias(mech, *, step=None, q_max=None):
    """Verify the worst-case bias ``B(φ)`` (McGlinchey–Mason equation (12)) of a step post-processing exactly.

    The bias is evaluated in closed form (:meth:`StepPostProcessed.bias`) on a grid of ``q`` from 0 to ``q_max``
    with spacing ``<= step`` (plus every edge inside).  Between two grid points ``h`` apart, the mean
    ``m(q) = E φ(Y_q)`` solves ``b^2 m'' = m - φ`` (the Laplace kernel's Green's-function identity), so
    ``-sup φ / b^2 <= bias'' <= sup m / b^2`` on the interval, with ``sup m <= max(m_i, m_{i+1}) e^{h/b}``
    (the density ratio bound, ``φ >= 0``); the bias therefore lies within ``h^2 sup φ / (8 b^2)`` above
    and ``h^2 sup m / (8 b^2)`` below the chord.  Beyond the last edge ``s`` the bias is exactly
    ``-d + (bias(s) + d) e^{-(q - s)/b}``, monotone, so its supremum there is ``max(|bias(s)|, |d|)``.

    Parameters
    ----------
    mech : StepPostProcessed
    step : float, optional
        Grid spacing; default ``b/200``.
    q_max : float, optional
        End of the grid, ``>= s``; default ``max(s, 0) + 10 b``.

    Returns
    -------
    BiasVerification
    """
    grid, step, q_max = _check_grid(mech, step, q_max)
    b = mech.scale
    beta = _chunks(lambda g: _bias(g, mech.edges, mech.values, mech.shift, b), grid)
    k = int(np.argmax(np.abs(beta)))
    value, argmax = float(abs(beta[k])), float(grid[k])
    limit = abs(mech.shift)
    if limit > value:
        value, argmax = limit, math.inf
    h = np.diff(grid)
    mid = 0.5 * (grid[:-1] + grid[1:])
    phi_sup = np.where(mid > mech.edges[-1], grid[1:] - mech.shift, mech.phi(mid))
    m = grid + beta
    m_sup = np.maximum(m[:-1], m[1:]) * np.exp(h / b)
    curve = h**2 / (8 * b**2)
    up = np.maximum(beta[:-1], beta[1:]) + curve * phi_sup
    low = np.minimum(beta[:-1], beta[1:]) - curve * m_sup
    upper = max(value, float(np.max(up, initial=0.0)), float(np.max(-low, initial=0.0)))
    return BiasVerification(value, upper, argmax, step, q_max)


def verify_mse(mech, *, step=None, q_max=None):
    """The worst-case MSE ``sup_{q >= 0} E[(φ(Y_q) - q)^2]`` of a step post-processing.

    Exact (:meth:`StepPostProcessed.mse`) on a grid from 0 to ``q_max >= s``; beyond the last edge ``s`` it is
    exactly ``2b^2 + d^2 + e^{-u}(A - 2 b u β)`` with ``u = (q - s)/b``, ``β = bias(s) + d`` and
    ``A = mse(s) - 2b^2 - d^2``, whose maximum over ``u >= 0`` is found in closed form.  Between grid
    points nothing is certified (the grid is the check).

    Returns
    -------
    MSEVerification
    """
    grid, step, q_max = _check_grid(mech, step, q_max)
    b, d, s = mech.scale, mech.shift, float(mech.edges[-1])
    mse = _chunks(lambda g: _mse(g, mech.edges, mech.values, d, b), grid)
    k = int(np.argmax(mse))
    value, argmax = float(mse[k]), float(grid[k])
    beta = float(_bias(np.array(s), mech.edges, mech.values, d, b)) + d
    A = float(_mse(np.array(s), mech.edges, mech.values, d, b)) - 2 * b * b - d * d
    candidates = [(A, s), (0.0, math.inf)]
    if beta != 0.0:
        u = A / (2 * b * beta) + 1.0
        if u > 0:
            candidates.append((math.exp(-u) * (A - 2 * b * u * beta), s + b * u))
    tail, where = max(candidates)
    if 2 * b * b + d * d + tail > value:
        value, argmax = 2 * b * b + d * d + tail, where
    return MSEVerification(value, argmax, step, q_max)


class OptimalPostProcessing(NamedTuple):
    """The result of :func:`min_bias_postprocessing`.

    ``objective`` is the program's value (the largest ``|bias|`` on ITS grid of ``q`` — not a bound on
    anything); ``bias`` is the a-posteriori verification, the only number to report; ``mse`` the
    verified worst-case MSE.
    """

    mechanism: StepPostProcessed
    objective: float
    bias: BiasVerification
    mse: MSEVerification


def min_bias_postprocessing(*, scale=1.0, x_range=(-15.0, 30.0), cell=0.1, q_max=60.0, q_step=0.01,
                            value_cap=None, check_step=0.005, check_max=None, tame=1e-3):
    """Minimize the worst-case bias over step post-processings by linear programming, then verify it.

    Answers, within the step-function class, the question of McGlinchey–Mason §6: the infimum of
    ``B(φ)`` (eq. (12)) over ``φ >= 0``.  Unknowns: the cell values ``c_k >= 0`` on a grid of width
    ``cell`` over ``x_range`` (plus the cell ``(-inf, x_lo]``), the tail offset ``d <= x_hi`` and the
    bound ``t``; minimize ``t`` subject to ``-t <= bias(q_i) <= t`` at ``q_i = 0, q_step, …, q_max``
    (each bias linear in the unknowns, :meth:`StepPostProcessed.bias`).  Solved by ``scipy.optimize.linprog``
    (HiGHS); the answer is then checked by :func:`verify_bias` on a finer grid.

    The verified worst-case MSE (:func:`verify_mse`) of the answer is returned too.

    All lengths are in units of ``b``; results are in absolute units.  The defaults (453 unknowns,
    6001 true values) take of the order of 10–20 s; the chapters use a coarser grid.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    x_range : (float, float)
        The grid of ``φ``; beyond ``x_hi``, ``φ(x) = x - d``.
    cell : float
        Cell width.
    q_max, q_step : float
        The program's grid of true values.
    value_cap : float, optional
        Upper bound on every ``c_k``; default ``x_hi + 10``.
    check_step, check_max : float
        The verification grid (``check_max`` defaults to ``max(x_hi, 0) + 10``).
    tame : float or None
        If given, a second program picks, among the answers whose grid objective is within the
        factor ``1 + tame`` of the optimum, the ``φ`` closest in ``L1`` to ``max(x - d, 0)`` (the first
        program's answers oscillate wildly and are far from unique).  ``None`` keeps the raw optimum.

    Returns
    -------
    OptimalPostProcessing
    """
    b = check.positive("scale", scale)
    try:
        lo, hi = check.bounds(*x_range)
    except TypeError:
        raise ValueError(f"x_range must be a pair (lo, hi), got {x_range!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"x_range must be finite, got {x_range!r}")
    cell = check.positive("cell", cell)
    q_max = check.positive("q_max", q_max)
    q_step = check.positive("q_step", q_step)
    check_step = check.positive("check_step", check_step)
    cap = hi + 10 if value_cap is None else check.positive("value_cap", value_cap)

    n = max(1, math.ceil((hi - lo) / cell))
    nq = max(1, math.ceil(q_max / q_step)) + 1
    need = 6 * 8 * nq * (n + 3)  # the dense cell-mass matrix and its stacked copies before sparsifying
    if need > 2**30:
        raise ValueError(
            f"{nq} true values x {n + 1} cells would need ~{need / 2**30:.3g} GiB (limit 1 GiB); "
            f"choose a larger cell or q_step"
        )
    edges = b * np.linspace(lo, hi, n + 1)
    s = edges[-1]
    q = b * np.linspace(0.0, q_max, max(1, math.ceil(q_max / q_step)) + 1)
    masses = laplace_cell_masses(q, edges, b)
    sf = _laplace_sf(s, q, b)
    const = s * sf + np.maximum(s - q, 0.0) + 0.5 * b * np.exp(-np.abs(q - s) / b) - s
    nq, nv = q.size, edges.size
    G = np.hstack([masses, -sf[:, None]])
    ones = np.ones((nq, 1))
    A_ub = sparse.csr_array(np.vstack([np.hstack([G, -ones]), np.hstack([-G, -ones])]))
    b_ub = np.concatenate([-const, const])
    bounds = [(0.0, cap * b)] * nv + [(None, s), (0.0, None)]
    cost = np.zeros(nv + 2)
    cost[-1] = 1.0

    def solve(cost, A_ub, b_ub, bounds):
        res = optimize.linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"linprog failed: {res.message}")
        return res.x

    x = solve(cost, A_ub, b_ub, bounds)
    v, d = x[:nv], float(x[nv])
    objective = float(x[-1])

    if tame is not None:
        slack = check.nonnegative("tame", tame)
        mid = np.concatenate([[edges[0]], 0.5 * (edges[:-1] + edges[1:])])
        target = np.maximum(mid - d, 0.0)
        width = np.concatenate([[b], np.diff(edges)])
        eye = sparse.identity(nv, format="csr")
        pad = sparse.csr_array((nv, 2))
        A2 = sparse.vstack([sparse.hstack([A_ub, sparse.csr_array((A_ub.shape[0], nv))]),
                            sparse.hstack([eye, pad, -eye]), sparse.hstack([-eye, pad, -eye])], format="csr")
        b2 = np.concatenate([b_ub, target, -target])
        bounds2 = bounds[:-1] + [(0.0, objective * (1 + slack))] + [(0.0, None)] * nv
        x = solve(np.concatenate([np.zeros(nv + 2), width]), A2, b2, bounds2)
        v, d = x[:nv], float(x[nv])

    mech = StepPostProcessed(b, edges, np.maximum(v, 0.0), min(d, s))
    check_max = None if check_max is None else b * check.positive("check_max", check_max)
    return OptimalPostProcessing(
        mech,
        objective,
        verify_bias(mech, step=b * check_step, q_max=check_max),
        verify_mse(mech, step=b * check_step, q_max=check_max),
    )


def optimal_postprocessing(scale):
    """The nonnegative post-processing with the least worst-case bias, ``b W(1/e)`` (answers McGlinchey–Mason §6).

    ``φ*(x) = (x - d) 1{x > a}`` with ``d = b W(1/e)`` and ``a = b (1 + W(1/e))``: zero up to ``a``, then
    the identity shifted down by ``d``.  For ``q <= a`` its mean is ``b e^{(q - a)/b}`` (because
    ``a - d + b = 2b``), so the bias ``b e^{(q-a)/b} - q`` falls from ``b e^{-a/b} = b W(1/e)`` at ``q = 0``
    to ``-d`` at ``q = a``; for ``q >= a`` it stays exactly ``-d``.  Hence ``B(φ*) = b W(1/e)``, which is
    the lower bound of Proposition 5's proof (:func:`dpbook.bias_lower_bound`): the infimum is attained.
    The linear program (:func:`min_bias_postprocessing`) finds this shape on its own.

    >>> opt = optimal_postprocessing(1.0)
    >>> round(opt.bias(0.0), 10), round(opt.bias(5.0), 10)
    (0.2784645428, -0.2784645428)
    """
    b = check.positive("scale", scale)
    w = float(special.lambertw(1.0 / math.e).real)
    return StepPostProcessed(b, edges=[b * (1.0 + w)], values=[0.0], shift=b * w)


def dp_bias_lower_bound(epsilon, sensitivity):
    """A floor on the worst-case bias of ANY ε-DP mechanism with outputs in ``[0, ∞)``.

    The argument of McGlinchey–Mason Proposition 5, with group privacy in place of the Laplace
    density ratio: if ``M(q) >= 0`` is ε-DP for true values ``Δ`` apart, then ``q = kΔ`` and ``0`` are
    ``k`` steps apart, so ``E M(kΔ) <= e^{kε} E M(0) <= e^{kε} B``, and ``B >= kΔ - E M(kΔ)`` gives
    ``B >= kΔ / (1 + e^{kε})`` for every integer ``k >= 1``.  Returns the best such ``k``'s value.
    In units of ``b = Δ/ε`` it is ``max_k kε/(1 + e^{kε})``, below ``W(1/e)`` and tending to it as ``ε → 0``.

    >>> round(dp_bias_lower_bound(1.0, 1.0), 10)
    0.2689414214
    """
    eps = check.positive("epsilon", epsilon)
    delta = check.positive("sensitivity", sensitivity)
    t_star = 1.0 + float(special.lambertw(1.0 / math.e).real)
    k = np.array([max(1, math.floor(t_star / eps)), max(1, math.ceil(t_star / eps))], dtype=float)
    return float(np.max(k * delta * special.expit(-k * eps)))


# --- counts: the discrete analogue (Chapter 20) -----------------------------------------------
#
# The release is Y_q = q + K with K discrete Laplace at scale b (P(K = k) ∝ α^|k|, α = e^{-1/b}),
# the true count q ∈ {0, 1, 2, …}, and φ: ℤ → [0, ∞).  Two facts make the program exact:
#
# * below 0, only Σ_{k<0} φ(k) α^{-k} matters for q >= 0 (there P(K = k - q) = α^{-k} P(K = -q)), so
#   φ = 0 on the negatives loses nothing (the mass moves to φ(0));
# * beyond the window, if φ(k) = k - d for k >= T, the bias for q >= T is exactly
#   -d + α^{q-T} (β(T) + d) (every k < T has P(K = k - q) = α^{q-T} P(K = k - T)), monotone in q.
#
# So the largest |bias| over ALL q >= 0 of such a map is max(max_{q<=T} |β(q)|, |d|): a finite
# linear program with no truncation error at all.


def _alpha_terms(scale):
    """``α = e^{-1/b}``, ``1 - α`` and ``α/(1 - α)`` without cancellation."""
    one_minus = -math.expm1(-1.0 / scale)
    alpha = math.exp(-1.0 / scale)
    return alpha, one_minus, alpha / one_minus


def _dl_pmf(k, scale):
    """``P(K = k) = tanh(1/(2b)) e^{-|k|/b}``, from :class:`dpbook.DiscreteLaplace`."""
    return np.asarray(DiscreteLaplace(scale).pmf(k, 0), dtype=float)


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


def _counts(name, value):
    q = check.finite_array(name, value)
    if np.any(q < 0) or np.any(q != np.round(q)):
        raise ValueError(f"{name} must be integer counts >= 0, got {value!r}")
    return q


class CountPostProcessed:
    """``φ(q + K)``: a nonnegative post-processing of the discrete Laplace release of a count.

    ``φ(k) = 0`` for ``k < 0``, ``φ(k) = values[k]`` for ``0 <= k < T = len(values)`` and
    ``φ(k) = k - shift`` for ``k >= T`` (the release itself, shifted).  With ``integer=True`` the
    output is an integer: ``φ(k)`` is released as ``⌊φ(k)⌋ + 1`` with probability equal to the
    fractional part of ``φ(k)``, else ``⌊φ(k)⌋`` (the mean, hence the bias, is unchanged; the MSE
    grows by the rounding variance).  Being a post-processing of the discrete Laplace mechanism, it
    is ε-DP for counts with ``ε = 1/b`` (sensitivity 1).  This is the class Chapter 20 searches.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    values : array_like
        ``T >= 1`` values ``>= 0``.
    shift : float
        ``d <= T`` (so that the tail ``k - d`` is ``>= 0``).
    integer : bool, optional
        Release integers by randomized rounding.

    >>> rule = CountPostProcessed(1.0, values=[0.0], shift=0.0)   # clamping at 0
    >>> round(float(rule.bias(0)), 12)                            # α/(1 - α^2) at b = 1
    0.42545906412
    """

    def __init__(self, scale, values, shift, *, integer=False):
        self.scale = check.positive("scale", scale)
        v = check.finite_array("values", values).ravel()
        if v.size < 1 or np.any(v < 0):
            raise ValueError(f"values must be a non-empty sequence of numbers >= 0, got {values!r}")
        d = check.finite("shift", shift)
        if d > v.size:
            raise ValueError(f"shift must be <= len(values) = {v.size} (so that phi >= 0), got {shift!r}")
        if not isinstance(integer, (bool, np.bool_)):
            raise ValueError(f"integer must be True or False, got {integer!r}")
        self.values, self.shift, self.integer = v, d, bool(integer)

    @property
    def window(self):
        """``T = len(values)``: from ``T`` on, ``φ(k) = k - shift``."""
        return self.values.size

    def phi(self, k):
        """``φ(k)`` (with ``integer=True``, the mean of the randomized output), vectorized over integers ``k``."""
        k = check.finite_array("k", k)
        if np.any(k != np.round(k)):
            raise ValueError(f"k must be integers, got {k!r}")
        T = self.window
        inside = self.values[np.clip(k, 0, T - 1).astype(np.int64)]
        return _float(np.where(k < 0, 0.0, np.where(k >= T, k - self.shift, inside)))

    def apply(self, y, *, rng=None):
        """``φ`` applied to releases ``y`` (integers), with the randomized rounding if ``integer``."""
        out = np.asarray(self.phi(y), dtype=float)
        if not self.integer:
            return _float(out)
        gen = check.generator(rng)
        low = np.floor(out)
        up = gen.random(size=out.shape) < out - low
        return (low + up).astype(np.int64) if out.ndim else int(low + up)

    def _window_masses(self, q):
        return _dl_pmf(np.arange(self.window)[None, :] - q.ravel()[:, None], self.scale)

    def mean(self, q):
        """``E φ(q + K) = Σ_{k<T} φ(k) P(K = k - q) + E[K; K >= T - q] + (q - d) P(K >= T - q)``."""
        q = _counts("q", q)
        p_ge, _, m1, _ = _dl_tail(self.window - q, self.scale)
        inside = (self._window_masses(q) @ self.values).reshape(q.shape)
        return _float(inside + m1 + (q - self.shift) * p_ge)

    def bias(self, q):
        """``E φ(q + K) - q``, exact (finite sums and geometric tails), computed without cancelling ``q``."""
        q = _counts("q", q)
        p_ge, p_lt, m1, _ = _dl_tail(self.window - q, self.scale)
        inside = (self._window_masses(q) @ self.values).reshape(q.shape)
        return _float(inside + m1 - self.shift * p_ge - q * p_lt)

    def mse(self, q):
        """``E (φ(q + K) - q)^2``, exact; with ``integer=True`` it includes the rounding variance."""
        q = _counts("q", q)
        b, d = self.scale, self.shift
        p_ge, _, m1, m2 = _dl_tail(self.window - q, b)
        masses = self._window_masses(q)
        below, _, _, _ = _dl_tail(q + 1, b)  # P(q + K < 0): φ = 0 there, error -q
        err = np.sum(masses * (self.values[None, :] - q.ravel()[:, None]) ** 2, axis=1).reshape(q.shape)
        out = err + below * q * q + m2 - 2.0 * d * m1 + d * d * p_ge
        if self.integer:
            f = self.values - np.floor(self.values)
            g = (-d) - math.floor(-d)
            out = out + (masses @ (f * (1.0 - f))).reshape(q.shape) + g * (1.0 - g) * p_ge
        return _float(out)

    def sample(self, q, size=None, *, rng=None):
        """Draws of ``φ(q + K)`` for one count ``q``: exact discrete Laplace noise
        (:func:`dpbook.discrete_laplace_noise`), then :meth:`apply`."""
        from .exact_sampling import discrete_laplace_noise

        q = _counts("q", q)
        if q.ndim:
            raise ValueError(f"q must be one count, got {q!r}")
        gen = check.generator(rng)
        y = int(q) + np.asarray(discrete_laplace_noise(self.scale, size, rng=gen))
        return self.apply(y, rng=gen)

    def __repr__(self):
        return (f"CountPostProcessed(scale={self.scale!r}, values=<{self.window} values>, "
                f"shift={self.shift!r}, integer={self.integer!r})")


class CountBiasVerification(NamedTuple):
    """The exact worst-case bias of a :class:`CountPostProcessed` over all counts ``q >= 0``.

    ``value = max(max_{q <= T} |β(q)|, |shift|)``, exact; ``argmax`` the count where it is reached
    (``inf``: approached as ``q → ∞``); ``biases`` the exact biases at ``q = 0, …, T``.
    """

    value: float
    argmax: float
    biases: np.ndarray


def verify_count_bias(post):
    """The exact worst-case bias ``sup_{q ∈ {0,1,…}} |E φ(q + K) - q|`` of a post-processing of a count.

    Exact sums at ``q = 0, 1, …, T`` (:meth:`CountPostProcessed.bias`); beyond, for ``q >= T``,
    ``β(q) = -d + α^{q-T} (β(T) + d)`` exactly (for ``k < T <= q``,
    ``P(K = k - q) = α^{q-T} P(K = k - T)``), monotone between ``β(T)`` and its limit ``-d``, so the
    supremum over all ``q >= 0`` is ``max(max_{q <= T} |β(q)|, |d|)``.  Nothing is left unchecked.

    >>> verify_count_bias(CountPostProcessed(1.0, [0.0], 0.0)).value   # clamping: worst at q = 0
    0.42545906411...
    """
    if not isinstance(post, CountPostProcessed):
        raise ValueError(f"post must be a CountPostProcessed, got {post!r}")
    q = np.arange(post.window + 1, dtype=float)
    beta = np.asarray(post.bias(q), dtype=float)
    k = int(np.argmax(np.abs(beta)))
    value, argmax = float(abs(beta[k])), float(k)
    if abs(post.shift) > value * (1 + 1e-12):
        value, argmax = abs(post.shift), math.inf
    return CountBiasVerification(value, argmax, beta)


def _count_threshold(b):
    """The count ``t >= 1`` maximizing ``g(t) = t/(1 + e^{t/b})`` (the smaller one on a tie), and ``g(t)``."""
    s = b * (1.0 + float(special.lambertw(1.0 / math.e).real))  # g is unimodal in t, peak at s
    ts = [max(1, math.floor(s)), max(1, math.ceil(s))]
    gs = [t * float(special.expit(-t / b)) for t in ts]
    return (ts[0], gs[0]) if gs[0] >= gs[1] else (ts[1], gs[1])


def optimal_count_postprocessing(scale, *, integer=False):
    """The post-processing of the discrete Laplace release of a count with the least worst-case bias.

    With ``α = e^{-1/b}``, ``t >= 1`` the count maximizing ``t/(1 + e^{t/b})`` and
    ``B* = t/(1 + e^{t/b})``: ``φ*(k) = 0`` for ``k < t``, ``φ*(t) = c`` and ``φ*(k) = k - B*`` for
    ``k > t``, where ``c = (t - B*)/(1 - α) - α/(1 - α)^2 >= 0``.  Its bias is ``B* α^{-q} - q`` for
    ``q <= t`` and exactly ``-B*`` for ``q >= t``; its worst case ``B*`` equals the group-privacy floor
    :func:`dp_bias_lower_bound` at ``ε = 1/b``, ``Δ = 1``, so no nonnegative post-processing, and no
    ε-DP mechanism with nonnegative outputs, does better on counts (Chapter 20's theorem; the book's
    own result, proved there).  ``c >= 0`` is equivalent to ``g(t) >= g(t + 1)``.

    >>> star = optimal_count_postprocessing(1.0)
    >>> round(float(star.bias(0)), 10), round(float(star.bias(7)), 10)
    (0.2689414214, -0.2689414214)
    """
    b = check.positive("scale", scale)
    if b > 1e6:
        raise ValueError(f"scale must be <= 1e6 (the map has ~1.28 scale values), got {scale!r}")
    t, B = _count_threshold(b)
    alpha, one_minus, r = _alpha_terms(b)
    c = max((t - B) / one_minus - r / one_minus, 0.0)
    return CountPostProcessed(b, np.concatenate([np.zeros(t), [c]]), B, integer=integer)


def optimal_count_threshold_rules(scale):
    """Every plain threshold rule ``φ(k) = (k - d) 1{k >= s}`` whose worst-case bias is the least one, ``B*``.

    Any optimal map vanishes below ``t`` and has mean ``B*`` at ``q = 0`` (the equality case of the
    lower bound), which for a plain rule with threshold ``s >= t`` fixes
    ``d_s = s + α/(1 - α) - B* (1 + α) α^{-s}``.  Its bias is then ``B* α^{-q} - q`` for ``q <= s``
    (within ``[-B*, B*]`` iff ``B* α^{-s} - s <= B*``) and moves monotonically to ``-d_s`` beyond, so
    the rule is optimal iff also ``|d_s| <= B*``.  The list (by ``s``) may be empty: then no plain
    threshold rule is optimal and the value at ``t`` must be adjusted
    (:func:`optimal_count_postprocessing`).

    >>> [(r.window, round(r.shift, 6)) for r in optimal_count_threshold_rules(3.0)]
    [(5, -0.055743)]
    >>> optimal_count_threshold_rules(2.0)
    []
    """
    b = check.positive("scale", scale)
    if b > MAX_COUNT_WINDOW / 2:
        raise ValueError(f"scale must be <= {MAX_COUNT_WINDOW / 2:g} (each rule has ~1.3 scale values), got {scale!r}")
    t, B = _count_threshold(b)
    alpha, _, r = _alpha_terms(b)
    tol = 1e-12 * max(1.0, b)
    out = []
    s = t
    while B * math.exp(s / b) - s <= B + tol:
        d = s + r - B * (1.0 + alpha) * math.exp(s / b)
        if abs(d) <= B + tol and d <= s:
            out.append(CountPostProcessed(b, np.zeros(s), d))
        s += 1
    return out


class LeastCountBias(NamedTuple):
    """The result of :func:`least_count_bias`.

    ``value``: the least worst-case bias ``B*`` (closed form, the theorem of Chapter 20);
    ``threshold``: the count ``t`` of the theorem; ``optimum``: the closed-form map
    (:func:`optimal_count_postprocessing`); ``program``: the first linear program's map;
    ``program_value``: its objective; ``verified``: the exact worst-case bias of the program's map
    (:func:`verify_count_bias`) — the program has no truncation error, so it equals ``value`` up to
    the solver's tolerance.  ``unbiased``: a map with the tail ``φ(k) = k`` (shift 0) whose worst-case
    bias is within ``1e-9`` (relative) of ``B*`` and whose total ``Σ_{q <= T} |β(q)|`` is least (the
    second program), or ``None`` if the window leaves no such map; ``unbiased_from``: the least count
    from which its bias is 0 (below ``1e-12 max(1, b)`` in absolute value) at every larger count,
    or ``None``.
    """

    value: float
    threshold: int
    optimum: CountPostProcessed
    program: CountPostProcessed
    program_value: float
    verified: float
    unbiased: CountPostProcessed | None
    unbiased_from: int | None


#: the largest window the programs accept (dense (T + 1) x T matrices)
MAX_COUNT_WINDOW = 1500

_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _unbiased_program(b, T, B, integer):
    """The second program: φ(k) = k from T on; least Σ_{q<=T} |β(q)| with every |β(q)| <= B (1 + 1e-9)."""
    q = np.arange(T + 1, dtype=float)
    p_ge, p_lt, m1, _ = _dl_tail(T - q, b)
    masses = _dl_pmf(np.arange(T)[None, :] - q[:, None], b)
    const = m1 - q * p_lt  # β(q) = masses @ φ + const, the tail's shift being 0
    eye = np.eye(T + 1)
    A_ub = np.vstack([np.hstack([masses, -eye]), np.hstack([-masses, -eye])])
    b_ub = np.concatenate([-const, const])
    cost = np.concatenate([np.zeros(T), np.ones(T + 1)])
    bounds = [(0.0, None)] * T + [(0.0, B * (1 + 1e-9))] * (T + 1)
    res = optimize.linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs", options=_HIGHS)
    if res.status != 0:
        return None, None
    post = CountPostProcessed(b, np.maximum(res.x[:T], 0.0), 0.0, integer=integer)
    check_ = verify_count_bias(post)
    if check_.value > B * (1 + 1e-7) + 1e-12:
        return None, None
    zero = np.abs(check_.biases) <= 1e-12 * max(1.0, b)  # beyond T: α^{q-T} β(T), smaller still
    if not zero[-1]:
        return post, None
    nonzero = np.flatnonzero(~zero)
    return post, int(nonzero[-1] + 1) if nonzero.size else 0


def least_count_bias(scale, *, integer=False, window=None):
    """The least worst-case bias of a nonnegative post-processing of the discrete Laplace release of a count.

    ``min_φ sup_{q ∈ {0,1,2,…}} |E φ(q + K) - q|`` over ``φ: ℤ → [0, ∞)`` (``integer=False``) or
    over randomized ``φ: ℤ → {0, 1, 2, …}`` (``integer=True``: the bias depends on ``φ`` only through
    the means ``E φ(k)``, and every mean ``>= 0`` is that of a two-point law on ``⌊m⌋, ⌈m⌉``, so the
    program over ``P(φ(k) = j)`` has the same value; the maps returned round at random).

    The linear program (``scipy.optimize.linprog``, HiGHS): unknowns ``φ(0), …, φ(T-1) >= 0``, the
    tail shift ``d <= T`` (``φ(k) = k - d`` for ``k >= T``, ``φ = 0`` below 0) and the bound ``τ``;
    minimize ``τ`` subject to ``|β(q)| <= τ`` at ``q = 0, …, T`` and ``|d| <= τ``.  There is no
    truncation error: ``φ = 0`` below 0 loses nothing, and for such maps these constraints bound
    ``|β|`` at every ``q >= 0`` (:func:`verify_count_bias`).  With ``T > t`` the class contains the
    optimum (:func:`optimal_count_postprocessing`), and the lower bound holds for every ``φ``, so the
    program's value is exactly ``B*``; it is re-checked here and a disagreement beyond the solver's
    tolerance raises ``RuntimeError``.

    A second program then looks, among the maps of worst-case bias ``B*`` (to ``1e-9``) with the
    unshifted tail ``φ(k) = k``, for one with the least ``Σ_{q <= T} |β(q)|``: a least-bias map that
    is unbiased for every count from some point on (``LeastCountBias.unbiased``; numerical, verified
    exactly).

    Parameters
    ----------
    scale : float
        ``b > 0`` (``b = 1/ε`` for a count).
    integer : bool, optional
        Randomized integer outputs.
    window : int, optional
        ``T``; default ``min(2t + 6, MAX_COUNT_WINDOW)`` (``t ≈ 1.28 b``).  Must be ``> t`` and at most
        ``MAX_COUNT_WINDOW``.

    Returns
    -------
    LeastCountBias

    >>> res = least_count_bias(2.0)
    >>> res.threshold, round(res.value, 10), abs(res.verified - res.value) < 1e-7, res.unbiased_from
    (3, 0.5472765714, True, 4)
    """
    b = check.positive("scale", scale)
    if not isinstance(integer, (bool, np.bool_)):
        raise ValueError(f"integer must be True or False, got {integer!r}")
    s = b * (1.0 + float(special.lambertw(1.0 / math.e).real))
    if s + 3 > MAX_COUNT_WINDOW:
        raise ValueError(f"scale = {scale!r} needs a window above {MAX_COUNT_WINDOW} counts (too large for the "
                         f"dense program); optimal_count_postprocessing(scale) gives the answer in closed form")
    t, B = _count_threshold(b)
    T = min(2 * t + 6, MAX_COUNT_WINDOW) if window is None else check.count("window", window, t + 1)
    if T > MAX_COUNT_WINDOW:
        raise ValueError(f"window must be <= {MAX_COUNT_WINDOW}, got {window!r}")
    q = np.arange(T + 1, dtype=float)
    p_ge, p_lt, m1, _ = _dl_tail(T - q, b)
    masses = _dl_pmf(np.arange(T)[None, :] - q[:, None], b)
    const = m1 - q * p_lt  # β(q) = masses @ φ - d p_ge + const
    G = np.hstack([masses, -p_ge[:, None]])
    ones = np.ones((T + 1, 1))
    rows = np.vstack([np.hstack([G, -ones]), np.hstack([-G, -ones])])
    dcol = np.zeros((2, T + 2))
    dcol[0, T], dcol[1, T], dcol[:, -1] = 1.0, -1.0, -1.0
    A_ub = np.vstack([rows, dcol])
    b_ub = np.concatenate([-const, const, [0.0, 0.0]])
    cost = np.zeros(T + 2)
    cost[-1] = 1.0
    bounds = [(0.0, None)] * T + [(None, float(T)), (0.0, None)]
    res = optimize.linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs", options=_HIGHS)
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    program = CountPostProcessed(b, np.maximum(res.x[:T], 0.0), min(float(res.x[T]), float(T)), integer=integer)
    verified = verify_count_bias(program).value
    if not (B * (1 - 1e-9) <= verified <= B + 1e-7 * max(1.0, b)):
        raise RuntimeError(f"the program's map has worst-case bias {verified!r}, the theorem says {B!r}")
    unbiased, start = _unbiased_program(b, T, B, integer)
    return LeastCountBias(B, t, optimal_count_postprocessing(b, integer=integer), program, float(res.fun),
                          verified, unbiased, start)


def clamped_sum_bias(scale, total, n):
    """The bias ``E max(S, 0) - total`` of clamping a sum of ``n`` discrete Laplace releases at 0.

    ``S = total + K_1 + … + K_n`` (e.g. ``n`` areas' raw releases summed before clamping).  Each
    ``K = G - G'`` with ``G, G'`` geometric on ``{0, 1, …}`` with success probability ``1 - α``, so the
    summed noise is ``N - N'`` with ``N, N'`` independent negative binomial ``(n, 1 - α)``, and the
    bias is ``E (N' - N - total)^+ = Σ_j P(N = j) E (N' - j - total)^+``, where
    ``E (N' - m)^+ = μ P(N'' >= m - 1) - m P(N' >= m)`` (``N''`` negative binomial ``(n + 1, 1 - α)``,
    ``μ = E N'``; the identity ``x P(N' = x) = μ P(N'' = x - 1)``).  The sum over ``j`` stops where
    ``P(N > j) < 1e-17``; the rest is at most ``1e-17 μ``.

    Parameters
    ----------
    scale : float
        ``b > 0``.
    total : int
        The true total, ``>= 0``.
    n : int
        How many releases are summed, ``>= 1``.

    >>> round(clamped_sum_bias(1.0, 0, 1), 12)   # one release of a zero count: α/(1 - α²)
    0.42545906412
    """
    from scipy import stats

    b = check.positive("scale", scale)
    total = check.count("total", total, 0)
    n = check.count("n", n, 1)
    if n > 10**7:
        raise ValueError(f"n must be <= 1e7, got {n!r}")
    p = -math.expm1(-1.0 / b)
    mu = n * (1 - p) / p
    stop = int(stats.nbinom.isf(1e-17, n, p)) + 1
    if stop > 5 * 10**6:
        raise ValueError(f"scale = {scale!r} with n = {n!r} needs a sum over {stop} terms (limit 5e6)")
    j = np.arange(stop + 1)
    m = j + total
    excess = mu * stats.nbinom.sf(m - 2, n + 1, p) - m * stats.nbinom.sf(m - 1, n, p)
    return float(np.sum(stats.nbinom.pmf(j, n, p) * np.maximum(excess, 0.0)))
