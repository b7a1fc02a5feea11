"""Exact confidence intervals (dpbook.inference.intervals): coverage by summing the law, never below the level.

Coverage is computed exactly (:func:`dpbook.interval_coverage`: bisection over the doubles for the
releases whose interval holds ``q``, then the law's mass there), for every mechanism family in
``dpbook.__all__``; a few simulations check it independently at 5 standard errors.
"""

import math

import numpy as np
import pytest
import registry
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

import dpbook

# exact coverage of the intervals on fine grids of true values, for every family: minutes, so the README's test command
# skips it and .ci/run runs it (-m slow)
pytestmark = pytest.mark.slow

LEVELS = (0.5, 0.9, 0.95, 0.99)
TOL = 1e-9


def ramp_phi(x):
    return np.maximum(x - 0.2, 0.0)


def family_instances():
    """One instance of every Mechanism family of ``dpbook.__all__`` (the test below checks none is missing)."""
    return {
        "Laplace": dpbook.Laplace(0.7),
        "BIT": dpbook.BIT(0.3, lower=-1.0, upper=2.0),
        "Truncated": dpbook.Truncated(0.3, lower=0.0, upper=1.0),
        "TranslatedRamp": dpbook.TranslatedRamp(0.5, 0.2),
        "PostProcessed": dpbook.PostProcessed(
            0.5, ramp_phi, breakpoints=[0.2], tail=(0.2, 0.2)
        ),
        "StepPostProcessed": dpbook.StepPostProcessed(
            1.0, edges=[0.0, 1.0], values=[0.0, 0.3], shift=0.5
        ),
        "Restricted": dpbook.Restricted(stats.laplace(scale=0.5)),
        "LogLaplace": dpbook.LogLaplace(0.4),
        "Normalized": dpbook.Normalized(0.5, [(0.0, 1.0), (2.0, 3.0)]),
        "CroftLaplace": dpbook.CroftLaplace(1.0, 1.0),
        "Rounded": dpbook.Rounded(dpbook.BIT(0.8, lower=0.0, upper=6.0)),
        "DiscreteLaplace": dpbook.DiscreteLaplace(1.5),
        "DiscreteBIT": dpbook.DiscreteBIT(1.2, lower=0, upper=12),
        "DiscreteTruncated": dpbook.DiscreteTruncated(2.0, lower=-3, upper=9),
        "CountPostProcessed": dpbook.CountPostProcessed(
            1.0, [0.0, 0.5], 0.0, integer=True
        ),
        "FoldedLaplace": dpbook.FoldedLaplace(0.6, lower=0.0, upper=2.0),
        "Gaussian": dpbook.Gaussian(1.3),
        "GaussianBIT": dpbook.GaussianBIT(1.0, lower=0.0, upper=2.0),
        "GaussianTruncated": dpbook.GaussianTruncated(1.0, lower=0.0, upper=2.0),
        "TruncatedLaplaceNoise": dpbook.TruncatedLaplaceNoise(0.8, 2.0),
    }


DISCRETE = ("DiscreteLaplace", "DiscreteBIT", "DiscreteTruncated")


def q_grid(mech, n):
    lo, hi = mech.domain
    # an infinite end: 4 units of the domain next to the finite one ([-3, 1] when both are infinite)
    lo = lo if np.isfinite(lo) else (min(-3.0, hi - 4.0) if np.isfinite(hi) else -3.0)
    hi = hi if np.isfinite(hi) else lo + 4.0
    q = np.linspace(lo, hi, n)
    if isinstance(mech, dpbook.LogLaplace):
        q = np.geomspace(0.01, 10.0, n)
    # counts (the discrete families, Rounded): the integers of the domain (of [-3, 1] when it is the line)
    if mech.integer_valued:
        q = np.unique(np.round(q))
    return q


def ci(mech, level, **kw):
    """The exact interval as the procedure ``x -> confidence_interval(mech, x, level)``: an
    :class:`dpbook.ExactInterval`, whose coverage :func:`dpbook.interval_coverage` finds from the family's
    quantiles (the same coverage as for the bare function, to the law's mass over a few doubles:
    ``test_exact_interval_coverage.py``), in a few calls instead of some sixty."""
    return dpbook.ExactInterval(mech, level, **kw)


