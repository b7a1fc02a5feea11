"""dpbook.peers: the diffprivlib adapters, the lowest-bit reader and the budget split; Part IV's views."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpbook
from dpbook_book import peers

dpl = pytest.importorskip("diffprivlib.mechanisms")

FAST = settings(max_examples=40, deadline=None)


# --- adapters -------------------------------------------------------------------------------------------


def test_counterparts_and_scales():
    m = dpl.LaplaceTruncated(epsilon=2.0, sensitivity=3.0, lower=-1.0, upper=4.0)
    ours = peers.dpbook_counterpart(m)
    assert isinstance(ours, dpbook.BIT) and (ours.scale, ours.lower, ours.upper) == (
        1.5,
        -1.0,
        4.0,
    )
    m = dpl.LaplaceTruncated(
        epsilon=1.0, delta=0.3, sensitivity=1.0, lower=0.0, upper=1.0
    )
    assert math.isclose(peers.peer_scale(m), 1 / (1 - math.log(0.7)), rel_tol=1e-15)
    m = dpl.LaplaceBoundedDomain(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=np.inf)
    ours = peers.dpbook_counterpart(m)
    assert isinstance(ours, dpbook.Truncated) and ours.upper == np.inf
    assert math.isclose(ours.scale, 1.612605, rel_tol=1e-6)
    lap = peers.dpbook_counterpart(dpl.Laplace(epsilon=0.5, sensitivity=1.0))
    assert type(lap) is dpbook.Laplace and lap.scale == 2.0


def test_counterpart_bad_input():
    with pytest.raises(ValueError, match="mech"):
        peers.dpbook_counterpart(
            dpl.LaplaceFolded(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0)
        )
    with pytest.raises(ValueError, match="mech"):
        peers.peer_scale(dpbook.BIT(1.0))
    m = dpl.LaplaceTruncated(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0)
    with pytest.raises(ValueError, match="name"):
        peers.peer_property(m, "mean", 0.5)
    with pytest.raises(ValueError, match="q"):
        peers.peer_property(m, "bias", np.nan)
    with pytest.raises(ValueError, match="size"):
        peers.peer_sample(m, 0.5, (2, 3))
    with pytest.raises(ValueError, match="q"):
        peers.peer_sample(m, np.inf, 3)


@FAST
@given(eps=st.floats(0.05, 5.0), width=st.one_of(st.floats(1.0, 50.0), st.just(np.inf)))
def test_bounded_domain_scale_is_the_exact_truncation_scale(eps, width):
    """Holohan et al.'s calibration = dpbook.truncated_scale when the interval is at least Δ wide."""
    m = dpl.LaplaceBoundedDomain(epsilon=eps, sensitivity=1.0, lower=0.0, upper=width)
    b = peers.peer_scale(m)
    assert math.isclose(
        b, dpbook.truncated_scale(eps, 1.0, lower=0.0, upper=width), rel_tol=1e-9
    )


@FAST
@given(
    eps=st.floats(0.1, 5.0),
    lo=st.floats(-5.0, 5.0),
    width=st.floats(1.0, 20.0),
    t=st.floats(0.0, 1.0),
    name=st.sampled_from(["LaplaceTruncated", "LaplaceBoundedDomain"]),
)
def test_closed_forms_agree_inside_finite_bounds(eps, lo, width, t, name):
    m = getattr(dpl, name)(epsilon=eps, sensitivity=1.0, lower=lo, upper=lo + width)
    ours = peers.dpbook_counterpart(m)
    q = lo + t * width
    assert abs(peers.peer_property(m, "bias", q) - ours.bias(q)) <= 1e-10 * max(
        1.0, ours.scale
    )
    assert math.isclose(
        peers.peer_property(m, "variance", q), ours.variance(q), rel_tol=1e-8
    )


def test_narrow_domain_scale_is_nan_in_diffprivlib():
    """An interval narrower than Δ: diffprivlib's fixed point is NaN; the exact scale is D/ε."""
    m = dpl.LaplaceBoundedDomain(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=0.25)
    assert np.isnan(peers.peer_scale(m))
    assert math.isclose(
        dpbook.truncated_scale(1.0, 1.0, lower=0.0, upper=0.25), 0.25, rel_tol=1e-9
    )


