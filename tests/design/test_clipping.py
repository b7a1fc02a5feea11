"""Tests of dpbook.design.clipping: the clipping bias, the clipped moments, the MSE of a private
clipped mean and the optimal clip, each against an independent computation (quadrature of the clipped
variable's law, Monte Carlo at 5 standard errors, a simulation of the whole release, a brute-force grid).
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import dpbook
from dpbook import clipped_mean_mse, clipped_moments, clipping_bias, optimal_clip


def _random_law(name, rng):
    """A law of family ``name`` with random parameters (seeded)."""
    if name == "norm":
        return stats.norm(rng.uniform(-5, 5), rng.uniform(0.1, 4))
    if name == "lognorm":
        return stats.lognorm(rng.uniform(0.2, 1.5), scale=rng.uniform(0.5, 3))
    if name == "expon":
        return stats.expon(scale=rng.uniform(0.2, 5))
    if name == "pareto":
        return stats.pareto(rng.uniform(2.2, 6), scale=rng.uniform(0.5, 2))
    if name == "t":
        return stats.t(rng.uniform(2.5, 10), loc=rng.uniform(-2, 2))
    if name == "poisson":
        return stats.poisson(rng.uniform(0.5, 30))
    return stats.binom(int(rng.integers(1, 60)), rng.uniform(0.05, 0.95))


LAWS = ["norm", "lognorm", "expon", "pareto", "t", "poisson", "binom"]
CASES = [(name, seed) for name in LAWS for seed in range(3)]


def _random_bounds(law, rng):
    """Bounds at random quantiles of the law (so that both clip some mass), sometimes infinite."""
    p = np.sort(rng.uniform(0.02, 0.98, size=2))
    lower, upper = (float(v) for v in law.ppf(p))
    if upper <= lower:
        upper = lower + 1.0
    kind = rng.integers(4)
    if kind == 1:
        lower = -math.inf
    elif kind == 2:
        upper = math.inf
    return lower, upper


def _reference_moments(law, lower, upper):
    """``E clip`` and ``E clip²`` by integrating the clipped variable's law: quadrature of the
    density (continuous) or a sum of the pmf over the support (discrete), with the atoms at the bounds."""

    def g(x):
        return np.clip(x, lower, upper)

    if isinstance(law.dist, stats.rv_discrete):
        lo, hi = law.support()
        hi = min(hi, law.mean() + 60 * law.std() + 100)  # the pmf underflows beyond
        k = np.arange(lo, hi + 1)
        p = law.pmf(k)
        return math.fsum(g(k) * p), math.fsum(g(k) ** 2 * p)
    lo_mass = law.cdf(lower) if math.isfinite(lower) else 0.0
    hi_mass = law.sf(upper) if math.isfinite(upper) else 0.0
    a = lower if math.isfinite(lower) else -np.inf
    b = upper if math.isfinite(upper) else np.inf
    out = []
    for power in (1, 2):
        pieces = [a, *[float(law.ppf(q)) for q in (0.1, 0.5, 0.9)], b]
        pieces = sorted({min(max(x, a), b) for x in pieces})
        total = 0.0
        for x0, x1 in zip(pieces[:-1], pieces[1:]):
            if x1 > x0:
                total += integrate.quad(
                    lambda x: x**power * law.pdf(x),
                    x0,
                    x1,
                    epsabs=0,
                    epsrel=1e-11,
                    limit=200,
                )[0]
        ends = (lower**power * lo_mass if lo_mass else 0.0) + (
            upper**power * hi_mass if hi_mass else 0.0
        )
        out.append(total + ends)
    return out[0], out[1]


@pytest.mark.parametrize("name, seed", CASES)
def test_moments_and_bias_against_quadrature_of_the_clipped_law(name, seed):
    rng = np.random.default_rng(seed)
    law = _random_law(name, rng)
    lower, upper = _random_bounds(law, rng)
    m1, m2 = _reference_moments(law, lower, upper)
    mean, var = clipped_moments(law, lower, upper)
    scale = law.std() + abs(law.mean())
    assert mean == pytest.approx(m1, rel=1e-8, abs=1e-9 * scale)
    assert var == pytest.approx(m2 - m1**2, rel=1e-7, abs=1e-9 * scale**2)
    bias = clipping_bias(law, lower, upper)
    assert bias == pytest.approx(m1 - law.mean(), rel=1e-7, abs=1e-9 * scale)
    # and against scipy's own expectation (adaptive quadrature or summation of its own)
    with np.errstate(all="ignore"):
        expected = law.expect(lambda x: np.clip(x, lower, upper))
    assert mean == pytest.approx(expected, rel=1e-7, abs=1e-8 * scale)


@pytest.mark.parametrize("name, seed", CASES)
def test_moments_and_bias_against_monte_carlo(name, seed):
    rng = np.random.default_rng(100 + seed)
    law = _random_law(name, rng)
    lower, upper = _random_bounds(law, rng)
    y = np.clip(law.rvs(size=200_000, random_state=rng), lower, upper)
    mean, var = clipped_moments(law, lower, upper)
    se = y.std() / math.sqrt(y.size)
    assert abs(y.mean() - mean) <= 5 * se + 1e-12
    dev = (y - y.mean()) ** 2
    se_var = dev.std() / math.sqrt(y.size)
    assert abs(dev.mean() - var) <= 5 * se_var + 1e-12
    assert (
        abs(y.mean() - law.mean() - clipping_bias(law, lower, upper)) <= 5 * se + 1e-12
    )


def test_closed_forms():
    # exponential: E clip(X, 0, u) = 1 - e^{-u}, bias -e^{-u}; uniform(0, 1) clipped to [a, b]
    assert clipping_bias(stats.expon(), 0.0, 3.0) == pytest.approx(
        -math.exp(-3.0), rel=1e-13
    )
    a, b = 0.2, 0.7
    mean, var = clipped_moments(stats.uniform(), a, b)
    e1 = a * a + (b * b - a * a) / 2 + b * (1 - b)
    e2 = a**3 + (b**3 - a**3) / 3 + b * b * (1 - b)
    assert mean == pytest.approx(e1, rel=1e-14)
    assert var == pytest.approx(e2 - e1**2, rel=1e-12)
    # normal, symmetric bounds: no bias; one-sided: E (X - u)^+ = φ(u) - u S(u)
    assert abs(clipping_bias(stats.norm(), -1.5, 1.5)) < 1e-15
    u = 0.7
    tail = stats.norm.pdf(u) - u * stats.norm.sf(u)
    assert clipping_bias(stats.norm(), -np.inf, u) == pytest.approx(-tail, rel=1e-13)
    # Poisson(λ), clipped below at 1: E max(X, 1) - λ = P(X = 0)
    assert clipping_bias(stats.poisson(3.0), 1.0, np.inf) == pytest.approx(
        math.exp(-3.0), rel=1e-13
    )


def test_long_discrete_tails_are_summed_to_the_end():
    # geometric on {1, 2, ...} with p = 1e-4: the sums run over ~10^5 lattice points beyond one block
    # and stop by the geometric bound of the rest; E min(X, u) = (1 - (1 - p)^u)/p for integer u
    p, u = 1e-4, 20_000.0
    law = stats.geom(p)
    assert clipping_bias(law, 1.0, u) == pytest.approx(-((1 - p) ** u) / p, rel=1e-12)
    mean, var = clipped_moments(law, 1.0, np.inf)
    assert mean == pytest.approx(1 / p, rel=1e-12)
    assert var == pytest.approx((1 - p) / p**2, rel=1e-11)


EXTREMES = [
    (stats.norm(), -1e300, 1e300),
    (stats.norm(), -np.inf, -1e10),  # everything clipped to u
    (stats.norm(), 1e10, np.inf),  # everything clipped to l
    (stats.lognorm(2.0), 1e-300, 1e300),
    (stats.lognorm(2.0), 0.0, 1e-200),
    (stats.pareto(2.5), 1.0, 1e300),
    (stats.expon(), 0.0, 800.0),  # S(u) underflows
    (stats.poisson(1e4), 0.0, 1e300),
    (stats.binom(1000, 1e-6), -1e300, 0.5),
    (stats.t(3.0), -1e308, 1e308),
]


@pytest.mark.parametrize("law, lower, upper", EXTREMES, ids=lambda v: str(v)[:20])
def test_extreme_bounds_give_finite_numbers_and_no_warnings(law, lower, upper):
    mean, var = clipped_moments(law, lower, upper)
    bias = clipping_bias(law, lower, upper)
    assert math.isfinite(mean) and math.isfinite(var) and var >= 0
    assert math.isfinite(bias)
    assert lower <= mean <= upper
    assert bias == pytest.approx(
        mean - law.mean(), rel=1e-9, abs=1e-9 * (1 + law.std())
    )
    if upper < -1e9:
        assert (mean, var) == (upper, 0.0)
    if lower > 1e9:
        assert (mean, var) == (lower, 0.0)


def test_extreme_mse_overflows_to_inf_without_a_warning():
    r = clipped_mean_mse(stats.norm(), 10, -1e300, -1e299, 1.0)
    assert r.bias == pytest.approx(-1e299) and r.mse == math.inf
    r = clipped_mean_mse(
        stats.lognorm(0.5), 10**6, 0.0, 1e-300, 1e3
    )  # all clipped to ~0
    assert r.bias == pytest.approx(-stats.lognorm(0.5).mean(), rel=1e-12)
    assert r.sampling_variance < 1e-300 and r.mse == pytest.approx(r.bias**2, rel=1e-12)


def test_infinite_bounds():
    law = stats.lognorm(0.8)
    assert clipping_bias(law, -np.inf, np.inf) == 0.0
    mean, var = clipped_moments(law, -np.inf, np.inf)
    assert mean == pytest.approx(law.mean(), rel=1e-12)
    assert var == pytest.approx(law.var(), rel=1e-11)
    # a Pareto law with infinite variance: clipped above at inf, its variance is infinite
    assert clipped_moments(stats.pareto(1.5), 1.0, np.inf)[1] == math.inf
    assert math.isfinite(clipped_moments(stats.pareto(1.5), 1.0, 1e6)[1])


def test_heavy_tails_without_a_mean_are_refused_naming_the_law():
    for law in (stats.pareto(1.0), stats.pareto(0.6), stats.cauchy()):
        with pytest.raises(ValueError, match=law.dist.name):
            clipping_bias(law, 0.0, 10.0)
        with pytest.raises(ValueError, match=law.dist.name):
            clipped_mean_mse(law, 10, 0.0, 10.0, 1.0)
    # with finite bounds the clipped variable itself is fine, also where the support ends the law
    mean, var = clipped_moments(stats.cauchy(), -1.0, 1.0)
    assert mean == pytest.approx(0.0, abs=1e-15) and 0 < var < 1
    pareto = stats.pareto(0.5)  # E min(X, 10) = 1 + ∫_1^10 x^{-1/2} dx = 2 sqrt(10) - 1
    assert clipped_moments(pareto, -np.inf, 10.0)[0] == pytest.approx(
        2 * math.sqrt(10) - 1
    )
    assert clipped_moments(pareto, -np.inf, 10.0) == clipped_moments(pareto, 0.0, 10.0)
    with pytest.raises(ValueError, match="pareto"):
        clipped_moments(pareto, 2.0, np.inf)


def _simulate(law, n, lower, upper, epsilon, family, statistic, reps, rng):
    """The whole pipeline: n records, clip, mean (or sum), the mechanism's noise; returns (M - target)²."""
    mu = law.mean()
    x = np.clip(law.rvs(size=(reps, n), random_state=rng), lower, upper)
    ybar = x.mean(axis=1)
    delta = dpbook.mean_sensitivity(lower, upper, n)
    if family is dpbook.Truncated:
        scale = dpbook.truncated_scale(epsilon, delta, lower, upper)
    else:
        scale = dpbook.laplace_scale(epsilon, delta)
    mech = (
        dpbook.Laplace(scale)
        if family is dpbook.Laplace
        else family(scale, lower=lower, upper=upper)
    )
    release = mech.sample(ybar, rng=rng)
    k = 1 if statistic == "mean" else n
    return (k * release - k * mu) ** 2


