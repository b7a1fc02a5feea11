import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from log_tails import assert_log_tails_match_logs_of_the_law
from scipy import integrate, stats

import dpbook
from dpbook import log_laplace_moment

FAST = settings(max_examples=60, deadline=None)
QUAD = dict(epsabs=0.0, epsrel=1e-13, limit=200)


def moment_by_quad(b, k):
    f = lambda x: np.exp(k * x - abs(x) / b) / (2 * b)
    return (
        integrate.quad(f, -np.inf, 0, **QUAD)[0]
        + integrate.quad(f, 0, np.inf, **QUAD)[0]
    )


@FAST
@given(b=st.floats(0.01, 0.97), k=st.sampled_from([0.5, 1.0, 2.0]))
def test_moment_against_quad(b, k):
    if k * b >= 0.97:
        return
    assert np.isclose(
        log_laplace_moment(b, order=k), moment_by_quad(b, k), rtol=1e-10, atol=0
    )


def x_moment(mech, q, g):
    """∫ g(x) p(x) dx over (0, ∞), p = exp(logpdf), computed in t = log(x/q) (dx = x dt)."""
    b = mech.scale
    f = lambda t: g(q * np.exp(t)) * np.exp(
        mech.logpdf(q * np.exp(t), q) + t + np.log(q)
    )
    edges = [-100.0] + [k * b for k in (-10, -1, 0, 1, 10)] + [100.0]
    return sum(
        integrate.quad(f, a, c, **QUAD)[0] for a, c in zip(edges[:-1], edges[1:])
    )


@settings(max_examples=30, deadline=None)
@given(b=st.floats(0.02, 0.4), q=st.floats(1e-3, 1e3))
def test_moments_against_quad_of_density(b, q):
    mech = dpbook.LogLaplace(b)
    assert np.isclose(x_moment(mech, q, lambda x: 1.0), 1.0, rtol=1e-10)
    m = x_moment(mech, q, lambda x: x)
    assert np.isclose(mech.mean(q), m, rtol=1e-10)
    assert np.isclose(mech.bias(q), m - q, rtol=1e-8, atol=1e-12 * q)
    assert np.isclose(mech.bias(q), q * b * b / (1 - b * b), rtol=1e-13)
    v = x_moment(mech, q, lambda x: (x - mech.mean(q)) ** 2)
    assert np.isclose(mech.variance(q), v, rtol=1e-9)
    assert np.isclose(mech.mse(q), x_moment(mech, q, lambda x: (x - q) ** 2), rtol=1e-9)


def test_tiny_scale_has_no_cancellation():
    mech = dpbook.LogLaplace(1e-9)
    assert np.isclose(mech.bias(2.0), 2e-18, rtol=1e-12)
    assert np.isclose(mech.variance(2.0), 4 * 2e-18, rtol=1e-12)
    assert np.isclose(dpbook.relative_bias(1e-9), 1e-18, rtol=1e-12)


@pytest.mark.parametrize("b", [0.05, 0.3, 0.7, 1.0, 2.5])
def test_law_is_scipy_loglaplace(b):
    mech = dpbook.LogLaplace(b)
    law = stats.loglaplace(c=1 / b, scale=3.0)
    x = np.array([1e-6, 0.1, 1.0, 2.9, 3.0, 3.1, 10.0, 1e4])
    assert np.allclose(mech.cdf(x, 3.0), law.cdf(x), rtol=1e-12, atol=1e-300)
    assert np.allclose(mech.logpdf(x, 3.0), law.logpdf(x), rtol=1e-12)
    assert np.all(mech.cdf([-1.0, 0.0], 3.0) == 0) and mech.cdf(np.inf, 3.0) == 1
    assert np.all(mech.logpdf([-1.0, 0.0, np.inf], 3.0) == -np.inf)


