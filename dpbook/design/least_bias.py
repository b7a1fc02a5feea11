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
(``StepPostProcessed.bias``, differences of the Laplace distribution function), evaluated on a much finer
grid, with a rigorous bound between grid points and an exact argument beyond the last cell.  Only
the verified value is to be reported.

The program's (tamed) answer has a telling shape: zero up to about ``1.28 b``, then ``x - 0.28 b``.
That is the threshold rule :func:`optimal_postprocessing`, whose worst-case bias is exactly
``b W(1/e)``: Proposition 5's lower bound is attained, which settles the question.  For mechanisms
that are not post-processings of the Laplace release, :func:`dp_bias_lower_bound` gives the
corresponding floor from group privacy.

For counts (Chapter 21) the same question is asked of the discrete Laplace release ``q + K``:
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

from .._kernels import validation as check
from .._kernels.laplace import _laplace_sf
from ..families.step import StepPostProcessed, laplace_cell_masses
from ..mechanism import BiasCertificate

__all__ = [
    "MSEVerification",
    "OptimalPostProcessing",
    "verify_bias",
    "verify_mse",
    "min_bias_postprocessing",
    "optimal_postprocessing",
    "dp_bias_lower_bound",
]


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
        raise ValueError(
            f"q_max must be >= the last edge {s!r}, so that the exact tail covers the rest, got {q_max!r}"
        )
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
    return np.concatenate([fn(grid[i : i + size]) for i in range(0, grid.size, size)])


def verify_bias(mech, *, step=None, q_max=None):
    """Verify the worst-case bias ``B(φ)`` (McGlinchey–Mason equation (12)) of a step post-processing exactly.

    The bias is evaluated in closed form (``StepPostProcessed.bias``) on a grid of ``q`` from 0 to ``q_max``
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
    BiasCertificate
        ``lower`` is the largest exact ``|bias|`` on the grid (or the limit ``|d|``), ``upper`` the bound over
        every ``q >= 0`` (``tail_exact``), valid up to floating-point rounding.
    """
    grid, step, q_max = _check_grid(mech, step, q_max)
    b = mech.scale
    beta = _chunks(mech.bias, grid)
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
    return BiasCertificate(
        value, value, upper, argmax, (0.0, float(q_max)), True, step=float(step)
    )


def verify_mse(mech, *, step=None, q_max=None):
    """The worst-case MSE ``sup_{q >= 0} E[(φ(Y_q) - q)^2]`` of a step post-processing.

    Exact (``StepPostProcessed.mse``) on a grid from 0 to ``q_max >= s``; beyond the last edge ``s`` it is
    exactly ``2b^2 + d^2 + e^{-u}(A - 2 b u β)`` with ``u = (q - s)/b``, ``β = bias(s) + d`` and
    ``A = mse(s) - 2b^2 - d^2``, whose maximum over ``u >= 0`` is found in closed form.  Between grid
    points nothing is certified (the grid is the check).

    Returns
    -------
    MSEVerification
    """
    grid, step, q_max = _check_grid(mech, step, q_max)
    b, d, s = mech.scale, mech.shift, float(mech.edges[-1])
    mse = _chunks(mech.mse, grid)
    k = int(np.argmax(mse))
    value, argmax = float(mse[k]), float(grid[k])
    beta = float(mech.bias(s)) + d
    A = float(mech.mse(s)) - 2 * b * b - d * d
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
    bias: BiasCertificate
    mse: MSEVerification


def min_bias_postprocessing(
    *,
    scale=1.0,
    x_range=(-15.0, 30.0),
    cell=0.1,
    q_max=60.0,
    q_step=0.01,
    value_cap=None,
    check_step=0.005,
    check_max=None,
    tame=1e-3,
):
    """Minimize the worst-case bias over step post-processings by linear programming, then verify it.

    Answers, within the step-function class, the question of McGlinchey–Mason §6: the infimum of
    ``B(φ)`` (eq. (12)) over ``φ >= 0``.  Unknowns: the cell values ``c_k >= 0`` on a grid of width
    ``cell`` over ``x_range`` (plus the cell ``(-inf, x_lo]``), the tail offset ``d <= x_hi`` and the
    bound ``t``; minimize ``t`` subject to ``-t <= bias(q_i) <= t`` at ``q_i = 0, q_step, …, q_max``
    (each bias linear in the unknowns, ``StepPostProcessed.bias``).  Solved by ``scipy.optimize.linprog``
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
    need = (
        6 * 8 * nq * (n + 3)
    )  # the dense cell-mass matrix and its stacked copies before sparsifying
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
        res = optimize.linprog(
            cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs"
        )
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
        A2 = sparse.vstack(
            [
                sparse.hstack([A_ub, sparse.csr_array((A_ub.shape[0], nv))]),
                sparse.hstack([eye, pad, -eye]),
                sparse.hstack([-eye, pad, -eye]),
            ],
            format="csr",
        )
        b2 = np.concatenate([b_ub, target, -target])
        bounds2 = bounds[:-1] + [(0.0, objective * (1 + slack))] + [(0.0, None)] * nv
        x = solve(np.concatenate([np.zeros(nv + 2), width]), A2, b2, bounds2)
        v, d = x[:nv], float(x[nv])

    mech = StepPostProcessed(b, edges, np.maximum(v, 0.0), min(d, s))
    check_max = (
        None if check_max is None else b * check.positive("check_max", check_max)
    )
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
    k = np.array(
        [max(1, math.floor(t_star / eps)), max(1, math.ceil(t_star / eps))], dtype=float
    )
    return float(np.max(k * delta * special.expit(-k * eps)))