PIPELINES = [
    (stats.lognorm(1.0), 30, 0.0, 4.0, 0.5, dpbook.Laplace, "mean"),
    (stats.expon(), 20, 0.0, 2.0, 1.0, dpbook.Laplace, "sum"),
    (stats.poisson(4.0), 25, 1.0, 6.0, 0.3, dpbook.Laplace, "mean"),
    (stats.lognorm(1.0), 30, 0.0, 4.0, 0.5, dpbook.BIT, "mean"),
    (stats.pareto(3.0), 40, 1.0, 3.0, 0.2, dpbook.BIT, "sum"),
    (stats.norm(1.0, 2.0), 20, -1.0, 2.0, 0.5, dpbook.Truncated, "mean"),
    (stats.binom(10, 0.3), 30, 0.0, 5.0, 0.4, dpbook.Truncated, "mean"),
]


@pytest.mark.parametrize(
    "case", PIPELINES, ids=lambda c: f"{c[0].dist.name}-{c[5].__name__}-{c[6]}"
)
def test_mse_against_a_simulation_of_the_release(case):
    law, n, lower, upper, epsilon, family, statistic = case
    rng = np.random.default_rng(7)
    sq = _simulate(law, n, lower, upper, epsilon, family, statistic, 100_000, rng)
    r = clipped_mean_mse(
        law, n, lower, upper, epsilon, family=family, statistic=statistic
    )
    se = sq.std() / math.sqrt(sq.size)
    assert abs(sq.mean() - r.mse) <= 5 * se
    assert r.mse == r.bias**2 + r.sampling_variance + r.noise_mse
    assert r.exact == (family is dpbook.Laplace)