def test_peer_property_records_nan_and_is_vectorized():
    m = dpl.LaplaceBoundedDomain(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=np.inf)
    out = peers.peer_property(m, "bias", [[0.0, 1.0], [2.0, 3.0]])
    assert out.shape == (2, 2) and np.isnan(out).all()
    m = dpl.LaplaceTruncated(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=np.inf)
    assert math.isclose(
        peers.peer_property(m, "bias", 1.0), dpbook.BIT(1.0).bias(1.0), rel_tol=1e-12
    )
    assert np.isnan(peers.peer_property(m, "variance", 1.0))


@pytest.mark.parametrize("name", ["LaplaceTruncated", "LaplaceBoundedDomain"])
@pytest.mark.parametrize("q", [-1.0, 0.3, 2.0, 5.0])
def test_peer_sampler_follows_the_counterpart_law(name, q):
    """The counterpart's law is diffprivlib's sampler's, inside and outside the bounds (KS and mean)."""
    m = getattr(dpl, name)(
        epsilon=1.0, sensitivity=1.0, lower=0.0, upper=4.0, random_state=7
    )
    ours = peers.dpbook_counterpart(m)
    x = peers.peer_sample(m, q, 4000)
    assert x.shape == (4000,) and x.min() >= 0.0 and x.max() <= 4.0
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert abs(x.mean() - ours.mean(q)) < 5 * se
    if name == "LaplaceBoundedDomain":
        assert stats.kstest(x, lambda t: ours.cdf(t, q)).pvalue > 1e-3
    else:
        lo, hi = (ours.pmf(ours.lower, q), ours.pmf(ours.upper, q))
        for got, p in ((np.mean(x == 0.0), lo), (np.mean(x == 4.0), hi)):
            assert abs(got - p) < 5 * math.sqrt(p * (1 - p) / x.size) + 1e-12


def test_peer_sample_is_reproducible():
    a = peers.peer_sample(
        dpl.LaplaceTruncated(
            epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0, random_state=3
        ),
        0.5,
        5,
    )
    b = peers.peer_sample(
        dpl.LaplaceTruncated(
            epsilon=1.0, sensitivity=1.0, lower=0.0, upper=1.0, random_state=3
        ),
        0.5,
        5,
    )
    assert np.array_equal(a, b)


# --- lowest bit -----------------------------------------------------------------------------------------


def test_lowest_bit_examples():
    assert (
        peers.lowest_bit(1.0) == 0.0
        and peers.lowest_bit(0.75) == -2.0
        and peers.lowest_bit(-6.0) == 1.0
    )
    assert peers.lowest_bit(0.0) == -np.inf
    assert peers.lowest_bit(np.nextafter(0.25, 1.0)) == -54.0
    assert peers.lowest_bit(5e-324) == -1074.0
    x = np.array([0.1, 0.3, 0.26, 1.0])
    assert np.array_equal(
        peers.lowest_bit(x, (0.25, 0.5)), peers.lowest_bit([0.3, 0.26])
    )
    with pytest.raises(ValueError, match="x"):
        peers.lowest_bit([1.0, np.inf])


@FAST
@given(
    m=st.integers(1, 2**52),
    k=st.integers(-1000, 960),
    sign=st.sampled_from([-1.0, 1.0]),
)
def test_lowest_bit_recovers_the_exponent(m, k, sign):
    m = m | 1
    x = sign * math.ldexp(float(m), k)
    assert peers.lowest_bit(x) == k


def test_proposition_lowest_bit_leak():
    """ch16-prop-lsb: BIT on [0, inf) at b = 1; releases in [1/4, 1/2) of q = 2 are multiples of 2^-52."""
    rng = np.random.default_rng(1)
    mech = dpbook.BIT(1.0, lower=0.0, upper=np.inf)
    k2 = peers.lowest_bit(mech.sample(2.0, size=200_000, rng=rng), (0.25, 0.5))
    k1 = peers.lowest_bit(mech.sample(1.0, size=100_000, rng=rng), (0.25, 0.5))
    assert k2.size > 1000 and k2.min() >= -52
    assert k1.min() >= -53 and np.mean(k1 == -53) > 0.4


# --- budget split ---------------------------------------------------------------------------------------


