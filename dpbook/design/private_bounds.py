"""Bounds chosen privately, each with an exact audit of its own release.

Every bounded release in the book starts from public bounds ``[l, u]``.  This module chooses them from
the data under differential privacy, three ways, and audits each release exactly:

* :func:`private_quantile` — the exponential mechanism (McSherry & Talwar 2007) over ``[lower, upper]``
  with the quantile utility of Smith (2011), sampled exactly over the intervals between sorted records;
  its law is :func:`quantile_law` and its audit :func:`quantile_privacy_loss`;
* :func:`approx_bounds` — the log-binned noisy histogram of SmartNoise (its ``approx_bounds``); its
  exact law is :func:`approx_bounds_law` and its audit :func:`approx_bounds_privacy_loss`;
* :func:`coinpress_mean` — one-dimensional CoinPress (Biswas, Dong, Kamath & Ullman 2020) with Laplace
  noise (pure ε); its privacy is a composition bound, :func:`coinpress_privacy_loss`.

:func:`minmax_privacy_loss` shows, with a witness pair of neighbours, why bounds read off the data
(``np.min``/``np.max``) have an infinite privacy loss.  End to end, :func:`private_mean_mse` spends ε₁
on the bounds and ε₂ on the clipped mean and measures the total MSE against the oracle clip of
:func:`dpbook.optimal_clip`; :func:`best_budget_split` chooses ε₁/ε.

**Neighbours.**  Data sets of ``n`` records that differ in one record (replace-one,
``Neighbours.SUBSTITUTION``), unless a function says otherwise.  **ε convention.**  A mechanism is
ε-DP when ``P(M(x) ∈ S) <= e^ε P(M(x') ∈ S)`` for all neighbours and events; every ε here is that
ε, and an audit's ε is the largest ``|log|`` of a ratio of output probabilities (densities for
continuous outputs) over all neighbours ``x'`` of the given ``x``: the local loss at ``x``, never
above the global ε a mechanism claims.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._kernels import validation as check
from ..families.clamping import BIT
from ..families.laplace import Laplace
from ..mechanism import interval_family
from ..neighbours import Neighbours
from .calibration import laplace_scale
from .clipping import optimal_clip
from .sensitivity import mean_sensitivity

__all__ = [
    "QuantileLaw",
    "quantile_law",
    "private_quantile",
    "ApproxBoundsLaw",
    "approx_bounds",
    "approx_bounds_law",
    "CoinPress",
    "coinpress_mean",
    "BoundsAudit",
    "quantile_privacy_loss",
    "approx_bounds_privacy_loss",
    "coinpress_privacy_loss",
    "minmax_privacy_loss",
    "bounds_privacy_loss",
    "PrivateMeanMSE",
    "BudgetSplit",
    "private_mean_mse",
    "best_budget_split",
]

_DATA_RELATIONS = (Neighbours.SUBSTITUTION, Neighbours.ADD_REMOVE)


def _records(x):
    """``x`` as a 1-d float array of at least one finite record, or a ``ValueError`` naming ``x``."""
    arr = check.finite_array("x", x)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(
            f"x must be a 1-d array of at least one record, got shape {arr.shape}"
        )
    return arr


def _finite_bounds(lower, upper):
    lo, hi = check.bounds(lower, upper)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(
            f"lower and upper must be finite, got lower={lower!r}, upper={upper!r}"
        )
    return lo, hi


def _probability(name, value):
    v = check.finite(name, value)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return v


# --- the exponential-mechanism quantile ----------------------------------------------------------


@dataclass(frozen=True)
class QuantileLaw:
    """The exact law of :func:`private_quantile`: a density constant on each interval between records.

    Attributes
    ----------
    edges : ndarray
        ``l = z_0 <= z_1 <= ... <= z_n <= z_{n+1} = u``: the bounds and the sorted clipped records.
    log_masses : ndarray
        ``log P(output in [z_k, z_{k+1}])``, ``k = 0..n`` (``-inf`` for a zero-length interval).
    utility : ndarray
        ``u_k = -|k - p n|``, the utility on the interior of interval ``k``.
    epsilon : float
    log_normalizer : float
        ``log Z``, ``Z = sum_k (z_{k+1} - z_k) exp(ε (u_k - u*)/2)`` with ``u* = max_k u_k``: the
        density is ``exp(ε (u(t) - u*)/2)/Z`` (the shift by ``u*`` keeps a huge ε exact).
    """

    edges: np.ndarray
    log_masses: np.ndarray
    utility: np.ndarray
    epsilon: float
    log_normalizer: float

    @property
    def masses(self):
        """``P(output in [z_k, z_{k+1}])``, ``k = 0..n``."""
        return np.exp(self.log_masses)

    def logpdf(self, t):
        """The log-density at ``t``: ``ε (u(t) - u*)/2 - log Z`` on ``[l, u]``, ``-inf`` outside."""
        t = check.real_array("t", t)
        count = np.searchsorted(self.edges[1:-1], t, side="left")  # #{i: z_i < t}
        p_n = -self.utility[0]  # u_0 = -|0 - p n|
        gap = np.abs(count - p_n) + self.utility.max()  # u* - u(t) >= 0
        out = -0.5 * self.epsilon * gap - self.log_normalizer
        inside = (t >= self.edges[0]) & (t <= self.edges[-1])
        out = np.where(inside, out, -np.inf)
        return float(out) if out.ndim == 0 else out

    def cdf(self, t):
        """``P(output <= t)``."""
        t = check.real_array("t", t)
        edges, masses = self.edges, self.masses
        cum = np.concatenate([[0.0], np.cumsum(masses)])
        k = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, masses.size - 1)
        half = (
            edges[k + 1] / 2 - edges[k] / 2
        )  # half-lengths: no overflow near ±max float
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            frac = np.where(half > 0, (t / 2 - edges[k] / 2) / half, 1.0)
        out = cum[k] + masses[k] * np.clip(frac, 0.0, 1.0)
        out = np.where(t < edges[0], 0.0, np.where(t >= edges[-1], 1.0, out))
        out = np.minimum(out, 1.0)
        return float(out) if out.ndim == 0 else out

    def mean(self):
        """``E[output]``: each interval's mass times its midpoint."""
        mid = 0.5 * self.edges[:-1] + 0.5 * self.edges[1:]
        return float(np.sum(self.masses * mid))


def _log_lengths(edges):
    """``log(edges[k+1] - edges[k])`` (``-inf`` for ties), formed from halves so nothing overflows."""
    half = edges[1:] / 2 - edges[:-1] / 2
    with np.errstate(divide="ignore"):
        return np.log(half) + math.log(2)


