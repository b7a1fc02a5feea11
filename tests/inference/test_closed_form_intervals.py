"""Closed-form ends of the exact intervals (``Mechanism._quantile_in_q``, issue 26).

The ends of :func:`dpbook.confidence_interval` are the smallest (largest) doubles, or integers, where the
family's computed tail crosses ``α/2``.  A family with a certified closed-form root in ``q`` (a
:class:`dpbook._kernels.inversion.Root`: Laplace, BIT and their discrete twins) gives the ends without
evaluating the law: over the integers they are the search's own integers, over the doubles the root moved
outwards by its proved width, so the interval holds the bisection's and is wider by at most twice the width.
A family with a root that is only a starting point (Truncated) polishes it on the law.  These tests check
both against the bisection (drawn parameters, extreme scales, infinite bounds, releases on the atoms and far
from the true value), the one assumption of the proof (numpy's ``exp`` and ``log`` to a few ulps), and count
the evaluations of the law that one end costs.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spies import count_law_evaluations, replace_roots

import dpbook
from dpbook._kernels.inversion import Root
from dpbook.inference import intervals

CLOSED = ("Laplace", "BIT", "Truncated", "DiscreteLaplace", "DiscreteBIT")


def build(name, scale, lower, upper):
    if name == "Laplace":
        return dpbook.Laplace(scale)
    if name == "DiscreteLaplace":
        return dpbook.DiscreteLaplace(scale)
    return getattr(dpbook, name)(scale, lower=lower, upper=upper)


def ends(mech, x, level, v=None, closed_form=True):
    search = intervals._neyman_integer if mech.integer_valued else intervals._neyman
    return search(mech, x, level, v, closed_form=closed_form)


def releases(mech, rng, n):
    """Draws at true values around the bounds and far off them, plus the bounds (the atoms) themselves."""
    lo, hi = mech.support
    centre = 0.0 if not np.isfinite(lo) else (lo if not np.isfinite(hi) else hi)
    spread = mech.scale * 40 + (hi - lo if np.isfinite(hi - lo) else 0.0)
    with np.errstate(over="ignore"):
        q = centre + spread * rng.uniform(-1.5, 1.5, n)
    q = np.clip(np.nan_to_num(q, posinf=1e300, neginf=-1e300), -1e300, 1e300)
    if mech.integer_valued:
        q = np.clip(np.round(q), -(2.0**40), 2.0**40)
    x = np.asarray(mech.sample(q, rng=rng), dtype=float)
    ends_ = [e for e in (lo, hi) if np.isfinite(e)]
    return np.concatenate([x, np.array(ends_ * 3, dtype=float)])


@st.composite
def cases(draw, names=CLOSED):
    name = draw(st.sampled_from(names))
    integer = name.startswith("Discrete")
    top = 12.0 if integer else 300.0
    scale = 10.0 ** draw(st.floats(-top, top))
    if integer:
        scale = min(max(scale, 1e-3), 1e6)
    if integer:
        lower = float(draw(st.integers(-50, 50)))
        width = float(draw(st.integers(0, 200)))
    else:
        lower = draw(st.floats(-1e6, 1e6)) * 10.0 ** draw(
            st.sampled_from([-300, 0, 3, 300])
        )
        width = 10.0 ** draw(st.floats(-300, 300))
    upper = lower + width
    if not np.isfinite(upper) or upper == lower:
        upper = lower + abs(lower) + 1.0
    lower = draw(st.sampled_from([lower, -np.inf]))
    upper = draw(st.sampled_from([upper, np.inf]))
    if integer and lower == upper:
        upper = lower + 1.0
    level = draw(st.sampled_from([0.5, 0.9, 0.95, 0.99, 1 - 1e-9]))
    seed = draw(st.integers(0, 2**31))
    return name, scale, lower, upper, level, seed


def both_searches(case):
    """``(mech, x, level, u, fast, slow)`` for the case's releases, plain (``u = None``) and randomized:
    the ends with the closed-form start and without it."""
    name, scale, lower, upper, level, seed = case
    mech = build(name, scale, lower, upper)
    rng = np.random.default_rng(seed)
    x = releases(mech, rng, 40)
    v = rng.random(x.shape)
    v[:4] = [0.0, 1.0, 0.5, 1e-12]
    for u in (None, v):
        fast = ends(mech, x, level, u)
        yield mech, x, level, u, fast, ends(mech, x, level, u, closed_form=False)


def widths(mech, x, level, v):
    """The proved widths of the family's roots for the low and the high end (NaN where the root is only a
    starting point, or for a family without certified roots)."""
    half = (1.0 - level) / 2.0
    one, zero = (1.0, 0.0) if v is None else (v, v)
    out = []
    for w, upper in ((zero, True), (one, False)):
        root = mech._quantile_in_q(x, half, w, upper)
        width = root.width if isinstance(root, Root) else np.nan
        out.append(np.broadcast_to(np.asarray(width, dtype=float), x.shape))
    return out


@settings(max_examples=150, deadline=None)
@given(cases())
def test_closed_form_ends_are_the_bisections_doubles(case):
    """Integers: the search's own.  Doubles: a certified end lies outside the bisection's (the interval
    holds it), within twice the proved width; an end polished on the law is a switch point of the
    computed tail next to the bisection's (:func:`switch_points`)."""
    for mech, x, level, u, fast, slow in both_searches(case):
        if mech.integer_valued:
            np.testing.assert_array_equal(fast[0], slow[0])
            np.testing.assert_array_equal(fast[1], slow[1])
            continue
        for side, (a, b, w) in enumerate(zip(fast, slow, widths(mech, x, level, u))):
            sure = np.isfinite(w)
            outward = (a <= b) if side == 0 else (a >= b)
            assert outward[sure].all(), (x[sure & ~outward], a[sure & ~outward])
            slack = 2.0 * w + 2.0 * np.spacing(np.abs(b))
            assert (np.abs(a - b) <= slack)[sure].all()
            for i in np.flatnonzero((a != b) & ~sure):  # see switch_points
                v = None if u is None else u[i]
                assert switch_points(mech, x[i], level, v, side, a[i], b[i])


