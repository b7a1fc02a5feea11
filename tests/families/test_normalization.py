import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

import dpbook
from dpbook import Laplace
from dpbook.design.calibration import _endpoint_probabilities

SETTINGS = settings(max_examples=40, deadline=None)


# ------------------------------------------------------------------------------------------------
# helpers: feasible sets and quadrature


@st.composite
def unions(draw):
    """1-4 disjoint pieces (ends possibly infinite), a scale, and a true value inside/between/outside."""
    m = draw(st.integers(1, 4))
    scale = draw(st.floats(0.2, 5.0))
    start = draw(st.floats(-10.0, 10.0))
    gaps = draw(st.lists(st.floats(0.05, 6.0), min_size=2 * m - 1, max_size=2 * m - 1))
    ends = start + scale * np.concatenate([[0.0], np.cumsum(gaps)])
    lo, hi = list(ends[0::2]), list(ends[1::2])
    if draw(st.booleans()):
        lo[0] = -np.inf
    if draw(st.booleans()):
        hi[-1] = np.inf
    allowed = list(zip(lo, hi))
    finite = list(ends)
    where = draw(st.sampled_from(["inside", "between", "below", "above", "far"]))
    if where == "inside":
        k = draw(st.integers(0, m - 1))
        a = lo[k] if np.isfinite(lo[k]) else ends[2 * k + 1] - 5 * scale
        b = hi[k] if np.isfinite(hi[k]) else ends[2 * k] + 5 * scale
        q = a + draw(st.floats(0.0, 1.0)) * (b - a)
    elif where == "between" and m > 1:
        k = draw(st.integers(0, m - 2))
        q = hi[k] + draw(st.floats(0.0, 1.0)) * (lo[k + 1] - hi[k])
    elif where == "far":
        t = draw(st.floats(1.0, 700.0))
        q = (finite[0] - t * scale) if draw(st.booleans()) else (finite[-1] + t * scale)
    else:
        t = draw(st.floats(0.0, 40.0))
        q = (
            (finite[0] - t * scale)
            if where in ("below", "between")
            else (finite[-1] + t * scale)
        )
    return scale, allowed, float(q)


def integrate_law(mech, q, g, upto=np.inf):
    """``int g(x) f_q(x) dx`` over the feasible set below ``upto``, piece by piece, near the mass only.

    The density is typed out here (Laplace density over the library's normalizer), so the total mass
    checks the normalizer and the moments check the formulas.
    """
    total = 0.0
    scale = mech.scale
    log_norm = math.log(2 * scale) + mech.log_normalizer(q)
    for a, b in mech.allowed:
        c = min(max(q, a), b)
        lo, hi = max(a, c - 60 * scale), min(b, c + 60 * scale, upto)
        if not lo < hi:
            continue
        cuts = [lo, q, hi] if lo < q < hi else [lo, hi]
        for u, v in zip(cuts[:-1], cuts[1:]):
            val, _ = integrate.quad(
                lambda x: g(x) * math.exp(-abs(x - q) / scale - log_norm),
                u,
                v,
                epsabs=0.0,
                epsrel=1e-12,
                limit=400,
            )
            total += val
    return total


def close(a, b, scale=1.0, rtol=1e-10):
    return np.isclose(a, b, rtol=rtol, atol=rtol * scale)


# ------------------------------------------------------------------------------------------------
# Normalized


@SETTINGS
@given(unions())
def test_normalized_against_quadrature(case):
    scale, allowed, q = case
    mech = dpbook.Normalized(scale, allowed)
    assert close(integrate_law(mech, q, lambda x: 1.0), 1.0)
    bias = mech.bias(q)
    assert close(integrate_law(mech, q, lambda x: x - q), bias, scale)
    assert close(mech.mean(q) - q, bias, scale)
    var = mech.variance(q)
    mean = mech.mean(q)
    assert close(integrate_law(mech, q, lambda x: (x - mean) ** 2), var, scale**2)
    assert close(mech.mse(q), var + bias**2, scale**2)
    for a, b in mech.allowed:
        for x in (a, b, 0.5 * (a + b) if np.isfinite(a + b) else q):
            if np.isfinite(x):
                assert close(
                    integrate_law(mech, q, lambda t: 1.0, upto=x), mech.cdf(x, q)
                )
    for value in (bias, var, mech.cdf(q, q), mech.log_normalizer(q)):
        assert np.isfinite(value)