def quantile_law(x, p, epsilon, lower, upper):
    """The exact law of :func:`private_quantile` (interval edges and masses).

    The records are clipped to ``[lower, upper]`` and sorted, ``z_1 <= ... <= z_n``, with ``z_0 = lower``
    and ``z_{n+1} = upper``.  On the interior of ``[z_k, z_{k+1}]`` exactly ``k`` records lie below ``t``,
    so the utility ``u(t) = -|#{i: x_i < t} - p n|`` is ``u_k = -|k - p n|`` there and the density
    ``∝ exp(ε u(t)/2)`` gives the interval the mass ``∝ (z_{k+1} - z_k) exp(ε u_k/2)``, computed in
    log space (``log(z_{k+1} - z_k) + ε u_k/2``, normalized by a log-sum-exp).  Tied records make
    zero-length intervals: they have zero mass.

    Parameters
    ----------
    x : array_like
        The records (1-d, finite).
    p : float
        The quantile level in ``[0, 1]``.
    epsilon : float
        ``ε > 0``.
    lower, upper : float
        The finite public range searched, ``lower < upper``.

    Returns
    -------
    QuantileLaw

    Examples
    --------
    >>> law = quantile_law([1.0, 2.0, 3.0], 0.5, 1.0, 0.0, 4.0)
    >>> law.masses.round(4)  # ∝ e^{-|k - 1.5|/2}: 1/(2 + 2 e^{1/2}) at the ends
    array([0.1888, 0.3112, 0.3112, 0.1888])
    """
    x = _records(x)
    p = _probability("p", p)
    epsilon = check.positive("epsilon", epsilon)
    lo, hi = _finite_bounds(lower, upper)
    z = np.sort(np.clip(x, lo, hi))
    edges = np.concatenate([[lo], z, [hi]])
    n = z.size
    utility = -np.abs(np.arange(n + 1) - p * n)
    with np.errstate(divide="ignore"):
        log_w = _log_lengths(edges) + 0.5 * epsilon * (utility - utility.max())
    log_z = float(special.logsumexp(log_w))
    return QuantileLaw(
        edges=edges,
        log_masses=log_w - log_z,
        utility=utility,
        epsilon=epsilon,
        log_normalizer=log_z,
    )


def private_quantile(x, p, epsilon, lower, upper, *, size=None, rng=None):
    """The ``p``-quantile of ``x`` by the exponential mechanism over ``[lower, upper]``: ε-DP.

    McSherry & Talwar (2007) with the quantile utility of Smith (2011, §3):
    ``u(t) = -|#{i: x_i < t} - p n|`` on ``[lower, upper]``, the records clipped to the range.  Under
    replace-one neighbours the count below ``t`` changes by at most 1, so ``u`` has sensitivity 1 and
    the density ``∝ exp(ε u(t)/2)`` is ε-DP (the exponential mechanism's ``exp(ε u/(2Δu))``; with
    ``exp(ε u)``, as SmartNoise's ``quantile`` weights, the guarantee is 2ε, see
    :func:`quantile_privacy_loss`).

    The sampler is exact: it picks the interval ``k`` between sorted clipped records with
    probability ∝ ``(z_{k+1} - z_k) exp(ε u_k/2)`` by the Gumbel-max trick on the log-weights of
    :func:`quantile_law` (``argmax_k (log w_k + G_k)``, ``G_k`` standard Gumbel; a zero-length
    interval has ``log w_k = -inf`` and is never picked), then a point uniform in it.

    Parameters
    ----------
    x, p, epsilon, lower, upper
        As in :func:`quantile_law`.
    size : int or tuple of ints, optional
        Independent releases of this shape (one when omitted).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(private_quantile([1.0, 2.0, 3.0, 4.0], 0.5, 1.0, 0.0, 10.0, rng=1), 4)
    2.4233
    """
    law = quantile_law(x, p, epsilon, lower, upper)
    size = check.size(size, copies=2 * (law.log_masses.size + 2))
    gen = check.generator(rng)
    shape = () if size is None else (size,) if isinstance(size, int) else size
    gumbel = gen.gumbel(size=shape + (law.log_masses.size,))
    k = np.argmax(law.log_masses + gumbel, axis=-1)
    a, b = law.edges[k], law.edges[k + 1]
    u = gen.random(size=shape)
    out = np.clip(a * (1 - u) + b * u, a, b)  # uniform on [a, b], no overflow of b - a
    return float(out) if size is None else out


# --- SmartNoise's log-binned histogram -----------------------------------------------------------


def _approx_bins(base, bins):
    """The bin edges ``-b^{m-1} < ... < -b < -1 < 0 < 1 < b < ... < b^{m-1}`` (``2m`` bins)."""
    base = check.finite("base", base)
    if not base > 1:
        raise ValueError(f"base must be a finite number > 1, got {base!r}")
    bins = check.count("bins", bins, 2)
    with np.errstate(over="ignore"):
        powers = base ** np.arange(bins, dtype=float)
    if not np.isfinite(powers).all():
        raise ValueError(
            f"base**(bins - 1) must be finite, got base={base!r}, bins={bins!r}"
        )
    return np.concatenate([-powers[::-1], [0.0], powers])


def _noise_scale(epsilon, relation):
    """``2/ε`` for replace-one (one record moves between two bins), ``1/ε`` for add/remove."""
    relation = Neighbours.parse("relation", relation, _DATA_RELATIONS)
    return (2.0 if relation is Neighbours.SUBSTITUTION else 1.0) / epsilon, relation


def _thresholds(n_bins, scale):
    """SmartNoise's decreasing thresholds: ``K = -s log(2 - 2 (1 - f)^{1/(N - 1)})`` for
    ``f = 10^-8, 10^-7, ...`` while ``f <= 1/(2N)``: with ``N - 1`` empty bins, none passes ``K`` with
    probability ``1 - f``."""
    out = []
    failure = 10e-9
    while failure <= 1 / (n_bins * 2):
        keep = 1 - failure
        out.append(-scale * np.log(2 - 2 * keep ** (1 / (n_bins - 1))))
        failure *= 10
    return np.array(out)


def _bin_counts(x, edges):
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, edges.size - 2)
    return np.bincount(idx, minlength=edges.size - 1).astype(float)


def _select(noisy, thresholds):
    """The bins ``(first, last)`` over the first threshold any noisy count passes, or ``None``."""
    for k in thresholds:
        over = np.flatnonzero(noisy > k)
        if over.size:
            return int(over[0]), int(over[-1])
    return None


def _approx_setup(x, epsilon, base, bins, relation):
    x = _records(x)
    epsilon = check.positive("epsilon", epsilon)
    edges = _approx_bins(base, bins)
    scale, relation = _noise_scale(epsilon, relation)
    counts = _bin_counts(x, edges)
    return edges, counts, scale, _thresholds(counts.size, scale), relation


