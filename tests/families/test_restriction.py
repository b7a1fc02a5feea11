import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import dpbook

FAST = settings(max_examples=30, deadline=None)
QUAD = dict(epsabs=0.0, epsrel=1e-12, limit=200)


def restricted_moment(base, q, g):
    """E[g(Ŷ_q)] by quad of the restricted density pdf(x - q) / sf(-q) over [0, ∞), split near q."""
    w = base.std()
    f = lambda x: g(x) * base.pdf(x - q)
    edges = sorted(
        {0.0, *[max(0.0, q + k * w) for k in (-30, -10, -3, -1, 0, 1, 3, 10, 30)]}
    ) + [np.inf]
    return sum(
        integrate.quad(f, a, c, **QUAD)[0] for a, c in zip(edges[:-1], edges[1:])
    ) / base.sf(-q)


@FAST
@given(b=st.floats(0.1, 10.0), t=st.floats(0.0, 700.0))
def test_laplace_bias_closed_form(b, t):
    """McGlinchey–Mason §3: bias (q + b) / (2 e^{q/b} - 1), for q/b up to 700."""
    q = t * b
    exact = (q + b) * np.exp(-t) / (2 - np.exp(-t))
    got = dpbook.Restricted(stats.laplace(scale=b)).bias(q)
    assert np.isclose(got, exact, rtol=1e-10, atol=0)


@settings(max_examples=15, deadline=None)
@given(b=st.floats(0.1, 10.0), t=st.one_of(st.floats(0.0, 3.0), st.floats(0.0, 700.0)))
def test_laplace_agrees_with_truncated(b, t):
    q = t * b
    r = dpbook.Restricted(stats.laplace(scale=b))
    tr = dpbook.Truncated(b, lower=0.0, upper=np.inf)
    assert np.isclose(r.variance(q), tr.variance(q), rtol=1e-10)
    assert np.isclose(r.mse(q), tr.mse(q), rtol=1e-10)
    assert np.isclose(r.bias(q), tr.bias(q), rtol=1e-10, atol=0)
    x = q + b * np.array([-3.0, -0.5, 0.0, 0.7, 5.0])
    x = x[x >= 0]
    assert np.allclose(r.cdf(x, q), tr.cdf(x, q), rtol=1e-10, atol=1e-300)
    assert np.allclose(r.logpdf(x, q), tr.logpdf(x, q), rtol=1e-10)


BASES = {
    "norm": stats.norm(scale=1.5),
    "logistic": stats.logistic(scale=0.8),
    "t5": stats.t(df=5),
    "laplace": stats.laplace(scale=2.0),
}


@pytest.mark.parametrize("name", list(BASES))
@pytest.mark.parametrize("q", [0.0, 0.3, 7.0])
def test_moments_against_quad(name, q):
    base = BASES[name]
    r = dpbook.Restricted(base)
    m = restricted_moment(base, q, lambda x: x)
    assert np.isclose(r.mean(q), m, rtol=1e-10)
    assert np.isclose(r.bias(q), m - q, rtol=1e-8, atol=1e-13)
    assert np.isclose(
        r.variance(q), restricted_moment(base, q, lambda x: (x - m) ** 2), rtol=1e-9
    )
    assert np.isclose(
        r.mse(q), restricted_moment(base, q, lambda x: (x - q) ** 2), rtol=1e-9
    )
    x = np.array([0.0, 0.1, q, q + 2.0])
    cdf = [
        restricted_moment(base, q, lambda y, v=v: float(y <= v)) if v > 0 else 0.0
        for v in x
    ]
    assert np.allclose(r.cdf(x, q), cdf, rtol=1e-9, atol=1e-12)


def test_gaussian_far_tail():
    """Far from 0 the bias E[Z | Z >= -q] is the Mills-ratio term φ(q)/Φ(q), computed without cancellation."""
    r = dpbook.Restricted(stats.norm)
    for q in [5.0, 10.0, 30.0]:
        exact = stats.norm.pdf(q) / stats.norm.cdf(q)
        assert np.isclose(r.bias(q), exact, rtol=1e-10)
    assert r.bias(40.0) == pytest.approx(stats.norm.pdf(40.0), rel=1e-10)