@FAST
@given(
    eps=st.floats(0.01, 10.0),
    d=st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=6),
    power=st.floats(0.0, 2.0),
)
def test_budget_split_sums_and_is_proportional(eps, d, power):
    shares = dpbook.budget_split(eps, d, power=power)
    d = np.asarray(d)
    assert math.isclose(shares.sum(), eps, rel_tol=1e-12) and (shares > 0).all()
    ratio = shares / d**power
    assert np.allclose(ratio, ratio[0], rtol=1e-9)


def test_budget_split_two_thirds_minimizes_the_total_variance():
    d = np.array([1.0, 8.0, 0.3])
    best = dpbook.budget_split(1.0, d, power=2 / 3)

    def total(e, d=d):
        return float(np.sum(2 * (np.asarray(d) / e) ** 2))

    rng = np.random.default_rng(0)
    for _ in range(200):
        e = best * np.exp(0.2 * rng.normal(size=3))
        e /= e.sum()
        assert total(e) >= total(best) * (1 - 1e-12)
    assert math.isclose(
        total(dpbook.budget_split(1.0, [1.0, 8.0], power=1.0), [1.0, 8.0]), 324.0
    )
    assert math.isclose(
        total(dpbook.budget_split(1.0, [1.0, 8.0], power=2 / 3), [1.0, 8.0]), 250.0
    )


def test_budget_split_bad_input():
    for bad in ([], [1.0, -1.0], [[1.0]], [1.0, np.nan]):
        with pytest.raises(ValueError, match="sensitivities"):
            dpbook.budget_split(1.0, bad)
    with pytest.raises(ValueError, match="epsilon"):
        dpbook.budget_split(0.0, [1.0])
    with pytest.raises(ValueError, match="power"):
        dpbook.budget_split(1.0, [1.0], power=-1.0)


# --- the views of Part IV -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs", [{}, {"family": "LaplaceTruncated", "width": 1.0, "epsilon": 3.0}]
)
def test_draw_peer_bias(kwargs):
    import matplotlib.pyplot as plt

    from dpbook_book.widgets.peers import draw_peer_bias

    fig = draw_peer_bias(**kwargs)
    assert len(fig.axes) == 2
    plt.close(fig)


def test_draw_lowest_bits():
    import matplotlib.pyplot as plt

    from dpbook_book.widgets.peers import draw_lowest_bits

    fig = draw_lowest_bits(q1=0.0, q2=0.5, scale=2.0, draws=20_000)
    assert len(fig.axes) == 1 and len(fig.axes[0].patches) == 16
    plt.close(fig)


# --- Part V: counts (the geometric mechanisms of diffprivlib and OpenDP) --------------------------------


def test_geometric_scales_and_counterparts():
    g = dpl.Geometric(epsilon=0.5, sensitivity=2)
    assert peers.geometric_scale(g) == 4.0
    ours = peers.geometric_counterpart(g)
    assert type(ours) is dpbook.DiscreteLaplace and ours.scale == 4.0
    t = dpl.GeometricTruncated(epsilon=2.0, sensitivity=1, lower=0, upper=7)
    ours = peers.geometric_counterpart(t)
    assert isinstance(ours, dpbook.DiscreteBIT) and (
        ours.scale,
        ours.lower,
        ours.upper,
    ) == (0.5, 0, 7)
    with pytest.raises(ValueError, match="mech"):
        peers.geometric_counterpart(dpl.GeometricFolded(epsilon=1.0, lower=0, upper=3))
    with pytest.raises(ValueError, match="mech"):
        peers.geometric_scale(dpl.Laplace(epsilon=1.0, sensitivity=1.0))
    with pytest.raises(ValueError, match="name"):
        peers.geometric_answer(g, "mse", 0)


@pytest.mark.parametrize("eps", [2.0, 1.0, 0.1, 1e-3])
def test_diffprivlib_geometric_variance_against_brute_force(eps):
    """The unbounded Geometric's bias (0) and variance agree with dpbook and a brute-force sum."""
    g = dpl.Geometric(epsilon=eps, sensitivity=1)
    ours = peers.geometric_counterpart(g)
    b = 1 / eps
    k = np.arange(1, int(45 * b) + 2, dtype=float)
    brute = 2 * float(np.sum(k**2 * ours.pmf(k, 0)))  # Σ k² P(K = k), symmetric
    assert math.isclose(ours.variance(0), brute, rel_tol=1e-12)
    assert math.isclose(peers.geometric_answer(g, "variance", 0), brute, rel_tol=1e-9)
    assert peers.geometric_answer(g, "bias", 5) == 0.0 == ours.bias(5)