def test_mse_parts_use_the_library_scale_and_sensitivity():
    law = stats.lognorm(0.5)
    r = clipped_mean_mse(law, 50, 0.0, 3.0, 0.7)
    assert r.sensitivity == dpbook.mean_sensitivity(0.0, 3.0, 50)
    assert r.scale == dpbook.laplace_scale(0.7, r.sensitivity)
    assert r.noise_mse == pytest.approx(2 * r.scale**2, rel=1e-15)
    assert r.bias == clipping_bias(law, 0.0, 3.0)
    assert r.sampling_variance == pytest.approx(clipped_moments(law, 0.0, 3.0)[1] / 50)
    t = clipped_mean_mse(law, 50, 0.0, 3.0, 0.7, family=dpbook.Truncated)
    assert t.scale == pytest.approx(
        dpbook.truncated_scale(0.7, r.sensitivity, 0.0, 3.0), rel=1e-12
    )
    s = clipped_mean_mse(law, 50, 0.0, 3.0, 0.7, statistic="sum")
    assert s.mse == pytest.approx(50**2 * r.mse, rel=1e-13)
    assert s.sensitivity == pytest.approx(3.0)


_SLOW = pytest.mark.slow  # a 400-point grid of exact MSEs each: 4-12 s
OPTIMA = [
    (stats.expon(), 1000, 1.0, 0.0),
    pytest.param(stats.lognorm(1.0), 500, 0.5, 0.0, marks=_SLOW),
    pytest.param(stats.pareto(3.0), 2000, 1.0, 1.0, marks=_SLOW),
    pytest.param(stats.halfnorm(), 100, 2.0, 0.0, marks=_SLOW),
    pytest.param(stats.poisson(5.0), 200, 0.5, 0.0, marks=_SLOW),
    pytest.param(stats.lognorm(1.0), 500, 0.5, None, marks=_SLOW),
    pytest.param(stats.gamma(2.0), 300, 1.0, None, marks=_SLOW),
]