def approx_bounds(x, epsilon, *, base=2.0, bins=64, relation="substitution", rng=None):
    """Bounds from a noisy log-binned histogram: SmartNoise's ``approx_bounds``, ε-DP.

    SmartNoise SQL, ``snsql/sql/_mechanisms/approx_bounds.py`` (opendp/smartnoise-sdk, commit
    719a5df, 2023), after Desfontaines' thesis (§ "usability"): the records are clipped to
    ``[-2^63, 2^63]`` and counted in 128 bins ``[-2^63, -2^62), ..., [-2, -1), [-1, 0), [0, 1), [1, 2),
    ..., [2^62, 2^63]``; every count gets Laplace noise; for the failure probabilities
    ``f = 10^-8, 10^-7, ...`` (while ``f <= 1/(2N)``, ``N`` bins) the threshold is
    ``K = -s log(2 - 2 (1 - f)^{1/(N - 1)})``, and at the first threshold that some noisy count passes
    the release is the lower edge of the lowest such bin and the upper edge of the highest; if none
    passes the last threshold, ``(None, None)``.  ``base`` and ``bins`` (per sign) generalize the
    bins (``base**k`` edges); the defaults are SmartNoise's.

    **Privacy.**  The release is a post-processing of the noisy histogram.  Under replace-one
    neighbours one record moves from one bin to another, an L1 change of 2, so the noise scale is
    ``s = 2/ε``; SmartNoise's ``s = 1/ε`` is ε-DP under add/remove neighbours (``relation=
    "add_remove"``), and only 2ε-DP under replace-one.  The thresholds scale with ``s`` so that
    their failure probabilities stay SmartNoise's.  The exact law is :func:`approx_bounds_law`, the
    exact audit :func:`approx_bounds_privacy_loss`.

    Parameters
    ----------
    x : array_like
        The records (1-d, finite).
    epsilon : float
        ``ε > 0``.
    base : float, keyword-only
        The bins' ratio, ``> 1`` (2).
    bins : int, keyword-only
        Bins per sign (64).
    relation : {"substitution", "add_remove"}, keyword-only
        The neighbour relation the noise is calibrated for.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    (float, float) or (None, None)

    Examples
    --------
    >>> approx_bounds([3.0, 5.0, 6.0, 7.0] * 25, 1.0, rng=0)  # 75 records in [4, 8)
    (4.0, 8.0)
    """
    edges, counts, scale, thresholds, _ = _approx_setup(
        x, epsilon, base, bins, relation
    )
    noisy = counts + check.generator(rng).laplace(0.0, scale, size=counts.size)
    chosen = _select(noisy, thresholds)
    if chosen is None:
        return (None, None)
    return (float(edges[chosen[0]]), float(edges[chosen[1] + 1]))


def _laplace_log_cdf(t, loc, scale):
    """``log P(loc + L_s <= t)`` for finite ``t``, accurate in both tails."""
    z = (t - loc) / scale
    return np.where(
        z < 0, np.log(0.5) + np.minimum(z, 0.0), np.log1p(-0.5 * np.exp(-np.abs(z)))
    )


def _laplace_log_band(hi, lo, loc, scale):
    """``log P(lo < loc + L_s <= hi)`` for ``lo < hi`` (``hi`` may be ``inf``), without cancellation."""
    a = (lo - loc) / scale
    if math.isinf(hi):
        return np.where(
            a >= 0, np.log(0.5) - np.abs(a), np.log1p(-0.5 * np.exp(-np.abs(a)))
        )
    b = (hi - loc) / scale
    gap = (hi - lo) / scale
    below = (
        np.log(0.5) + np.minimum(b, 0.0) + np.log(-np.expm1(-gap))
    )  # both ends <= loc
    above = (
        np.log(0.5) - np.maximum(a, 0.0) + np.log(-np.expm1(-gap))
    )  # both ends >= loc
    with np.errstate(divide="ignore"):
        straddle = np.log(
            -0.5 * (np.expm1(-np.abs(b)) + np.expm1(-np.abs(a)))
        )  # lo < loc < hi
    return np.where(b <= 0, below, np.where(a >= 0, above, straddle))


@dataclass(frozen=True)
class ApproxBoundsLaw:
    """The exact law of :func:`approx_bounds` on one data set.

    Attributes
    ----------
    edges : ndarray
        The bin edges (``2m + 1``).
    counts : ndarray
        The bins' true counts.
    scale : float
        The Laplace noise scale of every count.
    thresholds : ndarray
        SmartNoise's decreasing thresholds.
    log_pmf : ndarray
        ``log P(first = a, last = b)`` for bins ``a <= b`` (``-inf`` below the diagonal).
    log_none : float
        ``log P(release = (None, None))``.
    """

    edges: np.ndarray
    counts: np.ndarray
    scale: float
    thresholds: np.ndarray
    log_pmf: np.ndarray
    log_none: float

    def pmf(self, lower, upper):
        """``P(release = (lower, upper))`` for bin edges ``lower < upper`` (0 for any other pair)."""
        a = np.flatnonzero(self.edges[:-1] == lower)
        b = np.flatnonzero(self.edges[1:] == upper)
        if a.size == 0 or b.size == 0:
            return 0.0
        return float(np.exp(self.log_pmf[a[0], b[0]]))

    @property
    def lower_pmf(self):
        """``P(the lowest bin over the threshold is k)``, ``k = 0..N-1`` (the release's lower edge)."""
        return np.exp(special.logsumexp(self.log_pmf, axis=1))

    @property
    def upper_pmf(self):
        """``P(the highest bin over the threshold is k)`` (the release's upper edge)."""
        return np.exp(special.logsumexp(self.log_pmf, axis=0))


@functools.lru_cache(maxsize=8)
def _pairs(size):
    """The bin pairs ``a <= b`` as index vectors, and ``a < b``."""
    ia, ib = np.triu_indices(size)
    return ia, ib, ib > ia


def _approx_log_law_pairs(counts, scale, thresholds):
    """``(log P(first = a, last = b) for the pairs a <= b of _pairs, log P(None))``.

    The noisy counts ``c_j + N_j`` are independent.  The release comes from level ``ℓ`` (threshold
    ``K_ℓ``, with ``K_0 = inf``) with bins ``a <= b`` when no count passes ``K_{ℓ-1}``, bins ``a`` and
    ``b`` pass ``K_ℓ``, and no bin below ``a`` or above ``b`` does:
    ``Π_{j<a or j>b} F_j(K_ℓ) · Π_{a<j<b} F_j(K_{ℓ-1}) · D_a · D_b`` (``D_a`` once when ``a = b``), with
    ``F_j(K) = P(c_j + N <= K)`` and ``D_j = F_j(K_{ℓ-1}) - F_j(K_ℓ)``; the levels are summed (a
    log-sum-exp).  The products are differences of cumulative sums of ``log F``.
    """
    counts = np.asarray(counts, dtype=float)
    ia, ib, apart = _pairs(counts.size)
    k = np.asarray(thresholds)[:, None]
    log_f = _laplace_log_cdf(k, counts[None, :], scale)  # (levels, bins)
    log_f_prev = np.vstack([np.zeros((1, counts.size)), log_f[:-1]])
    prev = np.concatenate([[math.inf], thresholds[:-1]])
    log_d = np.vstack(
        [_laplace_log_band(h, lo, counts, scale) for h, lo in zip(prev, thresholds)]
    )
    zero = np.zeros((k.shape[0], 1))
    cf = np.hstack([zero, np.cumsum(log_f, axis=1)])  # cf[:, i] = sum_{j<i} log F_j(K)
    cp = np.hstack([zero, np.cumsum(log_f_prev, axis=1)])
    terms = cf[:, ia] + (cf[:, -1:] - cf[:, ib + 1]) + log_d[:, ia]
    terms += np.where(
        apart, cp[:, ib] - cp[:, np.minimum(ia + 1, counts.size)] + log_d[:, ib], 0.0
    )
    top = terms.max(axis=0)
    log_pairs = top + np.log(np.exp(terms - top).sum(axis=0))
    log_none = float(np.sum(log_f[-1]))
    return log_pairs, log_none


def _approx_log_law(counts, scale, thresholds):
    """``(log_pmf, log_none)`` with ``log_pmf[a, b]`` (``-inf`` below the diagonal)."""
    size = np.asarray(counts).size
    ia, ib, _ = _pairs(size)
    log_pairs, log_none = _approx_log_law_pairs(counts, scale, thresholds)
    log_pmf = np.full((size, size), -np.inf)
    log_pmf[ia, ib] = log_pairs
    return log_pmf, log_none