def test_prop3_thresholds():
    q = 2.0
    for b in [0.1, 0.49]:
        m = dpbook.LogLaplace(b)
        assert np.isfinite([m.mean(q), m.bias(q), m.variance(q), m.mse(q)]).all()
    for b in [0.5, 0.9]:  # finite mean, infinite variance
        m = dpbook.LogLaplace(b)
        assert np.isfinite(m.mean(q)) and np.isfinite(m.bias(q))
        assert m.variance(q) == np.inf and m.mse(q) == np.inf
    for b in [1.0, 3.0]:
        m = dpbook.LogLaplace(b)
        assert m.mean(q) == np.inf and m.bias(q) == np.inf and m.variance(q) == np.inf
    # in terms of the calibration b = K/ε: finite mean iff K < ε, finite variance iff K < ε/2
    eps = 1.5
    for K, mean_ok, var_ok in [
        (0.5, True, True),
        (0.75, True, False),
        (1.4, True, False),
        (1.5, False, False),
    ]:
        m = dpbook.LogLaplace(dpbook.log_laplace_scale(eps, K))
        assert (
            np.isfinite(m.mean(1.0)) == mean_ok
            and np.isfinite(m.variance(1.0)) == var_ok
        )


def test_quad_shows_the_divergence():
    """Truncated integrals of E e^{kL}: they settle when kb < 1 and grow without bound when kb >= 1."""

    def partial(b, k, R):
        f = lambda x: np.exp(k * x - abs(x) / b) / (2 * b)
        return integrate.quad(f, -R, 0, **QUAD)[0] + integrate.quad(f, 0, R, **QUAD)[0]

    Rs = [10.0, 100.0, 400.0]
    for b, k in [(0.9, 1), (0.45, 2)]:
        vals = [partial(b, k, R) for R in Rs]
        assert np.isclose(vals[-1], log_laplace_moment(b, order=k), rtol=1e-10)
        assert abs(vals[2] - vals[1]) < 1e-3 * abs(vals[1] - vals[0])
    for b, k in [(1.0, 1), (1.3, 1), (0.5, 2), (0.6, 2)]:
        vals = [partial(b, k, R) for R in Rs]
        assert (
            vals[0] < vals[1] < vals[2] and vals[2] > 1.5 * vals[1]
        )  # at least linear growth
        assert log_laplace_moment(b, order=k) == np.inf


@pytest.mark.parametrize("b,q", [(0.1, 1.0), (0.3, 50.0), (0.45, 0.02)])
def test_sampler(b, q):
    mech = dpbook.LogLaplace(b)
    x = mech.sample(q, size=20000, rng=np.random.default_rng(7))
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-3
    se = np.sqrt(mech.variance(q) / x.size)
    assert abs(x.mean() - mech.mean(q)) < 5 * se
    assert (x > 0).all()


def test_sampler_heavy_tail_and_shapes():
    mech = dpbook.LogLaplace(0.8)  # mean finite, variance infinite: KS only
    x = mech.sample(2.0, size=20000, rng=np.random.default_rng(3))
    assert stats.kstest(x, lambda t: mech.cdf(t, 2.0)).pvalue > 1e-3
    assert mech.sample(np.ones((2, 3)), rng=np.random.default_rng(0)).shape == (2, 3)
    assert isinstance(mech.mean(1.0), float) and mech.mean([1.0, 2.0]).shape == (2,)


def test_bad_inputs():
    for q in [0.0, -1.0, np.nan, np.inf, [1.0, 0.0]]:
        with pytest.raises(ValueError, match="q"):
            dpbook.LogLaplace(0.3).mean(q)
        with pytest.raises(ValueError, match="q"):
            dpbook.LogLaplace(0.3).sample(q)
    for b in [0, -1, np.nan, np.inf]:
        with pytest.raises(ValueError, match="scale"):
            dpbook.LogLaplace(b)
        with pytest.raises(ValueError, match="scale"):
            dpbook.relative_bias(b)
    with pytest.raises(ValueError, match="K"):
        dpbook.log_laplace_scale(1.0, 0.0)
    with pytest.raises(ValueError, match="epsilon"):
        dpbook.log_laplace_scale(-1.0, 1.0)
    with pytest.raises(ValueError, match="order"):
        log_laplace_moment(0.3, order=-1)
    assert dpbook.log_laplace_scale(2.0, 0.5) == 0.25


@pytest.mark.parametrize("b", [0.05, 0.3, 1.0, 2.5])
def test_sampler_log_is_laplace_with_a_fair_sign(b):
    """``log(x/q)/b`` must be a standard Laplace draw: KS on it, and an exact binomial test on its sign."""
    q = 3.0
    x = dpbook.LogLaplace(b).sample(q, size=40000, rng=np.random.default_rng(19))
    z = np.log(x / q) / b
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
    assert stats.kstest(np.abs(z), stats.expon.cdf).pvalue > 1e-3
    assert stats.binomtest(int((z > 0).sum()), z.size, 0.5).pvalue > 1e-3