def rci(mech, level):
    """The randomized exact interval ``(x, v) -> randomized_interval(mech, x, v, level)`` (as :func:`ci`)."""
    return dpbook.ExactInterval(mech, level, randomized=True)


def pit_coverage(mech, q, level):
    """The non-randomized interval's exact coverage from the PIT: ``level + Σ_a |J(a) \\ C|`` over the
    atoms whose jump ``J(a) = [P(M < a), P(M <= a)]`` meets ``C = [α/2, 1 - α/2]`` (module docstring)."""
    half = (1 - level) / 2
    total = np.full(np.shape(q), level)
    for a, m in mech.atoms(q):
        top = np.asarray(mech.cdf(a, q))
        bottom = top - np.asarray(m)
        meets = (top >= half) & (bottom <= 1 - half)
        outside = np.maximum(np.minimum(top, half) - bottom, 0) + np.maximum(
            top - np.maximum(bottom, 1 - half), 0
        )
        total = total + np.where(meets, outside, 0.0)
    return total


# --- every family ----------------------------------------------------------------------------


def test_every_mechanism_family_is_covered():
    """The family registry (``tests/registry.py``) is the one list of families; its own test holds it equal to
    the public ones, and this file's intervals cover each of its families."""
    assert set(family_instances()) == {row.family.__name__ for row in registry.ROWS}


FAST = ("Laplace", "BIT", "Truncated", "TranslatedRamp", "LogLaplace")


@pytest.mark.parametrize("name", FAST)
@pytest.mark.parametrize("level", LEVELS)
def test_coverage_never_below_level_on_a_fine_grid(name, level):
    mech = family_instances()[name]
    q = q_grid(mech, 81)
    cover = dpbook.interval_coverage(mech, ci(mech, level), q)
    assert cover.min() >= level - TOL, (name, level, q[np.argmin(cover)], cover.min())
    if level in (
        0.5,
        0.95,
    ):  # the randomized interval: exactly the level inside the domain
        randomized = dpbook.interval_coverage(
            mech, rci(mech, level), q[1:-1:4], randomized=True
        )
        assert np.abs(randomized - level).max() < TOL


@pytest.mark.parametrize(
    "name", ["StepPostProcessed", "Restricted", "Normalized", "Rounded"]
)
def test_coverage_of_the_slower_families(name):
    """The families whose law costs more per evaluation: a coarser grid, two levels."""
    mech = family_instances()[name]
    q = q_grid(mech, 11)
    for level in (0.5, 0.95):
        cover = dpbook.interval_coverage(mech, ci(mech, level), q)
        assert cover.min() >= level - TOL, (name, level, cover)
    randomized = dpbook.interval_coverage(
        mech, rci(mech, 0.9), q[1:-1:3], randomized=True
    )
    assert np.abs(randomized - 0.9).max() < TOL, (name, randomized)


def test_coverage_of_restriction_with_a_normal_base():
    """A law known only numerically (scipy's normal tails): slow, so three true values."""
    mech = dpbook.Restricted(stats.norm(scale=0.5))
    out = dpbook.confidence_interval(mech, 0.4, 0.9)
    assert "numerical" in out.method and out.exact
    cover = dpbook.interval_coverage(mech, ci(mech, 0.9), np.array([0.0, 0.3, 1.5]))
    assert cover.min() >= 0.9 - TOL


def test_postprocessed_needs_the_callers_word_and_then_covers():
    mech = family_instances()["PostProcessed"]
    with pytest.raises(ValueError, match="not known to be stochastically increasing"):
        dpbook.confidence_interval(mech, 1.0)
    out = dpbook.confidence_interval(mech, 1.0, 0.9, increasing=True)
    assert "asserted" in out.method and "numerical" in out.method and not out.exact
    cover = dpbook.interval_coverage(
        mech, ci(mech, 0.9, increasing=True), np.array([0.1, 1.0])
    )
    assert cover.min() >= 0.9 - TOL


