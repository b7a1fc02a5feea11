"""The discrete families (``dpbook.families.discrete``) against brute-force summation of the pmf.

The reference sums the discrete Laplace weights ``exp(-|k - q|/b)`` directly (``math.fsum``, exactly rounded)
over every integer within 60 scales of the law's mass (the rest weighs less than ``e^{-60}`` relative),
applying the family's map (clamp, or restriction and renormalization) to each term; it shares no
formula with the library.  Closed forms must agree to ``1e-12`` relative; a mean or bias that is
near 0 is compared on the law's own scale (``1e-12`` times its standard deviation), since its relative
error is not defined there.  Cases come from hypothesis (derandomized) with scales from 0.01 to 1e4,
true values up to 1e6 scales outside the bounds and infinite bounds, plus explicit extremes.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats
from test_law import check_moments, check_tails

import dpbook
from dpbook import DiscreteBIT, DiscreteLaplace, DiscreteTruncated

FAMILIES = {"bit": DiscreteBIT, "truncated": DiscreteTruncated}
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


# --- the brute-force reference -----------------------------------------------------------------------


def brute(kind, b, lower, upper, q):
    """``(c, support points k, masses p)`` of the release, by direct summation (see the module docstring)."""
    c = min(max(q, lower), upper)
    reach = math.ceil(60 * b) + 3
    if kind == "truncated":
        k = np.arange(max(lower, c - reach), min(upper, c + reach) + 1.0)
        d = np.abs(k - q)
        w = np.exp(-(d - d.min()) / b)  # a constant factor cancels in the normalization
        return c, k, w / math.fsum(w.tolist())
    j = np.arange(-reach, reach + 1.0)  # the noise, around q
    alpha = math.exp(-1 / b)
    w = (1 - alpha) / (1 + alpha) * np.exp(-np.abs(j) / b)
    x = np.clip(q + j, lower, upper)
    k, inv = np.unique(x, return_inverse=True)
    p = (
        np.array([math.fsum(w[inv == i].tolist()) for i in range(k.size)])
        if k.size < 50
        else np.bincount(inv, w)
    )
    if (
        k.size >= 50
    ):  # the interior points carry one term each: only the two ends sum many
        for end in (0, k.size - 1):
            p[end] = math.fsum(w[inv == end].tolist())
    return c, k, p


def moments(c, k, p):
    """``(E[M] - c, Var M)`` by exactly rounded sums."""
    offset = math.fsum((p * (k - c)).tolist()) / math.fsum(p.tolist())
    var = math.fsum((p * (k - c - offset) ** 2).tolist()) / math.fsum(p.tolist())
    return offset, var


def close(got, want, scale=0.0, rtol=1e-12):
    return abs(got - want) <= rtol * (abs(want) + scale) + 1e-300


scales = st.floats(-2, 3).map(lambda e: float(10**e))
bounds = st.one_of(
    st.tuples(st.integers(-50, 50).map(float), st.integers(0, 300).map(float)).map(
        lambda t: (t[0], t[0] + t[1])
    ),
    st.integers(-50, 50).map(lambda a: (float(a), math.inf)),
    st.integers(-50, 50).map(lambda a: (-math.inf, float(a))),
    st.just((-math.inf, math.inf)),
)
# where q sits: near a bound, inside, or up to 1e6 scales outside
positions = st.one_of(st.integers(-30, 30), st.floats(-1e6, 1e6).map(lambda f: f))


def place(b, lo, hi, where):
    anchor = lo if math.isfinite(lo) else (hi if math.isfinite(hi) else 0.0)
    shift = where if isinstance(where, int) else where * b
    return float(math.floor(anchor + shift))


@SETTINGS
@given(kind=st.sampled_from(sorted(FAMILIES)), b=scales, lohi=bounds, where=positions)
@example(kind="bit", b=1e4, lohi=(0.0, math.inf), where=-1e6)
@example(kind="truncated", b=1e4, lohi=(0.0, 5.0), where=0)
@example(kind="truncated", b=1e4, lohi=(-math.inf, math.inf), where=3)
@example(kind="bit", b=0.01, lohi=(0.0, 3.0), where=1)
@example(kind="truncated", b=0.01, lohi=(0.0, math.inf), where=-1e6)
@example(kind="bit", b=1e3, lohi=(-20.0, 20.0), where=1e6)
def test_moments_are_the_brute_force_sums(kind, b, lohi, where):
    lo, hi = lohi
    q = place(b, lo, hi, where)
    mech = FAMILIES[kind](b, lower=lo, upper=hi)
    c, k, p = brute(kind, b, lo, hi, q)
    offset, var = moments(c, k, p)
    sd = math.sqrt(var)
    assert close(mech.variance(q), var), (mech.variance(q), var)
    assert close(mech.bias(q), (c - q) + offset, sd), (mech.bias(q), (c - q) + offset)
    assert close(mech.mean(q), c + offset, sd)
    assert close(mech.mse(q), var + ((c - q) + offset) ** 2, rtol=4e-12)
    assert lo <= mech.mean(q) <= hi  # means inside the support


@SETTINGS
@given(
    kind=st.sampled_from(sorted(FAMILIES)),
    b=st.floats(-2, 2).map(lambda e: float(10**e)),
    lohi=bounds,
    where=positions,
)
@example(kind="bit", b=0.3, lohi=(0.0, 5.0), where=-40)
@example(kind="truncated", b=50.0, lohi=(0.0, math.inf), where=-1e6)
def test_pmf_cdf_sf_are_the_brute_force_sums(kind, b, lohi, where):
    lo, hi = lohi
    q = place(b, lo, hi, where)
    mech = FAMILIES[kind](b, lower=lo, upper=hi)
    c, k, p = brute(kind, b, lo, hi, q)
    centre = (
        c if kind == "truncated" else q
    )  # the reference's window reaches 30 scales beyond these
    keep = np.abs(k - centre) <= 30 * b + 2
    pmf = np.asarray(mech.pmf(k, q))
    assert np.all(np.abs(pmf - p)[keep] <= 1e-12 * p[keep] + 1e-20)
    with np.errstate(divide="ignore"):
        # within the reference's window only (as for the pmf): beyond it the brute-force tail sums lose
        # digits (at q = -30 on [0, 11] the atom at 11 is exact in dpbook, -41 - log(1 + 1/e), and 1e-10 off
        # in the reference)
        ok = keep & (p > 1e-280)
        assert np.allclose(
            np.asarray(mech.logpmf(k, q))[ok],
            np.log(p[ok]),
            rtol=1e-12,
            atol=1e-13,
        )
    cum = np.cumsum(p)  # compared only where it is a sum of few large terms ...
    for i in np.flatnonzero(keep)[:: max(1, keep.sum() // 25)]:
        below = math.fsum(p[: i + 1].tolist())  # ... so recompute exactly
        above = math.fsum(p[i + 1 :].tolist())
        assert close(float(mech.cdf(k[i], q)), below, rtol=1e-11) or below < 1e-20, (
            k[i],
            mech.cdf(k[i], q),
            below,
        )
        assert close(float(mech.sf(k[i], q)), above, rtol=1e-11) or above < 1e-20, (
            k[i],
            mech.sf(k[i], q),
            above,
        )
        assert close(
            float(mech.cdf(k[i] + 0.5, q)), float(mech.cdf(k[i], q)), rtol=0
        )  # steps at the integers
    assert cum[-1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("kind", sorted(FAMILIES))
@pytest.mark.parametrize("b", [0.01, 0.2, 1.0, 13.0, 1e4])
@pytest.mark.parametrize("lohi", [(0.0, math.inf), (0.0, 40.0), (-math.inf, 7.0)])
def test_quantiles_round_trip(kind, b, lohi):
    lo, hi = lohi
    mech = FAMILIES[kind](b, lower=lo, upper=hi)
    for q in (lo if math.isfinite(lo) else hi, 3.0, -1e6 * b):
        q = float(math.floor(q))
        c = min(max(q, lo), hi)
        k = np.unique(np.clip(c + np.round(np.linspace(-30, 30, 61) * b), lo, hi))
        F, S, pmf = (np.asarray(f(k, q)) for f in (mech.cdf, mech.sf, mech.pmf))
        left = (F <= 0.5) & (pmf > 1e-300)
        assert np.array_equal(mech.ppf(F[left], q), k[left])
        right = (S <= 0.5) & (S > 1e-300) & (np.asarray(mech.pmf(k + 1, q)) > 1e-300)
        assert np.array_equal(mech.isf(S[right], q), k[right])
        p = np.array([1e-12, 0.01, 0.3, 0.5, 0.7, 0.99])
        x = np.asarray(mech.ppf(p, q))
        assert np.all(x == np.floor(x)) and np.all(np.asarray(mech.cdf(x, q)) >= p)
        assert np.all(np.asarray(mech.cdf(x - 1, q)) < p)
        assert mech.ppf(0.0, q) == lo and mech.ppf(1.0, q) == hi


def test_the_discrete_laplace_is_scipys_dlaplace():
    for b, q in [(0.3, 0.0), (1.0, 5.0), (7.5, -3.0), (100.0, 2.0)]:
        law, ref = DiscreteLaplace(b).at(q), stats.dlaplace(1 / b, loc=q)
        k = q + np.arange(-40, 41) * max(1, round(b / 4))
        for name in ("pmf", "cdf", "logpmf"):
            assert np.allclose(
                getattr(law, name)(k), getattr(ref, name)(k), rtol=1e-12, atol=0
            ), name
        # scipy's dlaplace.sf is 1 - cdf (0 beyond 1e-16); ours keeps the upper tail: α^{m+1}/(1 + α)
        assert np.allclose(law.sf(k), ref.sf(k), rtol=1e-12, atol=1e-15)
        alpha, m = math.exp(-1 / b), k - q
        assert np.allclose(
            law.sf(k[m >= 0]),
            alpha ** (m[m >= 0] + 1) / (1 + alpha),
            rtol=1e-12,
            atol=0,
        )
        assert math.isclose(law.mean(), ref.mean(), rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(law.var(), ref.var(), rel_tol=1e-12)
        p = np.array([0.01, 0.3, 0.5, 0.8, 0.999])
        assert np.array_equal(law.ppf(p), ref.ppf(p))


def test_infinite_bounds_give_the_discrete_laplace_law():
    k = np.arange(-20.0, 21.0)
    for b in (0.05, 1.0, 30.0, 1e6):
        ref = DiscreteLaplace(b)
        for mech in (
            DiscreteBIT(b, lower=-np.inf),
            DiscreteTruncated(b, lower=-np.inf),
        ):
            assert np.allclose(mech.pmf(k, 3.0), ref.pmf(k, 3.0), rtol=1e-14, atol=0)
            assert math.isclose(mech.variance(3.0), ref.variance(3.0), rel_tol=1e-13)
            assert mech.bias(3.0) == 0.0
        alpha = math.exp(-1 / b)
        assert math.isclose(
            ref.variance(0.0),
            2 * alpha / (1 - alpha) ** 2,
            rel_tol=1e-9 if b > 1e5 else 1e-13,
        )


@pytest.mark.parametrize("b", [1e-300, 1e-3, 0.01, 1e6, 1e12])
def test_extreme_scales_are_finite_and_right(b):
    """Tiny scales (α underflows: the release is q clamped), huge ones (1 - α = -expm1(-1/b))."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for mech in (
            DiscreteBIT(b, lower=0, upper=10),
            DiscreteTruncated(b, lower=0, upper=10),
            DiscreteLaplace(b),
            DiscreteBIT(b, lower=0),
            DiscreteTruncated(b, lower=0),
        ):
            q = np.array([-1e300, -5.0, 0.0, 4.0, 10.0, 1e15, 1e300])
            for f in (mech.bias, mech.variance, mech.mse, mech.mean):
                v = np.asarray(f(q))
                assert not np.isnan(v).any()
            assert np.isfinite(np.asarray(mech.variance(q))).all()
            assert np.isfinite(np.asarray(mech.pmf(3.0, q))).all()
    if b <= 0.01:
        assert (
            0
            <= DiscreteBIT(b, lower=0, upper=10).bias(4.0)
            <= math.exp(-5 / b) + 1e-300
        )  # α^5 / (1 + α)
    if (
        b >= 1e6
    ):  # a range much shorter than the noise: conditioning is nearly uniform on {0..10}
        t = DiscreteTruncated(b, lower=0, upper=10)
        assert math.isclose(t.variance(5.0), 10 * 12 / 12, rel_tol=1e-4)
        assert math.isclose(t.mean(0.0), 5.0, rel_tol=1e-4)


