"""The folded Laplace mechanism (dpbook.FoldedLaplace, diffprivlib's LaplaceFolded): its own formulas.

The generic suites (law identities, extremes sweep, audit, coverage, sampler fit, bad input) run on its
registry row (tests/registry.py).  Here: every closed form against a brute-force truth that does not use
it (the sum of the Laplace density and cdf over the images of the fold, and quadrature), over random
parameters with finite, one-sided and no bounds and true values inside and outside; the limits at the
ends of the doubles; the sampler against diffprivlib's (two-sample KS) and against the exact cdf; the
bias against diffprivlib's; the privacy loss against a brute-force search over outputs.
"""

from __future__ import annotations

import math

import diffprivlib.mechanisms  # a pinned requirement (requirements.txt)
import numpy as np
import pytest
from scipy import integrate, stats

import dpbook
from dpbook import FoldedLaplace

# --- brute force: the fold and the image sums, written independently of the module -----------------


def fold(z, lower, upper):
    """diffprivlib's ``_fold``, iterated (one reflection at a time), for one float."""
    while z < lower or z > upper:
        z = 2 * lower - z if z < lower else 2 * upper - z
    return z


def images(x, lower, upper, scale):
    """The points ``z`` with ``fold(z) = x`` within ``60 scale`` of ``x``'s band: ``x + 2kw``, ``2 lower - x + 2kw``."""
    if math.isinf(lower) and math.isinf(upper):
        return np.array([x]), np.array([], dtype=float)
    if math.isinf(upper):
        return np.array([x]), np.array([2 * lower - x])
    if math.isinf(lower):
        return np.array([x]), np.array([2 * upper - x])
    w = upper - lower
    k = np.arange(-int(60 * scale / (2 * w)) - 3, int(60 * scale / (2 * w)) + 4)
    return x + 2 * k * w, 2 * lower - x + 2 * k * w


def image_pdf(x, q, scale, lower, upper):
    plus, minus = images(x, lower, upper, scale)
    return float(
        np.sum(stats.laplace.pdf(plus, q, scale))
        + np.sum(stats.laplace.pdf(minus, q, scale))
    )


def image_cdf(x, q, scale, lower, upper):
    """``P(fold(q + L) <= x)``: the Laplace mass of the preimage of ``[lower, x]``, a union of intervals."""
    lap = stats.laplace(q, scale)
    if math.isinf(lower) and math.isinf(upper):
        return float(lap.cdf(x))
    if math.isinf(
        lower
    ):  # preimage of (x, upper] is (x, upper] and [upper, 2 upper - x)
        return float(1 - (lap.cdf(2 * upper - x) - lap.cdf(x)))
    if math.isinf(upper):  # preimage of [lower, x] is [2 lower - x, x]
        return float(lap.cdf(x) - lap.cdf(2 * lower - x))
    w = upper - lower
    n = int(60 * scale / (2 * w)) + 3
    k = np.arange(-n, n + 1)
    base = lower + 2 * k * w
    up = np.sum(lap.cdf(x - lower + base) - lap.cdf(base))  # [lower + 2kw, x + 2kw]
    down = np.sum(
        lap.cdf(base) - lap.cdf(base - (x - lower))
    )  # [2 lower - x + 2kw, lower + 2kw]
    return float(up + down)