def test_croft_laplace_is_refused_and_is_indeed_not_monotone():
    """Croft's scale varies with q: P_q(M <= x) rises with q somewhere, so no interval is claimed."""
    mech = family_instances()["CroftLaplace"]
    ok, why = dpbook.is_stochastically_increasing(mech)
    assert not ok and "scale depends on q" in why
    q = np.linspace(0.0, 5.0, 501)
    assert np.diff(mech.cdf(2.0, q)).max() > 1e-4  # the counterexample
    with pytest.raises(ValueError, match="CroftLaplace"):
        dpbook.confidence_interval(mech, 2.0)


@pytest.mark.parametrize(
    "name",
    [n for n in family_instances() if n not in ("CroftLaplace", "PostProcessed")],
)
def test_families_said_increasing_are_stochastically_increasing(name):
    """The proofs of :func:`is_stochastically_increasing`, checked: ``P_q(M <= x)`` never rises with ``q``."""
    mech = family_instances()[name]
    assert dpbook.is_stochastically_increasing(mech)[0]
    q = q_grid(mech, 61)
    lo, hi = mech.support
    x = np.linspace(max(lo, -3.0), min(hi, 6.0), 23)
    cdf = np.asarray(mech.cdf(x[:, None], q[None, :]))
    assert np.diff(cdf, axis=1).max() <= 1e-12


def test_decreasing_step_map_is_refused():
    mech = dpbook.StepPostProcessed(1.0, edges=[0.0, 1.0], values=[0.5, 0.1], shift=0.0)
    assert not dpbook.is_stochastically_increasing(mech)[0]
    with pytest.raises(ValueError, match="stochastically increasing"):
        dpbook.confidence_interval(mech, 0.5)


# --- hypothesis: scales and bounds, infinite bounds included ---------------------------------

bounds = st.one_of(
    st.tuples(st.floats(-5, 5), st.floats(0.05, 10)).map(lambda t: (t[0], t[0] + t[1])),
    st.floats(-5, 5).map(lambda a: (a, math.inf)),
    st.floats(-5, 5).map(lambda a: (-math.inf, a)),
)


# derandomized: the same cases in every run (a drawn case that fails is added as an @example)
@settings(max_examples=5, deadline=None, derandomize=True)
@given(
    family=st.sampled_from(["BIT", "Truncated", "Normalized"]),
    scale=st.floats(0.02, 20.0),
    ends=bounds,
    level=st.sampled_from(LEVELS),
)
# a domain (-inf, u) with u < -3: the grid of true values once ran from -3, outside the domain
@example(family="BIT", scale=1.0, ends=(-math.inf, -4.0), level=0.5)
def test_coverage_with_drawn_scales_and_bounds(family, scale, ends, level):
    lower, upper = ends
    if family == "Normalized":
        mech = dpbook.Normalized(scale, [(lower, upper)])
    else:
        mech = getattr(dpbook, family)(scale, lower=lower, upper=upper)
    q = q_grid(mech, 21)
    cover = dpbook.interval_coverage(mech, ci(mech, level), q)
    assert cover.min() >= level - TOL, (q[np.argmin(cover)], cover.min())
    inner = q[1:-1:2]
    randomized = dpbook.interval_coverage(
        mech, rci(mech, level), inner, randomized=True
    )
    assert np.abs(randomized - level).max() < TOL
    if (
        family == "BIT"
    ):  # exactly the PIT formula: conservative by the atoms' overhang, no more
        assert np.abs(cover[1:-1:2] - pit_coverage(mech, inner, level)).max() < TOL


@settings(max_examples=6, deadline=None)
@given(
    scale=st.floats(0.05, 5.0), shift=st.floats(0.0, 2.0), level=st.sampled_from(LEVELS)
)
def test_translated_ramp_coverage_drawn(scale, shift, level):
    mech = dpbook.TranslatedRamp(scale, shift)
    q = q_grid(mech, 21)
    cover = dpbook.interval_coverage(mech, ci(mech, level), q)
    assert cover.min() >= level - TOL
    assert np.abs(cover[1:] - pit_coverage(mech, q[1:], level)).max() < TOL


# --- the unbounded Laplace mechanism gives back the textbook interval --------------------------


