"""Closed-form ends of the exact intervals for monotone transforms of Laplace noise (issue 26):
:class:`dpbook.TranslatedRamp` (``max(q - α + L_b, 0)``, its atom at 0 below and above the bound),
:class:`dpbook.LogLaplace` (``q e^{L_b}``) and :class:`dpbook.Rounded` of :class:`dpbook.Laplace`
(``dpbook/_kernels/inversion.py``: ``_ramp_root``, ``_log_root``, ``_rounded_root``).

A certified root ``r`` with width ``W`` claims that the transform, computed as the intervals compute it, is on
one side of ``p`` for every ``q < r - W`` and on the other for every ``q > r + W``.  The checks evaluate it
there (just outside the zone), and compare the ends with the bisection's (``closed_form=False``) over drawn
scales ``1e-300 .. 1e300``, releases on the atom, next to it and far from the true value, levels ``0.5 ..
1 - 1e-9`` and uniforms ``v`` in ``{0, 0.3, 1, 1e-12}`` and drawn: over the doubles an end holds the
bisection's within twice the width, over the integers it is the same integer.  A root moved by a few widths
fails the first check (:func:`test_a_moved_or_narrowed_root_fails_the_checks`).
"""

import numpy as np
import pytest
from spies import count_law_evaluations, replace_roots

import dpbook
from dpbook._kernels.inversion import Root
from dpbook.inference import intervals

LEVELS = (0.5, 0.9, 0.95, 0.99, 1 - 1e-9)


def transform(mech, x, q, v, upper):
    """``P(M < x) + v P(M = x)`` (``upper`` false) or ``P(M > x) + (1 - v) P(M = x)``, computed as
    :func:`dpbook.inference.intervals._neyman_search` computes them (``v`` None: ``P(M <= x)``, resp.
    ``P(M >= x)``)."""
    bx = x - 1.0 if mech.integer_valued else np.nextafter(x, -np.inf)
    if upper:
        above, at = mech.sf(x, q), mech.sf(bx, q)
        if v is None:
            return at
        return above + (1.0 - v) * max(at - above, 0.0)
    below, at = mech.cdf(bx, q), mech.cdf(x, q)
    if v is None:
        return at
    return below + v * max(at - below, 0.0)


def zone_violations(mech, x, level, v, upper, root=None):
    """Releases where a certified root's claim fails: the computed transform on the wrong side of ``p`` just
    outside ``[r - W, r + W]`` (the nearest doubles, or integers, of the domain beyond it)."""
    half = (1.0 - level) / 2.0
    w = (0.0 if upper else 1.0) if v is None else v
    got = mech._quantile_in_q(x, half, w, upper) if root is None else root
    r, width = (np.broadcast_to(a, x.shape) for a in got)
    lo, hi = mech.domain
    bad = []
    for i in np.flatnonzero(np.isfinite(width) & np.isfinite(r)):
        vi = None if v is None else float(np.broadcast_to(v, x.shape)[i])
        if mech.integer_valued:
            left, right = np.floor(r[i] - width[i]), np.ceil(r[i] + width[i])
        else:
            left = np.nextafter(r[i] - width[i], -np.inf)
            right = np.nextafter(r[i] + width[i], np.inf)
        for q, below_zone in ((left, True), (right, False)):
            if not (lo <= q <= hi and mech.accepts(q)):
                continue
            holds = transform(mech, x[i], q, vi, upper) >= half
            # U >= p below the zone (the lower tail); 1 - U >= p above it (the upper one)
            if holds != (below_zone != upper):
                bad.append((x[i], vi, q, r[i], width[i]))
    return bad


def mechanisms(rng):
    """Drawn scales and shifts over the whole range, plus the registry's typical cases."""
    yield dpbook.TranslatedRamp(1.0, dpbook.optimal_ramp_shift(1.0))
    yield dpbook.LogLaplace(0.3)
    yield dpbook.Rounded(dpbook.Laplace(1.0))
    b = 10.0 ** rng.uniform(-300, 300)
    yield dpbook.TranslatedRamp(b, b * 10.0 ** rng.uniform(-3, 1))
    yield dpbook.TranslatedRamp(
        10.0 ** rng.uniform(-300, 300), 10.0 ** rng.uniform(-300, 300)
    )
    yield dpbook.LogLaplace(10.0 ** rng.uniform(-300, 300))
    yield dpbook.LogLaplace(10.0 ** rng.uniform(-2, 1))
    yield dpbook.Rounded(dpbook.Laplace(10.0 ** rng.uniform(-3, 6)))