@pytest.mark.parametrize("law, n, epsilon, lower", OPTIMA, ids=lambda v: str(v)[:12])
def test_optimal_clip_against_a_brute_force_grid(law, n, epsilon, lower):
    best = optimal_clip(law, n, epsilon, lower=lower)
    m = law.median()
    if lower is None:
        w = np.geomspace(1e-3, 60, 400) * law.std()
        windows = [(m - v, m + v) for v in w]
    else:
        top = law.isf(1e-9)
        windows = [(lower, u) for u in lower + np.geomspace(1e-3, top - lower, 400)]
    mses = np.array(
        [clipped_mean_mse(law, n, lo, hi, epsilon).mse for lo, hi in windows]
    )
    k = int(np.argmin(mses))
    assert best.mse.mse <= mses[k] * (1 + 1e-12)
    # the grid's best is next to the optimum, and the optimum is a local minimum
    widths = [hi - lo for lo, hi in windows]
    assert (
        widths[max(k - 1, 0)]
        <= best.upper - best.lower
        <= widths[min(k + 1, len(widths) - 1)]
    )
    if lower is not None and not isinstance(law.dist, stats.rv_discrete):
        assert abs(best.condition) < 1e-12 * max(1.0, best.upper) / n
        for h in (1e-4, -1e-4):
            u = best.upper * (1 + h)
            assert clipped_mean_mse(law, n, lower, u, epsilon).mse >= best.mse.mse


@pytest.mark.parametrize("symmetric", [False, True])
def test_first_order_condition_is_the_derivative_of_the_mse(symmetric):
    from dpbook.design.clipping import _derivative, _Law

    law, n, eps = stats.lognorm(0.7), 200, 0.8
    m = law.median()
    for t in (0.5, 1.3, 3.0):
        h = 1e-5 * t

        def mse(t):
            lo, hi = (m - t, m + t) if symmetric else (0.0, t)
            return clipped_mean_mse(law, n, lo, hi, eps).mse

        lo, hi = (m - t, m + t) if symmetric else (0.0, t)
        numeric = (mse(t + h) - mse(t - h)) / (2 * h)
        assert 2 * _derivative(_Law(law), n, eps, lo, hi, symmetric) == pytest.approx(
            numeric, rel=1e-5, abs=1e-12
        )