def approx_bounds_law(x, epsilon, *, base=2.0, bins=64, relation="substitution"):
    """The exact law of :func:`approx_bounds`: ``P(first bin a, last bin b)`` and ``P(None)``.

    The noisy counts are independent, so with one threshold ``τ`` the lowest bin over it is ``k``
    with probability ``Π_{j<k} P(c_j + N <= τ) · P(c_k + N > τ)`` (and the same from the top); the
    release ``(lower, upper)`` is the pair, whose joint law is a product too, summed over SmartNoise's
    decreasing thresholds (see :class:`ApproxBoundsLaw`).  Exact up to rounding, in log space.

    Parameters
    ----------
    x, epsilon, base, bins, relation
        As in :func:`approx_bounds`.

    Returns
    -------
    ApproxBoundsLaw

    Examples
    --------
    >>> law = approx_bounds_law([3.0, 5.0, 6.0, 7.0] * 25, 1.0)
    >>> round(law.pmf(4.0, 8.0), 4), round(law.pmf(2.0, 8.0), 6)
    (1.0, 2.1e-05)
    """
    edges, counts, scale, thresholds, _ = _approx_setup(
        x, epsilon, base, bins, relation
    )
    log_pmf, log_none = _approx_log_law(counts, scale, thresholds)
    return ApproxBoundsLaw(edges, counts, scale, thresholds, log_pmf, log_none)


# --- one-dimensional CoinPress -------------------------------------------------------------------


@dataclass(frozen=True)
class CoinPress:
    """The result of :func:`coinpress_mean`.

    Attributes
    ----------
    estimate : float
        The last noisy clipped mean.
    lower, upper : float
        The final interval: where the records lie with probability ``>= 1 - β`` under the model.
    intervals : ndarray
        Shape ``(steps + 1, 2)``: the clipping interval of each step, then the final one.
    releases : ndarray
        The noisy clipped mean of each step.
    epsilons : ndarray
        The budget of each step.
    epsilon : float
        ``Σ ε_t``: an upper bound on the privacy loss (basic composition).
    """

    estimate: float
    lower: float
    upper: float
    intervals: np.ndarray
    releases: np.ndarray
    epsilons: np.ndarray
    epsilon: float


def _step_budgets(epsilon, steps, split):
    epsilon = check.positive("epsilon", epsilon)
    steps = check.count("steps", steps, 1)
    if split is None:
        return np.full(steps, epsilon / steps)
    w = check.finite_array("split", split)
    if w.ndim != 1 or w.size != steps or (w <= 0).any():
        raise ValueError(
            f"split must be {steps} numbers > 0 (one per step), got {split!r}"
        )
    return epsilon * w / w.sum()


def coinpress_mean(
    x, epsilon, lower, upper, *, sigma, steps=3, beta=0.01, split=None, rng=None
):
    """One-dimensional CoinPress (Biswas, Dong, Kamath & Ullman 2020) with Laplace noise: ε-DP.

    The paper's mean estimator for data of known covariance (its iterated one-step improvement of a
    ball; ``multivariate_mean_step`` in the authors' code) keeps a ball that holds the mean, clips the
    records to it widened by the records' spread ``γ``, releases the clipped mean with Gaussian noise
    (zCDP, sensitivity ``2(r + γ)/n``) and shrinks the ball around the release to a tail bound of
    the noise plus the sampling error.  Here, in one dimension and pure ε: with the interval
    ``I_1 = [lower, upper]``, at step ``t = 1..T`` (``T = steps``)

    1. clip the records to ``I_t = [c_t - r_t, c_t + r_t]`` and release their mean plus Laplace noise
       of scale ``b_t = (2 r_t/n)/ε_t`` (the clipped mean's sensitivity is ``2 r_t/n``);
    2. bound the mean's distance from the release, with probability ``>= 1 - β/T``, by the noise
       quantile ``b_t log(2T/β)`` plus the sampling term ``σ sqrt(2 log(4T/β)/n)`` (each with half
       of ``β/T``, a union bound; the paper adds a Gaussian noise and sampling error in quadrature,
       which a Laplace noise does not allow);
    3. ``I_{t+1}`` = the release ± (that bound + ``σ sqrt(2 log(2n/β))``, the records' spread about
       the mean, as the paper widens its ball by ``γ`` before clipping).

    The estimate is the last release and the final interval ``I_{T+1}``.  The bounds hold when the
    records are σ-sub-Gaussian (the paper's Gaussian model); privacy does not depend on them.

    **Privacy.**  ``I_t`` depends on earlier releases only, so step ``t`` is a Laplace mechanism on a
    statistic of sensitivity ``2 r_t/n`` (replace-one): ``ε_t``-DP.  By basic (adaptive) composition
    the whole is ``Σ ε_t = ε``-DP: an upper bound (:func:`coinpress_privacy_loss`).

    Parameters
    ----------
    x : array_like
        The records (1-d, finite).
    epsilon : float
        The total budget ``ε > 0``.
    lower, upper : float
        The finite starting interval.
    sigma : float, keyword-only
        The records' known scale (sub-Gaussian parameter, e.g. the standard deviation of normal data).
    steps : int, keyword-only
        ``T >= 1`` (3).
    beta : float, keyword-only
        The failure probability of the bounds, in ``(0, 1)`` (0.01).
    split : array_like, optional
        Relative budgets of the steps (equal by default).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    CoinPress

    Examples
    --------
    >>> x = np.random.default_rng(0).normal(5.0, 1.0, size=2000)
    >>> out = coinpress_mean(x, 1.0, -100.0, 100.0, sigma=1.0, rng=1)
    >>> round(out.estimate, 2), out.lower < 5.0 < out.upper
    (4.95, True)
    """
    x = _records(x)
    lo, hi = _finite_bounds(lower, upper)
    sigma = check.positive("sigma", sigma)
    beta = check.finite("beta", beta)
    if not 0 < beta < 1:
        raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
    eps = _step_budgets(epsilon, steps, split)
    gen = check.generator(rng)
    n, t_steps = x.size, eps.size
    spread = sigma * math.sqrt(2 * math.log(2 * n / beta))
    sampling = sigma * math.sqrt(2 * math.log(4 * t_steps / beta) / n)
    intervals, releases = [(lo, hi)], []
    for e in eps:
        b = laplace_scale(e, mean_sensitivity(lo, hi, n))
        release = float(np.clip(x, lo, hi).mean() + gen.laplace(0.0, b))
        releases.append(release)
        radius = b * math.log(2 * t_steps / beta) + sampling + spread
        lo, hi = release - radius, release + radius
        intervals.append((lo, hi))
    return CoinPress(
        estimate=releases[-1],
        lower=lo,
        upper=hi,
        intervals=np.array(intervals),
        releases=np.array(releases),
        epsilons=eps,
        epsilon=float(eps.sum()),
    )


# --- exact audits --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoundsAudit:
    """An audited privacy loss of a bounds release at one data set ``x``.

    Attributes
    ----------
    epsilon : float
        The largest ``|log|`` ratio of output probabilities (densities) over all neighbours of ``x``
        (``inf`` when two neighbours' laws have different supports).
    claimed : float
        The ε the mechanism claims (``nan`` where it claims none).
    exact : bool
        True when ``epsilon`` is the exact supremum; False when it is an upper bound.
    neighbour : ndarray or None
        A neighbour of ``x`` attaining ``epsilon`` (or approaching it: see ``note``).
    output : object
        Where the loss is attained: an output value, a pair of bounds, or an event ``(a, b]``.
    note : str
        How ``epsilon`` was computed.
    """

    epsilon: float
    claimed: float
    exact: bool
    neighbour: object
    output: object
    note: str


