import numpy as np
import pytest
from hypothesis import settings
from scipy import stats

import dpbook
from dpbook import (
    consistent_tree,
    nonnegative_tree,
    tree_levels,
)
from dpbook_book.studies import (
    bias_rmse,
    combine_releases,
    coverage,
    max_sample_variance,
    release_all_but_one,
    release_rescaled,
    release_tree,
    sanitize_covariance,
    simulate_proportions,
    wald_interval,
)

SETTINGS = settings(max_examples=60, deadline=None)


def random_symmetric(seed, p):
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(p, p)) * rng.uniform(0.1, 3)
    return (M + M.T) / 2


def random_correlation(rng, p):
    G = rng.normal(size=(p, p + rng.integers(0, 3)))
    C = G @ G.T
    d = np.sqrt(np.diag(C))
    return C / np.outer(d, d)


# --- bounds ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(2, 16))
def test_max_sample_variance_by_enumeration(n):
    # the variance is convex in the data, so its maximum is at a vertex of the box
    lo, hi = -1.5, 2.0
    best = max(np.var([hi] * k + [lo] * (n - k), ddof=1) for k in range(n + 1))
    assert np.isclose(max_sample_variance(lo, hi, n), best, rtol=1e-13)
    with pytest.raises(ValueError, match="n"):
        max_sample_variance(0, 1, 1)
    with pytest.raises(ValueError, match="lower|upper"):
        max_sample_variance(1, 0, 5)


# --- releases ------------------------------------------------------------------------------------


P = np.array([0.05, 0.15, 0.3, 0.5])


@pytest.mark.parametrize("kind", [dpbook.BIT, dpbook.Truncated])
def test_releases_sum_to_one(kind):
    rng = np.random.default_rng(0)
    p = np.broadcast_to(P, (2000, 4))
    r = release_rescaled(p, 0.2, kind, rng=rng)
    assert r.shape == p.shape and np.allclose(r.sum(-1), 1) and (r >= 0).all()
    a = release_all_but_one(p, 0.2, kind, rng=rng)
    assert a.shape == p.shape and np.allclose(a.sum(-1), 1) and (a[:, :3] >= 0).all()
    assert (a[:, 3] < 0).any()  # the derived proportion is not bounded
    t = release_tree(p, 0.2, kind, rng=rng)
    assert np.allclose(t[0], 1) and np.allclose(t[2].sum(-1), 1) and (t[2] >= 0).all()
    assert np.allclose(t[1], t[2].reshape(-1, 2, 2).sum(-1))


@pytest.mark.parametrize("kind", [dpbook.BIT, dpbook.Truncated])
def test_all_but_one_means(kind):
    # the three sanitized proportions have the mechanism's mean; the last one is 1 minus their sum
    rng = np.random.default_rng(1)
    b, reps = 0.1, 40_000
    a = release_all_but_one(np.broadcast_to(P, (reps, 4)), b, kind, rng=rng)
    mech = kind(b, lower=0.0, upper=1.0)
    exact = np.asarray(mech.mean(P[:3]))
    se = a[:, :3].std(0) / np.sqrt(reps)
    assert (np.abs(a[:, :3].mean(0) - exact) < 5 * se).all()
    se4 = a[:, 3].std() / np.sqrt(reps)
    assert abs(a[:, 3].mean() - (1 - exact.sum())) < 5 * se4


@pytest.mark.parametrize("kind", [dpbook.BIT, dpbook.Truncated])
def test_tree_release_equals_pipeline(kind):
    # same seed, same draws: release_tree is noise -> consistent_tree(root=1) -> nonnegative_tree
    p = np.broadcast_to(P, (50, 4))
    out = release_tree(p, 0.3, kind, rng=np.random.default_rng(5))
    rng = np.random.default_rng(5)
    mech = kind(0.3, lower=0.0, upper=1.0)
    true = tree_levels(p)
    noisy = [true[0]] + [np.asarray(mech.sample(lv, rng=rng)) for lv in true[1:]]
    expected = nonnegative_tree(consistent_tree(noisy, root=1.0))
    for a, b in zip(out, expected):
        assert np.allclose(a, b)