@pytest.mark.parametrize(
    "family", [dpbook.BIT, pytest.param(dpbook.Truncated, marks=_SLOW)]
)
def test_optimal_clip_of_the_range_adherent_families(family):
    law = stats.lognorm(1.0)
    best = optimal_clip(law, 500, 0.5, lower=0.0, family=family)
    assert not best.mse.exact
    for u in best.upper * np.array([0.9, 0.99, 1.01, 1.1]):
        assert (
            clipped_mean_mse(law, 500, 0.0, u, 0.5, family=family).mse >= best.mse.mse
        )


def test_the_sums_optimal_clip_is_the_means():
    law = stats.lognorm(1.0)
    lap = optimal_clip(law, 500, 0.5, lower=0.0)
    assert lap.mse.exact
    s = optimal_clip(law, 500, 0.5, lower=0.0, statistic="sum")
    assert s.upper == lap.upper and s.mse.mse == pytest.approx(500**2 * lap.mse.mse)


def test_bad_input_names_the_parameter():
    law = stats.expon()
    with pytest.raises(ValueError, match="data"):
        clipping_bias(np.array([1.0, 2.0]), 0.0, 1.0)
    with pytest.raises(ValueError, match="data"):
        clipped_moments(stats.gamma, 0.0, 1.0)  # a family with a shape left unset
    with pytest.raises(ValueError, match="lower"):
        clipping_bias(law, 2.0, 1.0)
    with pytest.raises(ValueError, match="upper"):
        clipped_moments(law, 0.0, np.nan)
    with pytest.raises(ValueError, match="n must"):
        clipped_mean_mse(law, 0, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        clipped_mean_mse(law, 10, 0.0, 1.0, -1.0)
    with pytest.raises(ValueError, match="bounds must be finite"):
        clipped_mean_mse(law, 10, 0.0, np.inf, 1.0)
    with pytest.raises(ValueError, match="family"):
        clipped_mean_mse(law, 10, 0.0, 1.0, 1.0, family="laplace")
    with pytest.raises(ValueError, match="statistic"):
        clipped_mean_mse(law, 10, 0.0, 1.0, 1.0, statistic="median")
    with pytest.raises(ValueError, match="lower"):
        optimal_clip(law, 10, 1.0, lower=np.inf)
    with pytest.raises(ValueError, match="lower"):
        optimal_clip(law, 10, 1.0, lower=1e6)  # above the whole law
    with pytest.raises(ValueError, match="epsilon"):
        optimal_clip(law, 10, 0.0, lower=0.0)


def test_the_adaptive_rule_meets_its_tolerance_and_refuses_what_it_cannot():
    from dpbook.design.clipping import _adaptive, _Law

    law = _Law(stats.expon())
    one = np.array([0.0, 1.0])
    # sqrt has an endpoint singularity: one Gauss–Kronrod piece errs by ~1e-4, halving reaches RTOL
    value = _adaptive(lambda x: np.sqrt(x)[..., None], one, law, np.zeros(1))
    assert value[0] == pytest.approx(2 / 3, rel=1e-11)
    with pytest.raises(ValueError, match="expon"):  # 1/x diverges at 0
        _adaptive(lambda x: (1 / x)[..., None], one, law, np.zeros(1))


def test_a_law_with_a_finite_support_end_near_the_clip():
    """The uniform law on [4.2, 7.8]: the tail beyond a clip a few ulps-worth below 7.8 is about 1e-14,
    below the absolute rounding of scipy's ``sf`` (computed as ``1 - cdf``).  The quadrature accepts an
    error at that rounding instead of refusing the law, and the best clip agrees with a brute-force grid
    of the MSE computed independently (closed-form moments of ``min(X, u)``)."""
    law, n, eps = stats.uniform(4.2, 3.6), 100, 1.0
    a, w = 4.2, 3.6

    def mse(u):  # X ~ U(a, a + w), a <= u <= a + w, lower clip 0
        m1 = (u * u - a * a) / (2 * w) + u * (a + w - u) / w
        m2 = (u**3 - a**3) / (3 * w) + u * u * (a + w - u) / w
        return (m1 - (a + w / 2)) ** 2 + (m2 - m1 * m1) / n + 2 * (u / (n * eps)) ** 2

    grid = np.linspace(a, a + w, 36_001)
    brute = grid[np.argmin(mse(grid))]
    best = optimal_clip(law, n, eps, lower=0.0)
    assert abs(best.upper - brute) <= grid[1] - grid[0]
    assert best.mse.mse == pytest.approx(mse(best.upper), rel=1e-9)
    for u in (7.79999964, 7.799999886158004, 7.7999999639999995):
        assert clipping_bias(law, 0.0, u) == pytest.approx(
            -((7.8 - u) ** 2) / 7.2, abs=1e-15
        )