def test_log_normalizer_closed_form_and_far_away():
    allowed = [(-np.inf, -1.0), (0.0, 2.0), (5.0, np.inf)]
    mech = dpbook.Normalized(0.7, allowed)
    q = np.array([-3.0, 0.5, 3.0, 9.0])
    cdf = lambda x: stats.laplace.cdf(x, q, 0.7)
    mass = cdf(-1.0) + (cdf(2.0) - cdf(0.0)) + (1 - cdf(5.0))
    assert np.allclose(mech.log_normalizer(q), np.log(mass), rtol=1e-13)
    inner = dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 3.0)])
    far = inner.log_normalizer(703.0)
    assert np.isclose(
        far,
        np.log(
            0.5 * (np.exp(-702.0) - np.exp(-703.0) + np.exp(-700.0) - np.exp(-701.0))
        ),
        rtol=1e-13,
    )
    assert np.isfinite(inner.log_normalizer(5000.0)) and np.isfinite(inner.bias(5000.0))


@pytest.mark.parametrize(
    "lower, upper", [(0.0, np.inf), (-np.inf, 1.5), (-1.0, 2.0), (3.0, 3.01)]
)
def test_one_interval_is_truncated(lower, upper):
    norm = dpbook.Normalized(1.3, [(lower, upper)])
    trunc = dpbook.Truncated(1.3, lower=lower, upper=upper)
    q = np.array([-900.0, -60.0, -1.0, 0.0, 0.7, 2.5, 3.005, 40.0, 910.0])
    for name in ("bias", "mean", "variance", "mse"):
        assert np.allclose(
            getattr(norm, name)(q), getattr(trunc, name)(q), rtol=1e-13, atol=1e-13
        )
    assert np.allclose(norm.log_normalizer(q), trunc.log_mass_kept(q), rtol=1e-13)
    x = np.linspace(-3.0, 4.0, 15)[:, None]
    assert np.allclose(norm.cdf(x, q), trunc.cdf(x, q), rtol=1e-12, atol=1e-15)
    a, b = norm.logpdf(x, q), trunc.logpdf(x, q)
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    assert np.allclose(a[np.isfinite(a)], b[np.isfinite(b)], rtol=1e-12)
    p = np.linspace(0, 1, 9)[:, None]
    assert np.allclose(norm.ppf(p, q), trunc.ppf(p, q), rtol=1e-12, atol=1e-12)
    assert norm.domain == trunc.domain and norm.support == trunc.support


def test_touching_pieces_merge_and_order_is_free():
    mech = dpbook.Normalized(1.0, [(2.0, 3.0), (0.0, 1.0), (1.0, 2.0)])
    assert mech.allowed == ((0.0, 3.0),)
    assert np.isclose(
        mech.mean(0.4),
        dpbook.Truncated(1.0, lower=0.0, upper=3.0).mean(0.4),
        rtol=1e-14,
    )
    assert dpbook.Normalized(1.0, [(5.0, np.inf), (-np.inf, 0.0)]).domain == (
        -np.inf,
        np.inf,
    )


def test_logpdf_off_the_set_and_ppf_inverts_cdf():
    mech = dpbook.Normalized(0.9, [(-np.inf, 0.0), (1.0, 2.0), (4.0, np.inf)])
    assert mech.logpdf(0.5, 1.0) == -np.inf and mech.logpdf(3.0, 0.0) == -np.inf
    assert np.isclose(
        mech.logpdf(1.5, 1.0), Laplace(0.9).logpdf(1.5, 1.0) - mech.log_normalizer(1.0)
    )
    p = np.linspace(0.0, 1.0, 41)
    for q in (-50.0, 0.5, 1.5, 3.0, 80.0):
        x = mech.ppf(p, q)
        assert x[0] == -np.inf and x[-1] == np.inf
        assert np.allclose(mech.cdf(x[1:-1], q), p[1:-1], rtol=1e-9, atol=1e-12)
        assert (np.diff(x) >= 0).all()


SAMPLER_CASES = [
    (1.0, [(0.0, np.inf)], 0.3),
    (0.8, [(-np.inf, -2.0), (0.0, 1.0), (3.0, 7.5), (9.0, np.inf)], 2.0),
    (0.8, [(-np.inf, -2.0), (0.0, 1.0), (3.0, 7.5), (9.0, np.inf)], 8.0),
    (0.5, [(0.0, 1.0), (1.5, 2.0)], 1.25),
    (0.5, [(0.0, 1.0), (1.5, 2.0)], -25.0),
    (2.0, [(-3.0, -1.0), (1.0, 3.0), (10.0, 11.0)], 100.0),
]


