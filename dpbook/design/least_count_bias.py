"""The least worst-case bias of a nonnegative count release (Chapter 21): linear programs over
post-processings of the geometric mechanism, their verification, and the clamped sum's bias."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import optimize, special, stats

from .._kernels import validation as check
from .._kernels.discrete_laplace import _alpha_terms, _dl_tail
from ..families.count_postprocessing import CountPostProcessed
from ..families.discrete import DiscreteLaplace
from ..mechanism import BiasCertificate

__all__ = [
    "LeastCountBias",
    "verify_count_bias",
    "optimal_count_postprocessing",
    "least_count_bias",
    "optimal_count_threshold_rules",
    "clamped_sum_bias",
]


def verify_count_bias(post):
    """The exact worst-case bias ``sup_{q ∈ {0,1,…}} |E φ(q + K) - q|`` of a post-processing of a count.

    Exact sums at ``q = 0, 1, …, T`` (``CountPostProcessed.bias``); beyond, for ``q >= T``,
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
    return BiasCertificate(
        value,
        value,
        value,
        argmax,
        (0.0, float(post.window)),
        True,
        step=1.0,
        biases=beta,
    )


def _count_threshold(b):
    """The count ``t >= 1`` maximizing ``g(t) = t/(1 + e^{t/b})`` (the smaller one on a tie), and ``g(t)``."""
    s = b * (
        1.0 + float(special.lambertw(1.0 / math.e).real)
    )  # g is unimodal in t, peak at s
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
    ε-DP mechanism with nonnegative outputs, does better on counts (Chapter 21's theorem; the book's
    own result, proved there).  ``c >= 0`` is equivalent to ``g(t) >= g(t + 1)``.

    >>> star = optimal_count_postprocessing(1.0)
    >>> round(float(star.bias(0)), 10), round(float(star.bias(7)), 10)
    (0.2689414214, -0.2689414214)
    """
    b = check.positive("scale", scale)
    if b > 1e6:
        raise ValueError(
            f"scale must be <= 1e6 (the map has ~1.28 scale values), got {scale!r}"
        )
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
        raise ValueError(
            f"scale must be <= {MAX_COUNT_WINDOW / 2:g} (each rule has ~1.3 scale values), got {scale!r}"
        )
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

    ``value``: the least worst-case bias ``B*`` (closed form, the theorem of Chapter 21);
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
    masses = np.asarray(
        DiscreteLaplace(b).pmf(np.arange(T)[None, :] - q[:, None], 0), dtype=float
    )
    const = m1 - q * p_lt  # β(q) = masses @ φ + const, the tail's shift being 0
    eye = np.eye(T + 1)
    A_ub = np.vstack([np.hstack([masses, -eye]), np.hstack([-masses, -eye])])
    b_ub = np.concatenate([-const, const])
    cost = np.concatenate([np.zeros(T), np.ones(T + 1)])
    bounds = [(0.0, None)] * T + [(0.0, B * (1 + 1e-9))] * (T + 1)
    res = optimize.linprog(
        cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs", options=_HIGHS
    )
    if res.status != 0:
        return None, None
    post = CountPostProcessed(b, np.maximum(res.x[:T], 0.0), 0.0, integer=integer)
    check_ = verify_count_bias(post)
    if check_.value > B * (1 + 1e-7) + 1e-12:
        return None, None
    zero = np.abs(check_.biases) <= 1e-12 * max(
        1.0, b
    )  # beyond T: α^{q-T} β(T), smaller still
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

    Examples
    --------
    >>> res = least_count_bias(2.0)
    >>> res.threshold, round(res.value, 10), abs(res.verified - res.value) < 1e-7, res.unbiased_from
    (3, 0.5472765714, True, 4)
    """
    b = check.positive("scale", scale)
    if not isinstance(integer, (bool, np.bool_)):
        raise ValueError(f"integer must be True or False, got {integer!r}")
    s = b * (1.0 + float(special.lambertw(1.0 / math.e).real))
    if s + 3 > MAX_COUNT_WINDOW:
        raise ValueError(
            f"scale = {scale!r} needs a window above {MAX_COUNT_WINDOW} counts (too large for the "
            f"dense program); optimal_count_postprocessing(scale) gives the answer in closed form"
        )
    t, B = _count_threshold(b)
    T = (
        min(2 * t + 6, MAX_COUNT_WINDOW)
        if window is None
        else check.count("window", window, t + 1)
    )
    if T > MAX_COUNT_WINDOW:
        raise ValueError(f"window must be <= {MAX_COUNT_WINDOW}, got {window!r}")
    q = np.arange(T + 1, dtype=float)
    p_ge, p_lt, m1, _ = _dl_tail(T - q, b)
    masses = np.asarray(
        DiscreteLaplace(b).pmf(np.arange(T)[None, :] - q[:, None], 0), dtype=float
    )
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
    res = optimize.linprog(
        cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs", options=_HIGHS
    )
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    program = CountPostProcessed(
        b, np.maximum(res.x[:T], 0.0), min(float(res.x[T]), float(T)), integer=integer
    )
    verified = verify_count_bias(program).value
    if not (B * (1 - 1e-9) <= verified <= B + 1e-7 * max(1.0, b)):
        raise RuntimeError(
            f"the program's map has worst-case bias {verified!r}, the theorem says {B!r}"
        )
    unbiased, start = _unbiased_program(b, T, B, integer)
    return LeastCountBias(
        B,
        t,
        optimal_count_postprocessing(b, integer=integer),
        program,
        float(res.fun),
        verified,
        unbiased,
        start,
    )


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

    Examples
    --------
    >>> round(clamped_sum_bias(1.0, 0, 1), 12)   # one release of a zero count: α/(1 - α²)
    0.42545906412
    """

    b = check.positive("scale", scale)
    total = check.count("total", total, 0)
    n = check.count("n", n, 1)
    if n > 10**7:
        raise ValueError(f"n must be <= 1e7, got {n!r}")
    p = -math.expm1(-1.0 / b)
    mu = n * (1 - p) / p
    stop = int(stats.nbinom.isf(1e-17, n, p)) + 1
    if stop > 5 * 10**6:
        raise ValueError(
            f"scale = {scale!r} with n = {n!r} needs a sum over {stop} terms (limit 5e6)"
        )
    j = np.arange(stop + 1)
    m = j + total
    excess = mu * stats.nbinom.sf(m - 2, n + 1, p) - m * stats.nbinom.sf(m - 1, n, p)
    return float(np.sum(stats.nbinom.pmf(j, n, p) * np.maximum(excess, 0.0)))