@pytest.mark.parametrize("name", ["Laplace", "BIT"])
def test_certified_ends_are_a_few_units_in_the_last_place_wide(name):
    """The price of skipping the law: the width is a few ulps of the scale and the release (here under
    ``1e-13`` of them), and the ends stay nondecreasing in the release (what the exact coverage's search
    over the releases needs)."""
    mech = build(name, 0.7, -1.0, 3.0)
    x = np.sort(releases(mech, np.random.default_rng(5), 2000))
    for lev in (0.5, 0.95, 1 - 1e-9):
        low_w, high_w = widths(mech, x, lev, None)
        for w in (low_w, high_w):
            sure = np.isfinite(w)
            assert sure.mean() > 0.99
            assert (w[sure] <= 1e-13 * (mech.scale + np.abs(x[sure]))).all()
        low, high = intervals._neyman(mech, x, lev)
        assert (np.diff(low) >= 0).all() and (np.diff(high) >= 0).all()


def test_the_libm_is_as_accurate_as_the_proof_assumes():
    """The widths (``dpbook._kernels.inversion``) assume numpy's ``exp`` and ``log`` within ``E = 4`` ulps;
    checked here against ``decimal`` at 40 digits on arguments over the whole range the roots use."""
    import decimal

    decimal.getcontext().prec = 40
    rng = np.random.default_rng(26)
    z = np.concatenate([-rng.uniform(0, 745, 2000), rng.uniform(-40, 40, 2000)])
    y = np.concatenate([10.0 ** rng.uniform(-300, 300, 2000), rng.uniform(0, 1, 2000)])
    for func, args, exact in (
        (np.exp, z, lambda t: decimal.Decimal(t).exp()),
        (np.log, y, lambda t: decimal.Decimal(t).ln()),
    ):
        got = func(args)
        for t, g in zip(args.tolist(), got.tolist()):
            if g == 0.0 or not np.isfinite(g):
                continue
            err = abs(decimal.Decimal(g) - exact(t)) / decimal.Decimal(
                np.spacing(abs(g))
            )
            assert err <= 4, (func.__name__, t, g, float(err))


