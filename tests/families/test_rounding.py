"""dpbook.Rounded: the law of round(M(q)), checked against quadrature, brute force and simulation."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import dpbook
from dpbook import BIT, Laplace, Rounded, Truncated
from dpbook.families.rounding import _round_half_down


def _brute_pmf(base, k, q):
    """P(round(M(q)) = k) by quadrature of the base's density over (k - 1/2, k + 1/2] plus its atoms there."""
    lo, hi = k - 0.5, k + 0.5
    s_lo, s_hi = base.support
    a, b = max(lo, s_lo), min(hi, s_hi)
    mass = 0.0
    if a < b:
        pts = [p for p in (q,) if a < p < b]
        mass, _ = integrate.quad(
            lambda x: base.pdf(x, q),
            a,
            b,
            points=pts or None,
            epsabs=1e-15,
            epsrel=1e-12,
        )
    for loc, m in base.atoms(q):
        if lo < loc <= hi:
            mass += m
    return mass


def _random_bases(seed, count=4):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        b = float(rng.uniform(0.2, 4.0))
        lower = float(rng.integers(-3, 3)) + float(rng.choice([0.0, 0.5, 0.3]))
        upper = lower + float(rng.integers(1, 12))
        q = float(rng.integers(math.floor(lower) - 2, math.ceil(upper) + 3))  # a count
        out += [
            (BIT(b, lower=lower, upper=upper), q),
            (Truncated(b, lower=lower, upper=upper), q),
            (Laplace(b), q),
            (BIT(b, lower=lower), q),
        ]
    return out