@settings(max_examples=40, deadline=None)
@given(scale=st.floats(1e-3, 1e3), x=st.floats(-1e4, 1e4), level=st.floats(0.01, 0.999))
def test_laplace_gives_back_x_plus_minus_b_log_one_over_alpha(scale, x, level):
    out = dpbook.confidence_interval(dpbook.Laplace(scale), x, level)
    half = scale * math.log(1 / (1 - level))
    tol = 1e-12 * max(1.0, abs(x), half)
    assert abs(out.low - (x - half)) <= tol and abs(out.high - (x + half)) <= tol
    assert out.exact and out.method == "neyman"


def test_laplace_interval_and_google_coverage():
    mech = dpbook.Laplace(1.3)
    q = np.linspace(-5, 5, 11)
    for level in LEVELS:
        cover = dpbook.interval_coverage(
            mech, lambda x: dpbook.laplace_interval(x, 1.3, level), q
        )
        assert np.abs(cover - level).max() < TOL


# --- a broken interval fails the same check --------------------------------------------------


def test_the_coverage_check_catches_an_interval_shrunk_by_one_percent():
    mech = dpbook.Truncated(0.3, lower=0.0, upper=1.0)
    q = q_grid(mech, 41)

    def shrunk(x):
        lo, hi, *_ = dpbook.confidence_interval(mech, x, 0.9)
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        return mid - 0.99 * half, mid + 0.99 * half

    assert dpbook.interval_coverage(mech, ci(mech, 0.9), q).min() >= 0.9 - TOL
    assert dpbook.interval_coverage(mech, shrunk, q).min() < 0.9 - 1e-4


# --- the comparison intervals, against closed forms -------------------------------------------


def test_plugin_on_laplace_is_the_normal_approximation():
    b, level = 0.8, 0.95
    z = stats.norm.ppf(0.975)
    cover = dpbook.interval_coverage(
        dpbook.Laplace(b),
        lambda x: dpbook.plugin_interval(dpbook.Laplace(b), x, level),
        np.array([-1.0, 0.0, 2.0]),
    )
    assert np.abs(cover - (1 - math.exp(-z * math.sqrt(2)))).max() < TOL


@pytest.mark.parametrize("family", [dpbook.BIT, dpbook.Truncated])
def test_clipped_laplace_is_the_law_between_q_minus_c_and_q_plus_c(family):
    """Valid but conservative: clamping only moves a release towards [lower, upper] (so ``|M - q| <= |L|``),
    and truncation conditions ``L`` on an interval holding 0, which never makes ``|L| > c`` likelier."""
    mech, level = family(0.4, lower=0.0, upper=1.0), 0.9
    c = 0.4 * math.log(10)
    q = np.linspace(0, 1, 21)
    cover = dpbook.interval_coverage(
        mech,
        lambda x: dpbook.clipped_laplace_interval(x, 0.4, level, lower=0.0, upper=1.0),
        q,
    )
    direct = np.asarray(mech.cdf(q + c, q)) - np.asarray(
        mech.cdf(np.nextafter(q - c, -np.inf), q)
    )
    assert np.abs(cover - direct).max() < TOL
    assert cover.min() >= level - TOL and cover.max() > level + 0.05


def test_plugin_under_covers_near_a_bound():
    mech = dpbook.BIT(0.4, lower=0.0, upper=1.0)
    cover = dpbook.interval_coverage(
        mech, lambda x: dpbook.plugin_interval(mech, x, 0.9), np.array([0.0, 0.5])
    )
    assert cover[0] < 0.9 - 0.02  # 0.8747 at q = 0


def test_plugin_ends_are_monotone_for_the_bounded_families():
    """:func:`interval_coverage` needs nondecreasing ends; the plug-in interval has them here."""
    x = np.linspace(0, 1, 4001)
    for b in (0.05, 0.5, 5.0):
        for fam in (dpbook.BIT, dpbook.Truncated):
            lo, hi = dpbook.plugin_interval(fam(b, lower=0.0, upper=1.0), x)
            assert np.diff(lo).min() >= 0 and np.diff(hi).min() >= 0


# --- simulation, at 5 standard errors ---------------------------------------------------------