_MAX_AUDIT_RECORDS = 500


def quantile_privacy_loss(x, p, epsilon, lower, upper):
    """The exact privacy loss of :func:`private_quantile` at ``x`` over all replace-one neighbours.

    ``sup`` over neighbours ``x'`` and outputs ``t`` of ``|log f_x(t) - log f_{x'}(t)|``, ``f`` the
    densities of :func:`quantile_law`.

    **The enumeration is complete.**  Let ``e_0 = l <= e_1 <= ... <= e_n <= e_{n+1} = u`` be the
    bounds and the sorted clipped records, ``G_k = (e_k, e_{k+1})``.  A neighbour removes the record
    of rank ``r`` and inserts ``y`` (clipped into ``[l, u]``).  With ``y`` in the gap ``G_j``, for
    ``t`` in ``G_k`` (``k != j``) the count below ``t`` is ``k - [r <= k] + [j < k]``, and ``G_j`` splits
    at ``y`` into two pieces with counts ``j - [r <= j]`` and one more; so the set of log-density
    differences (up to the normalizers) is the same for every ``y`` in ``G_j``, while
    ``Z_{x'}(y)`` is linear in ``y`` there (``dZ/dy = w(c) - w(c + 1)``, a constant).  Each
    ``|a + log Z_{x'}(y) - log Z_x|`` is monotone in ``y``, so the supremum over ``y`` in ``G_j`` is
    at an end of ``G_j``, as a limit: both pieces of ``G_j`` are kept even when one has length 0.
    A ``y`` on a record is the common limit of the gaps beside it, and tied records give the same
    neighbour, so the records' distinct values ``r``, the gaps of positive length ``j`` and both
    ends of each make a finite, complete enumeration (``O(n^3)`` work; at most 500 records).

    The audited ε is at most the claimed ε (the exponential mechanism's theorem) and is usually
    below it: the utility changes only between the removed and the inserted record, so the density
    ratio (at most ``e^{ε/2}``) and the normalizer's ratio (at most ``e^{ε/2}``) cannot both be
    extreme.  Pass ``2 ε`` to audit SmartNoise's ``quantile(vals, p, ε, ...)``, whose weights
    ``exp(-ε |k - p n|)`` are this mechanism's at ``2 ε``.

    Parameters
    ----------
    x, p, epsilon, lower, upper
        As in :func:`quantile_law`.

    Returns
    -------
    BoundsAudit
        ``output`` is a point of the interval where the loss is attained; ``neighbour`` is ``x`` with
        the record replaced by the end of the gap (the loss is the limit as the inserted record
        approaches that end from inside the gap).

    Examples
    --------
    >>> audit = quantile_privacy_loss([1.0, 2.0, 3.0, 4.0], 0.5, 1.0, 0.0, 5.0)
    >>> round(audit.epsilon, 4), audit.epsilon <= audit.claimed
    (0.7413, True)
    """
    law = quantile_law(x, p, epsilon, lower, upper)
    x = _records(x)
    n = x.size
    if n > _MAX_AUDIT_RECORDS:
        raise ValueError(
            f"x: the exact audit enumerates O(n^3) cases; at most {_MAX_AUDIT_RECORDS} records, "
            f"got {n}"
        )
    e = law.edges
    log_len = _log_lengths(e)
    positive = np.isfinite(log_len)  # gaps of positive length
    k = np.arange(n + 1)
    p_n = p * n

    closest = -law.utility.max()  # min_k |k - p n|: g <= 0, with 0 at the best count

    def g(c):
        return -0.5 * law.epsilon * (np.abs(c - p_n) - closest)

    gk = g(k)
    log_zx = float(special.logsumexp(log_len + gk))
    cells = np.flatnonzero(positive)
    j = cells[:, None]
    best = (-1.0, None)
    _, first_rank = np.unique(e[1:-1], return_index=True)
    for r in first_rank + 1:  # ranks 1..n of the distinct values
        base = k - (r <= k)
        c = base[None, :] + (j < k[None, :])  # counts on G_k, k != j (rows: cells j)
        terms = np.where(k[None, :] == j, -np.inf, log_len[None, :] + g(c))
        rest = special.logsumexp(terms, axis=1)
        c_left = base[cells]
        c_right = c_left + 1
        for theta in (0.0, 1.0):
            with np.errstate(divide="ignore"):
                left = np.log(theta) + log_len[cells] + g(c_left)
                right = np.log(1 - theta) + log_len[cells] + g(c_right)
            log_zy = special.logsumexp(np.stack([rest, left, right]), axis=0)
            shift = (log_zy - log_zx)[:, None]
            diffs = np.where(
                (k[None, :] != j) & positive[None, :],
                np.abs(gk[None, :] - g(c) + shift),
                -np.inf,
            )
            split = np.abs(
                np.stack([gk[cells] - g(c_left), gk[cells] - g(c_right)], axis=1)
                + shift
            )
            allv = np.concatenate([diffs, split], axis=1)
            flat = int(np.argmax(allv))
            row, col = divmod(flat, allv.shape[1])
            value = float(allv[row, col])
            if value > best[0]:
                cell = int(cells[row])
                y = e[cell + 1] if theta else e[cell]
                if col <= n:
                    t = 0.5 * e[col] + 0.5 * e[col + 1]
                else:  # a piece of the split gap (the side of y it lies on), y if empty
                    t = 0.5 * y + 0.5 * (e[cell] if col == n + 1 else e[cell + 1])
                best = (value, (int(r), y, t))
    r, y, t = best[1]
    order = np.argsort(x, kind="stable")
    neighbour = x.copy()
    neighbour[order[r - 1]] = y
    return BoundsAudit(
        epsilon=best[0],
        claimed=law.epsilon,
        exact=True,
        neighbour=neighbour,
        output=float(t),
        note=(
            "exact supremum over all replace-one neighbours and outputs (finite enumeration of "
            "removed record x inserted gap end, as a limit from inside the gap)"
        ),
    )


def _approx_neighbour_counts(counts, relation):
    """Every neighbour's bin counts: one record moved (replace-one), added or removed (add/remove)."""
    size = counts.size
    occupied = np.flatnonzero(counts >= 1)
    if relation is Neighbours.SUBSTITUTION:
        for i in occupied:
            for j in range(size):
                if j != i:
                    c = counts.copy()
                    c[i] -= 1
                    c[j] += 1
                    yield (int(i), int(j)), c
    else:
        for j in range(size):
            c = counts.copy()
            c[j] += 1
            yield (None, int(j)), c
        for i in occupied:
            c = counts.copy()
            c[i] -= 1
            yield (int(i), None), c