@pytest.mark.parametrize("scale, allowed, q", SAMPLER_CASES)
def test_normalized_sampler(scale, allowed, q):
    mech = dpbook.Normalized(scale, allowed)
    x = mech.sample(q, size=20000, rng=np.random.default_rng(11))
    assert x.shape == (20000,)
    assert np.asarray(mech.logpdf(x, q) > -np.inf).all()
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-3
    se = math.sqrt(mech.variance(q) / x.size)
    assert abs(x.mean() - mech.mean(q)) < 5 * se
    qs = np.array([[-1.0, 0.5], [1.5, 4.0]])
    assert mech.sample(qs, rng=np.random.default_rng(0)).shape == (2, 2)


def test_sampler_with_varying_q():
    mech = dpbook.Normalized(1.0, [(-np.inf, 0.0), (1.0, np.inf)])
    q = np.repeat([-2.0, 0.5, 3.0], 15000)
    x = mech.sample(q, rng=np.random.default_rng(5))
    for value in (-2.0, 0.5, 3.0):
        part = x[q == value]
        assert stats.kstest(part, lambda t: mech.cdf(t, value)).pvalue > 1e-3


def test_sampler_blocks_and_piece_lookup_do_not_change_the_draws(monkeypatch):
    """Blocks of any size (the sampler's and the quantile function's) and either way of finding the piece give
    the very same draws, and the draws are the quantiles of their uniforms."""
    from dpbook._kernels import sampling
    from dpbook.families import normalization

    mech = dpbook.Normalized(
        0.8, [(-np.inf, -2.0), (0.0, 1.0), (3.0, 7.5), (9.0, np.inf)]
    )
    base = mech.sample(2.0, size=(3, 2501), rng=np.random.default_rng(4))
    u = np.random.default_rng(4).random((3, 2501))
    with np.errstate(divide="ignore"):
        by_ppf = normalization._ppf(u, 2.0, 0.8, mech._lo, mech._hi, floor=2.0**-53)
    assert np.array_equal(by_ppf, base)
    monkeypatch.setattr(sampling, "_BLOCK", 1000)
    assert np.array_equal(
        mech.sample(2.0, size=(3, 2501), rng=np.random.default_rng(4)), base
    )
    monkeypatch.setattr(normalization, "_BLOCK", 1000)
    with np.errstate(divide="ignore"):
        u = np.random.default_rng(4).random((3, 2501))
        by_ppf = normalization._ppf(u, 2.0, 0.8, mech._lo, mech._hi, floor=2.0**-53)
    assert np.array_equal(by_ppf, base)
    monkeypatch.setattr(normalization, "_FEW_PIECES", 0)
    assert np.array_equal(
        mech.sample(2.0, size=(3, 2501), rng=np.random.default_rng(4)), base
    )
    assert stats.kstest(base.ravel(), lambda t: mech.cdf(t, 2.0)).pvalue > 1e-3


def test_sampler_many_pieces():
    lo = np.r_[-np.inf, np.arange(1.0, 40.0, 2.0)]
    hi = np.r_[0.0, np.arange(1.5, 40.0, 2.0)]
    mech = dpbook.Normalized(3.0, list(zip(lo, hi)))
    for q in (11.2, -30.0, 700.0):
        x = mech.sample(q, size=20000, rng=np.random.default_rng(6))
        assert np.asarray(mech.logpdf(x, q) > -np.inf).all()
        assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-3
        assert abs(x.mean() - mech.mean(q)) < 5 * math.sqrt(mech.variance(q) / x.size)


def test_pieces_without_mass_are_never_drawn():
    mech = dpbook.Normalized(1.0, [(-900.0, -899.0), (0.0, 1.0), (800.0, 801.0)])
    x = mech.sample(0.5, size=20000, rng=np.random.default_rng(1))
    assert np.all((x >= 0.0) & (x <= 1.0))
    assert mech.ppf(0.0, 0.5) == -900.0 and mech.ppf(1.0, 0.5) == 801.0
    assert np.isclose(mech.ppf(0.5, 0.5), 0.5, rtol=1e-12)