def test_small_probabilities_keep_relative_accuracy():
    b = 1.0
    r, tr = (
        dpbook.Restricted(stats.laplace(scale=b)),
        dpbook.Truncated(b, lower=0.0, upper=np.inf),
    )
    for x, q in [(1e-9, 0.0), (1e-9, 5.0), (1e-300, 1.0), (0.3, 600.0)]:
        assert isinstance(r.cdf(x, q), float)
        assert np.isclose(r.cdf(x, q), tr.cdf(x, q), rtol=1e-10, atol=0)


def test_true_value_below_zero():
    """q < 0 (outside the domain) still works: the law of Ŷ_q is then a far-tail conditional."""
    b = 1.0
    r, tr = (
        dpbook.Restricted(stats.laplace(scale=b)),
        dpbook.Truncated(b, lower=0.0, upper=np.inf),
    )
    for q in [-0.5, -5.0, -50.0]:
        assert np.isclose(r.bias(q), tr.bias(q), rtol=1e-10)
        assert np.isclose(r.variance(q), tr.variance(q), rtol=1e-10)


def test_ppf_inverts_cdf_and_sampler():
    for base in [stats.laplace(scale=1.3), stats.norm]:
        r = dpbook.Restricted(base)
        u = np.linspace(0.0, 1.0, 41)[1:-1]
        for q in [0.0, 1.0, 6.0]:
            assert np.allclose(r.cdf(r.ppf(u, q), q), u, rtol=1e-10, atol=1e-13)
            x = r.sample(q, size=20000, rng=np.random.default_rng(11))
            assert (x >= 0).all()
            assert stats.kstest(x, lambda t: r.cdf(t, q)).pvalue > 1e-3
            assert abs(x.mean() - r.mean(q)) < 5 * np.sqrt(r.variance(q) / x.size)
    assert r.ppf(0.0, 1.0) == 0.0 and r.ppf(1.0, 1.0) == np.inf
    assert r.sample(np.zeros((2, 3)), rng=np.random.default_rng(0)).shape == (2, 3)


@pytest.mark.parametrize(
    "base", [stats.laplace(scale=1.0), stats.norm(scale=2.0), stats.laplace(scale=0.3)]
)
@pytest.mark.parametrize("q", [0.0, 0.5, 3.0, 20.0])
def test_prop6_coupling_dominance(base, q):
    r = dpbook.Restricted(base)
    u = np.concatenate(
        [np.geomspace(1e-12, 0.5, 200), 1 - np.geomspace(1e-12, 0.5, 200)]
    )
    y, y_hat = r.coupling(q, u)
    assert np.allclose(y, q + base.ppf(u), rtol=1e-12)
    assert (y_hat >= y).all() and (y_hat >= 0).all()
    cut = base.cdf(
        -q
    )  # u < F_q(0): the base draw is negative, the restricted one is not
    assert (y_hat[u < cut] > y[u < cut]).all()
    if q > 3:
        return
    # E Ŷ_q - q = ∫_0^1 (Ŷ(u) - Y(u)) du > 0, and it is the bias
    diff = lambda v: np.subtract(*r.coupling(q, v)[::-1])
    gap = sum(
        integrate.quad(diff, a, c, epsabs=0, epsrel=1e-10, limit=200)[0]
        for a, c in [(0, cut), (cut, 0.5), (0.5, 1)]
    )
    assert gap > 0
    assert np.isclose(gap, r.bias(q), rtol=1e-6, atol=1e-12)