def approx_bounds_privacy_loss(
    x, epsilon, *, base=2.0, bins=64, relation="substitution", calibration=None
):
    """The exact privacy loss of :func:`approx_bounds` at ``x`` over all neighbours of ``x``.

    The release depends on the data only through the bins' counts.  A replace-one neighbour moves
    one unit of count from an occupied bin ``i`` to any other bin ``j`` (records beyond the outer
    edges are clipped into the end bins, so every record is in a bin); an add/remove neighbour adds
    a unit to any bin or removes one from an occupied bin.  For each neighbour the exact law
    (:func:`approx_bounds_law`) is compared with ``x``'s over every output (each pair of bins and
    ``(None, None)``): the enumeration is finite and complete.  The loss is exact up to rounding
    (a few units of ``1e-15`` relative, which may put an attained ``ε`` a hair above it).  It is often
    attained: a unit moved between two bins whose noisy counts both sit far in the noise's tails
    changes the output's probability by ``e^{2/s} = e^ε``.

    Parameters
    ----------
    x, epsilon, base, bins
        As in :func:`approx_bounds`.
    relation : {"substitution", "add_remove"}, keyword-only
        The neighbours audited.
    calibration : {"substitution", "add_remove"}, optional
        The relation the noise was calibrated for (default: ``relation``).  SmartNoise's own
        ``approx_bounds`` is ``calibration="add_remove"`` (scale ``1/ε``); audited under
        ``relation="substitution"`` its loss can exceed ε (the claim holds for add/remove only).

    Returns
    -------
    BoundsAudit
        ``neighbour`` is the move ``(from_bin, to_bin)`` (``None`` for an addition or removal) and
        ``output`` the pair of bounds (or ``(None, None)``) where the loss is attained.

    Examples
    --------
    >>> audit = approx_bounds_privacy_loss([3.0, 5.0, 6.0] * 4, 1.0, bins=4)
    >>> audit.epsilon <= audit.claimed
    True
    """
    relation = Neighbours.parse("relation", relation, _DATA_RELATIONS)
    calibration = (
        relation
        if calibration is None
        else Neighbours.parse("calibration", calibration, _DATA_RELATIONS)
    )
    edges, counts, scale, thresholds, _ = _approx_setup(
        x, epsilon, base, bins, calibration
    )
    log_pairs, log_none = _approx_log_law_pairs(counts, scale, thresholds)
    best = (-1.0, None, None)
    for move, c in _approx_neighbour_counts(counts, relation):
        other, other_none = _approx_log_law_pairs(c, scale, thresholds)
        diff = np.abs(log_pairs - other)
        at = int(np.argmax(diff))
        value, out = float(diff[at]), at
        none_diff = abs(log_none - other_none)
        if none_diff > value:
            value, out = none_diff, None
        if value > best[0]:
            best = (value, move, out)
    value, move, out = best
    ia, ib, _ = _pairs(counts.size)
    output = (
        (None, None)
        if out is None
        else (float(edges[ia[out]]), float(edges[ib[out] + 1]))
    )
    return BoundsAudit(
        epsilon=value,
        claimed=check.positive("epsilon", epsilon),
        exact=True,
        neighbour=move,
        output=output,
        note=(
            f"exact maximum over all {relation.value} neighbours' bin counts and every output "
            f"(noise calibrated for {Neighbours(calibration).value})"
        ),
    )


def coinpress_privacy_loss(epsilon, *, steps=3, split=None):
    """The privacy loss of :func:`coinpress_mean`: ``Σ ε_t`` by basic composition, an upper bound.

    Each step is a Laplace mechanism at ``ε_t`` on a clipped mean whose interval is chosen from
    earlier releases; adaptive basic composition bounds the whole by ``Σ ε_t``.  Not an exact audit:
    ``exact=False``.

    Parameters
    ----------
    epsilon, steps, split
        As in :func:`coinpress_mean`.

    Returns
    -------
    BoundsAudit

    Examples
    --------
    >>> coinpress_privacy_loss(1.0, steps=4).epsilon
    1.0
    """
    eps = _step_budgets(epsilon, steps, split)
    total = float(eps.sum())
    return BoundsAudit(
        epsilon=total,
        claimed=total,
        exact=False,
        neighbour=None,
        output=None,
        note="upper bound: basic composition of the steps' Laplace mechanisms",
    )


def minmax_privacy_loss(x, epsilon, *, family=None):
    """The privacy loss of the peers' practice: bounds ``np.min(x)``, ``np.max(x)``, then a bounded mean.

    The release is ``family(b, lower=min x, upper=max x)`` at the mean of ``x``, with
    ``b = ((max - min)/n)/ε`` (default :class:`dpbook.BIT`, which puts an atom at each bound).  Its law
    lives on ``[min x, max x]``.  A neighbour with another maximum has a law on another interval:

    * if the maximum is attained once, replace that record by ``min x``: the neighbour's maximum
      ``m' < max x``, so the event ``(m', max x]`` (which holds BIT's atom at ``max x``) has positive
      probability under ``x`` and probability 0 under the neighbour;
    * otherwise replace one maximal record by ``2 max x - min x``: the event ``(max x, 2 max x - min x]``
      has probability 0 under ``x`` and positive probability under the neighbour.

    Either way ``log P(S)/P'(S)`` is infinite: no ε holds.  The two probabilities are computed with the
    family's exact law (its log tails ``logsf``, so a tiny mass is not rounded to 0), the witness
    being returned.

    Parameters
    ----------
    x : array_like
        The records, at least two distinct values.
    epsilon : float
        The ε the release claims.
    family : callable, optional
        A family on an interval, ``family(scale, lower=, upper=)`` (default :class:`dpbook.BIT`).

    Returns
    -------
    BoundsAudit
        ``epsilon = inf``; ``neighbour`` the witness data set; ``output`` the event ``(a, b]`` and
        ``note`` the two log-probabilities.

    Examples
    --------
    >>> audit = minmax_privacy_loss([1.0, 2.0, 5.0], 1.0)
    >>> audit.epsilon, audit.output
    (inf, (2.0, 5.0))
    """

    x = _records(x)
    epsilon = check.positive("epsilon", epsilon)
    make = interval_family("family", BIT if family is None else family)
    lo, hi = float(x.min()), float(x.max())
    if not lo < hi:
        raise ValueError(
            f"x must hold at least two distinct values (np.min and np.max are equal), got {x!r}"
        )

    def log_mass(data, a, b):
        """``log P(a < release <= b)`` from the family's exact log tails (no cancellation)."""
        lo_, hi_ = float(data.min()), float(data.max())
        scale = laplace_scale(epsilon, mean_sensitivity(lo_, hi_, data.size))
        mech = make(scale, lo_, hi_)
        q = float(np.clip(data.mean(), lo_, hi_))
        la, lb = mech.logsf(a, q), mech.logsf(b, q)
        if la == -math.inf or lb == -math.inf:
            return la
        return la + math.log1p(-math.exp(lb - la))

    neighbour = x.copy()
    top = np.flatnonzero(x == hi)
    if top.size == 1:
        neighbour[top[0]] = lo
        event = (float(neighbour.max()), hi)
    else:
        neighbour[top[0]] = 2 * hi - lo
        event = (hi, 2 * hi - lo)
    lp_x, lp_n = log_mass(x, *event), log_mass(neighbour, *event)
    ratio = (
        abs(lp_x - lp_n) if math.isfinite(lp_x) and math.isfinite(lp_n) else math.inf
    )
    return BoundsAudit(
        epsilon=ratio,
        claimed=epsilon,
        exact=True,
        neighbour=neighbour,
        output=event,
        note=(
            f"log P(release in {event} | x) = {lp_x:.6g}, "
            f"log P(release in {event} | neighbour) = {lp_n:.6g}"
        ),
    )