@pytest.mark.parametrize(
    "mech,q",
    [
        (dpbook.BIT(0.3, lower=0.0, upper=1.0), 0.1),
        (dpbook.Truncated(0.5, lower=0.0, upper=1.0), 0.9),
        (dpbook.TranslatedRamp(0.5, 0.2), 0.3),
        (dpbook.DiscreteBIT(1.0, lower=0, upper=10), 1),
        (dpbook.DiscreteTruncated(2.5, lower=0, upper=10**6), 2),
        (dpbook.DiscreteLaplace(0.7), -5),
    ],
)
def test_simulated_coverage_agrees_with_the_exact_one(mech, q):
    n = 40_000
    rng = np.random.default_rng(11)
    x = mech.sample(q, n, rng=rng)
    for randomize in (False, True):
        out = dpbook.confidence_interval(mech, x, 0.9, randomize=randomize, rng=rng)
        hit = np.mean((out.low <= q) & (q <= out.high))
        if randomize:
            exact = dpbook.interval_coverage(mech, rci(mech, 0.9), q, randomized=True)
        else:
            exact = dpbook.interval_coverage(mech, ci(mech, 0.9), q)
        assert abs(hit - exact) < 5 * math.sqrt(exact * (1 - exact) / n), (
            randomize,
            hit,
            exact,
        )


def test_expected_length_against_simulation():
    mech, q = dpbook.BIT(0.3, lower=0.0, upper=1.0), 0.2
    n = 40_000
    x = mech.sample(q, n, rng=5)
    out = dpbook.confidence_interval(mech, x, 0.9)
    width = out.high - out.low
    exact = dpbook.expected_length(mech, ci(mech, 0.9), q)
    assert abs(width.mean() - exact) < 5 * width.std() / math.sqrt(n)
    laplace = dpbook.expected_length(
        dpbook.Laplace(2.0), lambda x: dpbook.laplace_interval(x, 2.0, 0.9), [0.0, 3.0]
    )
    assert np.abs(laplace - 4 * math.log(10)).max() < 1e-9


# --- shape, domain, bad input ----------------------------------------------------------------


def test_vectorized_shape_and_inside_the_domain():
    mech = dpbook.Truncated(2.0, lower=0.0, upper=1.0)
    x = np.linspace(0, 1, 12).reshape(3, 4)
    out = dpbook.confidence_interval(mech, x)
    assert out.low.shape == (3, 4) and out.high.shape == (3, 4)
    assert (
        (out.low >= 0).all() and (out.high <= 1).all() and (out.low <= out.high).all()
    )
    assert np.all(np.diff(out.low.ravel()) >= 0) and np.all(
        np.diff(out.high.ravel()) >= 0
    )
    assert isinstance(dpbook.confidence_interval(mech, 0.5).low, float)


def test_empty_set_gives_the_nearest_end():
    mech = dpbook.Truncated(0.3, lower=0.0, upper=1.0)
    assert dpbook.confidence_interval(mech, 0.0, 0.9)[:2] == (0.0, 0.0)
    assert dpbook.confidence_interval(mech, 1.0, 0.9)[:2] == (1.0, 1.0)


@pytest.mark.parametrize("level", [0.0, 1.0, -0.1, 1.5, math.nan, math.inf, "a"])
def test_bad_level(level):
    with pytest.raises(ValueError, match="level"):
        dpbook.confidence_interval(dpbook.BIT(1.0, lower=0.0, upper=1.0), 0.5, level)


@pytest.mark.parametrize("x", [-0.1, 1.1, math.inf, math.nan, [0.5, 2.0]])
def test_bad_release(x):
    with pytest.raises(ValueError, match="x"):
        dpbook.confidence_interval(dpbook.BIT(1.0, lower=0.0, upper=1.0), x)


def test_bad_uniforms_and_interval():
    mech = dpbook.BIT(1.0, lower=0.0, upper=1.0)
    with pytest.raises(ValueError, match="v"):
        dpbook.randomized_interval(mech, 0.5, 1.5)
    with pytest.raises(ValueError, match="interval"):
        dpbook.interval_coverage(mech, (0.0, 1.0), 0.5)
    with pytest.raises(ValueError, match="scale"):
        dpbook.laplace_interval(0.0, -1.0)
    with pytest.raises(ValueError, match="lower"):
        dpbook.clipped_laplace_interval(0.0, 1.0, lower=2.0, upper=1.0)