def test_max_abs_bias():
    b = 1.7
    r = dpbook.Restricted(stats.laplace(scale=b))
    assert r.max_abs_bias() == pytest.approx(b, rel=1e-12)  # bias(0) = (0 + b)/(2 - 1)
    qs = np.linspace(0, 15 * b, 25)
    bias = r.bias(qs)
    assert (np.diff(bias) < 0).all() and bias.max() <= r.max_abs_bias() * (1 + 1e-12)
    g = dpbook.Restricted(stats.norm)
    assert g.max_abs_bias() == pytest.approx(np.sqrt(2 / np.pi), rel=1e-10)
    shifted = dpbook.Restricted(
        stats.norm(loc=-3.0)
    )  # a biased base: the sup is the limit |E Z| = 3
    assert shifted.max_abs_bias() == pytest.approx(3.0, rel=1e-10)
    assert 0 < shifted.bias(0.0) < 3.0 and -3.0 < shifted.bias(5.0) < 0


def test_base_forms_and_bad_inputs():
    assert dpbook.Restricted(stats.norm).bias(1.0) == pytest.approx(
        dpbook.Restricted(stats.norm()).bias(1.0)
    )
    with pytest.raises(ValueError, match="base"):
        dpbook.Restricted(stats.t)  # needs a shape parameter
    with pytest.raises(ValueError, match="base"):
        dpbook.Restricted(stats.expon())  # support not the whole line
    with pytest.raises(ValueError, match="base"):
        dpbook.Restricted(stats.cauchy())  # no finite mean
    with pytest.raises(ValueError, match="base"):
        dpbook.Restricted(stats.poisson(3))
    with pytest.raises(ValueError, match="base"):
        dpbook.Restricted("norm")
    r = dpbook.Restricted(stats.norm)
    with pytest.raises(ValueError, match="q"):
        r.bias(np.nan)
    with pytest.raises(ValueError, match="u"):
        r.ppf(1.5, 0.0)
    with pytest.raises(ValueError, match="x"):
        r.cdf(np.nan, 0.0)


@pytest.mark.parametrize(
    "base",
    [
        stats.norm(loc=0.3, scale=2.0),
        stats.laplace(loc=-0.5, scale=1.5),
        stats.logistic(scale=0.7),
    ],
)
@pytest.mark.parametrize("q", [0.0, 1.0, -3.0, 10.0])
def test_sampler_of_located_and_scaled_bases(base, q):
    """The direct samplers (Laplace via Truncated; normal via ndtri, numpy's normals or exponential proposals,
    by the cut) and the generic one agree with cdf."""
    mech = dpbook.Restricted(base)
    x = mech.sample(q, size=20_000, rng=np.random.default_rng(11))
    assert x.min() >= 0.0
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-4
    assert abs(x.mean() - mech.mean(q)) < 5 * x.std() / np.sqrt(x.size)


# --- the samplers of the other bases -------------------------------------------------------------

GUMBEL = stats.gumbel_r(loc=-np.euler_gamma)  # mean 0


@pytest.mark.parametrize(
    "base",
    [stats.logistic(scale=0.7), stats.t(5, scale=1.5), stats.t(50), GUMBEL],
    ids=lambda b: b.dist.name + str(b.args),
)
@pytest.mark.parametrize("q", [0.0, 0.8, 6.0, -2.0])
def test_draws_are_the_quantiles_of_their_uniforms(base, q):
    """Each draw is the restricted law's exact quantile (the log-space law inverted to its last bits) of its own
    uniform, to 1e-9: the closed form for the logistic, the base's quantile function for the others."""
    mech = dpbook.Restricted(base)
    n = 4000
    x = mech.sample(q, size=n, rng=np.random.default_rng(8))
    u = np.random.default_rng(8).random(n)
    keep = (u > 1e-6) & (
        u < 1 - 1e-6
    )  # near u = 0 both round at the resolution of the uniform
    exact = mech._exact_ppf(u[keep], np.full(np.count_nonzero(keep), q))
    assert np.allclose(x[keep], exact, rtol=1e-9, atol=0)