def test_ppf_one_q_agrees_with_ppf_per_q():
    """The lookup path (one q for all points) and the per-point path (an array of q) agree."""
    mech = dpbook.Normalized(0.9, [(-np.inf, 0.0), (1.0, 2.0), (4.0, np.inf)])
    p = np.linspace(0.0, 1.0, 33)
    qs = np.array([-50.0, 0.5, 1.5, 3.0, 80.0])
    grid = mech.ppf(p[:, None], qs)
    for j, q in enumerate(qs):
        one = mech.ppf(p, q)
        assert np.allclose(one, grid[:, j], rtol=1e-12, atol=1e-12)
        assert all(
            np.isclose(mech.ppf(float(pi), q), xi, rtol=1e-12, atol=1e-12)
            for pi, xi in zip(p[::8], one[::8])
        )
    assert isinstance(mech.ppf(0.3, 1.0), float)


# ------------------------------------------------------------------------------------------------
# Croft's scales for one infinite constraint


def test_boundary_scale():
    assert round(dpbook.croft_boundary_scale(1.0, 1.0), 6) == 1.585954
    w = special.lambertw(-1 / (2 * math.e)).real
    assert math.isclose(
        dpbook.croft_boundary_scale(0.4, 3.0), -3.0 / (w * math.e * 0.4), rel_tol=1e-14
    )


def printed_33(distance, epsilon, sensitivity, sign=-1.0):
    """Croft's (33) typed directly (leading minus from the LaTeX); ``sign=+1`` is the text rendering."""
    i, d = distance / sensitivity, sensitivity
    s1 = dpbook.croft_boundary_scale(epsilon, sensitivity)
    arg = (
        -2
        * i
        * d
        * math.exp(-i * epsilon)
        * math.exp(-i * d * math.exp(-i * epsilon) / s1)
        / s1
    )
    w = special.lambertw(arg, 0 if i <= 1 / epsilon else -1).real
    return (
        sign
        * i
        * d
        * math.exp(i * epsilon)
        * s1
        / (w * math.exp(i * epsilon) * s1 + i * d)
    )


@pytest.mark.parametrize("epsilon, sensitivity", [(1.0, 1.0), (0.3, 2.0), (3.0, 0.5)])
def test_croft_scale_solves_its_equation(epsilon, sensitivity):
    unit = sensitivity / epsilon
    d = unit * np.concatenate(
        [np.geomspace(1e-10, 0.9, 40), np.geomspace(1.1, 700.0, 40)]
    )
    s = np.asarray(dpbook.croft_scale(d, epsilon, sensitivity))
    s1 = dpbook.croft_boundary_scale(epsilon, sensitivity)
    # (sigma/s1)(2 e^{d/sigma} - 1) = e^{i eps}, in logs
    lhs = np.log(s / s1) + d / s + np.log(2 - np.exp(-d / s))
    assert np.allclose(lhs, d * epsilon / sensitivity, rtol=1e-13, atol=1e-13)
    for dist in (0.2 * unit, 0.7 * unit, 1.6 * unit, 4.0 * unit):
        assert math.isclose(
            dpbook.croft_scale(dist, epsilon, sensitivity),
            printed_33(dist, epsilon, sensitivity),
            rel_tol=1e-10,
        )
        assert printed_33(dist, epsilon, sensitivity, sign=1.0) < 0


def test_croft_scale_shape():
    eps, sens = 0.5, 2.0
    unit = sens / eps
    s1 = dpbook.croft_boundary_scale(eps, sens)
    assert dpbook.croft_scale(0.0, eps, sens) == s1
    assert math.isclose(dpbook.croft_scale(1e-12 * unit, eps, sens), s1, rel_tol=1e-10)
    y0 = -special.lambertw(-1 / (2 * math.e)).real
    at_switch = unit / (1 - y0)
    for d in (unit, unit * (1 - 1e-12), unit * (1 + 1e-12)):
        assert math.isclose(dpbook.croft_scale(d, eps, sens), at_switch, rel_tol=1e-10)
    for h in (1e-4, 1e-7):
        left, right = dpbook.croft_scale([unit * (1 - h), unit * (1 + h)], eps, sens)
        assert abs(right - left) < 10 * h * unit
    d = unit * np.linspace(0, 50, 5001)
    s = np.asarray(dpbook.croft_scale(d, eps, sens))
    assert (np.diff(s) < 0).all() and (s <= s1).all() and (s > unit).all()
    assert math.isclose(dpbook.croft_scale(1e7 * unit, eps, sens), unit, rel_tol=1e-5)