def test_release_bad_input():
    with pytest.raises(ValueError, match="p"):
        release_rescaled([0.5, 0.6], 0.1, dpbook.BIT)
    with pytest.raises(ValueError, match="scale"):
        release_all_but_one(P, 0.0, dpbook.BIT)
    # a mechanism is passed as a family, never named by a string
    with pytest.raises(ValueError, match="mechanism.*'bit'"):
        release_tree(P, 0.1, "bit")
    with pytest.raises(ValueError, match="mechanism.*must return a dpbook.Mechanism"):
        release_rescaled(P, 0.1, lambda scale, **bounds: scale)
    with pytest.raises(ValueError, match="mechanism"):
        simulate_proportions(P, 10, 1.0, "truncated", "rescale", 2)


# --- covariance study --------------------------------------------------------------------------


def bivariate(n, rho, rng, sd=(1.0, 2.0), bound=4.0):
    z = rng.multivariate_normal(
        [0, 0],
        [[sd[0] ** 2, rho * sd[0] * sd[1]], [rho * sd[0] * sd[1], sd[1] ** 2]],
        size=n,
    )
    return np.clip(z, [-bound * sd[0], -bound * sd[1]], [bound * sd[0], bound * sd[1]])


@pytest.mark.parametrize("kind", [dpbook.BIT, dpbook.Truncated])
def test_sanitize_covariance_moments(kind):
    rng = np.random.default_rng(11)
    x = bivariate(200, 0.5, rng)
    lo, hi = (-4.0, -8.0), (4.0, 8.0)
    out = sanitize_covariance(x, lo, hi, 1.0, kind, 4000, rng=rng)
    v1, v2, cov, corr = out["original"]
    S = np.cov(x, rowvar=False)
    assert np.isclose(v1, S[0, 0]) and np.isclose(cov, S[0, 1])
    b1, b2, bc = out["scale"]
    assert np.isclose(b1, 3 * 8.0**2 / 200) and np.isclose(bc, 3 * 8.0 * 16.0 / 200)
    # each released variance has the mechanism's closed-form mean
    m1 = kind(b1, lower=0.0, upper=max_sample_variance(-4, 4, 200))
    se = out["var1"].std() / np.sqrt(4000)
    assert abs(out["var1"].mean() - m1.mean(v1)) < 5 * se
    # the covariance, given the released variances, has the conditional mean (Rao-Blackwell check)
    se = (out["cov"] - out["cov_mean"]).std() / np.sqrt(4000)
    assert abs((out["cov"] - out["cov_mean"]).mean()) < 5 * se
    c = np.sqrt(out["var1"] * out["var2"])
    assert (np.abs(out["cov"]) <= c + 1e-12).all()
    assert (np.abs(out["corr"][c > 0]) <= 1 + 1e-12).all() and np.isnan(
        out["corr"][c == 0]
    ).all()


def test_sanitize_covariance_bad_input():
    x = bivariate(20, 0.0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="x"):
        sanitize_covariance(x * 10, (-4, -8), (4, 8), 1.0, dpbook.BIT, 3)
    with pytest.raises(ValueError, match="epsilon"):
        sanitize_covariance(x, (-4, -8), (4, 8), 0.0, dpbook.BIT, 3)
    with pytest.raises(ValueError, match="mechanism"):
        sanitize_covariance(x, (-4, -8), (4, 8), 1.0, "bit", 3)
    with pytest.raises(ValueError, match="reps"):
        sanitize_covariance(x, (-4, -8), (4, 8), 1.0, dpbook.BIT, 0)


# --- inference summaries -----------------------------------------------------------------------