def test_diffprivlib_geometric_variance_loses_digits_for_small_epsilon():
    """diffprivlib's variance forms 1 - exp(-ε) and cancels; dpbook's is exact (50-digit decimal)."""
    import decimal

    ctx = decimal.Context(prec=50)
    errs = {}
    for eps in (1e-9, 1e-12):
        a = ctx.exp(decimal.Decimal(-eps))
        exact = ctx.divide(2 * a, ctx.power(1 - a, 2))
        theirs = peers.geometric_answer(
            dpl.Geometric(epsilon=eps, sensitivity=1), "variance", 0
        )
        ours = dpbook.DiscreteLaplace(1 / eps).variance(0)
        assert abs(decimal.Decimal(ours) / exact - 1) < 1e-14
        errs[eps] = float(abs(decimal.Decimal(theirs) / exact - 1))
    assert errs[1e-9] > 1e-9 and errs[1e-12] > 1e-6  # digits lost to cancellation


def test_bounded_geometrics_do_not_implement_bias_or_variance():
    for cls in (dpl.GeometricTruncated, dpl.GeometricFolded):
        m = cls(epsilon=1.0, lower=0, upper=5)
        assert peers.geometric_answer(m, "bias", 2) == "NotImplementedError"
        assert peers.geometric_answer(m, "variance", 2) == "NotImplementedError"


@pytest.mark.parametrize(
    "lower, upper, q", [(0, 5, 1), (0, 5, 0), (-0.5, 4.5, 1), (0, 2, 7)]
)
def test_folded_law_is_diffprivlibs_own_fold_of_the_pmf(lower, upper, q):
    """folded_law sums dpbook's pmf over diffprivlib's own ``_fold`` of every k (independent loop)."""
    f = dpl.GeometricFolded(epsilon=0.7, lower=lower, upper=upper)
    b = peers.geometric_scale(f)
    support, pmf, cut = peers.folded_law(b, q, lower, upper)
    assert cut < 1e-18 and abs(pmf.sum() - 1) < 1e-12
    t = int(45 * b) + 1
    brute = {}
    lap = dpbook.DiscreteLaplace(b)
    for k in range(q - t, q + t + 1):
        out = int(np.round(f._fold(k)))
        brute[out] = brute.get(out, 0.0) + float(lap.pmf(k, q))
    assert sorted(brute) == support.tolist()
    assert np.allclose(
        [brute[s] for s in support.tolist()], pmf, rtol=1e-12, atol=1e-300
    )
    assert support.min() >= math.ceil(lower) and support.max() <= math.floor(upper)


@pytest.mark.parametrize(
    "cls, q",
    [
        ("GeometricTruncated", 1),
        ("GeometricTruncated", 9),
        ("GeometricFolded", 1),
        ("GeometricFolded", 0),
    ],
)
@pytest.mark.slow
def test_diffprivlib_bounded_geometric_samplers_follow_dpbooks_exact_law(cls, q):
    """Their samplers' mean and variance match dpbook's exact values at 5 standard errors, and their
    draws pass a χ² goodness-of-fit test against the exact pmf."""
    m = getattr(dpl, cls)(epsilon=0.5, lower=0, upper=10, random_state=3)
    x = peers.geometric_sample(
        m, q, 40_000 if cls == "GeometricTruncated" else 10_000
    )  # folding is slow
    b = peers.geometric_scale(m)
    if cls == "GeometricTruncated":
        law = peers.geometric_counterpart(m)
        support = np.arange(0, 11)
        pmf = np.asarray(law.pmf(support, q))
        mean, var = q + law.bias(q), law.variance(q)
    else:
        support, pmf, _ = peers.folded_law(b, q, 0, 10)
        mean = float(np.sum(support * pmf))
        var = float(np.sum((support - mean) ** 2 * pmf))
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / x.size)
    fourth = float(np.sum((support - mean) ** 4 * pmf))
    assert abs(x.var() - var) < 5 * math.sqrt((fourth - var**2) / x.size)
    observed = np.array([np.count_nonzero(x == s) for s in support])
    assert observed.sum() == x.size
    keep = pmf * x.size >= 5
    expected = pmf * x.size
    obs = np.r_[observed[keep], observed[~keep].sum()]
    exp = np.r_[expected[keep], expected[~keep].sum()]
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-4