def random_cases(n, seed):
    """``(scale, lower, upper, q)`` over finite, one-sided and no bounds, ``q`` inside and outside."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        b = 10 ** rng.uniform(-1.3, 1.3)
        lower = rng.uniform(-3, 3)
        w = 10 ** rng.uniform(-1.3, 1.3)
        kind = ("both", "both", "lower", "upper", "none")[i % 5]
        lo = lower if kind in ("both", "lower") else -math.inf
        hi = lower + w if kind in ("both", "upper") else math.inf
        q = lower + w * rng.uniform(-1.5, 2.5)
        out.append((b, lo, hi, q))
    return out


CASES = random_cases(40, 2025)
IDS = [f"case{i}" for i in range(len(CASES))]


def moments_by_quadrature(mech, q, lower, upper):
    """``(mass, mean, variance)`` by quadrature of the density, split at the fold of ``q``."""
    b = mech.scale
    p = fold(q, lower, upper)
    lo = lower if math.isfinite(lower) else p - 80 * b
    hi = upper if math.isfinite(upper) else p + 80 * b
    pts = sorted({lo, p, hi})
    pieces = list(zip(pts[:-1], pts[1:]))

    def integral(f):
        return sum(
            integrate.quad(f, a, c, epsabs=1e-14, epsrel=1e-12, limit=200)[0]
            for a, c in pieces
        )

    mass = integral(lambda x: mech.pdf(x, q))
    mean = integral(lambda x: x * mech.pdf(x, q))
    var = integral(lambda x: (x - mean) ** 2 * mech.pdf(x, q))
    return mass, mean, var


@pytest.mark.parametrize("b, lower, upper, q", CASES, ids=IDS)
def test_density_and_cdf_are_the_image_sums(b, lower, upper, q):
    mech = FoldedLaplace(b, lower=lower, upper=upper)
    lo = lower if math.isfinite(lower) else fold(q, lower, upper) - 20 * b
    hi = upper if math.isfinite(upper) else fold(q, lower, upper) + 20 * b
    xs = np.linspace(lo, hi, 13)
    want_pdf = np.array([image_pdf(x, q, b, lower, upper) for x in xs])
    np.testing.assert_allclose(mech.pdf(xs, q), want_pdf, rtol=1e-12, atol=0)
    want_cdf = np.array([image_cdf(x, q, b, lower, upper) for x in xs])
    np.testing.assert_allclose(mech.cdf(xs, q), want_cdf, rtol=0, atol=1e-13)
    np.testing.assert_allclose(
        mech.cdf(xs, q) + mech.sf(xs, q), 1.0, rtol=0, atol=4.5e-16
    )
    # logcdf/logsf are the logs, and the law at q is the law at the fold of q
    np.testing.assert_allclose(
        np.exp(mech.logcdf(xs, q)), mech.cdf(xs, q), rtol=1e-14, atol=0
    )
    np.testing.assert_allclose(
        np.exp(mech.logsf(xs, q)), mech.sf(xs, q), rtol=1e-14, atol=0
    )
    p = fold(q, lower, upper)
    np.testing.assert_allclose(mech.cdf(xs, q), mech.cdf(xs, p), rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize("b, lower, upper, q", CASES, ids=IDS)
def test_bias_and_variance_against_quadrature(b, lower, upper, q):
    mech = FoldedLaplace(b, lower=lower, upper=upper)
    mass, mean, var = moments_by_quadrature(mech, q, lower, upper)
    assert mass == pytest.approx(1.0, abs=1e-12)
    size = max(abs(mean), b, 1.0)
    assert mech.bias(q) == pytest.approx(mean - q, abs=1e-11 * size)
    assert mech.mean(q) == pytest.approx(mean, abs=1e-11 * size)
    assert mech.variance(q) == pytest.approx(var, rel=1e-10, abs=1e-13 * size**2)
    assert mech.mse(q) == pytest.approx(
        var + (mean - q) ** 2, rel=1e-10, abs=1e-13 * size**2
    )


@pytest.mark.parametrize("b, lower, upper, q", CASES, ids=IDS)
def test_ppf_and_isf_invert_the_cdf(b, lower, upper, q):
    """The closed-form quantiles: ``cdf(ppf(a)) = a`` and ``sf(isf(s)) = s`` (relative, down to 1e-300), and
    ``ppf(cdf(x)) = x`` on the support."""
    levels = np.array([1e-300, 1e-30, 1e-8, 0.01, 0.2, 0.5, 0.8, 0.99])
    # translated so that the bound at the tail sits at 0, where the doubles resolve quantiles of tiny levels
    shift = lower if math.isfinite(lower) else 0.0
    low = FoldedLaplace(b, lower=lower - shift, upper=upper - shift)
    np.testing.assert_allclose(
        low.cdf(low.ppf(levels, q - shift), q - shift), levels, rtol=1e-12
    )
    shift = upper if math.isfinite(upper) else 0.0
    high = FoldedLaplace(b, lower=lower - shift, upper=upper - shift)
    np.testing.assert_allclose(
        high.sf(high.isf(levels, q - shift), q - shift), levels, rtol=1e-12
    )
    mech = FoldedLaplace(b, lower=lower, upper=upper)
    lo = lower if math.isfinite(lower) else fold(q, lower, upper) - 20 * b
    hi = upper if math.isfinite(upper) else fold(q, lower, upper) + 20 * b
    xs = np.linspace(lo, hi, 9)[1:-1]
    back = np.where(
        mech.cdf(xs, q) <= 0.5,
        mech.ppf(mech.cdf(xs, q), q),
        mech.isf(mech.sf(xs, q), q),
    )
    np.testing.assert_allclose(back, xs, rtol=1e-12, atol=1e-12 * (hi - lo))
    assert mech.ppf(0.0, q) == mech.support[0] and mech.ppf(1.0, q) == mech.support[1]
    assert mech.isf(1.0, q) == mech.support[0] and mech.isf(0.0, q) == mech.support[1]


@pytest.mark.parametrize("b, w", [(1.0, 3.0), (1.0, 0.8), (2.0, 30.0)])
def test_tiny_quantiles_at_the_bound_where_the_true_value_sits(b, w):
    """``q`` at a bound: every quantile is on the far side of ``p = 0``, where the closed form ``w - b asinh(...)``
    keeps only the digits of ``w``; the refined quantiles must still invert the cdf at levels down to 1e-300."""
    levels = np.array([1e-300, 1e-100, 1e-12, 1e-6])
    mech = FoldedLaplace(b, lower=0.0, upper=w)
    np.testing.assert_allclose(mech.cdf(mech.ppf(levels, 0.0), 0.0), levels, rtol=1e-12)
    mirror = FoldedLaplace(b, lower=-w, upper=0.0)
    np.testing.assert_allclose(
        mirror.sf(mirror.isf(levels, 0.0), 0.0), levels, rtol=1e-12
    )


def test_cdf_outside_the_bounds_and_no_atoms():
    mech = FoldedLaplace(0.7, lower=-1.0, upper=2.0)
    assert mech.cdf(-1.0 - 1e-12, 0.5) == 0.0 and mech.cdf(2.0, 0.5) == 1.0
    assert mech.logcdf(-5.0, 0.5) == -math.inf and mech.logsf(7.0, 0.5) == -math.inf
    assert mech.pdf(-1.5, 0.5) == 0.0 and mech.atoms(0.5) == []
    assert (
        mech.cdf(-1.0, 0.5) == 0.0
    )  # no point mass at a bound: the fold is continuous
    upper_only = FoldedLaplace(0.7, lower=-np.inf, upper=2.0)
    assert upper_only.sf(2.0, 0.5) == 0.0 and upper_only.cdf(2.0 - 1e-9, 0.5) < 1.0


# --- the ends of the doubles: limits the law must reach --------------------------------------------


NO_WARNINGS = dict(over="raise", invalid="raise", divide="raise")


#: (scale, width) with width/scale from 1e-10 down to 1e-600, widths down to 1e-300
NARROW = [
    (b, b / r)
    for b in (1e-290, 1e-20, 1.0, 1e20, 1e300)
    for r in (1e10, 1e30, 1e300)
    if b / r >= 1e-300
]


@pytest.mark.parametrize("b, w", NARROW + [(1e300, 1e-300)])
def test_a_width_far_below_the_scale_is_uniform(b, w):
    """``w/b -> 0``: the law is uniform on the interval (to ``O(w/b)``), at any true value, also far outside."""
    lower = 3 * w
    mech = FoldedLaplace(b, lower=lower, upper=lower + w)
    with np.errstate(**NO_WARNINGS):
        for q in (lower, lower + 0.3 * w, lower + w, -1e300, 1e300):
            assert mech.cdf(lower + 0.3 * w, q) == pytest.approx(0.3, rel=1e-9)
            assert mech.logpdf(lower + 0.7 * w, q) == pytest.approx(
                -math.log(w), rel=1e-9
            )
            assert mech.variance(q) == pytest.approx(w * w / 12, rel=1e-9)
            assert mech.mean(q) == pytest.approx(lower + w / 2, rel=1e-9)
            x = mech.sample(q, size=10_000, rng=3)
            assert lower <= x.min() and x.max() <= lower + w
            # uniform: the mean of 10^4 draws within 5 standard errors of the middle
            assert abs(x.mean() - (lower + w / 2)) <= 5 * w / math.sqrt(12 * 10_000)


@pytest.mark.parametrize("b", [1e-300, 1.0, 1e290])
def test_a_width_far_above_the_scale_is_laplace_inside_and_one_sided_at_a_bound(b):
    w = b * 1e10
    mech = FoldedLaplace(b, lower=-w, upper=w)
    with np.errstate(**NO_WARNINGS):
        assert mech.bias(0.0) == 0.0 and mech.variance(0.0) == pytest.approx(
            2 * b * b, rel=1e-14
        )
        assert mech.logsf(50 * b, 0.0) == pytest.approx(math.log(0.5) - 50, rel=1e-14)
        # at the bound the law is |L_b| from it: bias b, variance b^2, exponential tail in log space
        assert mech.bias(-w) == pytest.approx(b, rel=1e-14)
        assert mech.variance(-w) == pytest.approx(b * b, rel=1e-14)
    one = FoldedLaplace(b, lower=0.0, upper=np.inf)
    with np.errstate(**NO_WARNINGS):
        assert one.logsf(1e6 * b, 0.0) == pytest.approx(-1e6, rel=1e-14)
        assert one.logcdf(1e-10 * b, 0.0) == pytest.approx(math.log(1e-10), rel=1e-9)
        assert one.bias(1e300) == 0.0 and one.bias(-1e300) == pytest.approx(
            2e300, rel=1e-14
        )
        assert one.logpdf(1e6 * b, 0.0) == pytest.approx(-1e6 - math.log(b), rel=1e-14)


@pytest.mark.parametrize("b", [1e-300, 1.0, 1e300])
@pytest.mark.parametrize(
    "bounds",
    [
        (0.0, 1e-300),
        (0.0, 1.0),
        (-1e300, 1e300),
        (0.0, np.inf),
        (-np.inf, 0.0),
        (-np.inf, np.inf),
    ],
)
@pytest.mark.parametrize("q", [-1e300, -1.0, 0.0, 0.5, 1e300])
def test_no_nan_and_no_warning_at_the_extremes(b, bounds, q):
    mech = FoldedLaplace(b, lower=bounds[0], upper=bounds[1])
    x = np.array([-1e300, -1.0, 0.0, 1e-300, 0.5, 1.0, 1e300])
    with np.errstate(**NO_WARNINGS):
        values = [
            mech.bias(q),
            mech.variance(q),
            mech.mse(q),
            mech.cdf(x, q),
            mech.sf(x, q),
            mech.logcdf(x, q),
            mech.logsf(x, q),
            mech.logpdf(x, q),
            mech.sample(q, size=50, rng=0),
            mech.max_abs_bias(),
        ]
    for v in values:
        assert not np.isnan(v).any(), values
    draws = values[-2]
    assert (bounds[0] <= draws).all() and (draws <= bounds[1]).all()
    assert (np.abs(values[3] + values[4] - 1) <= 4.5e-16).all()


def test_max_abs_bias_is_attained_at_the_bounds():
    for b, lower, upper in [
        (1.0, 0.0, 1.0),
        (0.2, -1.0, 3.0),
        (50.0, 0.0, 1.0),
        (1e30, 0.0, 1.0),
        (1.0, 0.0, np.inf),
    ]:
        mech = FoldedLaplace(b, lower=lower, upper=upper)
        top = mech.max_abs_bias()
        grid = np.linspace(lower, min(upper, lower + 50 * b), 2001)
        assert np.max(np.abs(mech.bias(grid))) == pytest.approx(top, rel=1e-12)
        assert abs(mech.bias(lower)) == pytest.approx(top, rel=1e-12)
    assert FoldedLaplace(1.0, lower=-np.inf, upper=np.inf).max_abs_bias() == 0.0


def test_bias_decreases_on_the_whole_line():
    """``bias(q) = F(q) - q + B(F(q))`` has slope ``B' < 0`` or ``-2 - B' < 0``: |bias| peaks at an interval's end."""
    mech = FoldedLaplace(0.8, lower=0.0, upper=1.0)
    q = np.linspace(-4, 5, 20001)
    assert (np.diff(mech.bias(q)) < 0).all()