# --- a population proportion: noise and sampling (Chapter 5) ------------------------------------


@pytest.mark.parametrize("family", [dpbook.BIT, dpbook.Truncated])
@pytest.mark.parametrize("n, scale", [(50, 0.05), (400, 0.01)])
def test_proportion_interval_covers_the_population_exactly(family, n, scale):
    mech = family(scale, lower=0.0, upper=1.0)
    for level in (0.9, 0.95):
        for pi in (0.0, 0.01, 0.1, 0.5, 0.97):
            cover = dpbook.proportion_coverage(
                mech, lambda x: dpbook.proportion_interval(mech, x, n, level), pi, n
            )
            assert cover >= level - 1e-9, (family.__name__, n, scale, level, pi, cover)


def test_proportion_coverage_sees_an_interval_that_ignores_the_sampling():
    # the exact interval for k/n alone is not an interval for the population's proportion:
    # with little noise it misses pi about as often as k/n is off, which the exact sum shows
    mech, n, pi = dpbook.BIT(0.001, lower=0.0, upper=1.0), 400, 0.3
    cover = dpbook.proportion_coverage(
        mech, lambda x: dpbook.confidence_interval(mech, x, 0.95), pi, n
    )
    assert cover < 0.2


def test_proportion_coverage_agrees_with_simulation():
    rng = np.random.default_rng(20261124)
    mech, n, pi, level, reps = (
        dpbook.BIT(0.03, lower=0.0, upper=1.0),
        120,
        0.2,
        0.8,
        40_000,
    )
    exact = dpbook.proportion_coverage(
        mech, lambda x: dpbook.proportion_interval(mech, x, n, level), pi, n
    )
    x = mech.sample(rng.binomial(n, pi, reps) / n, rng=rng)
    ci = dpbook.proportion_interval(mech, x, n, level)
    hit = np.mean((ci.low <= pi) & (pi <= ci.high))
    se = np.sqrt(exact * (1 - exact) / reps)
    assert abs(hit - exact) <= 5 * se, (hit, exact, se)