@pytest.mark.parametrize("name", ["DiscreteLaplace", "DiscreteBIT"])
@pytest.mark.parametrize("randomize", [False, True])
def test_an_integer_end_inside_the_zone_is_searched(name, randomize, monkeypatch):
    """With every zone made wide enough to hold an integer, no end is decided from the root: all are searched
    on the law, and the ends are still the search's (the path the rare undecided releases take)."""
    mech = build(name, 2.0, 0.0, 30.0)
    x = releases(mech, np.random.default_rng(9), 300)
    v = np.random.default_rng(4).random(x.shape) if randomize else None
    exact = ends(mech, x, 0.9, v, closed_form=False)
    real = mech._quantile_in_q

    def wide(*a):
        root = real(*a)
        return Root(root.root, np.where(np.isfinite(root.root), 0.75, np.nan))

    replace_roots(monkeypatch, mech, wide)
    seen = count_law_evaluations(monkeypatch, mech)
    fast = ends(mech, x, 0.9, v)
    assert seen[0] > 0
    np.testing.assert_array_equal(fast[0], exact[0])
    np.testing.assert_array_equal(fast[1], exact[1])


@pytest.mark.parametrize(
    "name",
    ["Laplace", "BIT [0, 2]", "BIT [0, inf)", "DiscreteLaplace", "DiscreteBIT [0, 50]"],
)
@pytest.mark.parametrize("randomize", [False, True])
def test_certified_families_do_not_evaluate_the_law(name, randomize, monkeypatch):
    """Typical releases, including the atoms of the clamped families: no evaluation of the law at all."""
    mech = TYPICAL[name]
    x = np.asarray(mech.sample(1, 4000, rng=11), dtype=float)
    v = np.random.default_rng(12).random(x.shape) if randomize else None
    seen = count_law_evaluations(monkeypatch, mech)
    ends(mech, x, 0.95, v)
    assert seen[0] == 0


@settings(max_examples=150, deadline=None)
@given(cases(("DiscreteTruncated",)))
def test_conditioned_count_ends_are_the_searchs_integers(case):
    """DiscreteTruncated's quadratic roots (drawn scales from 10^-3 to 10^6, one- and two-sided and
    infinite bounds, releases on the bounds): the integer ends are the same as without them."""
    for _, _, _, _, fast, slow in both_searches(case):
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1])


def switch_points(mech, x, level, v, side, a, b):
    """Both ``a`` and ``b`` are doubles where the tail, computed as the intervals compute it, crosses
    ``α/2`` (it holds at the end and fails one double beyond), within 64 doubles of each other.

    The computed tail is monotone in ``q`` except across the few doubles where it is within its rounding
    error of ``α/2`` (a ratio of two masses for a truncation, two cdf values subtracted for the randomized
    transform): every search picks one of the switches there (the bisection's depends on the midpoints
    of its starting range), so ends may differ inside that zone, never outside it.  The zone is widest
    for a truncation near its bound, where the mass ``N(q)`` loses digits: 17 doubles seen at ``q = 0.21``
    of ``Truncated(0.7, lower=0)`` (4 spacings of the release ``x = 2.63``)."""
    half = (1.0 - level) / 2.0
    bx = np.nextafter(x, -np.inf)

    def holds(q):
        if v is None:
            return (mech.cdf(x, q) if side == 1 else mech.sf(bx, q)) >= half
        if side == 1:  # the upper end: the last q with U >= α/2
            below, at = mech.cdf(bx, q), mech.cdf(x, q)
            return below + v * max(at - below, 0.0) >= half
        above, at = mech.sf(x, q), mech.sf(bx, q)
        return above + (1.0 - v) * max(at - above, 0.0) >= half

    lo, hi = mech.domain
    for end in (a, b):
        if side == 1:
            assert holds(end) and (end == hi or not holds(np.nextafter(end, np.inf)))
        else:
            assert holds(end) and (end == lo or not holds(np.nextafter(end, -np.inf)))
    return abs(a - b) <= zone_width(mech, x, level, v, side, a)