@pytest.mark.parametrize(
    "base, q",
    [
        # logistic: cuts far left (q + W) and far right (an exponential excess), overflowing q/s, tiny scales
        (stats.logistic(scale=1.0), 800.0),
        (stats.logistic(scale=1.0), -800.0),
        (stats.logistic(scale=1e-300), 1e-298),
        (stats.logistic(scale=1e-300), -1.0),
        (stats.logistic(scale=1e300), 3e300),
        # t: the Pareto tail beyond 1e10 scales, an overflowing cut, and a cut whose tail mass underflows
        (stats.t(3), -1e12),
        (stats.t(3, scale=1e-300), -1.0),
        (stats.t(50), -1e3),
        (stats.t(3), 1e12),
        # a generic base whose tail mass underflows at the cut: the exact log-space inversion takes over
        (GUMBEL, -800.0),
    ],
)
def test_sampler_of_other_bases_at_the_extremes(base, q):
    """Finite draws on the support, distributed as the law (KS against its cdf, 20 000 draws)."""
    mech = dpbook.Restricted(base)
    x = mech.sample(q, size=20_000, rng=np.random.default_rng(2))
    assert np.all(np.isfinite(x)) and x.min() >= 0.0
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-4


# cuts c = (-q - 0.3)/1.5 in every shape of the part of the ratio-of-uniforms disc kept and of the proposals'
# parallelogram (m = c/√3: the disc's box for m < -3/4, here m = -1.65 and -0.751; sheared along the cut for
# m = -0.731, -0.31, 0.46, 2.2) and far right (m = 1155)
T3_CUTS = [4.0, 1.65, 1.6, 0.5, -1.5, -6.0, -3000.0]


@pytest.mark.parametrize("q", T3_CUTS)
def test_student_t3_sampler_by_ratio_of_uniforms(q):
    """Student t(3) draws by ratio of uniforms (``_t3_excess``): KS against the law, nothing below the cut, the
    mean within 5 standard errors, one draw and a shape."""
    mech = dpbook.Restricted(stats.t(3, loc=0.3, scale=1.5))
    x = mech.sample(q, size=20_000, rng=np.random.default_rng(31))
    assert x.shape == (20_000,) and np.all(np.isfinite(x)) and x.min() >= 0.0
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-4
    if q > -100:  # (far right the excess has infinite variance: KS alone)
        assert abs(x.mean() - mech.mean(q)) < 5 * np.sqrt(mech.variance(q) / x.size)
    assert isinstance(mech.sample(q, rng=1), float)
    assert mech.sample(q, size=(3, 2), rng=1).shape == (3, 2)
    assert mech.sample(q, size=(0, 2), rng=1).shape == (0, 2)


def test_student_t3_sampler_blocks_and_extremes(monkeypatch):
    """Blocks of any size only change which proposals are drawn, not the law: KS with blocks of 7 proposals; a
    true value per draw takes the quantile route; a cut beyond ``_T3_CUT`` the exact inversion."""
    mech = dpbook.Restricted(stats.t(3))
    # the namespace the sampler reads (the doctest run may load the module twice: a module patched by name
    # could be a copy the sampler never reads)
    monkeypatch.setitem(dpbook.Restricted._sample.__globals__, "_T3_BLOCK", 7)
    x = mech.sample(0.5, size=5000, rng=np.random.default_rng(3))
    assert stats.kstest(x, lambda t: mech.cdf(t, 0.5)).pvalue > 1e-4
    qs = np.repeat([0.5, -2.0], 3000)
    x = mech.sample(qs, rng=np.random.default_rng(4))
    for v in (0.5, -2.0):
        assert stats.kstest(x[qs == v], lambda t: mech.cdf(t, v)).pvalue > 1e-4
    tiny = dpbook.Restricted(stats.t(3, scale=1e-300))  # the cut ±1e300
    x = tiny.sample(-1.0, size=2000, rng=np.random.default_rng(5))
    assert np.all(np.isfinite(x)) and x.min() >= 0.0
    assert stats.kstest(x, lambda t: tiny.cdf(t, -1.0)).pvalue > 1e-4
    # the noise below the spacing of 1
    assert np.all(tiny.sample(1.0, size=50, rng=1) == 1.0)