def _window(base, q):
    lo, hi = Rounded(base).support
    reach = 45 * base.scale + 3
    lo = lo if math.isfinite(lo) else math.floor(q - reach)
    hi = hi if math.isfinite(hi) else math.ceil(q + reach)
    return np.arange(lo, hi + 1.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pmf_and_moments_match_quadrature(seed):
    for base, q in _random_bases(seed):
        r = Rounded(base)
        k = _window(base, q)
        brute = np.array([_brute_pmf(base, kk, q) for kk in k])
        got = np.asarray(r.pmf(k, q))
        assert np.allclose(got, brute, rtol=1e-8, atol=1e-14), (base, q)
        assert abs(brute.sum() - 1) < 1e-9
        mean = float(np.sum(k * brute))
        assert math.isclose(r.mean(q), mean, rel_tol=1e-8, abs_tol=1e-9), (base, q)
        assert math.isclose(r.bias(q), mean - q, rel_tol=1e-8, abs_tol=1e-9)
        assert math.isclose(
            r.variance(q),
            float(np.sum((k - mean) ** 2 * brute)),
            rel_tol=1e-8,
            abs_tol=1e-9,
        )
        assert math.isclose(
            r.mse(q), float(np.sum((k - q) ** 2 * brute)), rel_tol=1e-8, abs_tol=1e-9
        )


def test_vectorized_moments_and_law_agree():
    r = Rounded(Truncated(1.3, lower=0.0, upper=7.0))
    q = np.array([[0.0, 2.0], [5.0, 7.0]])
    for name in ("bias", "variance", "mse", "mean"):
        many = np.asarray(getattr(r, name)(q))
        assert many.shape == q.shape
        assert np.allclose(
            many, [[getattr(r, name)(v) for v in row] for row in q], rtol=0, atol=1e-15
        )
    law = r.at(2.0)
    assert math.isclose(law.expect(), law.mean(), rel_tol=1e-12)
    assert law.median() == float(round(law.median())) and law.support() == (0.0, 7.0)
    lo, hi = law.interval(0.9)
    assert law.cdf(hi) - law.cdf(lo - 1) >= 0.9 and lo == int(lo)


@pytest.mark.parametrize(
    "base",
    [
        BIT(0.7, lower=0.0, upper=9.0),
        Truncated(2.0, lower=-1.0, upper=4.5),
        Laplace(1.5),
        BIT(2.0),
    ],
)
def test_sums_to_one_and_cdf_sf(base):
    r = Rounded(base)
    q = 2.0
    k = _window(base, q)
    p = np.asarray(r.pmf(k, q))
    assert abs(math.fsum(p) - 1) < 1e-13
    cdf = np.asarray(r.cdf(k, q))
    assert np.allclose(cdf, np.cumsum(p), rtol=0, atol=1e-13)
    assert np.allclose(np.asarray(r.sf(k, q)), 1 - cdf, rtol=0, atol=1e-13)
    assert np.array_equal(
        r.cdf(k + 0.75, q), cdf
    )  # a step function with steps at the integers
    assert np.allclose(np.exp(r.logcdf(k, q)), cdf, rtol=1e-12) and np.allclose(
        np.exp(r.logsf(k[:-1], q)), 1 - cdf[:-1], rtol=1e-9
    )
    assert r.pmf(0.5, q) == 0.0 and r.pdf(0.3, q) == 0.0 and r.logpdf(0.3, q) == -np.inf


def test_tie_convention_half_integers_go_down():
    x = np.array(
        [
            -0.5,
            0.5,
            1.5,
            2.5,
            -1.5,
            0.49999999999999994,
            -0.49999999999999994,
            2.6,
            -2.6,
            1e300,
            2.0**52 + 1,
        ]
    )
    want = np.array([-1, 0, 1, 2, -2, 0, 0, 3, -3, 1e300, 2.0**52 + 1])
    assert np.array_equal(_round_half_down(x), want)
    # the naive ceil(x - 1/2) rounds -0.49999999999999994 to -1: the exact form is needed
    assert np.ceil(-0.49999999999999994 - 0.5) == -1
    # an atom on a half-integer: clamping to [0.5, 3.5] puts its end masses in the cells of 0 and 3
    base = BIT(1.0, lower=0.5, upper=3.5)
    r = Rounded(base)
    assert r.support == (0.0, 3.0)
    assert math.isclose(r.pmf(0, 1.0), base.cdf(0.5, 1.0), rel_tol=1e-14)
    assert math.isclose(
        r.pmf(3, 1.0), base.cdf(3.5, 1.0) - base.cdf(2.5, 1.0), rel_tol=1e-14
    )
    x = r.sample(1.0, 20_000, rng=5)
    assert set(np.unique(x)) <= {0, 1, 2, 3}
    p0 = r.pmf(0, 1.0)
    assert abs(np.mean(x == 0) - p0) < 5 * math.sqrt(p0 * (1 - p0) / x.size)


def test_far_tail_masses_keep_their_digits():
    """In a Laplace tail the rounded mass is e^{-(|k - q| - 1/2)/b} sinh(1/(2b))... written exactly below."""
    q, b = 3.0, 1.0
    k = np.array([40.0, 500.0, 800.0, 2000.0])
    want = -(k - q - 0.5) / b - math.log(2) + math.log(-math.expm1(-1 / b))
    r = Rounded(Laplace(b))
    assert np.allclose(r.logpmf(k, q), want, rtol=1e-14, atol=0)
    assert np.allclose(
        r.logpmf(-k, -q), want, rtol=1e-14, atol=0
    )  # the lower tail by symmetry
    assert r.pmf(2000.0, q) == 0.0  # e^{-2000} underflows; its log above did not


@pytest.mark.parametrize("scale", [1e-300, 1e-3, 1.0, 1e4])
@pytest.mark.parametrize("q", [-1e15, -3.0, 0.0, 4.0, 10.0, 1e15])
def test_no_warnings_at_extreme_q_and_scales(scale, q):
    for base in (
        BIT(scale, lower=0.0, upper=10.0),
        Truncated(scale, lower=0.0, upper=10.0),
    ):
        r = Rounded(base)
        p = np.asarray(r.pmf(np.arange(11.0), q))
        assert np.isfinite(p).all() and abs(math.fsum(p) - 1) < 1e-12
        vals = [r.bias(q), r.variance(q), r.mse(q)]
        assert all(np.isfinite(vals)) and vals[1] >= 0
        assert abs(r.bias(q) - (float(np.sum(np.arange(11.0) * p)) - q)) <= 1e-9 * max(
            1.0, abs(q)
        )
    r = Rounded(Laplace(scale))
    if (
        scale < 1e4
    ):  # the window of a scale of 1e4 is 1.3e6 integers: slow, checked below
        assert np.isfinite([r.bias(q), r.mse(q)]).all()
        assert (
            abs(r.variance(q) - (2 * scale**2 + 1 / 12)) < 0.2
        )  # near Var(L) + 1/12 for a wide law; 0 for a narrow one


def test_large_scale_on_an_infinite_support_is_summed_or_refused():
    r = Rounded(Laplace(1e4))
    assert math.isclose(
        r.variance(0.0), 2e8 + 1 / 12, rel_tol=1e-9
    )  # Sheppard: Var(L) + 1/12 for a smooth wide law
    with pytest.raises(ValueError, match="integers"):
        Rounded(Laplace(1e5)).mse(0.0)


def test_samples_match_pmf_chi_square():
    r = Rounded(Truncated(1.3, lower=0.0, upper=7.0))
    x = r.sample(2.0, 200_000, rng=np.random.default_rng(20261124))
    assert x.dtype == np.int64 and x.shape == (200_000,)
    k = np.arange(8.0)
    counts = np.array([np.sum(x == kk) for kk in k])
    assert counts.sum() == x.size
    p = stats.chisquare(counts, x.size * np.asarray(r.pmf(k, 2.0))).pvalue
    assert p > 1e-6
    # the same test rejects the law at the next count (it can fail)
    assert stats.chisquare(counts, x.size * np.asarray(r.pmf(k, 3.0))).pvalue < 1e-6
    assert isinstance(r.sample(1.0, rng=1), np.integer)
    lap = Rounded(Laplace(2.0)).sample([0.0, 100.0], size=(3, 2), rng=2)
    assert lap.dtype == np.int64 and lap.shape == (3, 2)


def _brute_epsilon(base, n):
    """max over neighbouring integer counts and outputs of the log-ratio of quadrature masses."""
    p = np.array([[_brute_pmf(base, k, q) for k in range(n + 1)] for q in range(n + 1)])
    with np.errstate(divide="ignore"):
        lp = np.log(p)
    return max(
        float(np.max(lp[i] - lp[j]))
        for i in range(n + 1)
        for j in (i - 1, i + 1)
        if 0 <= j <= n
    )


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_rounding_clamping_keeps_exactly_epsilon(eps):
    n = 6
    r = Rounded(BIT(1 / eps, lower=0.0, upper=float(n)))
    report = dpbook.privacy_report(r, 1)
    assert report.exact and abs(report.epsilon - eps) < 1e-12
    assert abs(_brute_epsilon(r.mechanism, n) - eps) < 1e-9
    assert (
        abs(dpbook.privacy_loss(Rounded(BIT(1 / eps, lower=0.0, upper=40.0)), 1) - eps)
        < 1e-12
    )


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_rounding_truncation_lowers_its_exact_epsilon(eps):
    n = 6
    base = Truncated(
        dpbook.truncated_scale(eps, 1.0, 0.0, float(n)), lower=0.0, upper=float(n)
    )
    assert (
        abs(dpbook.privacy_loss(base, 1.0) - eps) < 1e-6 * eps
    )  # the continuous release: exactly eps
    rounded = dpbook.privacy_loss(Rounded(base), 1)
    assert abs(rounded - _brute_epsilon(base, n)) < 1e-9
    assert rounded < 0.85 * eps  # at eps = 1, n = 10 it is 0.7760 (Chapter 19's table)
    ten = Truncated(dpbook.truncated_scale(1.0, 1.0, 0.0, 10.0), lower=0.0, upper=10.0)
    assert round(dpbook.privacy_loss(Rounded(ten), 1), 4) == 0.776


def test_infinite_support_audits_the_base_as_an_upper_bound():
    report = dpbook.privacy_report(Rounded(BIT(2.0)), 1)
    assert (
        not report.exact
        and report.epsilon == 0.5
        and report.kind == "upper bound (post-processing)"
    )
    # an integer-valued base is unchanged by rounding: its own exact description
    disc = dpbook.DiscreteLaplace(2.0)
    assert dpbook.privacy_report(Rounded(disc), 1).exact
    assert Rounded(disc).mse(3) == disc.mse(3)


def test_bad_input_names_the_parameter():
    for bad in (BIT, "BIT", 3.0, None):
        with pytest.raises(ValueError, match="mechanism"):
            Rounded(bad)
    with pytest.raises(ValueError, match="q"):
        Rounded(BIT(1.0)).pmf(1, float("nan"))
    with pytest.raises(ValueError, match="tail bound"):
        Rounded(dpbook.LogLaplace(0.5)).mse(1.0)
    with pytest.raises(ValueError, match="atoms"):
        Rounded(Laplace(1.0)).atoms(0.0)


def test_true_values_are_counts():
    """Rounded releases a count: its exact audit is over integer true values, so other q are refused."""
    r = Rounded(BIT(1.0, lower=0.0, upper=5.0))
    for bad in (0.5, [1.0, 2.25]):
        with pytest.raises(ValueError, match="q must be integers"):
            r.bias(bad)
    assert r.bias(2.0) == r.bias(np.array(2.0))


def test_true_values_go_through_the_shared_integer_check(monkeypatch):
    from spies import spy_on_integer_array

    seen = spy_on_integer_array(monkeypatch)
    r = Rounded(BIT(1.0, lower=0.0, upper=5.0))
    assert 0 <= r.mean(2.0) <= 5 and "q" in seen
    with pytest.raises(
        ValueError, match=r"^q must be integers \(Rounded releases a count"
    ):
        r.mean(3.0000000001)