@pytest.mark.parametrize(
    "kwargs, name", [({"n": 0}, "n"), ({"n": 2.5}, "n"), ({"level": 1.0}, "level")]
)
def test_proportion_interval_bad_input(kwargs, name):
    args = {
        "mechanism": dpbook.BIT(0.1, lower=0.0, upper=1.0),
        "x": 0.3,
        "n": 10,
        "level": 0.9,
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        dpbook.proportion_interval(**args)


# --- counts: integer true values, integer releases (the discrete families) ----------------------


def direct_coverage(mech, interval, q, window):
    """``Σ_k P_q(M = k) 1{low(k) <= q <= high(k)}`` over every integer of ``window`` (``math.fsum``): the
    coverage by the definition, sharing nothing with :func:`dpbook.interval_coverage`."""
    k = np.arange(window[0], window[1] + 1.0)
    low, high = interval(k)[:2]
    out = []
    for t in np.atleast_1d(q):
        p = np.asarray(mech.pmf(k, t))
        out.append(math.fsum((p * ((low <= t) & (t <= high))).tolist()))
    return np.array(out)


def window_of(mech):
    lo, hi = mech.support
    reach = math.ceil(70 * mech.scale) + 20  # beyond it the mass is below e^{-70}
    return (lo if np.isfinite(lo) else -3 - reach, hi if np.isfinite(hi) else 1 + reach)


@pytest.mark.parametrize("name", DISCRETE)
@pytest.mark.parametrize("level", LEVELS)
def test_count_coverage_is_the_exact_sum_and_never_below_the_level(name, level):
    mech = family_instances()[name]
    q = q_grid(mech, 81)
    interval = ci(mech, level)
    cover = dpbook.interval_coverage(mech, interval, q)
    assert cover.min() >= level - TOL, (name, level, q[np.argmin(cover)], cover.min())
    assert (
        np.abs(cover - direct_coverage(mech, interval, q, window_of(mech))).max()
        < 1e-12
    )
    assert (
        cover.max() > level + 1e-3
    )  # atoms everywhere: conservative, as exact=False says
    assert not dpbook.confidence_interval(mech, 0, level).exact


@pytest.mark.parametrize("name", DISCRETE)
def test_count_randomized_coverage_is_exactly_the_level(name):
    mech = family_instances()[name]
    q = q_grid(mech, 81)
    lo, hi = mech.domain
    for level in (0.5, 0.9, 0.95):
        cover = dpbook.interval_coverage(mech, rci(mech, level), q, randomized=True)
        inner = (q > lo) & (q < hi)
        assert np.abs(cover[inner] - level).max() < TOL, (name, level, cover)
        assert (
            cover.min() >= level - TOL
        )  # at a finite end of the domain: level + the empty sets' mass
    assert dpbook.randomized_interval(mech, 0, 0.5, 0.9).exact


def test_count_intervals_hold_integers_inside_the_domain_and_nest_the_randomized_one():
    for name in DISCRETE:
        mech = family_instances()[name]
        lo, hi = window_of(mech)
        x = np.arange(max(lo, -40), min(hi, 40) + 1.0)
        out = dpbook.confidence_interval(mech, x, 0.9)
        assert "integer q" in out.method
        for end in (out.low, out.high):
            assert (end == np.floor(end)).all() and (np.diff(end) >= 0).all()
            assert (end >= mech.domain[0]).all() and (end <= mech.domain[1]).all()
        for v in (0.0, 0.3, 1.0):
            r = dpbook.randomized_interval(mech, x, v, 0.9)
            assert (r.low >= out.low).all() and (r.high <= out.high).all()


@settings(max_examples=40, deadline=None)
@given(
    scale=st.floats(0.05, 200.0),
    x=st.integers(-(10**9), 10**9),
    level=st.floats(0.01, 0.999),
)
def test_discrete_laplace_interval_is_x_plus_minus_the_noise_quantile(scale, x, level):
    """``P_q(M <= x) = P(K <= -(q - x)) = α^{q - x}/(1 + α)`` for ``q > x``: the interval is ``x ± t`` with
    ``t`` the largest integer with ``α^t/(1 + α) >= (1 - level)/2`` (``t = 0`` passes: ``1/(1 + α) > 1/2``)."""
    alpha, half = math.exp(-1 / scale), (1 - level) / 2
    r = (
        math.log(half * (1 + alpha)) / math.log(alpha)
        if half * (1 + alpha) < 1
        else 0.0
    )
    assume_clear = abs(r - round(r)) > 1e-9 * max(1.0, r)
    t = math.floor(r + 0.0) if assume_clear else None
    out = dpbook.confidence_interval(dpbook.DiscreteLaplace(scale), x, level)
    assert out.high - x == x - out.low  # symmetric
    if t is not None:
        assert (out.low, out.high) == (x - t, x + t), (r, out)
    length = dpbook.expected_length(
        dpbook.DiscreteLaplace(scale), ci(dpbook.DiscreteLaplace(scale), level), x
    )
    assert abs(length - (out.high - out.low)) <= 1e-12 * max(1.0, out.high - out.low)


def test_count_randomized_set_can_be_empty_and_must_be():
    """``U_0 = 0.881 v`` and ``U_1 = 0.119 v``: for ``v > 0.851`` no ``q`` of ``{0, 1, 2}`` passes at level 0.5.
    Widening that empty set (as the non-randomized interval does) would lift the coverage at ``q = 1``."""
    mech = dpbook.DiscreteBIT(0.5, lower=0, upper=2)
    out = dpbook.randomized_interval(mech, 0, [0.5, 0.95], 0.5)
    assert list(out.low) == [0.0, 1.0] and list(out.high) == [
        0.0,
        0.0,
    ]  # the second is empty: low = high + 1
    cover = dpbook.interval_coverage(mech, rci(mech, 0.5), [0, 1, 2], randomized=True)
    assert abs(cover[1] - 0.5) < TOL

    def widened(x, v):
        low, high = dpbook.randomized_interval(mech, x, v, 0.5)[:2]
        return np.minimum(low, high), np.maximum(low, high)

    assert dpbook.interval_coverage(mech, widened, 1, randomized=True) > 0.5 + 0.2


@settings(max_examples=6, deadline=None)
@given(
    family=st.sampled_from([dpbook.DiscreteBIT, dpbook.DiscreteTruncated]),
    scale=st.floats(0.1, 8.0),
    lower=st.integers(-20, 20),
    width=st.integers(0, 25),
    level=st.sampled_from(LEVELS),
)
def test_count_coverage_with_drawn_scales_and_bounds(
    family, scale, lower, width, level
):
    mech = family(scale, lower=lower, upper=lower + width)
    q = np.arange(lower, lower + width + 1.0)
    interval = ci(mech, level)
    cover = dpbook.interval_coverage(mech, interval, q)
    assert cover.min() >= level - TOL
    assert (
        np.abs(cover - direct_coverage(mech, interval, q, (lower, lower + width))).max()
        < 1e-12
    )
    randomized = dpbook.interval_coverage(
        mech, rci(mech, level), q[1:-1], randomized=True
    )
    assert np.abs(randomized - level).max(initial=0.0) < TOL


@pytest.mark.parametrize("name", DISCRETE)
def test_count_expected_length_is_the_exact_sum(name):
    mech = family_instances()[name]
    q = q_grid(mech, 81)[::3]
    interval = ci(mech, 0.9)
    w = window_of(mech)
    k = np.arange(w[0], w[1] + 1.0)
    low, high = interval(k)[:2]
    direct = [
        math.fsum((np.asarray(mech.pmf(k, t)) * (high - low)).tolist()) for t in q
    ]
    assert np.abs(
        dpbook.expected_length(mech, interval, q) - direct
    ).max() < 1e-12 * max(direct)


def test_the_count_coverage_check_catches_an_interval_one_short():
    mech = family_instances()["DiscreteTruncated"]
    q = q_grid(mech, 81)

    def short(
        x,
    ):  # the exact interval with its upper end one count lower (where it is above the lower end)
        lo, hi, *_ = dpbook.confidence_interval(mech, x, 0.9)
        return lo, np.maximum(lo, hi - 1)

    assert dpbook.interval_coverage(mech, ci(mech, 0.9), q).min() >= 0.9 - TOL
    cover = dpbook.interval_coverage(mech, short, q)
    assert cover.min() < 0.9 - 1e-3
    assert (
        np.abs(cover - direct_coverage(mech, short, q, window_of(mech))).max() < 1e-12
    )


def test_count_intervals_refuse_what_cannot_be_done():
    mech = dpbook.DiscreteBIT(1.0, lower=0, upper=10)
    for x in (2.5, -1, 11, math.nan):
        with pytest.raises(ValueError, match="x"):
            dpbook.confidence_interval(mech, x)
    with pytest.raises(ValueError, match="q must be integers"):
        dpbook.interval_coverage(mech, ci(mech, 0.9), 2.5)
    with pytest.raises(ValueError, match="2\\*\\*52"):
        dpbook.confidence_interval(dpbook.DiscreteLaplace(1.0), 2.0**52)
    with pytest.raises(ValueError, match="2\\*\\*52"):
        dpbook.confidence_interval(dpbook.DiscreteLaplace(1.0), 2.0**53)
    with pytest.raises(ValueError, match="releases integers"):
        dpbook.proportion_interval(mech, 3, 10)
    with pytest.raises(ValueError, match="releases integers"):
        dpbook.proportion_coverage(mech, ci(mech, 0.9), 0.3, 10)
    with pytest.raises(ValueError, match="expected_length would sum"):
        big = dpbook.DiscreteLaplace(1e5)
        dpbook.expected_length(big, ci(big, 0.9), 0)


def test_count_releases_go_through_the_shared_integer_check(monkeypatch):
    from spies import spy_on_integer_array

    seen = spy_on_integer_array(monkeypatch)
    mech = dpbook.DiscreteBIT(1.0, lower=0, upper=10)
    interval = dpbook.confidence_interval(mech, 3)
    assert 0 <= interval.low <= 3 <= interval.high <= 10 and "x" in seen
    with pytest.raises(
        ValueError,
        match=r"^x must be integers with \|x\| <= 2\*\*52 \(releases of an integer-valued",
    ):
        dpbook.confidence_interval(mech, 3.0000000001)
