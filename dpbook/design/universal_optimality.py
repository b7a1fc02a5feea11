"""Universally optimal counts: Ghosh–Roughgarden–Sundararajan's theorem, checked by linear programming.

A *count mechanism* on ``{0, …, n}`` is a matrix ``x(i, j) = P(output j | true count i)``: rows are
probability vectors, and it is ε-differentially private for counts (neighbouring databases change
the count by at most ``Δ``, the sensitivity; ``Δ = 1`` for a count) when
``x(i, j) <= e^ε x(i', j)`` for every output ``j`` and all ``i, i'`` with ``|i - i'| <= Δ``.

A *Bayesian user* holds a prior ``p`` over the true count and a loss ``l(i, r)`` for reporting ``r``
when the truth is ``i``, and wants the smallest expected loss ``Σ_i p(i) Σ_j x(i, j) l(i, j)``.  Over
all ε-DP count mechanisms that is a linear program (:func:`optimal_count_mechanism`, solved with
HiGHS through ``scipy.optimize.linprog``), with a certificate: the dual values give a lower bound
valid for *every* feasible mechanism, recomputed here from the constraint matrix, and the returned
matrix's feasibility is re-checked by brute force.

Ghosh, Roughgarden and Sundararajan (SIAM J. Comput. 41(6), 2012; "GRS") prove that one mechanism
serves every such user at once: the truncated geometric mechanism (clamp ``i + Z`` to ``{0, …, n}``,
``P(Z = z) ∝ e^{-ε|z|}``; :class:`dpbook.DiscreteBIT` with scale ``1/ε`` on ``[0, n]``), followed by
the user's own best remap of its output (:func:`remapped_geometric`), reaches the program's optimum
for every prior and every loss that is nondecreasing in ``|i - r|`` for each ``i``.  The remap is
post-processing, so it costs no privacy; the best remap for a linear objective is deterministic:
each output goes to the report of least posterior expected loss (:func:`best_remap`).

Named losses: :func:`absolute_loss`, :func:`squared_loss`, :func:`zero_one_loss`.  A loss may also
be any callable ``loss(i, r)`` (vectorized with numpy broadcasting, or not) or an ``(n+1) x (n+1)``
matrix.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, sparse

from .._kernels import validation as check
from ..families.discrete import DiscreteBIT

__all__ = [
    "absolute_loss",
    "squared_loss",
    "zero_one_loss",
    "expected_loss",
    "matrix_epsilon",
    "best_remap",
    "OptimalCountMechanism",
    "RemappedGeometric",
    "optimal_count_mechanism",
    "remapped_geometric",
]


#: the largest number of unknowns ``(n + 1)**2`` the program accepts (n = 100: about 2 s and
#: a few hundred MB at most for HiGHS with ``Δ = 1``)
MAX_UNKNOWNS = 101**2


def absolute_loss(i, r):
    """The absolute error ``|i - r|`` of reporting ``r`` when the true count is ``i``.

    >>> absolute_loss(3, [1, 3, 6]).tolist()
    [2.0, 0.0, 3.0]
    """
    return np.abs(np.subtract(i, r, dtype=float))


def squared_loss(i, r):
    """The squared error ``(i - r)**2`` of reporting ``r`` when the true count is ``i``.

    >>> squared_loss(3, [1, 3, 6]).tolist()
    [4.0, 0.0, 9.0]
    """
    return np.square(np.subtract(i, r, dtype=float))


def zero_one_loss(i, r):
    """The 0-1 loss: 1 for a wrong report ``r != i``, 0 for the right one.

    >>> zero_one_loss(3, [1, 3, 6]).tolist()
    [1.0, 0.0, 1.0]
    """
    return np.not_equal(i, r).astype(float)


def _size(n):
    n = check.count("n", n, 1)
    if (n + 1) ** 2 > MAX_UNKNOWNS:
        raise ValueError(
            f"n = {n} gives a program with {(n + 1) ** 2} unknowns, more than the {MAX_UNKNOWNS} "
            f"(n <= {math.isqrt(MAX_UNKNOWNS) - 1}) this module solves in reasonable time and memory"
        )
    return n


def _prior(prior, n):
    p = check.finite_array("prior", prior)
    if p.shape != (n + 1,):
        raise ValueError(
            f"prior must be {n + 1} probabilities, one per count 0..{n}, got shape {p.shape}"
        )
    if np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"prior must be nonnegative and sum to 1, got {prior!r}")
    return p


def _loss_matrix(loss, n):
    """The ``(n+1) x (n+1)`` matrix ``l(i, r)`` of a callable or a matrix, validated."""
    size = n + 1
    if callable(loss):
        i = np.arange(size)
        try:
            value = np.asarray(loss(i[:, None], i[None, :]), dtype=float)
            if value.shape != (size, size):
                value = np.broadcast_to(value, (size, size)).copy()
        except (TypeError, ValueError):  # not vectorized: one call per pair
            value = np.array(
                [[loss(a, r) for r in range(size)] for a in range(size)], dtype=float
            )
    else:
        value = check.real_array("loss", loss)
        if value.shape != (size, size):
            raise ValueError(
                f"loss must be a callable loss(i, r) or a {size} x {size} matrix, got shape {value.shape}"
            )
    if not np.all(np.isfinite(value)):
        raise ValueError(
            f"loss must be finite for every pair of counts 0..{n}, got {value!r}"
        )
    return value


def _epsilon_sensitivity(epsilon, sensitivity):
    return check.positive("epsilon", epsilon), check.count(
        "sensitivity", sensitivity, 1
    )


def expected_loss(matrix, *, prior, loss):
    """The Bayesian user's expected loss ``Σ_i p(i) Σ_j x(i, j) l(i, j)`` of a count mechanism.

    Parameters
    ----------
    matrix : array, shape (n+1, n+1)
        ``x(i, j) = P(output j | true count i)``.
    prior : array, shape (n+1,)
        The user's prior over the true count.
    loss : callable or array
        ``loss(i, r)``, or its matrix.

    Returns
    -------
    float

    Examples
    --------
    >>> expected_loss(np.eye(3), prior=[0.2, 0.3, 0.5], loss=absolute_loss)
    0.0
    """
    x = _stochastic(matrix)
    n = x.shape[0] - 1
    p = _prior(prior, n)
    return float(p @ np.sum(x * _loss_matrix(loss, n), axis=1))


def _stochastic(matrix):
    x = check.finite_array("matrix", matrix)
    if x.ndim != 2 or x.shape[0] != x.shape[1] or x.shape[0] < 2:
        raise ValueError(
            f"matrix must be square, (n+1) x (n+1) with n >= 1, got shape {x.shape}"
        )
    if np.any(x < 0) or np.max(np.abs(x.sum(axis=1) - 1.0)) > 1e-9:
        raise ValueError(
            "matrix must have nonnegative rows that sum to 1 (x(i, j) = P(j | i))"
        )
    return x


def matrix_epsilon(matrix, *, sensitivity=1):
    """The exact ε of a count mechanism: the largest ``|ln x(i, j) - ln x(i', j)|``, ``|i - i'| <= Δ``.

    Brute force over every output and every pair of neighbouring counts.  An output with
    probability 0 at one count and not at a neighbour makes it ``inf``; outputs that no count
    produces are ignored.

    Parameters
    ----------
    matrix : array, shape (n+1, n+1)
        ``x(i, j) = P(output j | true count i)``.
    sensitivity : int
        ``Δ >= 1``: counts ``i, i'`` are neighbours when ``|i - i'| <= Δ``.

    Returns
    -------
    float

    Examples
    --------
    >>> e = 0.5
    >>> print(f"{matrix_epsilon(np.array([[1, e], [e, 1]]) / (1 + e)):.9f}")  # ln 2
    0.693147181
    """
    x = _stochastic(matrix)
    delta = check.count("sensitivity", sensitivity, 1)
    worst = 0.0
    for d in range(1, min(delta, x.shape[0] - 1) + 1):
        a, b = x[:-d], x[d:]
        if np.any((a > 0) != (b > 0)):
            return math.inf
        both = (a > 0) & (b > 0)
        if both.any():
            worst = max(worst, float(np.max(np.abs(np.log(a[both]) - np.log(b[both])))))
    return worst


def best_remap(matrix, *, prior, loss):
    """The user's best deterministic remap of a count mechanism's output, and its expected loss.

    For each output ``k`` the report ``r(k)`` minimizes the posterior expected loss
    ``Σ_i p(i) x(i, k) l(i, r)`` (ties to the smallest ``r``).  No randomized remap does better: the
    expected loss is linear in the remap, so some vertex (a deterministic map) is optimal.

    Parameters
    ----------
    matrix : array, shape (n+1, n+1)
        ``x(i, k) = P(output k | true count i)``.
    prior : array, shape (n+1,)
        The user's prior over the true count.
    loss : callable or array
        ``loss(i, r)``, or its matrix.

    Returns
    -------
    remap : int array, shape (n+1,)
        ``r(k)``, the report for output ``k``.
    value : float
        The expected loss after the remap.

    Examples
    --------
    >>> remap, value = best_remap(np.full((3, 3), 1 / 3), prior=[0.2, 0.3, 0.5], loss=absolute_loss)
    >>> remap.tolist(), round(value, 12)
    ([1, 1, 1], 0.7)
    """
    x = _stochastic(matrix)
    n = x.shape[0] - 1
    p = _prior(prior, n)
    weighted = (p[:, None] * x).T @ _loss_matrix(
        loss, n
    )  # [k, r] = Σ_i p(i) x(i, k) l(i, r)
    remap = np.argmin(weighted, axis=1)
    return remap, float(weighted[np.arange(n + 1), remap].sum())


def _truncated_geometric(n, epsilon, sensitivity):
    """GRS's truncated geometric mechanism as a matrix: ``DiscreteBIT(Δ/ε, lower=0, upper=n)``."""
    k = np.arange(n + 1)
    mech = DiscreteBIT(sensitivity / epsilon, lower=0, upper=n)
    return np.asarray(mech.pmf(k[None, :], k[:, None]), dtype=float)


class RemappedGeometric(NamedTuple):
    """GRS's mechanism for one user: the truncated geometric release, then the user's best remap.

    Attributes
    ----------
    geometric : array, shape (n+1, n+1)
        The truncated geometric mechanism's matrix ``P(output k | count i)``.
    remap : int array, shape (n+1,)
        The user's report for each output (:func:`best_remap`).
    matrix : array, shape (n+1, n+1)
        The composed mechanism ``P(report r | count i)``.
    value : float
        Its expected loss for the user.
    """

    geometric: np.ndarray
    remap: np.ndarray
    matrix: np.ndarray
    value: float


def remapped_geometric(n, epsilon, *, prior, loss, sensitivity=1):
    """The truncated geometric mechanism on ``{0, …, n}`` followed by the user's best remap.

    Ghosh, Roughgarden & Sundararajan (2012), main theorem: for every prior and every loss that is
    nondecreasing in ``|i - r|`` for each true count ``i``, its expected loss equals the optimum of
    :func:`optimal_count_mechanism` (for counts, ``Δ = 1``).  The geometric mechanism is
    :class:`dpbook.DiscreteBIT` with scale ``Δ/ε`` on ``[0, n]``.

    Parameters
    ----------
    n : int
        Counts are ``0, …, n`` (``n >= 1``).
    epsilon : float
        The privacy parameter ``ε > 0``.
    prior : array, shape (n+1,)
        The user's prior over the true count (nonnegative, sums to 1).
    loss : callable or array
        ``loss(i, r)``: the user's loss for reporting ``r`` when the truth is ``i`` (e.g.
        :func:`absolute_loss`), or its ``(n+1) x (n+1)`` matrix.
    sensitivity : int, optional
        ``Δ``: neighbouring databases' counts differ by at most ``Δ`` (default 1).  GRS's theorem is
        for ``Δ = 1``.

    Returns
    -------
    RemappedGeometric

    Examples
    --------
    >>> grs = remapped_geometric(4, 1.0, prior=np.full(5, 0.2), loss=absolute_loss)
    >>> grs.remap.tolist()
    [0, 1, 2, 3, 4]
    >>> round(grs.value, 6)
    0.583506
    """
    n = _size(n)
    epsilon, delta = _epsilon_sensitivity(epsilon, sensitivity)
    p = _prior(prior, n)
    losses = _loss_matrix(loss, n)
    geometric = _truncated_geometric(n, epsilon, delta)
    remap, value = best_remap(geometric, prior=p, loss=losses)
    matrix = np.zeros_like(geometric)
    np.add.at(
        matrix.T, remap, geometric.T
    )  # column k of the geometric moves to column r(k)
    return RemappedGeometric(geometric, remap, matrix, value)


class OptimalCountMechanism(NamedTuple):
    """The result of :func:`optimal_count_mechanism`.

    Attributes
    ----------
    matrix : array, shape (n+1, n+1)
        An optimal ε-DP mechanism ``x(i, j) = P(output j | count i)`` (HiGHS's vertex solution,
        entries below 0 by rounding set to 0).
    value : float
        Its expected loss, recomputed from ``matrix``.
    lower_bound : float
        A lower bound on the expected loss of *every* ε-DP count mechanism, from the dual values
        HiGHS returns, recomputed here (valid whatever their accuracy); ``value - lower_bound`` is
        the certified gap.
    violation : float
        The largest violation of a constraint by ``matrix`` (row sums, ``x >= 0`` and every ε-DP
        inequality ``x(i, j) - e^ε x(i', j) <= 0``), recomputed by brute force.
    """

    matrix: np.ndarray
    value: float
    lower_bound: float
    violation: float


#: HiGHS's tolerances, tightened from 1e-7 (at the defaults the optimum is off by up to 1e-6); its
#: interior-point solver (then crossover) returns duals that certify the optimum to ~1e-13, where
#: its simplex solver's leave gaps of 1e-7
_TOLERANCES = {
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
    "ipm_optimality_tolerance": 1e-12,
}


#: the solver and its tolerances, in the order tried (the dual simplex when the interior point fails)
_ATTEMPTS = (
    ("highs-ipm", _TOLERANCES),
    (
        "highs-ds",
        {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
    ),
    (
        "highs-ds",
        {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9},
    ),
)


def _dp_constraints(n, epsilon, delta):
    """Rows ``x(i, j) - e^ε x(i', j) <= 0`` for all ``1 <= |i - i'| <= Δ`` and every ``j``, sparse."""
    size = n + 1
    idx = np.arange(size * size).reshape(size, size)
    rows, cols, vals = [], [], []
    count = 0
    factor = math.exp(epsilon)
    for d in range(1, min(delta, n) + 1):
        for a, b in ((idx[:-d], idx[d:]), (idx[d:], idx[:-d])):
            m = a.size
            r = count + np.arange(m)
            rows += [r, r]
            cols += [a.ravel(), b.ravel()]
            vals += [np.ones(m), np.full(m, -factor)]
            count += m
    return sparse.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(count, size * size),
    )


def optimal_count_mechanism(n, epsilon, *, prior, loss, sensitivity=1):
    """The ε-DP count mechanism of least expected loss for one user, by linear programming.

    Unknowns ``x(i, j) = P(output j | count i)``, ``i, j ∈ {0, …, n}``; minimize
    ``Σ_i p(i) Σ_j x(i, j) l(i, j)`` subject to ``Σ_j x(i, j) = 1``, ``x >= 0`` and
    ``x(i, j) <= e^ε x(i', j)`` for all ``1 <= |i - i'| <= Δ`` — GRS's program (Ghosh, Roughgarden &
    Sundararajan 2012), solved by HiGHS's interior-point method with crossover
    (``scipy.optimize.linprog(method="highs-ipm")``, tolerances tightened to 1e-10).  By GRS's
    theorem its optimum is the value of :func:`remapped_geometric` for a loss nondecreasing in
    ``|i - r|``.

    Accuracy: the optimal mechanism has entries as small as about ``e^{-εn}``, and a floating-point
    solver's tolerances are absolute.  While ``εn <= 20`` the optimum agrees with GRS's value to
    1e-9 (tests/test_optimal_counts.py); for larger ``εn`` it may be off by more.  Where the interior
    point fails, HiGHS's dual simplex solves the program instead; if both fail, a ``RuntimeError``.
    ``lower_bound`` and ``violation`` say how far to trust each answer.

    Parameters
    ----------
    n : int
        Counts are ``0, …, n`` (``1 <= n <= 150``: ``(n+1)**2`` unknowns).
    epsilon : float
        The privacy parameter ``ε > 0``.
    prior : array, shape (n+1,)
        The user's prior over the true count (nonnegative, sums to 1).
    loss : callable or array
        ``loss(i, r)`` (e.g. :func:`absolute_loss`), or its ``(n+1) x (n+1)`` matrix.
    sensitivity : int, optional
        ``Δ``: counts ``i, i'`` are neighbours when ``|i - i'| <= Δ`` (default 1).

    Returns
    -------
    OptimalCountMechanism

    Examples
    --------
    >>> lp = optimal_count_mechanism(4, 1.0, prior=np.full(5, 0.2), loss=absolute_loss)
    >>> round(lp.value, 6), lp.value - lp.lower_bound < 1e-9, lp.violation < 1e-9
    (0.583506, True, True)
    """
    n = _size(n)
    epsilon, delta = _epsilon_sensitivity(epsilon, sensitivity)
    p = _prior(prior, n)
    losses = _loss_matrix(loss, n)
    size = n + 1
    cost = (p[:, None] * losses).ravel()
    A_ub = _dp_constraints(n, epsilon, delta)
    A_eq = sparse.kron(sparse.eye_array(size), np.ones((1, size)), format="csr")
    problem = dict(
        A_ub=A_ub,
        b_ub=np.zeros(A_ub.shape[0]),
        A_eq=A_eq,
        b_eq=np.ones(size),
        bounds=(0, None),
    )
    # the interior point stalls on some programs, even small ones (a binomial prior, absolute loss,
    # ε = 0.25, n = 15); HiGHS's dual simplex solves them, at tolerances 1e-10 or else 1e-9, and the
    # certificate below says how well
    for method, options in _ATTEMPTS:
        res = optimize.linprog(cost, method=method, options=options, **problem)
        if res.status == 0:
            break
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    raw = res.x
    matrix = np.maximum(raw, 0.0).reshape(size, size)
    # the certificate: for any mu and lambda <= 0, with r = c - A_eq' mu - A_ub' lambda, every feasible
    # x (rows on the simplex, A_ub x <= 0) has c.x >= sum(mu) + sum_i min_j r(i, j)
    mu = res.eqlin.marginals
    lam = np.minimum(res.ineqlin.marginals, 0.0)
    reduced = (cost - A_eq.T @ mu - A_ub.T @ lam).reshape(size, size)
    lower = float(mu.sum() + reduced.min(axis=1).sum())
    violation = max(
        float(np.max(np.abs(matrix.sum(axis=1) - 1.0))),
        float(np.max(-raw)),
        float(np.max(A_ub @ matrix.ravel(), initial=0.0)),
    )
    value = float(p @ np.sum(matrix * losses, axis=1))
    return OptimalCountMechanism(matrix, value, lower, violation)