def bounds_privacy_loss(method, x, epsilon, **options):
    """The audited privacy loss of a bounds method at ``x``: one entry point for the four audits.

    ``method`` is ``"quantile"`` (:func:`quantile_privacy_loss`, options ``p``, ``lower``, ``upper``),
    ``"approx_bounds"`` (:func:`approx_bounds_privacy_loss`), ``"coinpress"``
    (:func:`coinpress_privacy_loss`: an upper bound, ``x`` unused) or ``"minmax"``
    (:func:`minmax_privacy_loss`).

    Parameters
    ----------
    method : {"quantile", "approx_bounds", "coinpress", "minmax"}
    x : array_like
        The records (unused for ``"coinpress"``).
    epsilon : float
    **options
        The keyword arguments of the method's audit.

    Returns
    -------
    BoundsAudit

    Examples
    --------
    >>> bounds_privacy_loss("minmax", [0.0, 1.0, 3.0], 1.0).epsilon
    inf
    """
    if method == "quantile":
        return quantile_privacy_loss(
            x,
            options.pop("p"),
            epsilon,
            options.pop("lower"),
            options.pop("upper"),
            **options,
        )
    if method == "approx_bounds":
        return approx_bounds_privacy_loss(x, epsilon, **options)
    if method == "coinpress":
        return coinpress_privacy_loss(epsilon, **options)
    if method == "minmax":
        return minmax_privacy_loss(x, epsilon, **options)
    raise ValueError(
        "method must be 'quantile', 'approx_bounds', 'coinpress' or 'minmax', "
        f"got {method!r}"
    )


# --- end to end: bounds with ε₁, the clipped mean with ε₂ ----------------------------------------

_METHODS = ("quantile", "approx_bounds", "coinpress")


@dataclass(frozen=True)
class PrivateMeanMSE:
    """The simulated MSE of a private mean whose clipping bounds were chosen privately.

    Attributes
    ----------
    method : str
    epsilon : float
        The total budget ``ε = ε₁ + ε₂``.
    bounds_share : float
        ``ε₁/ε``.
    mse : float
        The estimated ``E[(release - E X)^2]`` (simulated).
    se : float
        Its Monte Carlo standard error.
    oracle_mse : float
        The least MSE of a fixed clip chosen knowing the law, with the whole ε for the mean
        (:func:`dpbook.optimal_clip`, exact).
    oracle_lower, oracle_upper : float
        That clip.
    reps : int
        Simulated data sets.
    values : ndarray
        The per-data-set terms whose mean is ``mse`` (for paired comparisons).
    simulated : bool
        Always True: the data and the bounds are simulated; the mean's noise term is exact given them.
    """

    method: str
    epsilon: float
    bounds_share: float
    mse: float
    se: float
    oracle_mse: float
    oracle_lower: float
    oracle_upper: float
    reps: int
    values: np.ndarray
    simulated: bool = True


def _mean_family(family):
    if family is Laplace:
        return "Laplace"
    if family is BIT:
        return "BIT"
    raise ValueError(f"family must be dpbook.Laplace or dpbook.BIT, got {family!r}")


def _private_bounds_of(x, method, eps1, lower, upper, options, gen):
    """One draw of ``(L, U)`` by ``method`` at ``ε₁`` (see :func:`private_mean_mse`)."""
    if method == "quantile":
        p_lo, p_hi = options["quantiles"]
        spend = eps1 / sum(q is not None for q in (p_lo, p_hi))
        lo = (
            lower
            if p_lo is None
            else private_quantile(x, p_lo, spend, lower, upper, rng=gen)
        )
        hi = (
            upper
            if p_hi is None
            else private_quantile(x, p_hi, spend, lower, upper, rng=gen)
        )
        lo, hi = min(lo, hi), max(lo, hi)
    elif method == "approx_bounds":
        lo, hi = approx_bounds(
            x, eps1, base=options["base"], bins=options["bins"], rng=gen
        )
        if lo is None:
            lo, hi = lower, upper
    else:
        out = coinpress_mean(
            x,
            eps1,
            lower,
            upper,
            sigma=options["sigma"],
            steps=options["steps"],
            rng=gen,
        )
        lo, hi = out.lower, out.upper
    if not hi > lo:  # a measure-zero tie: fall back on the public range
        lo, hi = lower, upper
    return lo, hi


def _end_to_end_values(
    data, n, epsilon, share, method, reps, seed, lower, upper, family, options
):
    mu = float(data.mean())
    data_rng, bounds_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2)
    )
    samples = np.asarray(data.rvs(size=(reps, n), random_state=data_rng), dtype=float)
    eps1, eps2 = share * epsilon, (1 - share) * epsilon
    values = np.empty(reps)
    for r in range(reps):
        x = samples[r]
        lo, hi = _private_bounds_of(x, method, eps1, lower, upper, options, bounds_rng)
        m = float(np.clip(x, lo, hi).mean())
        b = laplace_scale(eps2, mean_sensitivity(lo, hi, n))
        if family == "Laplace":
            values[r] = (m - mu) ** 2 + 2 * b * b
        else:
            mech = BIT(b, lower=lo, upper=hi)
            values[r] = mech.mse(m) + 2 * mech.bias(m) * (m - mu) + (m - mu) ** 2
    return values


def _end_to_end_setup(data, n, epsilon, method, reps, lower, upper, options):
    n = check.count("n", n, 1)
    epsilon = check.positive("epsilon", epsilon)
    reps = check.count("reps", reps, 2)
    if method not in _METHODS:
        raise ValueError(
            f"method must be 'quantile', 'approx_bounds' or 'coinpress', got {method!r}"
        )
    lo, hi = _finite_bounds(lower, upper)
    quantiles = options.get("quantiles", (0.05, 0.95))
    if method == "quantile":
        if len(quantiles) != 2 or all(q is None for q in quantiles):
            raise ValueError(
                f"quantiles must be two levels (one may be None), got {quantiles!r}"
            )
        quantiles = tuple(
            None if q is None else _probability("quantiles", q) for q in quantiles
        )
    sigma = options.get("sigma")
    if method == "coinpress":
        sigma = float(data.std()) if sigma is None else sigma
        sigma = check.positive("sigma", sigma)
    full = {
        "quantiles": quantiles,
        "base": options.get("base", 2.0),
        "bins": options.get("bins", 64),
        "sigma": sigma,
        "steps": options.get("steps", 3),
    }
    return n, epsilon, reps, lo, hi, full


def _seed(rng):
    """An int seed from ``rng`` (SPEC 7): the seed itself, or one drawn from the generator."""
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return int(rng)
    return int(check.generator(rng).integers(2**63))