def test_far_true_values_use_the_law_at_the_nearest_bound():
    t = DiscreteTruncated(2.0, lower=0, upper=9)
    for q in (-1.0, -1e6, -(2.0**60), -1e300):
        assert t.mean(q) == t.mean(0.0) and t.variance(q) == t.variance(0.0)
        assert t.bias(q) == t.mean(0.0) - q
    m = DiscreteBIT(2.0, lower=0, upper=9)
    assert (
        m.mean(-1e300) == 0.0
        and m.variance(-1e300) == 0.0
        and m.pmf(0.0, -1e300) == 1.0
    )
    assert m.bias(2.0**60) == 9.0 - 2.0**60


def test_laws_conform():
    """``at(q)`` answers as the other families' laws do (tests/test_laws.py's generic checks)."""
    cases = [
        DiscreteLaplace(1.3).at(0.0),
        DiscreteBIT(1.0, lower=0, upper=4).at(1.0),
        DiscreteBIT(0.8, lower=0).at(-2.0),
        DiscreteTruncated(1.0, lower=0, upper=6).at(2.0),
        DiscreteTruncated(2.5, lower=0).at(0.0),
        DiscreteTruncated(3.0, lower=-5, upper=5).at(40.0),
    ]
    for law in cases:
        check_tails(law)
        check_moments(law)
        assert law.pdf(law.median()) == 0.0 and law.logpdf(0.5) == -np.inf
        assert law.pmf(law.median() + 0.5) == 0.0
        x = law.rvs(20_000, random_state=3)
        assert x.dtype == np.int64 and np.array_equal(
            x, law.mechanism.sample(law.q, 20_000, rng=3)
        )
        a, b = law.support()
        assert np.all((x >= a) & (x <= b))
        t = np.unique(law.ppf(np.array([0.1, 0.3, 0.5, 0.7, 0.9])))
        F = np.asarray(law.cdf(t))
        emp = np.mean(x[:, None] <= t[None, :], axis=0)
        assert np.all(np.abs(emp - F) <= 5 * np.sqrt(F * (1 - F) / x.size) + 1e-12), (
            t,
            emp,
            F,
        )
        assert abs(x.mean() - law.mean()) <= 5 * law.std() / math.sqrt(x.size)
        lo, hi = law.interval(0.9)
        assert law.cdf(lo - 1) <= 0.05 and law.sf(hi) <= 0.05


