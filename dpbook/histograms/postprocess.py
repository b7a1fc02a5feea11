"""Post-processings of a vector of NOISY counts: clamping, the Euclidean projection onto the simplex
of a known total, and its nearest integer vector.

Every function reads the released (noisy) counts only, never the true ones, so each release is
exactly as private as the mechanism that produced the noisy counts (post-processing).  Counts live
on the last axis: an ``(..., n)`` array is a stack of independent histograms of ``n`` cells, and
every function is vectorized over the leading axes (no Python loop over cells or histograms).
"""

from __future__ import annotations

import numpy as np

from .._kernels import validation as check
from ._engine import tie_generator

__all__ = ["clamp_counts", "simplex_threshold", "project_simplex", "integer_simplex"]

#: the largest total of :func:`integer_simplex`: every integer up to it is a float
_MAX_TOTAL = 2.0**53


def _noisy(noisy):
    y = check.finite_array("noisy", noisy)
    if y.ndim == 0 or y.shape[-1] == 0:
        raise ValueError(
            f"noisy must have at least one cell on its last axis, got shape {y.shape}"
        )
    return y


def _total(total, y, *, integer):
    if integer:
        t = check.integer_array(
            "total", total, limit=_MAX_TOTAL, why=" (a count of units)"
        )
    else:
        t = check.finite_array("total", total)
    if (t < 0).any():
        raise ValueError(f"total must be >= 0, got {total!r}")
    try:
        batch = np.broadcast_shapes(y.shape[:-1], t.shape)
    except ValueError:
        raise ValueError(
            f"total must broadcast with the histograms' shape {y.shape[:-1]} "
            f"(noisy has shape {y.shape}), got shape {t.shape}"
        ) from None
    return (
        np.broadcast_to(y, batch + y.shape[-1:]),
        np.broadcast_to(t, batch),
    )


def _scaled_threshold(y, t):
    """``(λ/s, s)`` for validated, broadcast ``y (..., n)`` and ``t (...,)``: the scale ``s`` is a
    power of two with ``max(|y|, t) / s`` in ``[1, 2)``, so no sum below overflows or underflows."""
    big = np.maximum(np.abs(y).max(axis=-1), t)
    exponent = np.frexp(big)[1]
    s = np.ldexp(1.0, exponent - 1)
    s = np.where(big > 0, s, 1.0)
    ys = y / s[..., None]
    ts = t / s
    u = -np.sort(-ys, axis=-1)  # descending
    j = np.arange(1, u.shape[-1] + 1, dtype=float)
    candidates = (np.cumsum(u, axis=-1) - ts[..., None]) / j
    # ρ = the largest j with u_j > candidate_j (a prefix of the j's; ρ = 1 when total = 0)
    rho = np.maximum((np.where(u > candidates, j, 0.0)).max(axis=-1), 1.0)
    lam = np.take_along_axis(candidates, rho.astype(np.intp)[..., None] - 1, axis=-1)
    return lam[..., 0], s


def _first_largest(key, r):
    """The mask of the ``r`` largest keys of each row (``r`` of shape (...,), clipped to
    ``[0, n]``), ties at the threshold going to the lowest indices."""
    n = key.shape[-1]
    r = np.minimum(r, n)[..., None]
    ascending = np.sort(key, axis=-1)
    kappa = np.take_along_axis(ascending, np.clip(n - r, 0, n - 1), axis=-1)
    above = key > kappa
    tie = key == kappa
    short = r - above.sum(axis=-1, keepdims=True)
    return (r > 0) & (above | (tie & (np.cumsum(tie, axis=-1) <= short)))


def clamp_counts(noisy):
    """Each noisy count clamped at zero: the projection onto the nonnegative orthant.

    ``max(y_i, 0)`` cell by cell, the nearest nonnegative vector to ``y`` in Euclidean distance
    (the constraint set is a product of half-lines).  Zhu, Van Hentenryck and Fioretto
    (2021) show its bias: up on small counts, none on large ones.

    Parameters
    ----------
    noisy : array_like, shape (..., n)
        Noisy counts, cells on the last axis; finite real numbers.

    Returns
    -------
    ndarray of float, shape (..., n)

    Examples
    --------
    >>> clamp_counts([3.2, -1.5, 0.4]).tolist()
    [3.2, 0.0, 0.4]
    """
    return np.maximum(_noisy(noisy), 0.0)