def releases(mech, rng, n=40):
    """Draws at true values near the domain's end and far from it, plus the atom and extreme releases."""
    lo = mech.domain[0]
    if mech.integer_valued:
        q = np.round(
            rng.choice([0.0, 7.0, -(2.0**40), 2.0**40]) + 3 * rng.normal(size=n)
        )
        extra = np.round(q[:4] + 60 * mech.mechanism.scale * rng.normal(size=4))
        extra = np.clip(extra, -(2.0**50), 2.0**50)
    else:
        scale = mech.scale
        with np.errstate(over="ignore"):
            q = np.abs(
                rng.choice([1e-300, 0.5, 3.0, 1e10, 1e300]) * rng.uniform(0.5, 2, n)
            )
            if isinstance(mech, dpbook.TranslatedRamp):
                q = np.minimum(mech.shift + scale * rng.uniform(-3, 3, n), 1e300)
        q = np.clip(np.nan_to_num(q, posinf=1e300), 1e-300, 1e300)
        q = np.maximum(q, lo if lo > 0 else 1e-300)
        extra = np.array([0.0, 5e-324, 2e-320, 1e-300, 1.0, 1e300])
    x = np.asarray(mech.sample(q, rng=rng), dtype=float)
    return np.concatenate([x, extra[extra >= mech.support[0]]])


def uniforms(rng, shape):
    v = rng.random(shape)
    v[:4] = [0.0, 1.0, 0.3, 1e-12][: v.size]
    return v


@pytest.mark.parametrize("seed", range(6))
def test_the_computed_transform_is_on_its_side_outside_every_certified_zone(seed):
    rng = np.random.default_rng(seed)
    for mech in mechanisms(rng):
        x = releases(mech, rng, 25)
        for level in LEVELS:
            for v in (None, uniforms(rng, x.shape), np.full(x.shape, 0.3)):
                for upper in (False, True):
                    bad = zone_violations(mech, x, level, v, upper)
                    assert not bad, (mech, level, upper, bad[:3])


def ends(mech, x, level, v=None, closed_form=True):
    search = intervals._neyman_integer if mech.integer_valued else intervals._neyman
    return search(mech, x, level, v, closed_form=closed_form)


def widths(mech, x, level, v):
    half = (1.0 - level) / 2.0
    out = []
    for w, upper in (
        ((0.0 if v is None else v), True),
        ((1.0 if v is None else v), False),
    ):
        out.append(
            np.broadcast_to(mech._quantile_in_q(x, half, w, upper).width, x.shape)
        )
    return out


def agreement_failures(mech, x, level, v):
    """Where the closed-form ends and the bisection's disagree beyond what the widths allow: over the
    integers any difference; over the doubles a certified end inside the bisection's or more than twice its
    width (and a double) away, an uncertified one (searched from the root) anywhere but a double away."""
    fast, slow = ends(mech, x, level, v), ends(mech, x, level, v, closed_form=False)
    out = []
    for side, (a, b, w) in enumerate(zip(fast, slow, widths(mech, x, level, v))):
        if mech.integer_valued:
            out += list(x[a != b])
            continue
        with np.errstate(invalid="ignore"):
            gap = np.where(a == b, 0.0, np.abs(a - b))
        outward = (a <= b) if side == 0 else (a >= b)
        slack = np.where(np.isfinite(w), 2.0 * w, 0.0) + 2.0 * np.spacing(np.abs(b))
        ok = (gap == 0.0) | (outward & (gap <= slack))
        out += list(x[~ok])
    return out


@pytest.mark.parametrize("seed", range(6))
def test_closed_form_ends_hold_the_bisections(seed):
    rng = np.random.default_rng(100 + seed)
    for mech in mechanisms(rng):
        x = releases(mech, rng, 40)
        for level in LEVELS:
            for v in (
                None,
                uniforms(rng, x.shape),
                np.zeros(x.shape),
                np.ones(x.shape),
            ):
                assert not agreement_failures(mech, x, level, v), (mech, level)