# --- the sampler ----------------------------------------------------------------------------------


def diffprivlib_draws(b, lower, upper, q, n, seed):
    mech = diffprivlib.mechanisms.LaplaceFolded(
        epsilon=1.0 / b, sensitivity=1.0, lower=lower, upper=upper, random_state=seed
    )
    return np.array([mech.randomise(q) for _ in range(n)])


#: a fixed seed makes each p-value a fixed number; under the null it is uniform, so 1e-6 is the level
LEVEL = 1e-6


@pytest.mark.parametrize(
    "b, lower, upper, q",
    [
        (1.0, 0.0, 1.0, 0.3),
        pytest.param(0.3, 0.0, 1.0, 0.9, marks=pytest.mark.slow),
        pytest.param(2.0, -1.0, 1.0, -0.5, marks=pytest.mark.slow),
        pytest.param(1.0, 0.0, 1.0, -0.4, marks=pytest.mark.slow),  # outside the bounds
        pytest.param(0.7, 0.0, 10.0, 1.0, marks=pytest.mark.slow),
    ],
)
def test_sampler_matches_diffprivlib(b, lower, upper, q):
    """Two-sample KS, 10^5 draws each (diffprivlib draws one at a time in Python: about 10 s per case)."""
    ours = FoldedLaplace(b, lower=lower, upper=upper).sample(q, size=10**5, rng=11)
    theirs = diffprivlib_draws(b, lower, upper, q, 10**5, seed=7)
    assert stats.ks_2samp(ours, theirs).pvalue > LEVEL