def croft_log_ratio(mech, x, q1, q2):
    return np.asarray(mech.logpdf(x, q1)) - np.asarray(mech.logpdf(x, q2))


@pytest.mark.parametrize(
    "epsilon, sensitivity, lower", [(1.0, 1.0, 0.0), (0.5, 2.0, -3.0), (2.0, 0.7, 10.0)]
)
def test_croft_guarantee_between_boundary_and_data(epsilon, sensitivity, lower):
    mech = dpbook.CroftLaplace(epsilon, sensitivity, lower=lower)
    unit = sensitivity / epsilon
    qs = lower + unit * np.linspace(0.0, 6.0, 25)
    worst = -np.inf
    for a in qs:
        for b in qs[qs > a]:
            x = np.linspace(lower, b, 400)
            gap = (b - a) / sensitivity * epsilon
            ratio = croft_log_ratio(mech, x, a, b)
            worst = max(worst, ratio.max() - gap, (-ratio).max() - gap)
            if a == lower:
                assert math.isclose(ratio[0], gap, rel_tol=1e-9, abs_tol=1e-12)
    assert worst <= 1e-9


def test_croft_not_dp_far_from_data():
    mech = dpbook.CroftLaplace(1.0, 1.0)
    assert round(float(croft_log_ratio(mech, 200.0, 0.5, 1.5)), 2) == 21.05
    far = croft_log_ratio(mech, np.array([50.0, 500.0, 5000.0]), 0.5, 1.5)
    assert (np.diff(far) > 0).all() and far[-1] > 100


def test_croft_laplace_is_normalized_with_its_scale():
    mech = dpbook.CroftLaplace(0.8, 1.5, lower=2.0)
    q = np.array([1.0, 2.0, 2.5, 4.0, 30.0])
    s = np.asarray(mech.scale_at(q))
    assert s[0] == s[1] == dpbook.croft_boundary_scale(0.8, 1.5)
    for qi, si in zip(q, s):
        ref = dpbook.Truncated(si, lower=2.0, upper=np.inf)
        assert math.isclose(mech.bias(qi), ref.bias(qi), rel_tol=1e-13, abs_tol=1e-14)
        assert math.isclose(mech.variance(qi), ref.variance(qi), rel_tol=1e-13)
        assert math.isclose(
            mech.cdf(qi + 1.0, qi), ref.cdf(qi + 1.0, qi), rel_tol=1e-13
        )
        assert math.isclose(
            mech.log_normalizer(qi), ref.log_mass_kept(qi), rel_tol=1e-13
        )
        assert math.isclose(mech.mse(qi), ref.mse(qi), rel_tol=1e-13)
    # below the boundary the law is the law at the boundary
    x = np.linspace(2.0, 8.0, 7)
    assert np.allclose(mech.logpdf(x, 1.0), mech.logpdf(x, 2.0), rtol=1e-14)
    assert mech.domain == (2.0, np.inf) and mech.support == (2.0, np.inf)


@pytest.mark.parametrize("q", [-1.0, 0.0, 0.4, 1.0, 3.0, 50.0])
def test_croft_sampler(q):
    mech = dpbook.CroftLaplace(1.0, 1.0)
    x = mech.sample(q, size=20000, rng=np.random.default_rng(3))
    assert (x >= 0).all()
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-3
    assert abs(x.mean() - mech.mean(q)) < 5 * math.sqrt(mech.variance(q) / x.size)
    m, _ = integrate.quad(
        lambda t: t * math.exp(mech.logpdf(t, q)), 0.0, np.inf, points=None
    )
    assert math.isclose(m, mech.mean(q), rel_tol=1e-9)


# ------------------------------------------------------------------------------------------------
# one scale for every q


def random_allowed(rng, n, infinite_constraint=False):
    """``n`` finite constraints (gaps) between two feasible half-lines, lengths on a spread of scales."""
    cuts = np.cumsum(
        rng.exponential(1.0, size=2 * n) * 10 ** rng.uniform(-1.5, 0.7, size=2 * n)
    )
    lo = np.r_[-np.inf, cuts[1::2]]
    hi = np.r_[cuts[0::2], np.inf]
    if infinite_constraint:
        lo[0] = cuts[0] - 1.0
    return list(zip(lo, hi))