def simplex_threshold(noisy, total):
    """The threshold ``λ`` with ``Σ_i max(y_i - λ, 0) = total``: the simplex projection's shift.

    Sort ``y`` decreasingly into ``u``; ``ρ`` is the largest ``j`` with
    ``u_j > (Σ_{r<=j} u_r - total)/j`` and ``λ = (Σ_{r<=ρ} u_r - total)/ρ`` (Held, Wolfe and
    Crowder 1974; Duchi et al. 2008, Figure 1).
    ``O(n log n)`` (one sort).  With ``total = 0``, ``λ = max y``.  The computation is done on
    ``y`` and ``total`` divided by a power of two near ``max(|y|, total)``, so it neither
    overflows nor loses precision to underflow; ``λ`` is accurate to a few ulps of that size.
    (``λ`` itself can exceed the float range only when ``|y|`` or ``total`` is within a factor of
    two of it; it is then ``±inf``.)

    Parameters
    ----------
    noisy : array_like, shape (..., n)
        Noisy counts, ``n >= 1`` cells on the last axis; finite.
    total : float or array_like, shape broadcasting with (...,)
        The known total, finite and ``>= 0``.

    Returns
    -------
    ndarray of float, shape (...,)
        ``λ`` for each histogram (a 0-d array for one histogram).

    Examples
    --------
    >>> float(simplex_threshold([3.0, 1.0, -2.0], 2.0))
    1.0
    """
    y, t = _total(total, _noisy(noisy), integer=False)
    lam, s = _scaled_threshold(y, t)
    with np.errstate(over="ignore"):
        return lam * s


def project_simplex(noisy, total):
    """The Euclidean projection of noisy counts onto the nonnegative vectors with a known total.

    The nearest ``x`` to ``y`` in ``{x >= 0, Σ x = total}`` is ``x_i = max(y_i - λ, 0)`` with
    ``λ`` from :func:`simplex_threshold` (the KKT conditions of the projection:
    ``y_i - x_i = λ`` where ``x_i > 0`` and ``y_i <= λ`` where ``x_i = 0``).  Sort-based,
    ``O(n log n)`` (Held, Wolfe and Crowder 1974; Duchi et al. 2008);
    ``10^6`` cells take well under a second.  Zhu, Van Hentenryck and Fioretto (2021) show
    that it biases small counts up and large ones down.

    Parameters
    ----------
    noisy : array_like, shape (..., n)
        Noisy counts, ``n >= 1`` cells on the last axis; finite.
    total : float or array_like, shape broadcasting with (...,)
        The known total of each histogram, finite and ``>= 0``.

    Returns
    -------
    ndarray of float, shape (..., n)
        Nonnegative, summing to ``total`` (up to rounding) along the last axis.

    Examples
    --------
    >>> project_simplex([3.0, 1.0, -2.0], 2.0).tolist()
    [2.0, 0.0, 0.0]
    >>> project_simplex([[0.5, 0.5], [4.0, -1.0]], [3.0, 1.0]).tolist()
    [[1.5, 1.5], [1.0, 0.0]]
    """
    y, t = _total(total, _noisy(noisy), integer=False)
    lam, s = _scaled_threshold(y, t)
    return np.maximum(y / s[..., None] - lam[..., None], 0.0) * s[..., None]