@pytest.mark.parametrize(
    "b, lower, upper, q",
    [
        (1.0, 0.0, 1.0, 0.3),
        (0.05, 0.0, 1.0, 0.02),
        (3.0, -1.0, 2.0, 5.5),
        (1.0, 0.0, np.inf, 0.4),
        (1.0, -np.inf, 1.0, 3.0),
        (1.0, 0.0, 1e-20, 0.5e-20),
        (1e20, 0.0, 1.0, 0.1),
        (1e-300, 0.0, 1e-299, 0.0),
        (1e300, -1e300, 1e300, 0.0),
    ],
)
def test_sampler_against_the_exact_cdf(b, lower, upper, q):
    """One-sample KS at 10^5 draws, at ordinary parameters and at widths 1e20 times below the scale (where
    folding the rounded ``q + L_b`` would return a lattice of a few points)."""
    mech = FoldedLaplace(b, lower=lower, upper=upper)
    x = mech.sample(q, size=10**5, rng=5)
    assert stats.kstest(x, lambda t: mech.cdf(t, q)).pvalue > LEVEL
    # and the mean within 5 Monte Carlo standard errors of the exact mean (in units of the law's spread,
    # whose variance may underflow: width 1e-299)
    unit = min(upper - lower, b)
    z = (x - mech.mean(q)) / unit
    assert abs(z.mean()) <= 5 * z.std() / math.sqrt(x.size)