def test_uniform_scale_one_half_line_is_two_over_epsilon():
    for eps, sens in [(1.0, 1.0), (0.1, 1.0), (3.0, 2.5)]:
        for allowed in (
            [(0.0, np.inf)],
            [(-np.inf, 4.0)],
            [(0.0, 1.0)],
            [(-1.0, 0.0), (2.0, np.inf)],
        ):
            for method in ("fast", "paper"):
                got = dpbook.croft_uniform_scale(eps, sens, allowed, method=method)
                assert math.isclose(got, 2 * sens / eps, rel_tol=1e-12)
    # (60) at the boundary of [0, inf) is sigma (1 - 2L)/N = 2 sigma: the derivative condition of Lemma 7
    assert (
        _endpoint_probabilities(1.0, np.array([0.0]), np.array([np.inf])).max() == 1.0
    )
    assert dpbook.croft_uniform_scale(1.0, 1.0, [(-np.inf, np.inf)]) == 1.0


@pytest.mark.parametrize("seed", range(12))
def test_paper_and_fast_agree(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 31))
    eps, sens = float(rng.uniform(0.2, 3.0)), float(rng.uniform(0.3, 3.0))
    allowed = random_allowed(rng, n)
    fast = dpbook.croft_uniform_scale(eps, sens, allowed)
    paper = dpbook.croft_uniform_scale(eps, sens, allowed, method="paper")
    assert math.isclose(fast, paper, rel_tol=1e-9)
    assert sens / eps <= fast < 2 * sens / eps


def test_lower_bounds():
    rng = np.random.default_rng(7)
    for n in (1, 3, 6):
        allowed = random_allowed(rng, n)
        rows = dpbook.croft_lower_bounds(1.3, 0.9, allowed)
        assert (
            len(rows) == 3 * n + 2
        )  # n + 1 pieces, two ends each (infinite ends included), n gaps
        lemma7 = max(r[3] for r in rows if r[0] == 7)
        lemma9 = max(r[3] for r in rows if r[0] == 9)
        assert lemma9 < lemma7  # Lemma 9 never binds
        assert math.isclose(
            lemma7, dpbook.croft_uniform_scale(1.3, 0.9, allowed), rel_tol=1e-9
        )


def pair_excess(mech, epsilon, sensitivity, qs):
    """For every pair of true values in ``qs``: max over outputs of log f_q1/f_q2 - ε|q1 - q2|/Δ.

    Outputs: every true value, every finite piece end (the kinks of the log-ratio) and a grid.
    """
    qs = np.asarray(qs, dtype=float)
    xs = list(qs)
    for a, b in mech.allowed:
        xs += [v for v in (a, b) if np.isfinite(v)]
    xs = np.array(xs + list(np.linspace(min(xs) - 5, max(xs) + 5, 201)))
    xs = xs[np.isfinite(np.asarray(mech.logpdf(xs, qs[0])))]
    log_f = np.asarray(mech.logpdf(xs[:, None], qs[None, :]))
    ratio = (log_f[:, :, None] - log_f[:, None, :]).max(axis=0)
    return ratio - epsilon * np.abs(qs[:, None] - qs[None, :]) / sensitivity


@pytest.mark.parametrize("seed", range(4))
def test_uniform_scale_meets_guarantee_and_is_tight(seed):
    rng = np.random.default_rng(100 + seed)
    eps, sens = 0.9, 1.4
    allowed = random_allowed(rng, int(rng.integers(1, 5)))
    sigma = dpbook.croft_uniform_scale(eps, sens, allowed)
    mech = dpbook.Normalized(sigma, allowed)
    qs = []
    for a, b in mech.allowed:
        a = a if np.isfinite(a) else b - 4
        b = b if np.isfinite(b) else a + 4
        qs += list(np.linspace(a, b, 12))
    assert pair_excess(mech, eps, sens, qs).max() <= 1e-9
    # a little less noise breaks it next to the binding end
    smaller = dpbook.Normalized(sigma * (1 - 1e-3), allowed)
    lo, hi = (
        np.array([p[0] for p in mech.allowed]),
        np.array([p[1] for p in mech.allowed]),
    )
    p = _endpoint_probabilities(sigma, lo, hi)
    j = int(np.argmax(p))
    m = len(lo)
    end, inward = (hi[j], -1.0) if j < m else (lo[j - m], 1.0)
    step = 1e-4 * sigma
    assert pair_excess(smaller, eps, sens, [end, end + inward * step]).max() > 0