def test_logistic_sampler_with_a_true_value_per_draw():
    """True values on both sides of the closed form's switch (cut -34) in one call: each column its own law."""
    mech = dpbook.Restricted(stats.logistic)
    qs = np.array([-3.0, 0.5, 40.0])
    x = mech.sample(qs, size=(20_000, 3), rng=np.random.default_rng(6))
    for k, q in enumerate(qs):
        assert stats.kstest(x[:, k], lambda t: mech.cdf(t, q)).pvalue > 1e-4


# cuts c = (-q - 0.3)/1.1 at the mean (|Z|), half a standard deviation left of it, and one or more
@pytest.mark.parametrize("q", [-0.3, 0.25, 0.8, 2.4, 3.0, 40.0])
def test_normal_sampler_left_of_the_mean(q):
    """A cut at or left of the mean is sampled from numpy's normals, reflected or redrawn below it (with a location
    and a scale): KS against the law, and nothing below 0."""
    mech = dpbook.Restricted(stats.norm(loc=0.3, scale=1.1))
    x = mech.sample(q, size=20_000, rng=np.random.default_rng(12))
    assert (
        x.min() > 0.0
    )  # no mass at the cut: a proposal below it must be drawn again, not clipped
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-4
    assert abs(x.mean() - mech.mean(q)) < 5 * x.std() / np.sqrt(x.size)
    assert mech.sample(q, rng=1) == mech.sample(q, rng=1)
    assert np.all(
        mech.sample(1e300, size=5, rng=1) == 1e300
    )  # the noise below the doubles' spacing


# cuts c = (-q - 0.3)/1.1 right of _NORMAL_RIGHT: Robert's exponential proposals (``_normal_tail_excess``), at the
# switch, at the mean's right, far right, and beyond where the tail's mass underflows (c = 40)
ROBERT_CUTS = [-0.85, -1.5, -4.0, -44.3]


@pytest.mark.parametrize("q", ROBERT_CUTS)
def test_normal_sampler_by_exponential_proposals(q):
    """A cut right of the mean: KS against the law, the mean within 5 standard errors, nothing below 0."""
    mech = dpbook.Restricted(stats.norm(loc=0.3, scale=1.1))
    x = mech.sample(q, size=20_000, rng=np.random.default_rng(13))
    assert x.shape == (20_000,) and np.all(np.isfinite(x)) and x.min() >= 0.0
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-4
    assert abs(x.mean() - mech.mean(q)) < 5 * np.sqrt(mech.variance(q) / x.size)
    assert isinstance(mech.sample(q, rng=1), float)
    assert mech.sample(q, size=(3, 2), rng=1).shape == (3, 2)


def test_normal_rejection_samplers_in_small_rounds(monkeypatch):
    """Rounds of 7 proposals only change which proposals are drawn, not the law; the cut at ``1e300`` standard
    deviations (a true value far below 0, a tiny scale): draws of the order ``scale/cut``, never negative."""
    # the kernels' namespace the sampler reads (the doctest run may load the module twice)
    kernels = dpbook.Restricted._sample.__globals__["_normal_reflected"].__globals__
    monkeypatch.setitem(kernels, "_PROPOSALS", 7)
    monkeypatch.setitem(kernels, "_REFLECT_BLOCK", 7)
    mech = dpbook.Restricted(stats.norm(loc=0.3, scale=1.1))
    for q in (2.0, -2.0):  # one route each
        x = mech.sample(q, size=5000, rng=np.random.default_rng(14))
        assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > 1e-4
    tiny = dpbook.Restricted(stats.norm(scale=1e-150))
    # the cut 1e150: the excess is E/cut to O(cut^-2), the release 1e-150 E/cut
    x = tiny.sample(-1.0, size=2000, rng=np.random.default_rng(15))
    assert np.all(np.isfinite(x)) and x.min() >= 0.0
    assert abs(x.mean() / 1e-300 - 1.0) < 5 / np.sqrt(x.size)