def test_wald_coverage_bias_rmse():
    lo, hi = wald_interval(np.array([0.5, 0.0, 1.2]), 100)
    assert np.allclose(hi[0] - lo[0], 2 * stats.norm.ppf(0.975) * 0.05)
    assert lo[1] == hi[1] == 0.0 and lo[2] == hi[2] == 1.2
    rate, se = coverage(np.array([0, 1, 2, 3.0]), np.array([1, 2, 3, 4.0]), 1.5)
    assert rate == 0.25 and np.isclose(se, np.sqrt(0.25 * 0.75 / 4))
    b, r = bias_rmse(np.array([1.0, 3.0]), 1.0)
    assert b == 1.0 and np.isclose(r, np.sqrt(2))
    with pytest.raises(ValueError, match="level"):
        wald_interval(0.5, 10, level=1.0)
    with pytest.raises(ValueError, match="n"):
        wald_interval(0.5, 0)


def test_wald_coverage_of_binomial_proportion():
    rng = np.random.default_rng(2)
    n, p, reps = 400, 0.3, 20_000
    phat = rng.binomial(n, p, size=reps) / n
    rate, se = coverage(*wald_interval(phat, n), p)
    exact = sum(
        stats.binom.pmf(k, n, p)
        for k in range(n + 1)
        if abs(k / n - p) <= stats.norm.ppf(0.975) * np.sqrt(k / n * (1 - k / n) / n)
    )
    assert abs(rate - exact) < 5 * np.sqrt(exact * (1 - exact) / reps)


def test_combine_releases_unbiased_and_covers():
    # original estimate ~ N(theta, s^2) with a variance estimate; m releases add N(0, tau^2) noise
    rng = np.random.default_rng(4)
    reps, m, s, tau, theta = 40_000, 5, 0.3, 0.5, 1.0
    orig = theta + s * rng.normal(size=reps)
    within = s**2 * rng.chisquare(200, size=(m, reps)) / 200
    rel = orig + tau * rng.normal(size=(m, reps))
    qbar, T, df = combine_releases(rel, within, axis=0)
    target = s**2 + tau**2 / m
    assert abs(T.mean() - target) < 5 * T.std() / np.sqrt(reps)
    assert abs(((qbar - theta) ** 2).mean() - target) < 5 * (
        (qbar - theta) ** 2
    ).std() / np.sqrt(reps)
    half = stats.t.ppf(0.975, df) * np.sqrt(T)
    rate, se = coverage(qbar - half, qbar + half, theta)
    assert abs(rate - 0.95) < 5 * np.sqrt(0.95 * 0.05 / reps) + 0.005
    with pytest.raises(ValueError, match="variances"):
        combine_releases([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="estimates"):
        combine_releases([1.0], [1.0])


# --- exact coverage and tree noise ---------------------------------------------------------------


@pytest.mark.parametrize(
    "kind", [None, dpbook.BIT, dpbook.Truncated, lambda b, **bounds: dpbook.Laplace(b)]
)
@pytest.mark.parametrize(
    "n,p,b", [(60, 0.05, 0.05), (300, 0.3, 0.01), (1000, 0.5, 0.002)]
)
def test_wald_coverage_matches_simulation(kind, n, p, b):
    from dpbook_book.studies import wald_coverage

    rng = np.random.default_rng(n)
    mech = kind(b, lower=0.0, upper=1.0) if kind else None
    reps = 40_000
    phat = rng.binomial(n, p, size=reps) / n
    x = phat if mech is None else mech.sample(phat, rng=rng)
    rate, _ = coverage(*wald_interval(x, n), p)
    exact = wald_coverage(p, n, mechanism=mech)
    assert abs(rate - exact) < 5 * np.sqrt(exact * (1 - exact) / reps)


def test_wald_coverage_bad_input():
    from dpbook_book.studies import wald_coverage

    with pytest.raises(ValueError, match="p"):
        wald_coverage(0.0, 10)
    with pytest.raises(ValueError, match="n"):
        wald_coverage(0.5, 0)