def test_the_ks_check_rejects_a_wrong_law():
    """The check above has power: draws at scale 1.05 b are rejected against the law at b."""
    mech = FoldedLaplace(1.0, lower=0.0, upper=3.0)
    x = FoldedLaplace(1.05, lower=0.0, upper=3.0).sample(0.1, size=10**5, rng=5)
    assert stats.kstest(x, lambda t: mech.cdf(t, 0.1)).pvalue < LEVEL


def test_sampler_is_reproducible_and_broadcasts():
    mech = FoldedLaplace(1.0, lower=0.0, upper=2.0)
    a = mech.sample([0.1, 1.9], size=(3, 2), rng=9)
    assert a.shape == (3, 2) and np.array_equal(
        a, mech.sample([0.1, 1.9], size=(3, 2), rng=9)
    )
    assert mech.sample(0.5, rng=1) == mech.sample(0.5, rng=1)


# --- against diffprivlib's formulas --------------------------------------------------------------


@pytest.mark.parametrize(
    "b, lower, upper, q",
    [
        c
        for c in CASES
        if math.isfinite(c[1]) and math.isfinite(c[2]) and c[1] <= c[3] <= c[2]
    ],
)
def test_bias_equals_diffprivlib_inside_the_bounds(b, lower, upper, q):
    theirs = diffprivlib.mechanisms.LaplaceFolded(
        epsilon=1.0 / b, sensitivity=1.0, lower=lower, upper=upper
    )
    assert FoldedLaplace(b, lower=lower, upper=upper).bias(q) == pytest.approx(
        theirs.bias(q), rel=1e-11, abs=1e-14
    )


