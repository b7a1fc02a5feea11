"""The machinery of Liu's two simulation studies (Liu 2019, §4).

Study 1 releases a 2×2 covariance matrix element-wise (:func:`sanitize_covariance`, on data from
:func:`clipped_bivariate_normal`): the variances on ``[0, max_sample_variance]``, the covariance
inside bounds built from the already-sanitized variances, each with the mechanism family passed in
(``dpbook.BIT`` or ``dpbook.Truncated``).
A larger released matrix may need repair: :func:`nearest_psd` and :func:`nearest_correlation`
(Higham 2002).

Study 2 releases a vector of proportions that must sum to 1, in three ways: re-scaling
(:func:`release_rescaled`), all-but-one (:func:`release_all_but_one`) and the universal-histogram
tree of Hay et al. (2010) with Liu's handling of negative nodes (:func:`tree_levels`,
:func:`consistent_tree`, :func:`nonnegative_tree`, :func:`release_tree`; the noise of the
consistent tree is :func:`consistent_tree_covariance`).  :func:`simulate_proportions` runs one
setting of the study.  Its inferences use :func:`wald_interval` (whose exact coverage is
:func:`wald_coverage`), :func:`coverage`, :func:`bias_rmse` and the multiple-release combining
rule :func:`combine_releases`.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpbook import (
    covariance_sensitivity,
    histogram_sensitivity,
    sample_covariance,
    sample_variance,
    variance_sensitivity,
)
from dpbook._kernels import validation as check
from dpbook.consistency import consistent_tree, nonnegative_tree, tree_levels
from dpbook.mechanism import interval_family

__all__ = [
    "max_sample_variance",
    "sanitize_covariance",
    "clipped_bivariate_normal",
    "release_rescaled",
    "release_all_but_one",
    "release_tree",
    "simulate_proportions",
    "wald_interval",
    "wald_coverage",
    "coverage",
    "bias_rmse",
    "combine_releases",
]


# --- Study 1: element-wise sanitization of a covariance matrix ---------------------------------


def max_sample_variance(lower, upper, n):
    """The largest sample variance (divisor ``n - 1``) of ``n`` values in ``[lower, upper]``.

    Shiffler & Harsha (1980), the upper bound of the variance in Liu's Table 1: half the values
    at each end, ``(upper - lower)^2 n / (4 (n - 1))`` for even ``n`` and
    ``(upper - lower)^2 (n + 1) / (4 n)`` for odd ``n``.

    >>> max_sample_variance(0.0, 2.0, 4)
    1.3333333333333333
    """
    lower, upper = check.bounds(lower, upper)
    if not (np.isfinite(lower) and np.isfinite(upper)):
        raise ValueError(
            f"lower and upper must be finite, got lower={lower!r}, upper={upper!r}"
        )
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    width2 = (upper - lower) ** 2
    return width2 * n / (4 * (n - 1)) if n % 2 == 0 else width2 * (n + 1) / (4 * n)


def sanitize_covariance(
    x, lower, upper, epsilon, mechanism, reps, *, rng=None, conditional_mean=True
):
    """``reps`` independent element-wise releases of the 2×2 sample covariance matrix of ``x``.

    Liu (2019), §4.1: the budget ``epsilon`` is split equally over the two variances and the
    covariance (sequential composition).  Each variance is released on ``[0, max_sample_variance]``
    with sensitivity ``(upper_j - lower_j)^2 / n``; the covariance, with sensitivity
    ``(upper_1 - lower_1)(upper_2 - lower_2) / n`` (Liu's supplement, Appendices E and F), on
    ``[-s̃_1 s̃_2, s̃_1 s̃_2]`` built from the released variances, which need not contain the
    true covariance.  When a released variance is exactly 0 (possible with BIT) that interval is
    the point 0: the covariance is then released as 0 and the correlation is undefined (NaN).

    Parameters
    ----------
    x : (n, 2) array_like
        The data; every value of column ``j`` must lie in ``[lower[j], upper[j]]``.
    lower, upper : pairs of float
        The public data bounds of the two columns.
    epsilon : float
        Total privacy budget.
    mechanism : callable
        The mechanism family, called as ``mechanism(scale, lower=..., upper=...)``: ``dpbook.BIT``
        (Liu Def. 2(b)) or ``dpbook.Truncated`` (Liu Def. 2(a)), or any such callable.
    reps : int
        Number of independent releases.
    rng : numpy.random.Generator, optional
    conditional_mean : bool
        Whether to compute ``"cov_mean"`` (else it is all NaN; the release is faster).

    Returns
    -------
    dict
        ``"original"``: the sample statistics ``(var1, var2, cov, corr)``;
        ``"var1"``, ``"var2"``, ``"cov"``, ``"corr"``: arrays of shape ``(reps,)``;
        ``"scale"``: the three Laplace scales ``(b_var1, b_var2, b_cov)``;
        ``"cov_mean"``: ``E[cov release | released variances]`` per repetition, shape ``(reps,)``.
    """

    x = check.finite_array("x", x)
    if x.ndim != 2 or x.shape[1] != 2 or x.shape[0] < 2:
        raise ValueError(f"x must have shape (n, 2) with n >= 2, got {x.shape}")
    lo = [
        check.finite("lower", v)
        for v in np.broadcast_to(np.asarray(lower, dtype=float), (2,))
    ]
    hi = [
        check.finite("upper", v)
        for v in np.broadcast_to(np.asarray(upper, dtype=float), (2,))
    ]
    for j in range(2):
        check.bounds(lo[j], hi[j])
        if (x[:, j] < lo[j]).any() or (x[:, j] > hi[j]).any():
            raise ValueError(
                f"x[:, {j}] must lie in [lower, upper] = [{lo[j]}, {hi[j]}]"
            )
    epsilon = check.positive("epsilon", epsilon)
    make = interval_family("mechanism", mechanism)
    if not isinstance(reps, (int, np.integer)) or reps < 1:
        raise ValueError(f"reps must be a positive int, got {reps!r}")
    rng = check.generator(rng)

    n = x.shape[0]
    v1_0, v2_0 = (float(sample_variance(x[:, j])) for j in range(2))
    cov_0 = float(sample_covariance(x))
    original = (
        v1_0,
        v2_0,
        cov_0,
        cov_0 / np.sqrt(v1_0 * v2_0) if v1_0 * v2_0 > 0 else np.nan,
    )
    eps_each = epsilon / 3
    b1 = variance_sensitivity(lo[0], hi[0], n) / eps_each
    b2 = variance_sensitivity(lo[1], hi[1], n) / eps_each
    bc = covariance_sensitivity((lo[0], hi[0]), (lo[1], hi[1]), n) / eps_each
    v1 = make(b1, 0.0, max_sample_variance(lo[0], hi[0], n)).sample(
        v1_0, size=reps, rng=rng
    )
    v2 = make(b2, 0.0, max_sample_variance(lo[1], hi[1], n)).sample(
        v2_0, size=reps, rng=rng
    )
    c = np.sqrt(np.asarray(v1) * np.asarray(v2))
    cov = np.zeros(reps)
    cov_mean = np.zeros(reps) if conditional_mean else np.full(reps, np.nan)
    for i in np.flatnonzero(c > 0):
        m = make(bc, -c[i], c[i])
        cov[i] = m.sample(cov_0, rng=rng)
        if conditional_mean:
            cov_mean[i] = m.mean(cov_0)
    corr = np.divide(cov, c, out=np.full(reps, np.nan), where=c > 0)
    return {
        "original": original,
        "var1": np.asarray(v1),
        "var2": np.asarray(v2),
        "cov": cov,
        "corr": corr,
        "scale": (b1, b2, bc),
        "cov_mean": cov_mean,
    }


def clipped_bivariate_normal(n, rho, *, sd=(1.0, 2.0), bound=4.0, rng=None):
    """``n`` draws of a centred bivariate normal, clipped to ``±bound`` standard deviations.

    The data of the book's version of Liu's (2019) §4.1: the bounds ``[-bound sd_j, bound sd_j]``
    are public and clipping makes every record respect them.

    Returns
    -------
    x : (n, 2) ndarray
    lower, upper : pairs of float
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 2:
        raise ValueError(f"n must be an int >= 2, got {n!r}")
    rho = check.finite("rho", rho)
    if not -1 <= rho <= 1:
        raise ValueError(f"rho must be in [-1, 1], got {rho!r}")
    s1, s2 = (check.positive("sd", v) for v in sd)
    bound = check.positive("bound", bound)
    rng = check.generator(rng)
    z1 = rng.standard_normal(n)
    z2 = rho * z1 + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    lower, upper = (-bound * s1, -bound * s2), (bound * s1, bound * s2)
    x = np.clip(np.column_stack([s1 * z1, s2 * z2]), lower, upper)
    return x, lower, upper


# --- Study 2: three ways to release proportions that sum to 1 ----------------------------------


def _proportions(p):
    p = check.finite_array("p", p)
    if p.ndim == 0 or p.shape[-1] < 2:
        raise ValueError(
            f"p must hold at least two proportions on its last axis, got shape {p.shape}"
        )
    if (
        (p < 0).any()
        or (p > 1).any()
        or not np.allclose(p.sum(axis=-1), 1.0, atol=1e-9)
    ):
        raise ValueError(f"p must be proportions in [0, 1] summing to 1, got {p!r}")
    return p


def _release_args(mechanism, scale, rng):
    """The validated scale and generator, and the mechanism on ``[0, 1]`` at that scale."""
    make = interval_family("mechanism", mechanism)
    scale = check.positive("scale", scale)
    return make(scale, 0.0, 1.0), check.generator(rng)


def release_rescaled(p, scale, mechanism, *, rng=None):
    """Sanitize every proportion on ``[0, 1]``, then divide by the sum (Liu 2019, §4.2, approach 1).

    If every sanitized proportion is 0 (possible with BIT) the release is uniform, ``1/K`` each.

    Parameters
    ----------
    p : array_like, shape (..., K)
        Sample proportions (each row sums to 1).
    scale : float
        Laplace scale ``b = Δ/ε`` of each proportion.
    mechanism : callable
        The mechanism family, called as ``mechanism(scale, lower=..., upper=...)``: ``dpbook.BIT``
        (Liu Def. 2(b)) or ``dpbook.Truncated`` (Liu Def. 2(a)), or any such callable.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ndarray, shape (..., K)
    """
    p = _proportions(p)
    mech, rng = _release_args(mechanism, scale, rng)
    y = np.asarray(mech.sample(p, rng=rng), dtype=float)
    total = y.sum(axis=-1, keepdims=True)
    uniform = np.full_like(y, 1.0 / p.shape[-1])
    return np.where(total > 0, y / np.where(total > 0, total, 1.0), uniform)


def release_all_but_one(p, scale, mechanism, *, rng=None):
    """Sanitize all proportions but the last on ``[0, 1]``; the last is one minus their sum.

    Liu (2019), §4.2, approach 2.  The last proportion is not bounded: it falls below 0 when the
    others add up to more than 1.

    Parameters and returns as :func:`release_rescaled`.
    """
    p = _proportions(p)
    mech, rng = _release_args(mechanism, scale, rng)
    head = np.asarray(mech.sample(p[..., :-1], rng=rng), dtype=float)
    head = head.reshape(p[..., :-1].shape)
    return np.concatenate([head, 1.0 - head.sum(axis=-1, keepdims=True)], axis=-1)


def release_tree(p, scale, mechanism, *, branching=2, rng=None):
    """The universal-histogram release of proportions (Liu 2019, §4.2, approach 3, steps 1–5).

    Every node below the root of the ``branching``-ary tree over ``p`` is sanitized on ``[0, 1]``
    with the given scale (for a two-level tree below the root the sensitivity doubles, Liu's
    step 2, and ``scale`` must already include that); :func:`consistent_tree` with the root
    fixed at 1 makes the tree consistent (Hay et al. 2010); :func:`nonnegative_tree` repairs the
    negative nodes (Liu's footnote 4).

    Parameters
    ----------
    p : array_like, shape (..., K), K a power of ``branching``
    scale : float
    mechanism : callable
        The mechanism family, called as ``mechanism(scale, lower=..., upper=...)``: ``dpbook.BIT``
        (Liu Def. 2(b)) or ``dpbook.Truncated`` (Liu Def. 2(a)), or any such callable.
    branching : int
    rng : numpy.random.Generator, optional

    Returns
    -------
    list of ndarray
        The released tree, root first; its last level is the released proportions.
    """
    p = _proportions(p)
    mech, rng = _release_args(mechanism, scale, rng)
    k = branching  # tree_levels checks it
    true = tree_levels(p, branching=k)
    noisy = [true[0]] + [
        np.asarray(mech.sample(lv, rng=rng), dtype=float).reshape(lv.shape)
        for lv in true[1:]
    ]
    return nonnegative_tree(consistent_tree(noisy, branching=k, root=1.0), branching=k)


def simulate_proportions(
    pi, n, epsilon, mechanism, method, reps, *, releases=1, rng=None
):
    """Liu's (2019) §4.2 experiment for one setting: ``reps`` multinomial samples, each released.

    Each repetition draws counts from Multinomial(``n``, ``pi``), computes the sample proportions
    and releases them with ``method`` (``"rescale"``, ``"all_but_one"`` or ``"tree"``), each
    proportion sanitized on ``[0, 1]`` with the family ``mechanism`` (as in :func:`release_rescaled`) at scale
    ``Δ / (epsilon / releases)`` with ``Δ = histogram_sensitivity(n) = 2/n`` (doubled for the
    tree's two sanitized levels).  ``releases = m > 1`` gives Liu's multiple synthesis: ``m``
    independent releases of the same sample, each with ``epsilon / m`` (sequential composition).

    Returns
    -------
    dict
        ``"phat"``: (reps, K) sample proportions; ``"release"``: (reps, K) or, for ``m > 1``,
        (m, reps, K) released proportions; ``"scale"``: the Laplace scale per proportion;
        for ``"tree"`` also ``"middle"``: the released middle level of the tree.
    """

    pi = _proportions(pi)
    if pi.ndim != 1:
        raise ValueError(f"pi must be one vector of proportions, got shape {pi.shape}")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    epsilon = check.positive("epsilon", epsilon)
    interval_family("mechanism", mechanism)
    if method not in ("rescale", "all_but_one", "tree"):
        raise ValueError(
            f"method must be 'rescale', 'all_but_one' or 'tree', got {method!r}"
        )
    if not isinstance(reps, (int, np.integer)) or reps < 1:
        raise ValueError(f"reps must be a positive int, got {reps!r}")
    if not isinstance(releases, (int, np.integer)) or releases < 1:
        raise ValueError(f"releases must be a positive int, got {releases!r}")
    rng = check.generator(rng)
    phat = rng.multinomial(int(n), pi, size=int(reps)) / n
    scale = histogram_sensitivity(int(n)) / (epsilon / releases)
    shape = (releases, reps) if releases > 1 else (reps,)
    p = np.broadcast_to(phat, shape + phat.shape[-1:])
    out = {"phat": phat, "scale": scale}
    if method == "rescale":
        out["release"] = release_rescaled(p, scale, mechanism, rng=rng)
    elif method == "all_but_one":
        out["release"] = release_all_but_one(p, scale, mechanism, rng=rng)
    else:
        tree = release_tree(p, 2 * scale, mechanism, rng=rng)
        out["release"], out["middle"], out["scale"] = tree[-1], tree[1], 2 * scale
    return out


# --- inference summaries -----------------------------------------------------------------------


def wald_interval(p, n, *, level=0.95):
    """The Wald interval ``p ± z sqrt(p (1 - p) / n)`` for a proportion, treating ``p`` as data.

    The interval Liu (2019, §4.2) uses for coverage: the sanitized proportion plugged into the
    usual large-sample interval, ignoring the sanitization noise.  ``p`` outside ``[0, 1]`` is
    given the variance at the nearest bound.

    Returns
    -------
    (lower, upper) : pair of ndarray
    """
    p = check.finite_array("p", p)
    n = check.positive("n", n)
    level = check.positive("level", level)
    if level >= 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    z = stats.norm.ppf(0.5 + level / 2)
    q = np.clip(p, 0.0, 1.0)
    half = z * np.sqrt(q * (1 - q) / n)
    return p - half, p + half


def wald_coverage(p, n, *, mechanism=None, level=0.95):
    """Exact coverage of :func:`wald_interval` computed from a release of a sample proportion.

    The count is Binomial(``n``, ``p``) and the interval is computed at ``x = M(count/n)``.  For
    ``x`` in ``[0, 1]`` it contains ``p`` iff ``(x - p)^2 <= (z^2/n) x (1 - x)``, i.e. iff ``x`` lies
    between the roots ``w_-, w_+`` of that quadratic (the Wilson interval around ``p``); outside
    ``[0, 1]`` it has zero width.  So the coverage is
    ``Σ_k P(count = k) P(w_- <= M(k/n) <= w_+)``, with ``M`` the identity for the original data.
    Used in the book to check Liu's (2019, §4.2) coverage results for one sanitized proportion.

    Parameters
    ----------
    p : float
        The true proportion, ``0 < p < 1``.
    n : int
    mechanism : dpbook.Mechanism, optional
        A mechanism with a continuous law inside ``(0, 1)`` (Laplace, BIT or truncated on ``[0, 1]``).
    level : float

    Returns
    -------
    float
    """
    p = check.finite("p", p)
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive int, got {n!r}")
    level = check.positive("level", level)
    if level >= 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    c = stats.norm.ppf(0.5 + level / 2) ** 2 / n
    centre, half = (
        (2 * p + c) / (2 * (1 + c)),
        np.sqrt(c * c + 4 * c * p * (1 - p)) / (2 * (1 + c)),
    )
    lo, hi = centre - half, centre + half
    k = np.arange(n + 1)
    pmf = stats.binom.pmf(k, n, p)
    if mechanism is None:
        inside = ((k / n - p) ** 2 <= c * (k / n) * (1 - k / n)).astype(float)
    else:
        inside = np.asarray(mechanism.cdf(hi, k / n)) - np.asarray(
            mechanism.cdf(lo, k / n)
        )
    return float(np.sum(pmf * inside))


def coverage(lower, upper, truth, *, axis=0):
    """The fraction of intervals ``[lower, upper]`` that contain ``truth``, and its binomial SE.

    Returns
    -------
    (rate, se) : pair of float or ndarray
        ``se = sqrt(rate (1 - rate) / reps)`` along ``axis``.
    """
    lower, upper = check.real_array("lower", lower), check.real_array("upper", upper)
    truth = check.real_array("truth", truth)
    hit = (lower <= truth) & (truth <= upper)
    reps = hit.shape[axis]
    rate = hit.mean(axis=axis)
    return rate, np.sqrt(rate * (1 - rate) / reps)


def bias_rmse(estimates, truth, *, axis=0):
    """Monte Carlo bias ``mean(est) - truth`` and root mean squared error along ``axis``.

    Returns
    -------
    (bias, rmse) : pair of float or ndarray
    """
    est = check.real_array("estimates", estimates)
    err = est - check.real_array("truth", truth)
    return err.mean(axis=axis), np.sqrt((err**2).mean(axis=axis))


def combine_releases(estimates, variances, *, axis=0):
    """Combine ``m`` independent sanitized releases of one estimate into one inference.

    The point estimate is the average ``q̄`` of the ``m`` releases, as in Liu (2017).  The
    variance is ``T = ū + b/m``: ``ū`` is the average within-release variance estimate (the
    sampling variance of the original estimate) and ``b`` the between-release sample variance
    (the sanitization noise, which averaging divides by ``m``).  This is the rule derived in the
    book for releases that add independent noise to one original estimate; the variance rule of
    Liu (2017) could not be checked against the paper's text.  Degrees of freedom for a
    ``t`` interval, by Satterthwaite's approximation: ``ν = (m - 1) (1 + ū / (b/m))^2``.

    Parameters
    ----------
    estimates, variances : array_like
        ``m >= 2`` releases and their within-release variance estimates along ``axis``.

    Returns
    -------
    (qbar, T, df) : ndarrays (floats for 1-d input)
    """
    q = check.finite_array("estimates", estimates)
    u = check.finite_array("variances", variances)
    if q.shape != u.shape:
        raise ValueError(
            f"variances must have the shape of estimates {q.shape}, got {u.shape}"
        )
    if q.ndim == 0 or q.shape[axis] < 2:
        raise ValueError(f"estimates must hold m >= 2 releases along axis {axis}")
    if (u < 0).any():
        raise ValueError("variances must be >= 0")
    m = q.shape[axis]
    qbar = q.mean(axis=axis)
    ubar = u.mean(axis=axis)
    b = q.var(axis=axis, ddof=1)
    T = ubar + b / m
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(
            b > 0,
            (m - 1)
            * (1 + np.divide(ubar * m, b, out=np.zeros_like(b), where=b > 0)) ** 2,
            np.inf,
        )
    return qbar, T, df