#: the rounding error allowed in a computed tail (a ratio of masses, or a difference of two cdf values,
#: each to a few units in the last place): ``TAIL_ULPS`` units of ``ulp(α/2)``
TAIL_ULPS = 16


def zone_width(mech, x, level, v, side, q):
    """A bound on the width (in ``q``) of the zone where the computed tail may cross ``α/2``.

    The exact tail ``T(q)`` is monotone; a computed tail within ``δ = TAIL_ULPS · ulp(α/2)`` of it can be
    on either side of ``α/2`` only where ``|T(q) - α/2| <= δ``, a zone of width at most ``2δ / |T'|``.
    ``T'`` is measured by a centred difference over ``h`` (a millionth of the scale, large enough that
    the difference is far above rounding, small enough that ``T'`` is constant across the zone to a
    few per cent), and the bound is doubled for that slack; two doubles are added for the ends
    themselves.  A flat computed tail (``T' = 0``) bounds nothing: the zone may be the whole flat part.
    """
    half = (1.0 - level) / 2.0
    bx = np.nextafter(x, -np.inf)
    w = 1.0 if v is None else v

    def tail(t):
        if side == 1:
            below, at = float(mech.cdf(bx, t)), float(mech.cdf(x, t))
            return below + w * max(at - below, 0.0)
        above, at = float(mech.sf(x, t)), float(mech.sf(bx, t))
        return above + (1.0 - w) * max(at - above, 0.0)

    lo, hi = mech.domain
    h = 1e-6 * mech.scale
    t0, t1 = max(q - h, lo), min(q + h, hi)
    slope = abs(tail(t1) - tail(t0)) / (t1 - t0) if t1 > t0 else 0.0
    delta = TAIL_ULPS * np.spacing(half)
    if slope == 0.0:
        return np.inf
    return 2.0 * (2.0 * delta / slope) + 2.0 * np.spacing(abs(q))


def test_ends_differ_only_inside_the_rounding_zone():
    """Truncated(10) on [0, 10] at level 0.5: the computed tail at the lower end is exactly α/2 over
    some 80 doubles of q near 0.915, and the bisection and the closed-form start pick different switches
    in that zone (80 doubles apart, more than the 64 allowed before); both are within the zone's
    proved width."""
    mech = dpbook.Truncated(10.0, lower=0.0, upper=10.0)
    x = np.array([6.46270000001])
    fast, slow = ends(mech, x, 0.5), ends(mech, x, 0.5, closed_form=False)
    assert fast[0][0] != slow[0][0]  # the case this test is about
    assert switch_points(mech, x[0], 0.5, None, 0, fast[0][0], slow[0][0])
    # the zone is narrow: a billionth is far outside it
    width = zone_width(mech, x[0], 0.5, None, 0, fast[0][0])
    assert abs(fast[0][0] - slow[0][0]) <= width < 1e-12