def test_diffprivlib_bias_is_wrong_outside_the_bounds_and_has_no_variance():
    """diffprivlib's formula, evaluated at a value outside the bounds, disagrees with its own sampler, which
    folds the value; dpbook's bias (about the fold) agrees with both samplers.  diffprivlib has no variance."""
    b, lower, upper, q = 0.5, 0.0, 1.0, 2.7
    theirs = diffprivlib.mechanisms.LaplaceFolded(
        epsilon=1.0 / b, sensitivity=1.0, lower=lower, upper=upper
    )
    draws = diffprivlib_draws(b, lower, upper, q, 20_000, seed=3)
    se = draws.std() / math.sqrt(draws.size)
    ours = FoldedLaplace(b, lower=lower, upper=upper)
    assert abs(draws.mean() - q - ours.bias(q)) <= 5 * se
    assert abs(draws.mean() - q - theirs.bias(q)) > 1000 * se
    with pytest.raises(NotImplementedError):
        theirs.variance(0.5)


# --- privacy -------------------------------------------------------------------------------------


def brute_force_loss(mech, delta, qs):
    """The largest log-ratio of densities over a grid of outputs and of pairs at most ``delta`` apart."""
    lo, hi = mech.lower, mech.upper
    x = np.linspace(
        lo if math.isfinite(lo) else -40.0, hi if math.isfinite(hi) else 40.0, 4001
    )
    best = -math.inf
    for q1 in qs:
        for q2 in (q1 - delta, q1 + delta):
            best = max(best, float(np.max(mech.logpdf(x, q1) - mech.logpdf(x, q2))))
    return best


@pytest.mark.parametrize(
    "b, lower, upper, delta",
    [
        (1.0, 0.0, 1.0, 1.0),
        (0.5, 0.0, 3.0, 1.0),
        (2.0, -1.0, 1.0, 0.5),
        (1.0, 0.0, 1.0, 0.25),
    ],
)
def test_two_bounds_audit_is_the_laplace_bound_and_the_loss_is_below_it(
    b, lower, upper, delta
):
    """Folding is a post-processing of ``q + L_b`` for EVERY true value (the fold does not depend on ``q``):
    the auditor reports ``Δ/b``, flagged as an upper bound.  With two finite bounds the loss is below it:
    ``log cosh(w/b) - log cosh((w - Δ)/b)``, attained at the top pair (and at outputs at a bound)."""
    mech = FoldedLaplace(b, lower=lower, upper=upper)
    report = dpbook.privacy_report(mech, delta)
    assert report.epsilon == pytest.approx(delta / b, rel=1e-15) and not report.exact
    w = upper - lower
    exact = math.log(math.cosh(w / b)) - math.log(math.cosh((w - min(delta, w)) / b))
    inside = np.linspace(lower, upper, 81)
    brute = brute_force_loss(mech, delta, inside)
    assert brute == pytest.approx(exact, rel=1e-9)
    assert brute < report.epsilon
    # true values outside the bounds add nothing: the law at q is the law at its fold, a 1-Lipschitz map
    outside = np.linspace(lower - 2 * w, upper + 2 * w, 161)
    assert brute_force_loss(mech, delta, outside) <= exact * (1 + 1e-9)
    assert dpbook.privacy_loss(
        mech, delta, domain=(lower - 5.0, upper + 5.0)
    ) == pytest.approx(delta / b, rel=1e-15)