def integer_simplex(noisy, total, *, ties="first", rng=None):
    """The nonnegative integer vector with a given sum nearest to the noisy counts.

    Exact: it minimizes ``Σ_i (x_i - y_i)^2`` over integers ``x_i >= 0`` with ``Σ x_i = total``.
    With ``p`` the continuous projection (:func:`project_simplex`, ``p_i = max(y_i - λ, 0)``),
    ``x = ⌊p⌋`` plus one unit for each of the ``r = total - Σ⌊p_i⌋`` cells with the largest
    ``y_i - ⌊p_i⌋`` (the largest fractional parts of ``p``: largest-remainder rounding of the
    projection).  When several vectors are equally near (with integer noise this happens with
    positive probability), ``ties="first"`` gives the units to the lowest-index cells among the
    tied ones (the result is the lexicographically largest nearest vector), so a cell's bias
    depends on where it is listed; ``ties="random"`` lists the cells of each histogram in a
    uniformly random order drawn from ``rng`` first, so every nearest vector of a tie is equally
    likely in each position and no cell is favoured by its place (Chapter 22).

    *Why it is exact.*  The problem is a separable convex allocation: the cost of the
    ``(k+1)``-th unit in cell ``i`` is ``Δ_i(k) = (k+1-y_i)^2 - (k-y_i)^2 = 2k + 1 - 2y_i``,
    increasing in ``k``, so a vector is optimal iff no unit can move from a cell ``j`` to a cell
    ``i`` at a saving, i.e. ``Δ_i(x_i) >= Δ_j(x_j - 1)`` for all ``i`` and all ``j`` with
    ``x_j >= 1``.  Every optimum lies between ``⌊p⌋`` and ``⌈p⌉``: if ``x_i <= p_i - 1`` then
    ``p_i > 0``, ``p_i = y_i - λ`` and ``Δ_i(x_i) <= -2λ - 1``, while some ``j`` has
    ``x_j > p_j >= y_j - λ``, so ``Δ_j(x_j - 1) > -2λ - 1``: moving a unit from ``j`` to ``i``
    saves.  Symmetrically ``x_j >= p_j + 1`` leaves some ``x_i < p_i`` with
    ``Δ_i(x_i) < 1 - 2λ <= Δ_j(x_j - 1)``.  So an optimum is ``⌊p⌋`` plus one unit in ``r``
    distinct cells, and the cheapest are those with the smallest ``Δ_i(⌊p_i⌋) = 1 - 2(y_i - ⌊p_i⌋)``
    (cells with an integer ``p_i`` have ``y_i - ⌊p_i⌋ <= λ`` and rank below every fractional one).
    The exactness holds for the exact projection; rounding in ``λ`` matters only for inputs
    within a few ulps of a tie, and a final exact correction keeps the sum at ``total``.

    Parameters
    ----------
    noisy : array_like, shape (..., n)
        Noisy counts, ``n >= 1`` cells on the last axis; finite.
    total : int or array_like of int, shape broadcasting with (...,)
        The known total, integers ``0 <= total <= 2**53``.
    ties : {"first", "random"}
        How equally near vectors are chosen between (above).
    rng : int, numpy.random.Generator or None
        The source of the random order, with ``ties="random"`` only.

    Returns
    -------
    ndarray of int64, shape (..., n)
        Nonnegative integers summing exactly to ``total`` along the last axis.

    Examples
    --------
    >>> integer_simplex([2.6, 1.7, -0.4], 4).tolist()   # the projection is [2.45, 1.55, 0]
    [2, 2, 0]
    >>> integer_simplex([0.5, 0.5], 1).tolist()   # a tie: the lower index wins
    [1, 0]
    >>> sorted(integer_simplex([0.5, 0.5], 1, ties="random", rng=7).tolist())
    [0, 1]
    """
    y, t = _total(total, _noisy(noisy), integer=True)
    gen = tie_generator(ties, rng)
    if gen is not None:
        order = gen.permuted(np.broadcast_to(np.arange(y.shape[-1]), y.shape), axis=-1)
        x = np.empty(y.shape, dtype=np.int64)
        np.put_along_axis(
            x,
            order,
            _nearest_integers(np.take_along_axis(y, order, axis=-1), t),
            axis=-1,
        )
        return x
    return _nearest_integers(y, t)


def _nearest_integers(y, t):
    """:func:`integer_simplex` on validated, broadcast ``y`` and ``t`` (ties to the first cells)."""
    lam, s = _scaled_threshold(y, t)
    p = np.maximum(y / s[..., None] - lam[..., None], 0.0) * s[..., None]
    base = np.floor(np.minimum(p, t[..., None]))
    key = y - base  # larger key = cheaper next unit (Δ = 1 - 2 key)
    x = base.astype(np.int64)
    need = t.astype(np.int64) - x.sum(axis=-1)
    # once in exact arithmetic (need >= 0); again only after rounding at huge totals
    while (need != 0).any():
        # give units to the largest keys, take them from the smallest keys among the cells
        # that hold one (ties: lowest index first)
        give = _first_largest(key, np.maximum(need, 0))
        take = np.zeros_like(give)
        if (need < 0).any():
            held = x > 0
            take = held & _first_largest(
                np.where(held, -key, -np.inf), np.maximum(-need, 0)
            )
        x = x + give - take
        key = key - give + take
        need = t.astype(np.int64) - x.sum(axis=-1)
    return x