def test_public_intervals_use_the_closed_form_and_hold_the_bisections():
    mech = dpbook.BIT(0.2, lower=0.0, upper=1.0)
    x = np.array([0.0, 0.3, 0.5, 1.0])
    ci = dpbook.confidence_interval(mech, x, 0.9)
    slow = intervals._neyman(mech, x, 0.9, closed_form=False)
    assert (ci.low <= slow[0]).all() and (ci.high >= slow[1]).all()
    np.testing.assert_allclose(ci.low, slow[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(ci.high, slow[1], rtol=0, atol=1e-14)
    rand = dpbook.randomized_interval(mech, x, 0.3, 0.9)
    slow = intervals._neyman(mech, x, 0.9, np.full(x.shape, 0.3), closed_form=False)
    assert (rand.low <= slow[0]).all() and (rand.high >= slow[1]).all()
    np.testing.assert_allclose(rand.low, slow[0], rtol=0, atol=1e-14)


TYPICAL = {
    "Laplace": dpbook.Laplace(1.3),
    "BIT [0, 2]": dpbook.BIT(1.0, lower=0.0, upper=2.0),
    "BIT [0, inf)": dpbook.BIT(0.8, lower=0.0),
    "Truncated [0, 2]": dpbook.Truncated(1.0, lower=0.0, upper=2.0),
    "Truncated [0, inf)": dpbook.Truncated(0.7, lower=0.0),
    "DiscreteLaplace": dpbook.DiscreteLaplace(1.5),
    "DiscreteBIT [0, 5]": dpbook.DiscreteBIT(1.0, lower=0, upper=5),
    "DiscreteBIT [0, 50]": dpbook.DiscreteBIT(10.0, lower=0, upper=50),
    "DiscreteTruncated [0, 5]": dpbook.DiscreteTruncated(1.0, lower=0, upper=5),
    "DiscreteTruncated [0, 50]": dpbook.DiscreteTruncated(10.0, lower=0, upper=50),
    "DiscreteTruncated [0, inf)": dpbook.DiscreteTruncated(0.7, lower=0),
}


@pytest.mark.parametrize("name", sorted(TYPICAL))
@pytest.mark.parametrize("randomize", [False, True])
def test_an_end_costs_at_most_five_evaluations_of_the_law(name, randomize, monkeypatch):
    mech = TYPICAL[name]
    n = 4000
    x = np.asarray(mech.sample(1, n, rng=2026), dtype=float)
    v = np.random.default_rng(1).random(n) if randomize else None
    seen = count_law_evaluations(monkeypatch, mech)
    if randomize:
        dpbook.randomized_interval(mech, x, v, 0.95)
    else:
        dpbook.confidence_interval(mech, x, 0.95)
    per_end = seen[0] / n / 2
    assert per_end <= 5.0
    seen[0] = 0
    ends(mech, x, 0.95, v, closed_form=False)
    assert seen[0] / n / 2 > 1.8 * per_end  # the search it replaces


@pytest.mark.parametrize("name", ["Laplace", "BIT [0, inf)", "Truncated [0, inf)"])
@pytest.mark.parametrize("randomize", [False, True])
def test_a_bad_guess_costs_at_most_a_few_evaluations_more_than_the_bisection(
    name, randomize, monkeypatch
):
    """A closed form off by a factor 1.001 (about 2^42 doubles): the capped gallop falls back to the
    bisection, at most ``2 + _GALLOP_STEPS`` evaluations of the transform per end above it, and the ends
    are still the bisection's doubles (or, for the truncation's ratio of masses, switch points of the
    computed tail next to them: :func:`switch_points`)."""
    mech = TYPICAL[name]
    n = 500
    x = np.asarray(mech.sample(1, n, rng=7), dtype=float)
    v = np.random.default_rng(3).random(n) if randomize else None
    good = ends(mech, x, 0.95, v, closed_form=False)
    real = mech._quantile_in_q

    def bad(*a):  # a starting point only (no width), off by a factor 1.001
        root = real(*a)
        return (root.root if isinstance(root, Root) else root) * 1.001

    replace_roots(monkeypatch, mech, bad)
    seen = count_law_evaluations(monkeypatch, mech)
    bad = ends(mech, x, 0.95, v)
    per_end = seen[0] / n / 2
    seen[0] = 0
    ends(mech, x, 0.95, v, closed_form=False)
    bisection = seen[0] / n / 2
    per_transform = (
        2 if randomize else 1
    )  # the randomized transform reads the law twice
    assert per_end <= bisection + (2 + intervals._GALLOP_STEPS) * per_transform
    assert per_end <= 72 * per_transform
    for side, (a, b) in enumerate(zip(bad, good)):
        for i in np.flatnonzero(a != b):  # see switch_points
            w = None if v is None else v[i]
            assert switch_points(mech, x[i], 0.95, w, side, a[i], b[i])


def test_a_family_without_a_closed_form_says_so():
    # a post-processing with fractional values (its randomized rounding mixes two outputs)
    mech = dpbook.CountPostProcessed(
        1.0, values=[0.0, 0.4, 1.7], shift=0.5, integer=True
    )
    assert mech._quantile_in_q(0.0, 0.05, 1.0, False) is None
    assert (
        dpbook.Rounded(dpbook.BIT(1.0, lower=0.0))._quantile_in_q(0.0, 0.05, 1.0, False)
        is None
    )