def test_certified_ends_are_a_few_units_in_the_last_place_wide():
    """The price of skipping the law, relative to the scale and the shift (ramp) or to the root (log-Laplace):
    under ``1e-13`` for nearly every release, and nearly every release is certified.  The exception is the
    ramp's atom below the bound with ``v`` just above ``α/2``, where ``U = v(1 - e)`` is flat in ``q``: its width
    grows as ``1/(1 - α/(2v))`` (at most ``2^-20`` relative, else it is searched)."""
    ramp = dpbook.TranslatedRamp(0.7, 0.3)
    x = np.asarray(ramp.sample(0.5, 2000, rng=5), dtype=float)
    v = uniforms(np.random.default_rng(1), x.shape)
    for w in widths(ramp, x, 0.95, None) + widths(ramp, x, 0.95, v):
        sure = np.isfinite(w)
        assert sure.mean() > 0.99
        unit = ramp.scale + ramp.shift + np.abs(x[sure])
        assert (w[sure] <= 1e-13 * unit).mean() > 0.99
        assert (w[sure] <= 1e-5 * unit).all()
    log = dpbook.LogLaplace(0.3)
    x = np.asarray(log.sample(5.0, 2000, rng=5), dtype=float)
    for upper, w in ((True, 0.0), (False, 1.0)):
        root = log._quantile_in_q(x, 0.025, w, upper)
        assert np.isfinite(root.width).all()
        assert (root.width <= 1e-13 * root.root).all()


TYPICAL = {
    "ramp at q = 0 (65% on the atom)": (
        dpbook.TranslatedRamp(1.0, dpbook.optimal_ramp_shift(1.0)),
        0.0,
    ),
    "ramp at q = 2": (dpbook.TranslatedRamp(0.5, 0.2), 2.0),
    "log-laplace": (dpbook.LogLaplace(0.3), 5.0),
    "rounded laplace": (dpbook.Rounded(dpbook.Laplace(1.0)), 3),
    "rounded laplace, b = 0.05": (dpbook.Rounded(dpbook.Laplace(0.05)), 3),
}


@pytest.mark.parametrize("name", sorted(TYPICAL))
@pytest.mark.parametrize("randomize", [False, True])
def test_typical_releases_cost_no_evaluation_of_the_law(name, randomize, monkeypatch):
    mech, q = TYPICAL[name]
    x = np.asarray(mech.sample(q, 4000, rng=11), dtype=float)
    v = np.random.default_rng(12).random(x.shape) if randomize else None
    fast = ends(mech, x, 0.95, v)
    seen = count_law_evaluations(monkeypatch, mech)
    ends(mech, x, 0.95, v)
    assert seen[0] == 0
    slow = ends(mech, x, 0.95, v, closed_form=False)
    assert seen[0] / x.size >= 4  # the search it replaces
    if mech.integer_valued:
        np.testing.assert_array_equal(fast, slow)


def test_a_moved_or_narrowed_root_fails_the_checks(monkeypatch):
    """The checks above can fail: a root moved by three widths (a ramp's, a log-Laplace's) or past an integer
    (a rounded release's) is on the wrong side of some of the law's switches, and a width of zero puts some
    of the ramp's certified ends inside the bisection's."""
    mech = dpbook.TranslatedRamp(1.0, 0.3)
    x = np.asarray(mech.sample(0.5, 400, rng=3), dtype=float)
    real = mech._quantile_in_q(x, 0.025, 1.0, False)
    moved = Root(real.root + 3.0 * real.width, real.width)
    assert zone_violations(mech, x, 0.95, None, False, moved)
    log = dpbook.LogLaplace(0.3)
    y = np.asarray(log.sample(5.0, 400, rng=3), dtype=float)
    real = log._quantile_in_q(y, 0.025, 0.0, True)
    moved = Root(real.root - 3.0 * real.width, real.width)
    assert zone_violations(log, y, 0.95, None, True, moved)
    rounded = dpbook.Rounded(dpbook.Laplace(1.0))
    k = np.asarray(rounded.sample(0, 400, rng=3), dtype=float)
    real = rounded._quantile_in_q(k, 0.025, 1.0, False)
    moved = Root(
        real.root + 0.6, real.width
    )  # the root is x + 3.4957...: past the integer x + 4
    assert zone_violations(rounded, k, 0.95, None, False, moved)
    original = mech._quantile_in_q

    def narrowed(*args):
        root = original(*args)
        return Root(root.root, np.where(np.isnan(root.width), np.nan, 0.0))

    replace_roots(monkeypatch, mech, narrowed)
    assert agreement_failures(mech, x, 0.95, None)