def test_sampler_with_varying_q_and_extreme_q():
    mech = dpbook.LogLaplace(0.4)
    values = [1e-3, 1.0, 250.0]
    q = np.repeat(values, 12000)
    x = mech.sample(q, rng=np.random.default_rng(23))
    assert x.shape == q.shape
    for value in values:
        part = x[q == value]
        assert stats.kstest(part, lambda t: mech.cdf(t, value)).pvalue > 1e-3
    grid = mech.sample([[1.0], [100.0]], size=(2, 5000), rng=np.random.default_rng(2))
    assert np.median(grid[1]) > 50 * np.median(grid[0])
    for q in (1e-300, 1e300):
        x = dpbook.LogLaplace(0.05).sample(q, size=1000, rng=np.random.default_rng(4))
        assert np.isfinite(x).all() and (x > 0).all()
        assert abs(np.median(np.log(x / q))) < 0.01
    assert isinstance(mech.sample(2.0, rng=np.random.default_rng(0)), float)
    assert mech.sample(2.0, size=(2, 0), rng=1).shape == (2, 0)  # no draw, no error


def test_log_laplace_log_tails_exact():
    """``logcdf``/``logsf`` are the Laplace log-tails of ``log x`` around ``log q``: ``log(1/2) - |log(x/q)|/b``
    deep in a tail (``log(cdf)`` is ``-inf`` there), ``-inf``/``0`` at ``x <= 0``, and equal to
    ``log(cdf)``/``log(sf)`` where those do not underflow."""
    half = np.log(0.5)
    mech = dpbook.LogLaplace(1e-5)
    assert np.isclose(
        mech.logcdf(2.0, 3.0), half + np.log(2 / 3) / 1e-5, rtol=1e-12, atol=0
    )
    assert np.isclose(
        mech.logsf(4.0, 3.0), half - np.log(4 / 3) / 1e-5, rtol=1e-12, atol=0
    )
    assert mech.logcdf(0.0, 3.0) == -np.inf and mech.logsf(-1.0, 3.0) == 0.0
    assert mech.logcdf(np.inf, 3.0) == 0.0 and mech.logsf(np.inf, 3.0) == -np.inf
    unit = dpbook.LogLaplace(0.3)
    xs = np.concatenate([[-1.0, 0.0], np.geomspace(1e-3, 1e3, 37)])
    assert_log_tails_match_logs_of_the_law(unit, xs, (0.01, 1.0, 50.0))


def test_sampler_skips_the_overflow_check_only_where_no_draw_can_overflow(monkeypatch):
    """The blocks skip the over/underflow check when ``q (2 e^{37 b})^{±1}`` is finite and positive: 37 is beyond
    the largest Laplace offset the sampler draws (``53 log 2`` scales, at the extreme uniforms), the draws are the
    very same as the checked path's, and at the ends of the doubles the checked path keeps them finite."""
    from dpbook._kernels.laplace import _offsets_in_place
    from dpbook.families import multiplicative

    extreme = np.array([-1.0, 1.0 - 2.0**-53, -(1.0 - 2.0**-53), 0.0])
    assert np.abs(_offsets_in_place(extreme, 1.0)).max() < multiplicative._REACH
    mech = dpbook.LogLaplace(0.3)
    fast = mech.sample(3.0, size=5000, rng=np.random.default_rng(1))
    monkeypatch.setattr(multiplicative, "_REACH", 1e300)  # the check on every block
    assert np.array_equal(
        mech.sample(3.0, size=5000, rng=np.random.default_rng(1)), fast
    )
    monkeypatch.undo()
    # the checked path (1e308 e^{37 b} overflows), the fast one
    for q in (1e308, 1e-307):
        x = dpbook.LogLaplace(0.05).sample(q, size=20000, rng=np.random.default_rng(4))
        assert np.all(np.isfinite(x)) and np.all(x > 0)
        assert abs(np.median(np.log(x / q))) < 0.01
