"""Global sensitivities of statistics of bounded data (Liu (2019), §2.2 and online supplement D–F).

Two data sets are *neighbours* under one of the two relations Liu §2.1 distinguishes:

``"substitution"``
    same size ``n``, one record replaced by another (Liu's supplement, "Def 1");
``"add_remove"``
    one data set is the other with one record added, sizes ``n`` and ``n - 1`` ("Def 2").

Records lie in a public interval ``[lower, upper]`` and the size ``n`` is public.  The closed forms
below hold under both relations, with ``n`` the size of the larger data set; each is attained, which
:func:`brute_force_sensitivity` confirms by enumerating every neighbouring pair of small data sets
over a grid of record values.  :func:`sanitized_mean` (from the records) and
:func:`release_sample_mean` (from the sample means) release a bounded sample mean with the Laplace,
BIT or truncated Laplace mechanism calibrated to :func:`mean_sensitivity`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._kernels import validation as check
from ..families.clamping import BIT
from ..mechanism import interval_family
from ..neighbours import DATA_SETS, Neighbours
from .calibration import laplace_scale

__all__ = [
    "budget_split",
    "RELATIONS",
    "mean_sensitivity",
    "proportion_sensitivity",
    "histogram_sensitivity",
    "variance_sensitivity",
    "covariance_sensitivity",
    "sample_variance",
    "sample_covariance",
    "brute_force_sensitivity",
    "neighbour_changes",
    "worst_neighbours",
    "release_sample_mean",
    "sanitized_mean",
]


#: the two neighbouring relations of data sets of Liu §2.1 (:class:`dpbook.Neighbours`)
RELATIONS = DATA_SETS


def _finite_bounds(lower, upper, name="bounds"):
    lo, hi = check.bounds(lower, upper)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(
            f"{name} must be finite for a finite sensitivity, got ({lower!r}, {upper!r})"
        )
    return lo, hi


def _relation(relation):
    return Neighbours.parse("relation", relation, DATA_SETS)


def mean_sensitivity(lower, upper, n):
    """Global sensitivity ``(upper - lower)/n`` of the sample mean (Liu (2019), supplement D).

    Parameters
    ----------
    lower, upper : float
        Finite public bounds of every record.
    n : int
        Public sample size (>= 1; under add/remove, the size of the larger data set).

    Examples
    --------
    >>> mean_sensitivity(0.0, 10.0, 50)
    0.2
    """
    lo, hi = _finite_bounds(lower, upper)
    n = check.count("n", n, 1)
    return (hi - lo) / n


def proportion_sensitivity(n):
    """Global sensitivity ``1/n`` of a sample proportion, a mean of 0/1 records (Liu (2019), supplement D)."""
    return mean_sensitivity(0.0, 1.0, n)


def histogram_sensitivity(n, *, relation="substitution", denominator="own"):
    """L1 global sensitivity of a vector of cell proportions (Liu (2019), §4.2 and supplement D).

    Parameters
    ----------
    n : int
        Public sample size (>= 2 under add/remove).
    relation : {"substitution", "add_remove"}
    denominator : {"own", "public"}
        ``"own"``: each data set's counts are divided by its own size; ``"public"``: by the public
        ``n`` whatever the data set (so the released vector is the counts over ``n``).

    Returns
    -------
    float
        ``2/n``, except ``1/n`` under add/remove with the public denominator (one count moves by 1).
    """
    relation = _relation(relation)
    if denominator not in ("own", "public"):
        raise ValueError(f"denominator must be 'own' or 'public', got {denominator!r}")
    n = check.count("n", n, 2 if relation == "add_remove" else 1)
    return (1.0 if (relation, denominator) == ("add_remove", "public") else 2.0) / n


def variance_sensitivity(lower, upper, n):
    """Global sensitivity ``(upper - lower)²/n`` of the sample variance with divisor ``n - 1``.

    Liu (2019), supplement E.  Attained by ``n - 1`` records at one bound and the last moved
    across the interval; needs ``n >= 2`` (``n >= 3`` under add/remove, so that both data sets
    have a sample variance).
    """
    lo, hi = _finite_bounds(lower, upper)
    n = check.count("n", n, 2)
    return (hi - lo) ** 2 / n


def covariance_sensitivity(x_bounds, y_bounds, n):
    """Global sensitivity ``(x1 - x0)(y1 - y0)/n`` of the sample covariance with divisor ``n - 1``.

    Liu (2019), supplement F.

    Parameters
    ----------
    x_bounds, y_bounds : pair of float
        Finite public bounds ``(x0, x1)`` and ``(y0, y1)`` of the two coordinates of every record.
    n : int
        Public sample size (>= 2; >= 3 under add/remove).
    """
    x0, x1 = _pair("x_bounds", x_bounds)
    y0, y1 = _pair("y_bounds", y_bounds)
    n = check.count("n", n, 2)
    return (x1 - x0) * (y1 - y0) / n


def _pair(name, value):
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a pair (lower, upper), got {value!r}"
        ) from None
    try:
        return _finite_bounds(lo, hi, name)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


def sample_variance(data):
    """Sample variance (divisor ``m - 1``) of each data set in a batch ``data`` of shape ``(..., m)``."""
    data = np.asarray(data, dtype=float)
    return data.var(axis=-1, ddof=1)


def sample_covariance(data):
    """Sample covariance (divisor ``m - 1``) of each data set of 2-D records, ``data`` of shape ``(..., m, 2)``."""
    data = np.asarray(data, dtype=float)
    centred = data - data.mean(axis=-2, keepdims=True)
    return (centred[..., 0] * centred[..., 1]).sum(axis=-1) / (data.shape[-2] - 1)


_MAX_DATA_SETS = 2_000_000


def neighbour_changes(statistic, values, n, *, relation="substitution"):
    """Every change of ``statistic`` between neighbouring data sets with records from ``values``.

    Every data set of size ``n`` (and, under add/remove, ``n - 1``) whose records are drawn from
    ``values`` is enumerated as a multiset, so ``statistic`` must not depend on the order of the
    records.  The change is measured in the L1 norm when the statistic is a vector.

    Parameters
    ----------
    statistic : callable
        Maps a batch of data sets, shape ``(k, m)`` for scalar records or ``(k, m, d)`` for records in
        ``R^d``, to ``(k,)`` values or ``(k, p)`` vectors; e.g. ``lambda d: d.mean(axis=1)``,
        :func:`sample_variance`, :func:`sample_covariance`.
    values : array_like
        The grid of possible records, shape ``(r,)`` or ``(r, d)``; include the bounds.
    n : int
        Size of the (larger) data set, >= 2.
    relation : {"substitution", "add_remove"}

    Returns
    -------
    (ndarray, ndarray, ndarray)
        The changes ``|f(D) - f(D')|``, one per neighbouring pair, and the two data sets of each pair
        as arrays of record indices into ``values`` (rows of shape ``(n,)`` and ``(n,)`` or ``(n - 1,)``).
    """
    relation = _relation(relation)
    n = check.count("n", n, 2)
    values = check.finite_array("values", values)
    if values.ndim not in (1, 2) or len(values) < 2:
        raise ValueError(
            f"values must hold at least 2 records in an array of shape (r,) or (r, d), got shape {values.shape}"
        )
    r = len(values)
    if (
        math.comb(r + n - 1, n) * (r if relation == "substitution" else 1)
        > _MAX_DATA_SETS
    ):
        raise ValueError(
            f"values and n give more than {_MAX_DATA_SETS} pairs; use a coarser grid or a smaller n"
        )

    def multisets(size):
        return np.array(
            list(itertools.combinations_with_replacement(range(r), size)),
            dtype=np.int64,
        )

    def evaluate(idx):
        return np.asarray(statistic(values[idx]), dtype=float).reshape(len(idx), -1)

    big = multisets(n)
    s_big, codes = evaluate(big), _codes(big, r)
    order = np.argsort(codes)
    if relation == "substitution":
        common = multisets(n - 1)
        rows = np.empty((len(common), r), dtype=np.int64)
        for j in range(r):
            with_j = np.sort(np.column_stack([common, np.full(len(common), j)]), axis=1)
            rows[:, j] = order[np.searchsorted(codes, _codes(with_j, r), sorter=order)]
        first, second = np.triu_indices(r, k=1)
        a, b = rows[:, first].ravel(), rows[:, second].ravel()
        return np.abs(s_big[a] - s_big[b]).sum(axis=-1), big[a], big[b]
    small = multisets(n - 1)
    s_small, small_codes = evaluate(small), _codes(small, r)
    small_order = np.argsort(small_codes)
    rows = np.concatenate(
        [
            small_order[
                np.searchsorted(
                    small_codes,
                    _codes(np.delete(big, drop, axis=1), r),
                    sorter=small_order,
                )
            ]
            for drop in range(n)
        ]
    )
    a = np.tile(np.arange(len(big)), n)
    return np.abs(s_big[a] - s_small[rows]).sum(axis=-1), big[a], small[rows]


def worst_neighbours(statistic, values, n, *, relation="substitution"):
    """The neighbouring pair with records from ``values`` that moves ``statistic`` the most.

    Parameters as :func:`neighbour_changes`.

    Returns
    -------
    (float, ndarray, ndarray)
        The largest change and the two data sets (as records) attaining it.
    """
    changes, first, second = neighbour_changes(statistic, values, n, relation=relation)
    k = int(np.argmax(changes))
    values = np.asarray(values, dtype=float)
    return float(changes[k]), values[first[k]], values[second[k]]


def _codes(idx, r):
    """A unique integer for each sorted row of record indices: its rank among the multisets of its size.

    A sorted row ``a_0 <= ... <= a_{m-1}`` is the combination ``a_i + i`` of ``m`` out of ``r + m - 1``; its
    colex rank ``sum_i C(a_i + i, i + 1)`` is below ``C(r + m - 1, m)`` (the count of multisets, bounded by
    the caller), so it never overflows int64 as the base-``r`` code ``sum a_i r^i`` did for ``r^m >= 2^63``.
    """
    m = idx.shape[1]
    table = np.array(
        [[min(math.comb(v, k), 2**62) for k in range(m + 1)] for v in range(r + m)],
        dtype=np.int64,
    )
    return table[idx + np.arange(m), np.arange(1, m + 1)].sum(axis=1)


def brute_force_sensitivity(statistic, values, n, *, relation="substitution"):
    """The largest change of ``statistic`` over neighbouring data sets with records from ``values``.

    A lower bound on the global sensitivity (Liu (2019), eq. (1)), equal to it when the grid
    ``values`` contains a worst case; see :func:`neighbour_changes` for the parameters.

    >>> brute_force_sensitivity(lambda d: d.mean(axis=1), [0.0, 0.5, 1.0], n=4)
    0.25
    """
    return worst_neighbours(statistic, values, n, relation=relation)[0]


def release_sample_mean(
    sample_mean, n, lower, upper, epsilon, *, mechanism=BIT, rng=None
):
    """Release sample means of ``n`` records in ``[lower, upper]`` with ``b = Δ/ε``, ``Δ = (upper - lower)/n``.

    Liu (2019), Def. 2 with the sensitivity of supplement D.  ``mechanism=dpbook.BIT`` clamps the
    Laplace release to ``[lower, upper]`` (Def. 2(b), ε-DP); ``dpbook.Truncated`` draws from the
    Laplace law truncated to ``[lower, upper]`` at the same scale (Def. 2(a) as Liu states it; its
    exact privacy loss is larger than ε, see :func:`dpbook.privacy_loss`); plain Laplace noise is
    ``mechanism=lambda scale, **bounds: dpbook.Laplace(scale)``.

    Parameters
    ----------
    sample_mean : float or array_like
        Sample means, each in ``[lower, upper]`` (one release per entry).
    n : int
        The public sample size behind every mean.
    lower, upper : float
        Finite public bounds of the records.
    epsilon : float
        Privacy budget ``ε > 0``.
    mechanism : callable
        The mechanism family, called as ``mechanism(scale, lower=lower, upper=upper)``; default
        ``dpbook.BIT``.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    float or ndarray
        Releases of the shape of ``sample_mean``.
    """
    lo, hi = _finite_bounds(lower, upper)
    q = check.finite_array("sample_mean", sample_mean)
    if ((q < lo) | (q > hi)).any():
        raise ValueError(f"sample_mean must lie in [lower, upper] = [{lo}, {hi}]")
    make = interval_family("mechanism", mechanism)
    scale = laplace_scale(epsilon, mean_sensitivity(lo, hi, n))
    return make(scale, lo, hi).sample(q, rng=rng)


def sanitized_mean(data, lower, upper, epsilon, *, mechanism=BIT, rng=None):
    """Release the sample mean of each data set in ``data`` (Liu (2019), Def. 2; see :func:`release_sample_mean`).

    Parameters
    ----------
    data : array_like
        Records in ``[lower, upper]``, shape ``(..., n)``: each row along the last axis is one data set.
    lower, upper, epsilon, mechanism, rng
        As in :func:`release_sample_mean`.

    Returns
    -------
    float or ndarray
        One release per data set, shape ``data.shape[:-1]``.
    """
    lo, hi = _finite_bounds(lower, upper)
    data = check.finite_array("data", data)
    if data.ndim == 0 or data.shape[-1] == 0:
        raise ValueError(
            f"data must hold at least one record along its last axis, got shape {data.shape}"
        )
    if ((data < lo) | (data > hi)).any():
        raise ValueError(f"data must lie in [lower, upper] = [{lo}, {hi}]")
    return release_sample_mean(
        np.clip(data.mean(axis=-1), lo, hi),
        data.shape[-1],
        lo,
        hi,
        epsilon,
        mechanism=mechanism,
        rng=rng,
    )


def budget_split(epsilon, sensitivities, *, power=1.0):
    """Shares of a total budget ``ε`` among statistics with sensitivities ``Δ_j``: ``ε_j ∝ Δ_j^power``.

    By sequential composition the releases together are ``Σ ε_j = ε``-DP.  ``power = 1`` is the
    split of Liu (2019), Remark 2: every statistic gets the same scale ``Δ_j/ε_j = ||Δ||_1 / ε``, the
    scale of one Laplace mechanism on the whole vector.  ``power = 2/3`` minimizes the total Laplace
    variance ``Σ 2 (Δ_j/ε_j)^2`` (Lagrange: ``Δ_j^2/ε_j^3`` is the same for every ``j``).

    Parameters
    ----------
    epsilon : float
        Total budget ``ε > 0``.
    sensitivities : array_like
        ``Δ_j > 0``, one per statistic.
    power : float
        The exponent (``>= 0``; ``0`` splits equally).

    Returns
    -------
    ndarray
        ``ε_j``, summing to ``ε``.

    Examples
    --------
    >>> budget_split(1.0, [1.0, 3.0])
    array([0.25, 0.75])
    """
    epsilon = check.positive("epsilon", epsilon)
    d = check.finite_array("sensitivities", sensitivities)
    if d.ndim != 1 or d.size == 0 or (d <= 0).any():
        raise ValueError(
            f"sensitivities must be a non-empty list of numbers > 0, got {sensitivities!r}"
        )
    power = check.nonnegative("power", power)
    w = np.exp(power * (np.log(d) - np.log(d).max()))
    return epsilon * w / w.sum()
