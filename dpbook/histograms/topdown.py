"""A small TopDown: noisy counts on a hierarchy below a known total, released as nonnegative
integers that add up at every level, and the bias this costs (simulated).

The US Census's TopDown algorithm (Abowd et al. 2022) post-processes noisy counts level by level,
from the nation down: each group of siblings is fitted to its parent's already released value.  This
is its core on a hierarchy of a few levels, with the nearest nonnegative integer vector
(:func:`integer_simplex`) as the fitting step.  It reads only the noisy counts (and the public
total): its privacy is the input mechanism's.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._kernels import validation as check
from ..consistency import Hierarchy
from ..design.least_count_bias import optimal_count_postprocessing
from ..families.discrete import DiscreteLaplace
from ._engine import tie_generator
from .postprocess import integer_simplex

__all__ = ["topdown", "TopDownBias", "topdown_bias"]

#: the releases :func:`topdown_bias` compares
RELEASES = ("raw", "topdown", "least_bias")

#: node values :func:`topdown_bias` simulates at once (a bound on its memory)
_BLOCK_NODES = 2**20


def _hierarchy(hierarchy):
    if not isinstance(hierarchy, Hierarchy) or hierarchy.height < 2:
        raise ValueError(
            f"hierarchy must be a Hierarchy with at least one level below the root, "
            f"got {hierarchy!r}"
        )
    return hierarchy


def _fit_children(noisy, parents, fanout, parent, ties, rng):
    """The nearest nonnegative integer vector to each group of noisy siblings with its parent's sum.

    Groups of unequal sizes are padded to the largest with a value below every group's threshold
    (``min y - parent - 1 < max y - parent <= λ``), so the padding receives nothing.
    """
    starts = np.cumsum(fanout) - fanout
    position = np.arange(noisy.shape[-1]) - starts[parent]
    pad = np.minimum.reduceat(noisy, starts, axis=-1) - parents - 1.0
    padded = np.repeat(pad[..., None], fanout.max(), axis=-1)
    padded[..., parent, position] = noisy
    fit = integer_simplex(padded, parents, ties=ties, rng=rng)
    return fit[..., parent, position]


def _below_root(noisy_levels, H):
    """The validated noisy levels below the root, broadcast to one shape of leading axes."""
    if not isinstance(noisy_levels, (list, tuple)):
        raise ValueError(
            f"noisy_levels must be a list of arrays, one per level below the root, "
            f"got {noisy_levels!r}"
        )
    if len(noisy_levels) != H.height - 1:
        raise ValueError(
            f"noisy_levels must hold {H.height - 1} levels (those below the root), "
            f"got {len(noisy_levels)}"
        )
    y = [
        check.finite_array(f"noisy_levels[{i}]", lv)
        for i, lv in enumerate(noisy_levels)
    ]
    for i, lv in enumerate(y):
        if lv.ndim == 0 or lv.shape[-1] != H.sizes[i + 1]:
            raise ValueError(
                f"noisy_levels[{i}] (level {i + 1}) must have {H.sizes[i + 1]} nodes on its "
                f"last axis, got shape {lv.shape}"
            )
    try:
        np.broadcast_shapes(*(lv.shape[:-1] for lv in y))
    except ValueError:
        raise ValueError(
            f"the leading axes of noisy_levels must broadcast, got shapes "
            f"{[lv.shape for lv in y]}"
        ) from None
    return y


def topdown(noisy_levels, hierarchy, *, total, ties="first", rng=None):
    """TopDown on a hierarchy: nonnegative integer counts, consistent at every level, from a known total.

    The root is the public ``total``; then, level by level from the top, the children of each
    node are the nonnegative integer vector nearest (in Euclidean distance) to their noisy counts
    whose sum is the node's already released value (:func:`integer_simplex`).  So every level is
    nonnegative, integer and adds up to the level above.  It is greedy, level by level (the
    structure of the Census's TopDown, Abowd et al. 2022): each level is the exact nearest integer
    fit given the level above, but the whole is not the nearest consistent integer hierarchy to
    all the noisy levels at once (a level's noisy counts never move the levels above it).  Only
    the noisy counts and the public total are read: the release is as private as the mechanism
    that made the noisy counts.

    Parameters
    ----------
    noisy_levels : list of array_like
        The noisy counts of the ``height - 1`` levels below the root: ``noisy_levels[d - 1]``
        holds level ``d``, of shape ``(..., sizes[d])``.  Leading axes broadcast (independent
        hierarchies).
    hierarchy : Hierarchy
        At least two levels.
    total : int or array_like of int
        The public root count of each hierarchy, ``0 <= total <= 2**53``.
    ties : {"first", "random"}
        How each fit chooses between equally near integer vectors (:func:`integer_simplex`):
        ``"first"`` favours the first-listed siblings, ``"random"`` none of them.
    rng : int, numpy.random.Generator or None
        The random order of ``ties="random"``.

    Returns
    -------
    list of ndarray of int64
        ``height`` arrays, root first, level ``d`` of shape ``(..., sizes[d])``.

    Examples
    --------
    >>> from dpbook import Hierarchy
    >>> H = Hierarchy([[2], [2, 1]])
    >>> [lv.tolist() for lv in topdown([[6.4, 2.9], [3.2, 4.1, 1.7]], H, total=10)]
    [[10], [7, 3], [3, 4, 3]]
    """
    H = _hierarchy(hierarchy)
    y = _below_root(noisy_levels, H)
    t = check.integer_array("total", total, limit=2.0**53)
    if (t < 0).any():
        raise ValueError(f"total must be >= 0, got {total!r}")
    try:
        batch = np.broadcast_shapes(*(lv.shape[:-1] for lv in y), t.shape)
    except ValueError:
        raise ValueError(
            f"total must broadcast with the hierarchies' shape "
            f"{np.broadcast_shapes(*(lv.shape[:-1] for lv in y))}, got shape {t.shape}"
        ) from None
    rng_ = tie_generator(ties, rng)
    out = [np.broadcast_to(t, batch)[..., None].astype(np.int64)]
    for d in range(1, H.height):
        noisy = np.broadcast_to(y[d - 1], batch + y[d - 1].shape[-1:])
        out.append(
            _fit_children(
                noisy, out[-1], H.fanout[d - 1], H.parent_index(d), ties, rng_
            )
        )
    return out


class TopDownBias(NamedTuple):
    """The simulated bias (and MSE) of three releases of a hierarchy's counts, node by node.

    ``bias``, ``se``, ``mse`` and ``mse_se`` are dicts over ``releases``, each value a list of
    ``height`` arrays, root first, level ``d`` of shape ``(sizes[d],)``; returned by
    :func:`topdown_bias`.

    Examples
    --------
    >>> TopDownBias._fields
    ('releases', 'bias', 'se', 'mse', 'mse_se', 'n_sims', 'exact')
    """

    #: the releases compared: ``"raw"`` (the noisy counts), ``"topdown"`` (:func:`topdown`),
    #: ``"least_bias"`` (Chapter 21's least-bias map applied to each noisy count)
    releases: tuple
    #: the mean of release minus true count, per node
    bias: dict
    #: the Monte Carlo standard error of ``bias``
    se: dict
    #: the mean squared error, per node
    mse: dict
    #: the Monte Carlo standard error of ``mse``
    mse_se: dict
    #: the number of simulated releases
    n_sims: int
    #: ``False``: every value is simulated
    exact: bool


class _Moments:
    """Running mean and sum of squared deviations (Chan et al.'s pairwise update), per node."""

    def __init__(self):
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, block):
        m = block.shape[0]
        mean = block.mean(axis=0)
        m2 = ((block - mean) ** 2).sum(axis=0)
        n = self.n + m
        delta = mean - self.mean
        self.mean = self.mean + delta * (m / n)
        self.m2 = self.m2 + m2 + delta**2 * (self.n * m / n)
        self.n = n

    def se(self):
        return np.sqrt(self.m2 / (self.n - 1) / self.n)


def _mechanisms(mechanism, height):
    mechs = list(mechanism) if isinstance(mechanism, (list, tuple)) else None
    if mechs is None:
        mechs = [mechanism] * (height - 1)
    if len(mechs) != height - 1 or not all(
        isinstance(m, DiscreteLaplace) for m in mechs
    ):
        raise ValueError(
            f"mechanism must be a dpbook.DiscreteLaplace (geometric noise) or a list of "
            f"{height - 1} of them, one per level below the root, got {mechanism!r}"
        )
    return mechs


def topdown_bias(leaves, hierarchy, mechanism, *, n_sims, rng, ties="random"):
    """The bias of TopDown, of the raw noisy counts and of the least-bias map, node by node (simulated).

    The true counts of every node are the sums of ``leaves``; each level below the root is
    released with geometric noise (``mechanism``, one per level for a budget split), the root is
    the public total.  Three releases of the same draws are compared: the raw noisy counts
    (unbiased, but negative and inconsistent), :func:`topdown` (nonnegative integer and
    consistent), and Chapter 21's least-bias post-processing of each count on its own
    (:func:`dpbook.optimal_count_postprocessing` at the level's scale: nonnegative, the least
    worst-case bias, not consistent).  Seeded simulation: every value has its Monte Carlo
    standard error and ``exact`` is ``False``; a value is resolved when it exceeds about five
    standard errors.  The root is known, so its bias and MSE are 0 for all three.

    Parameters
    ----------
    leaves : array_like of int, shape (sizes[-1],)
        True leaf counts, integers ``>= 0``.
    hierarchy : Hierarchy
        At least two levels.
    mechanism : DiscreteLaplace or list of DiscreteLaplace
        The noise of every level below the root, or one per level (``height - 1``).
    n_sims : int
        Number of simulated releases, ``>= 2``.
    rng : int, numpy.random.Generator or None
        Keyword-only; seed it for reproducible numbers.
    ties : {"random", "first"}
        TopDown's rule for equally near integer fits (:func:`topdown`); the default draws the
        order of the siblings from ``rng``, so no area's bias comes from its place in the list.

    Returns
    -------
    TopDownBias

    Examples
    --------
    >>> from dpbook import DiscreteLaplace, Hierarchy
    >>> res = topdown_bias([0, 1, 9], Hierarchy([[2], [2, 1]]), DiscreteLaplace(1.0),
    ...                    n_sims=20_000, rng=1)
    >>> bool(res.bias["topdown"][2][0] > 5 * res.se["topdown"][2][0])  # an empty area gains
    True
    >>> res.exact
    False
    """
    H = _hierarchy(hierarchy)
    q = check.integer_array("leaves", leaves, limit=2.0**40)
    if q.shape != (H.sizes[-1],) or (q < 0).any():
        raise ValueError(
            f"leaves must be {H.sizes[-1]} integer counts >= 0 (the hierarchy's leaves), "
            f"got {leaves!r}"
        )
    mechs = _mechanisms(mechanism, H.height)
    n = check.count("n_sims", n_sims, 2)
    gen = check.generator(rng)
    tie_gen = tie_generator(ties, gen if ties == "random" else None)
    true = H.levels(q.astype(np.int64))
    total = int(true[0][0])
    maps = [optimal_count_postprocessing(m.scale) for m in mechs]
    width = sum(H.sizes)
    block = max(1, min(n, _BLOCK_NODES // width))
    err = {r: _Moments() for r in RELEASES}
    sq = {r: _Moments() for r in RELEASES}
    truth = np.concatenate(true).astype(float)
    done = 0
    while done < n:
        m = min(block, n - done)
        noisy = [
            mech.sample(lv, size=(m, lv.shape[0]), rng=gen)
            for mech, lv in zip(mechs, true[1:])
        ]
        root = np.full((m, 1), float(total))
        released = {
            "raw": [root, *noisy],
            "topdown": topdown(noisy, H, total=total, ties=ties, rng=tie_gen),
            "least_bias": [root, *(f.apply(y) for f, y in zip(maps, noisy))],
        }
        for r, levels in released.items():
            e = np.concatenate([np.asarray(lv, dtype=float) for lv in levels], axis=-1)
            e -= truth
            err[r].add(e)
            sq[r].add(e**2)
        done += m
    cuts = np.cumsum(H.sizes)[:-1]

    def split(v):
        return [np.asarray(a) for a in np.split(v, cuts)]

    return TopDownBias(
        RELEASES,
        {r: split(err[r].mean) for r in RELEASES},
        {r: split(err[r].se()) for r in RELEASES},
        {r: split(sq[r].mean) for r in RELEASES},
        {r: split(sq[r].se()) for r in RELEASES},
        n,
        False,
    )