def private_mean_mse(
    data,
    n,
    epsilon,
    *,
    method="quantile",
    bounds_share=0.25,
    lower,
    upper,
    oracle_lower=None,
    family=Laplace,
    reps=1000,
    rng=None,
    **options,
):
    """The MSE of a private mean whose bounds are chosen privately: ε₁ for the bounds, ε₂ for the mean.

    For each of ``reps`` simulated data sets of ``n`` records from ``data``: bounds ``(L, U)`` with
    ``ε₁ = bounds_share · ε`` by ``method``; the records clipped to ``[L, U]`` and averaged (``Ȳ``);
    the mean released by ``family`` at ``b = ((U - L)/n)/ε₂`` (:func:`dpbook.mean_sensitivity`,
    :func:`dpbook.laplace_scale`), ``ε₂ = ε - ε₁``.  The whole is ε-DP by basic composition (the
    bounds are a private release, and the mean's sensitivity is computed from them).

    The error about ``μ = E X`` given the data set and the bounds is exact: ``(Ȳ - μ)² + 2b²`` for
    Laplace noise, ``mse_M(Ȳ) + 2 bias_M(Ȳ)(Ȳ - μ) + (Ȳ - μ)²`` with BIT's exact bias and MSE; the
    average over the data sets and the bounds is **simulated**, with its standard error.  The oracle
    is the best fixed clip knowing the law, with the whole ε on the mean (:func:`dpbook.optimal_clip`,
    exact).

    Methods (public ``lower``, ``upper``: the range searched, and the fallback when a method
    returns no bounds):

    * ``"quantile"``: :func:`private_quantile` at the levels ``quantiles=(p_lo, p_hi)`` (default
      ``(0.05, 0.95)``; ``None`` keeps the public bound on that side), ε₁ split equally;
    * ``"approx_bounds"``: :func:`approx_bounds` (options ``base``, ``bins``), replace-one scale;
    * ``"coinpress"``: the final interval of :func:`coinpress_mean` started at ``[lower, upper]``
      (options ``sigma``, default the law's standard deviation, and ``steps``).

    Parameters
    ----------
    data : frozen scipy.stats distribution
        The law of one record (its mean must exist).
    n : int
    epsilon : float
        The total ``ε``.
    method : {"quantile", "approx_bounds", "coinpress"}, keyword-only
    bounds_share : float, keyword-only
        ``ε₁/ε`` in ``(0, 1)``.
    lower, upper : float, keyword-only
        The public range (finite).
    oracle_lower : float or None, keyword-only
        The oracle's fixed lower clip (e.g. 0 for nonnegative data) or ``None`` for its symmetric
        window (see :func:`dpbook.optimal_clip`).
    family : dpbook.Laplace or dpbook.BIT, keyword-only
    reps : int, keyword-only
    rng : int, numpy.random.Generator or None
        A seed: the same seed gives the same data sets and bound draws (common random numbers).

    Returns
    -------
    PrivateMeanMSE

    Examples
    --------
    >>> from scipy import stats
    >>> r = private_mean_mse(stats.expon(), 200, 1.0, lower=0.0, upper=100.0,
    ...                      quantiles=(None, 0.95), oracle_lower=0.0, reps=200, rng=0)
    >>> r.mse > r.oracle_mse, r.se < r.mse
    (True, True)
    """

    setup = _end_to_end_setup(data, n, epsilon, method, reps, lower, upper, options)
    share = _share(bounds_share)
    name = _mean_family(family)
    seed = _seed(rng)
    oracle = optimal_clip(data, n, epsilon, lower=oracle_lower, family=family)
    return _private_mean_mse(data, method, share, name, seed, oracle, *setup)


def _share(bounds_share):
    share = check.finite("bounds_share", bounds_share)
    if not 0 < share < 1:
        raise ValueError(f"bounds_share must lie in (0, 1), got {bounds_share!r}")
    return share


def _private_mean_mse(
    data, method, share, name, seed, oracle, n, epsilon, reps, lo, hi, full
):
    """:func:`private_mean_mse` on validated arguments (``n, epsilon, reps, lo, hi, full`` as
    :func:`_end_to_end_setup` returns them), so that :func:`best_budget_split` validates once."""
    values = _end_to_end_values(
        data, n, epsilon, share, method, reps, seed, lo, hi, name, full
    )
    return PrivateMeanMSE(
        method=method,
        epsilon=epsilon,
        bounds_share=share,
        mse=float(values.mean()),
        se=float(values.std(ddof=1) / math.sqrt(reps)),
        oracle_mse=float(oracle.mse.mse),
        oracle_lower=float(oracle.lower),
        oracle_upper=float(oracle.upper),
        reps=reps,
        values=values,
    )


@dataclass(frozen=True)
class BudgetSplit:
    """The simulated MSE of :func:`private_mean_mse` over a grid of splits ``ε₁/ε``.

    Attributes
    ----------
    shares, mse, se : ndarray
        The grid, the MSE at each share and its standard error.
    best_share : float
        The share of least simulated MSE.
    se_difference : ndarray
        The standard error of ``mse[k] - mse[best]`` (paired: common random numbers).
    oracle_mse : float
    results : tuple of PrivateMeanMSE
    """

    shares: np.ndarray
    mse: np.ndarray
    se: np.ndarray
    best_share: float
    se_difference: np.ndarray
    oracle_mse: float
    results: tuple


def best_budget_split(
    data,
    n,
    epsilon,
    *,
    shares=None,
    method="quantile",
    lower,
    upper,
    oracle_lower=None,
    family=Laplace,
    reps=1000,
    rng=None,
    **options,
):
    """The split ``ε₁/ε`` of least simulated MSE over a grid, with common random numbers.

    Every share is simulated by :func:`private_mean_mse` with the same seed, so the same data sets
    and the same random draws (Gumbel, uniform, Laplace) serve every share: the differences between
    shares have much smaller standard errors than the MSEs themselves (``se_difference``).

    Parameters
    ----------
    data, n, epsilon
        As in :func:`private_mean_mse`.
    shares : array_like, optional
        The grid of ``ε₁/ε`` in ``(0, 1)`` (default ``0.05, 0.1, ..., 0.6``).
    rng : int, numpy.random.Generator or None
    method, lower, upper, oracle_lower, family, reps, **options
        As in :func:`private_mean_mse` (the oracle is computed once).

    Returns
    -------
    BudgetSplit

    Examples
    --------
    >>> from scipy import stats
    >>> split = best_budget_split(stats.expon(), 200, 1.0, shares=[0.1, 0.3, 0.5],
    ...     lower=0.0, upper=100.0, quantiles=(None, 0.95), oracle_lower=0.0, reps=100, rng=0)
    >>> float(split.best_share) in (0.1, 0.3, 0.5)
    True
    """
    grid = (
        np.linspace(0.05, 0.6, 12)
        if shares is None
        else check.finite_array("shares", shares)
    )
    if grid.ndim != 1 or grid.size == 0 or ((grid <= 0) | (grid >= 1)).any():
        raise ValueError(f"shares must be numbers in (0, 1), got {shares!r}")

    seed = _seed(rng)
    setup = _end_to_end_setup(data, n, epsilon, method, reps, lower, upper, options)
    name = _mean_family(family)
    oracle = optimal_clip(data, n, epsilon, lower=oracle_lower, family=family)
    results = tuple(
        _private_mean_mse(data, method, float(s), name, seed, oracle, *setup)
        for s in grid
    )
    mse = np.array([r.mse for r in results])
    best = int(np.argmin(mse))
    diffs = np.array([r.values - results[best].values for r in results])
    reps = results[0].reps
    return BudgetSplit(
        shares=grid,
        mse=mse,
        se=np.array([r.se for r in results]),
        best_share=float(grid[best]),
        se_difference=diffs.std(axis=1, ddof=1) / math.sqrt(reps),
        oracle_mse=results[0].oracle_mse,
        results=results,
    )