@pytest.mark.parametrize("lower, upper", [(0.0, np.inf), (-np.inf, 1.0)])
def test_one_bound_audit_is_the_loss(lower, upper):
    """One finite bound: at outputs between the bound and both true values the log-ratio is ``(q2 - q1)/b``,
    so the post-processing bound ``Δ/b`` is the loss itself."""
    b, delta = 0.8, 1.0
    mech = FoldedLaplace(b, lower=lower, upper=upper)
    report = dpbook.privacy_report(mech, delta)
    assert report.epsilon == pytest.approx(delta / b, rel=1e-15) and not report.exact
    near = (lower if math.isfinite(lower) else upper) + np.linspace(-3, 3, 61)
    assert brute_force_loss(mech, delta, near) == pytest.approx(delta / b, rel=1e-12)


def test_no_bound_is_the_laplace_mechanism_audited_exactly():
    mech = FoldedLaplace(2.0, lower=-np.inf, upper=np.inf)
    report = dpbook.privacy_report(mech, 1.0)
    assert report.epsilon == pytest.approx(0.5, rel=1e-15) and report.exact
    lap = dpbook.Laplace(2.0)
    x = np.linspace(-10, 10, 9)
    assert np.array_equal(mech.cdf(x, 0.3), lap.cdf(x, 0.3)) and mech.variance(
        1.0
    ) == lap.variance(1.0)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        (("1",), dict(lower=0.0, upper=1.0), "scale"),
        ((True,), dict(lower=0.0, upper=1.0), "scale"),
        ((0.0,), dict(lower=0.0, upper=1.0), "scale"),
        ((1.0,), dict(lower=1.0, upper=0.0), "lower"),
        ((1.0,), dict(lower=float("nan"), upper=1.0), "lower"),
        ((1.0,), dict(lower=0.0, upper="1"), "upper"),
    ],
)
def test_bad_parameters_name_themselves(args, kwargs, name):
    with pytest.raises(ValueError, match=name):
        FoldedLaplace(*args, **kwargs)


def test_bounds_are_keyword_only_and_required():
    with pytest.raises(TypeError):
        FoldedLaplace(1.0, 0.0, 1.0)
    with pytest.raises(TypeError):
        FoldedLaplace(1.0)


def test_bad_true_values_and_outputs_name_themselves():
    mech = FoldedLaplace(1.0, lower=0.0, upper=1.0)
    with pytest.raises(ValueError, match="q"):
        mech.bias("0.5")
    with pytest.raises(ValueError, match="x"):
        mech.cdf(np.nan, 0.5)
    with pytest.raises(ValueError, match="q"):
        mech.sample(np.inf, size=3, rng=0)


def test_a_far_bound_does_not_decide_the_side_of_the_fold():
    """The output's side of ``F(q)`` is decided on the outputs, not on their distances from the bound: with
    the lower bound at ``-1e16`` both distances round to one double, and the old comparison of the two took
    the wrong closed form (the cdf was 0.4585 instead of 0.9392, the value with the bound at ``-1e3``)."""
    near = dpbook.FoldedLaplace(1.0, lower=-1e3, upper=1.0)
    for lower in (-1e16, -1e300, -np.inf):
        far = dpbook.FoldedLaplace(1.0, lower=lower, upper=1.0)
        for x, q in ((0.9, 0.5), (0.5, 0.9), (-3.0, 0.25), (0.999, -2.0)):
            assert math.isclose(far.cdf(x, q), near.cdf(x, q), rel_tol=1e-12), (
                lower,
                x,
                q,
            )
    assert (
        dpbook.FoldedLaplace(1.0, lower=-1e300, upper=1.0).sf(1 - 2**-53, -1e283)
        < 1e-15
    )