def test_opendp_and_dpbook_draw_the_same_law():
    """A two-sample χ² test between OpenDP's integer Laplace and dpbook's exact sampler."""
    pytest.importorskip("opendp")
    b = 2.5
    theirs = peers.opendp_count_release(np.zeros(60_000, dtype=np.int64), b)
    assert theirs.dtype == np.int64
    ours = dpbook.discrete_laplace_noise(b, 60_000, rng=20)
    _, dof, p = peers.two_sample_chi2(theirs, ours)
    assert dof > 10 and p > 1e-4
    # the same test rejects a scale 10% off (it can fail)
    _, _, p_off = peers.two_sample_chi2(
        theirs, dpbook.discrete_laplace_noise(1.1 * b, 60_000, rng=21)
    )
    assert p_off < 1e-4


def test_count_helpers_bad_input():
    with pytest.raises(ValueError, match="counts"):
        peers.opendp_count_release([0.5, 1.0], 1.0)
    with pytest.raises(ValueError, match="scale"):
        peers.opendp_count_release(np.zeros(3, dtype=np.int64), -1.0)
    with pytest.raises(ValueError, match="lower"):
        peers.folded_law(1.0, 0, 0.25, 3)
    with pytest.raises(ValueError, match="x and y"):
        peers.two_sample_chi2([], [1, 2])


@pytest.mark.parametrize(
    "mech, q1, q2",
    [
        (dpbook.BIT(10.0, lower=0.0, upper=5.0), 2.0, 3.0),
        (dpbook.Truncated(1.0, lower=0.0), 1.35, 0.35),
    ],
)
def test_pld_bracket_holds_the_exact_pair_profile(mech, q1, q2):
    """Chapter 24's peer: dp_accounting's PLDs built from dpbook's laws bracket pair_profile, narrowly."""
    optimistic, pessimistic = peers.pld_bracket(mech, q1, q2)
    loss = dpbook.pair_loss(mech, q1, q2)
    eps = np.linspace(0.0, 1.2 * loss, 25)
    exact = np.asarray(dpbook.pair_profile(mech, q1, q2, eps))
    low = np.asarray(optimistic.get_delta_for_epsilon(eps))
    high = np.asarray(pessimistic.get_delta_for_epsilon(eps))
    assert np.all(low <= exact + 1e-13) and np.all(exact <= high + 1e-13)
    assert np.max(high - low) <= 0.02 * exact[0]
    # composed: the optimistic value stays below the pessimistic one
    k = 5
    low_k = optimistic.self_compose(k, tail_mass_truncation=0.0).get_delta_for_epsilon(
        eps
    )
    high_k = pessimistic.self_compose(k).get_delta_for_epsilon(eps)
    assert np.all(np.asarray(low_k) <= np.asarray(high_k) + 1e-13)


def test_pld_bracket_bad_input():
    with pytest.raises(ValueError, match="q1"):
        peers.pld_bracket(dpbook.Laplace(1.0), math.nan, 1.0)
    with pytest.raises(ValueError, match="h"):
        peers.pld_bracket(dpbook.Laplace(1.0), 0.0, 1.0, h=0.0)


def test_peer_gaussian_scale_is_the_sigma_of_the_sampler():
    """Chapter 26: the σ read from diffprivlib's Gaussians is what they sample with, and what they claim."""
    from diffprivlib import mechanisms as dpl

    classical = dpl.Gaussian(epsilon=0.5, delta=1e-5, sensitivity=2.0)
    want = 2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert peers.peer_gaussian_scale(classical) == pytest.approx(want, rel=1e-14)
    analytic = dpl.GaussianAnalytic(
        epsilon=1.0, delta=1e-5, sensitivity=1.0, random_state=7
    )
    sigma = peers.peer_gaussian_scale(analytic)
    assert sigma == pytest.approx(analytic.variance(0.0) ** 0.5, rel=1e-14)
    assert sigma == pytest.approx(dpbook.analytic_gaussian_scale(1.0, 1e-5), rel=1e-9)
    n = 4000
    z = np.array([analytic.randomise(0.0) for _ in range(n)])
    assert abs(np.mean(z**2) - sigma**2) < 5 * np.std(z**2, ddof=1) / math.sqrt(n)
    with pytest.raises(ValueError, match="mech"):
        peers.peer_gaussian_scale(dpl.Laplace(epsilon=1.0, sensitivity=1.0))