def test_the_ramps_atom_below_the_bound():
    """At ``x = 0`` with ``q < α`` the atom holds more than half the law: the randomized ends come from ``1 - U
    = 1 - v + v e^{(q - α)/b}/2`` (``v > 1 - α/2``) and ``U = v(1 - e^{(q - α)/b}/2)`` (``α/2 < v < α``), in
    closed form, the same as the bisection's within their widths."""
    mech = dpbook.TranslatedRamp(1.0, 5.0)
    x = np.zeros(6)
    v = np.array([0.99, 0.999, 0.9999, 0.03, 0.04, 0.049])
    low = mech._quantile_in_q(x, 0.025, v, True)
    high = mech._quantile_in_q(x, 0.025, v, False)
    assert np.isfinite(low.width[:3]).all() and (low.root[:3] < 5.0).all()
    assert np.isfinite(high.width[3:]).all() and (high.root[3:] < 5.0).all()
    # the closed forms, by hand
    g = (0.025 - (1.0 - v[:3])) / v[:3]
    np.testing.assert_allclose(low.root[:3], 5.0 + np.log(2.0 * g), rtol=1e-14)
    g = 1.0 - 0.025 / v[3:]
    np.testing.assert_allclose(high.root[3:], 5.0 + np.log(2.0 * g), rtol=1e-14)
    assert not agreement_failures(mech, x, 0.95, v)
    assert not zone_violations(mech, x, 0.95, v, True)
    assert not zone_violations(mech, x, 0.95, v, False)


# --- a nondecreasing integer post-processing of discrete Laplace counts (CountPostProcessed) -------------


def count_rules(rng):
    """Clamping at 0 (the registry's typical case), a map with flat parts, one whose smallest value is above
    0 (releases 1 and 2 have no mass: a flat transform there) and one that ends on a long flat run, at
    drawn scales ``1e-3 .. 1e6``."""
    shapes = (
        ([0.0], 0.0),
        ([0.0, 0.0, 0.0, 2.0, 2.0, 5.0], 1.0),
        ([3.0, 3.0, 4.0], -1.0),
        ([0.0] * 5 + [1.0] * 5, 8.0),
    )
    yield dpbook.CountPostProcessed(1.0, values=[0.0], shift=0.0, integer=True)
    for values, shift in shapes:
        b = 10.0 ** rng.uniform(-3, 6)
        yield dpbook.CountPostProcessed(b, values=values, shift=shift, integer=True)


def count_releases(mech, rng, n=30):
    """Draws at true values on and next to the map's flat parts and far from them, plus the flat parts'
    own releases and releases far out."""
    b = mech.scale
    q = rng.choice([0.0, 2.0, 7.0, 1e4, 2.0**40], size=n)
    x = np.asarray(mech.sample(q, rng=rng), dtype=float)
    extra = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 12.0])
    far = np.round(np.abs(q[:4] + 60.0 * b * rng.normal(size=4)))
    return np.concatenate([x, extra, np.minimum(far, 2.0**50)])


COUNT_LEVELS = (0.5, 0.9, 0.95, 0.99, 0.999)