def test_uniform_scale_monotone_feasibility():
    rng = np.random.default_rng(2)
    allowed = random_allowed(rng, 8)
    lo, hi = np.array([p[0] for p in allowed]), np.array([p[1] for p in allowed])
    sigma = dpbook.croft_uniform_scale(1.0, 1.0, allowed)
    for s in np.linspace(sigma, 2.0, 30):
        assert s >= 2 * _endpoint_probabilities(s, lo, hi).max() - 1e-12
    for s in np.linspace(0.5, sigma, 30)[:-1]:
        assert s < 2 * _endpoint_probabilities(s, lo, hi).max()


def test_table2():
    rows = dpbook.croft_table2()
    assert [round(r["computed"], 3) for r in rows[:1]] == [1.586]
    assert (
        rows[1]["computed"] < 1.586 + 5e-4 and rows[1]["computed"] < rows[0]["computed"]
    )
    assert 1.99 < rows[2]["computed"] < 2.0
    assert rows[3]["computed"] == 2.0
    scaled = dpbook.croft_table2(epsilon=0.5, sensitivity=3.0)
    assert all(
        math.isclose(a["computed"], b["computed"], rel_tol=1e-8)
        for a, b in zip(rows, scaled)
    )


# ------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    "allowed",
    [
        [],
        [(1.0, 1.0)],
        [(2.0, 1.0)],
        [(0.0, np.nan)],
        [(0.0, 2.0), (1.0, 3.0)],
        "abc",
        [(0.0, 1.0, 2.0)],
        None,
        [(np.inf, np.inf)],
    ],
)
def test_bad_allowed(allowed):
    with pytest.raises(ValueError, match="allowed"):
        dpbook.Normalized(1.0, allowed)
    with pytest.raises(ValueError, match="allowed"):
        dpbook.croft_uniform_scale(1.0, 1.0, allowed)


def test_bad_input():
    for scale in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="scale"):
            dpbook.Normalized(scale, [(0.0, 1.0)])
    for kwargs, name in [
        ({"epsilon": 0.0}, "epsilon"),
        ({"sensitivity": -1.0}, "sensitivity"),
        ({"lower": np.nan}, "lower"),
        ({"epsilon": np.inf}, "epsilon"),
    ]:
        args = {"epsilon": 1.0, "sensitivity": 1.0, **kwargs}
        with pytest.raises(ValueError, match=name):
            dpbook.CroftLaplace(**args)
    with pytest.raises(ValueError, match="distance"):
        dpbook.croft_scale(-1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="distance"):
        dpbook.croft_scale(np.nan, 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dpbook.croft_boundary_scale(0.0, 1.0)
    with pytest.raises(ValueError, match="method"):
        dpbook.croft_uniform_scale(1.0, 1.0, [(0.0, 1.0)], method="slow")
    with pytest.raises(ValueError, match="digits"):
        dpbook.croft_uniform_scale(1.0, 1.0, [(0.0, 1.0)], method="paper", digits=-1)
    mech = dpbook.Normalized(1.0, [(0.0, 1.0)])
    with pytest.raises(ValueError, match="q"):
        mech.mean(np.nan)
    with pytest.raises(ValueError, match="p"):
        mech.ppf(1.5, 0.0)
    with pytest.raises(ValueError, match="size"):
        mech.sample(0.0, size=-1)
    with pytest.raises(ValueError, match="q"):
        dpbook.CroftLaplace(1.0, 1.0).bias(np.inf)
    with pytest.raises(ValueError, match="x"):
        mech.cdf(np.nan, 0.0)


@pytest.mark.parametrize(
    "allowed",
    [
        [(18.0, 90.0)],
        [(1.0, 58.0), (66.0, 195.0), (227.0, 350.0), (360.0, 365.0)],
        [(0.0, np.inf)],
        [(0.0, 1.0), (3.0, np.inf)],
    ],
)
def test_lower_bounds_with_infinite_constraints(allowed):
    rows = dpbook.croft_lower_bounds(1.0, 1.0, allowed)
    assert max(r[3] for r in rows) == pytest.approx(
        dpbook.croft_uniform_scale(1.0, 1.0, allowed), rel=1e-9
    )