def test_a_broken_law_fails_the_checks():
    """The brute-force comparison catches a wrong closed form (here: a variance off by one part in 1e9)."""
    mech = DiscreteTruncated(3.0, lower=0, upper=20)
    c, k, p = brute("truncated", 3.0, 0.0, 20.0, 2.0)
    _, var = moments(c, k, p)
    assert close(mech.variance(2.0), var)
    assert not close(mech.variance(2.0) * (1 + 1e-9), var)
    # and the reference itself sees a wrong kernel: the continuous Laplace cdf is not this law
    assert not close(
        float(DiscreteLaplace(3.0).cdf(0.0, 0.0)),
        float(dpbook.Laplace(3.0).cdf(0.0, 0.0)),
    )


def test_sampling_is_int64_reproducible_and_exact_in_law():
    m = DiscreteBIT(2.0, lower=0, upper=10)
    x = m.sample(np.array([0, 3, 12]), rng=5)
    assert x.dtype == np.int64 and x.shape == (3,)
    assert np.array_equal(x, m.sample(np.array([0, 3, 12]), rng=5))
    assert isinstance(m.sample(3, rng=1), (int, np.integer))
    assert m.sample(3, (2, 3), rng=1).shape == (2, 3)
    big = DiscreteLaplace(1.0).sample(2.0**62, 4, rng=0)
    assert big.dtype == np.int64 and np.all(np.abs(big - 2**62) < 100)
    for mech, q in [
        (DiscreteTruncated(5.0, lower=0), 0),
        (DiscreteTruncated(1000.0, lower=0, upper=3), 1),
        (DiscreteBIT(0.5, lower=-2, upper=2), -5),
    ]:
        x = mech.sample(q, 200_000, rng=11)
        k, counts = np.unique(x, return_counts=True)
        expected = np.asarray(mech.pmf(k, q)) * x.size
        assert np.all(np.abs(counts - expected) <= 5 * np.sqrt(expected) + 1)
        chi2 = np.sum((counts - expected) ** 2 / expected)
        assert stats.chi2.sf(chi2, max(k.size - 1, 1)) > 1e-4


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: DiscreteBIT(1.0).bias(0.5), "q"),
        (lambda: DiscreteTruncated(1.0).pmf(0, [1, 2.5]), "q"),
        (lambda: DiscreteBIT(1.0, lower=0.5), "lower"),
        (lambda: DiscreteBIT(1.0, lower=0, upper=2.5), "upper"),
        (lambda: DiscreteTruncated(1.0, lower=3, upper=2), "lower"),
        (lambda: DiscreteLaplace(0.0), "scale"),
        (lambda: DiscreteLaplace(-1.0), "scale"),
        (lambda: DiscreteLaplace(np.inf), "scale"),
        (lambda: DiscreteLaplace(1.0).sample(2.0**64), "q"),
        (lambda: DiscreteLaplace(1.0).mean(np.nan), "q"),
        (lambda: DiscreteLaplace(1.0).ppf(1.5, 0), "p"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_atoms_and_expect():
    law = DiscreteTruncated(1.0, lower=0, upper=3).at(1)
    atoms = law.atoms()
    assert [a for a, _ in atoms] == [0.0, 1.0, 2.0, 3.0] and math.isclose(
        sum(m for _, m in atoms), 1.0
    )
    with pytest.raises(ValueError, match="atoms"):
        DiscreteLaplace(1.0).at(0).atoms()
    assert math.isclose(
        law.expect(lambda x: x**2), law.var() + law.mean() ** 2, rel_tol=1e-13
    )
    assert law.expect(lb=2, ub=3) == pytest.approx(
        2 * law.pmf(2) + 3 * law.pmf(3), rel=1e-14
    )


def test_log_tails_far_out():
    """logcdf/logsf/logpmf stay finite and exact where the probabilities underflow."""
    b = 2.0
    alpha = math.exp(-1 / b)
    dl = DiscreteLaplace(b)
    for m in (5.0, 1e4, 1e6 * b):
        assert dl.logcdf(-m, 0.0) == pytest.approx(
            -m / b - math.log1p(alpha), rel=1e-15
        )
        assert dl.logsf(m, 0.0) == pytest.approx(
            -(m + 1) / b - math.log1p(alpha), rel=1e-15
        )
        assert dl.logpmf(m, 0.0) == pytest.approx(
            -m / b + math.log((1 - alpha) / (1 + alpha)), rel=1e-15
        )
    t = DiscreteTruncated(b, lower=0)  # at q <= 0: P(M > y) = α^{y+1} G(∞)/Z = α^{y+1}
    assert t.logsf(1e6, -5.0) == pytest.approx(-(1e6 + 1) / b, rel=1e-15)
    m = DiscreteBIT(b, lower=0, upper=10)
    assert m.logpmf(0.0, 1e6) == pytest.approx(-1e6 / b - math.log1p(alpha), rel=1e-15)
    assert m.logcdf(9.0, -1e6) == pytest.approx(
        math.log1p(-(alpha ** (1e6 + 10)) / (1 + alpha)), abs=1e-300
    )


def test_true_values_go_through_the_shared_integer_check(monkeypatch):
    from spies import spy_on_integer_array

    seen = spy_on_integer_array(monkeypatch)
    m = DiscreteBIT(1.0, lower=0, upper=5)
    assert 0 < m.mean(2) < 5 and "q" in seen
    with pytest.raises(ValueError, match=r"^q must be integers, got 3\.0000000001$"):
        m.mean(3.0000000001)