def count_zone_violations(mech, x, level, v, upper, root=None):
    """:func:`zone_violations` on whole arrays (the integers next to each certified zone, inside the domain)."""
    half = (1.0 - level) / 2.0
    w = (0.0 if upper else 1.0) if v is None else v
    got = mech._quantile_in_q(x, half, w, upper) if root is None else root
    r, width = (np.broadcast_to(a, x.shape) for a in got)
    sure = np.isfinite(width) & np.isfinite(r)
    xs, rs, ws = x[sure], r[sure], width[sure]
    vs = None if v is None else np.broadcast_to(v, x.shape)[sure]
    bad = []
    for q, below_zone in ((np.floor(rs - ws), True), (np.ceil(rs + ws), False)):
        keep = q >= mech.domain[0]
        xq, qq = xs[keep], q[keep]
        vq = None if vs is None else vs[keep]
        if upper:
            above, at = mech.sf(xq, qq), mech.sf(xq - 1.0, qq)
            t = at if vq is None else above + (1.0 - vq) * np.maximum(at - above, 0.0)
        else:
            below, at = mech.cdf(xq - 1.0, qq), mech.cdf(xq, qq)
            t = at if vq is None else below + vq * np.maximum(at - below, 0.0)
        holds = np.asarray(t) >= half
        bad += list(xq[holds != (below_zone != upper)])
    return bad


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_count_map_zones_and_ends_are_the_searchs(seed):
    """Outside every certified zone the computed transform is on its side, and the ends are the galloping
    search's integers, plain and randomized (``v`` in ``{0, 0.3, 1}`` and drawn)."""
    rng = np.random.default_rng(300 + seed)
    for mech in count_rules(rng):
        x = count_releases(mech, rng)
        for level in COUNT_LEVELS:
            for v in (
                None,
                np.zeros(x.shape),
                np.full(x.shape, 0.3),
                np.ones(x.shape),
                rng.random(x.shape),
            ):
                for upper in (False, True):
                    bad = count_zone_violations(mech, x, level, v, upper)
                    assert not bad, (mech, level, upper, bad[:3])
                assert not agreement_failures(mech, x, level, v), (mech, level)


def test_count_map_certifies_nearly_every_release():
    """Nearly every root is certified (a finite width: ``1/4`` for an end decided next to the tail, a few
    ``1e-12`` on it)."""
    mech = dpbook.CountPostProcessed(1.0, values=[0.0], shift=0.0, integer=True)
    x = np.asarray(mech.sample(3, 4000, rng=5), dtype=float)
    for w in widths(mech, x, 0.95, None) + widths(
        mech, x, 0.95, np.random.default_rng(6).random(x.shape)
    ):
        assert np.isfinite(w).mean() > 0.97
        assert (w[np.isfinite(w)] <= 0.25).all()


@pytest.mark.parametrize("q", [0, 3])
@pytest.mark.parametrize("randomize", [False, True])
def test_count_map_typical_releases_cost_at_most_five_evaluations(
    q, randomize, monkeypatch
):
    mech = dpbook.CountPostProcessed(1.0, values=[0.0], shift=0.0, integer=True)
    x = np.asarray(mech.sample(q, 4000, rng=11), dtype=float)
    v = np.random.default_rng(12).random(x.shape) if randomize else None
    fast = ends(mech, x, 0.95, v)
    seen = count_law_evaluations(monkeypatch, mech)
    ends(mech, x, 0.95, v)
    # plain: none; randomized: the few releases next to a decision (x = 0 with v > 1 - α/2 - E) are searched
    assert seen[0] / x.size <= (0.5 if randomize else 0.0)
    slow = ends(mech, x, 0.95, v, closed_form=False)
    assert seen[0] / x.size >= 4  # the search it replaces
    np.testing.assert_array_equal(fast, slow)


def test_count_map_a_moved_root_fails_the_checks():
    """A certified root moved past the next integer is on the wrong side of the law's switch."""
    mech = dpbook.CountPostProcessed(1.0, values=[0.0], shift=0.0, integer=True)
    x = np.asarray(mech.sample(3, 400, rng=3), dtype=float)
    for upper, w, step in ((False, 1.0, 1.0), (True, 0.0, -1.0)):
        real = mech._quantile_in_q(x, 0.025, w, upper)
        moved = Root(real.root + step, real.width)
        assert count_zone_violations(mech, x, 0.95, None, upper, moved)
        assert not count_zone_violations(mech, x, 0.95, None, upper, real)


def test_count_map_without_a_closed_form_is_searched():
    """Fractional values or shift (the randomized rounding mixes two outputs), real outputs and a decreasing
    map have no closed form here: ``None``, the ends are searched."""
    for values, shift, integer in (
        ([0.0, 0.4, 1.7], 0.5, True),
        ([0.0, 0.5], 0.0, True),
        ([0.0], 0.5, True),
        ([0.0], 0.0, False),
        ([2.0, 1.0], 0.0, True),
    ):
        mech = dpbook.CountPostProcessed(
            1.0, values=values, shift=shift, integer=integer
        )
        assert mech._quantile_in_q(np.array([0.0, 3.0]), 0.025, 1.0, False) is None
