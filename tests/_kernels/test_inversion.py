"""The closed-form roots in ``q`` of the truncations (``dpbook/_kernels/inversion.py``: ``_truncated_root`` for
:class:`dpbook.Truncated`, ``_count_root`` for :class:`dpbook.DiscreteTruncated`), checked against the law as
the intervals compute it and against the bisection they replace.

A certified root ``r`` with width ``W`` claims that the computed transform is on one side of ``p`` for every
``q < r - W`` and on the other for every ``q > r + W`` (``±inf`` with width 0: on one side everywhere).  The
checks evaluate the computed transform exactly as :mod:`dpbook.inference.intervals` does at ``r ± W`` (a root
moved by more than twice its width fails them: :func:`test_a_moved_root_fails_the_check`), and compare the
ends with the bisection's over drawn parameters: scales ``1e-300 .. 1e300``, one or two finite bounds,
releases on, next to and far from the bounds, levels ``0.5 .. 0.999``, uniforms ``v`` in ``{0, 0.3, 1}``.
"""

import decimal

import numpy as np
import pytest
from spies import count_law_evaluations

import dpbook
from dpbook._kernels.inversion import _long_path
from dpbook.inference import intervals

LEVELS = (0.5, 0.9, 0.95, 0.99, 0.999)


def transform(mech, x, q, v, upper):
    """The lower tail ``P(M < x) + v P(M = x)`` (``upper`` false) or the upper one, computed as the intervals
    compute it (``v`` None: the plain interval's ``P(M <= x)``, resp. ``P(M >= x)``)."""
    step = 1.0 if mech.integer_valued else None
    bx = x - step if step else np.nextafter(x, -np.inf)
    if not upper:
        if v is None:
            return mech.cdf(x, q)
        below, at = mech.cdf(bx, q), mech.cdf(x, q)
        return below + v * np.maximum(at - below, 0.0)
    if v is None:
        return mech.sf(bx, q)
    above, at = mech.sf(x, q), mech.sf(bx, q)
    return above + (1.0 - v) * np.maximum(at - above, 0.0)


def violations(mech, x, p, v, upper, root, width):
    """The positions where a certified root's claim fails at ``root ± width`` (or, for ``±inf``, at the bounds
    and at two far true values)."""
    sure = np.isfinite(width)
    fin = sure & np.isfinite(root)
    bad = np.zeros(x.shape, dtype=bool)
    vv = None if v is None else np.broadcast_to(v, x.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        lo_q, hi_q = root - width, root + width
        if (
            mech.integer_valued
        ):  # the claim is over the integers: the nearest ones outside the zone
            lo_q, hi_q = np.ceil(lo_q) - 1.0, np.floor(hi_q) + 1.0
    for q, below in ((lo_q, True), (hi_q, False)):
        t = transform(mech, x[fin], q[fin], None if vv is None else vv[fin], upper)
        # lower tail: U >= p below the zone, < p above it; upper tail: 1 - U < p below, >= p above
        ok = (t >= p) if below != upper else (t < p)
        bad[np.flatnonzero(fin)[~ok]] = True
    inf = sure & np.isinf(root)
    lo, hi = mech.domain
    far = 2.0**52 if mech.integer_valued else 1e300
    probes = [lo, hi, -far, far, np.floor(0.5 * lo + 0.5 * hi)]
    probes = [t for t in probes if np.isfinite(t)]
    for q in probes:
        t = transform(mech, x[inf], q, None if vv is None else vv[inf], upper)
        holds = t >= p
        # +inf: the predicate holds everywhere (lower tail), fails everywhere (upper tail)
        expect = (root[inf] > 0) != upper
        bad[np.flatnonzero(inf)[holds != expect]] = True
    return bad


def truncations(rng, n):
    """Drawn truncations: scale ``10^U(-300, 300)`` (and near 1), bounds of every size, one side infinite."""
    out = []
    for _ in range(n):
        scale = 10.0 ** rng.choice([rng.uniform(-300, 300), rng.uniform(-2, 2)])
        lower = rng.uniform(-1e3, 1e3) * 10.0 ** rng.choice([-300, 0, 3, 300])
        width = scale * 10.0 ** rng.uniform(0.4, 3)
        upper = lower + width
        if not np.isfinite(upper) or upper == lower:
            continue
        kind = rng.integers(3)
        lower, upper = (
            (lower, upper)
            if kind == 0
            else ((-np.inf, upper) if kind == 1 else (lower, np.inf))
        )
        out.append(dpbook.Truncated(scale, lower=lower, upper=upper))
    return out


def releases(mech, rng, n):
    """Draws at true values near and far from the bounds, and the bounds and their neighbouring doubles."""
    lo, hi = mech.support
    ends = [e for e in (lo, hi) if np.isfinite(e)]
    centre = ends[0] if ends else 0.0
    spread = mech.scale * 30.0 + (hi - lo if np.isfinite(hi - lo) else 0.0)
    with np.errstate(over="ignore"):
        q = centre + spread * rng.uniform(-1.5, 1.5, n)
    q = np.clip(np.nan_to_num(q), -1e300, 1e300)
    if mech.integer_valued:
        q = np.round(q)
    x = np.asarray(mech.sample(q, rng=rng), dtype=float)
    near = []
    for e in ends:
        near += [e, e] if mech.integer_valued else [e, np.nextafter(e, lo + hi - 2 * e)]
        if mech.integer_valued:
            near.append(e + (1.0 if e == lo else -1.0))
    return np.concatenate([x, np.array(near, dtype=float)])


def test_truncated_roots_hold_their_widths_and_the_bisections_ends():
    """Drawn truncations: every certified root's claim holds at ``root ± width``; the bisection's end lies in
    ``root ± width`` (the last double where the lower tail holds, the first where the upper tail does); most
    roots are certified where the interval is longer than two scales."""
    rng = np.random.default_rng(2611)
    certified = total = 0
    for mech in truncations(rng, 20):
        x = releases(mech, rng, 30)
        level = rng.choice(LEVELS)
        p = (1.0 - level) / 2.0
        for v in (None, 0.0, 0.3, 1.0):
            slow = intervals._neyman(
                mech,
                x,
                level,
                None if v is None else np.full(x.shape, v),
                closed_form=False,
            )
            lo, hi = mech.domain
            for upper, end in ((False, slow[1]), (True, slow[0])):
                w = (0.0 if upper else 1.0) if v is None else v
                root, width = mech._quantile_in_q(x, p, w, upper)
                bad = violations(mech, x, p, v, upper, root, width)
                assert not bad.any(), (mech, x[bad], root[bad], width[bad], v, upper)
                fin = np.isfinite(width) & np.isfinite(root)
                # the bisection's end (clipped to the domain) is within the width of the root clipped the same way
                r = np.clip(root[fin], lo, hi)
                gap = np.abs(end[fin] - r)
                assert (gap <= width[fin] + 2.0 * np.spacing(np.abs(r))).all()
                if _long_path(mech.scale, *mech.domain):
                    certified += np.isfinite(width).sum()
                    total += x.size
    assert certified > 0.8 * total


@pytest.mark.parametrize("v", [None, 0.0, 0.3, 1.0])
def test_truncated_ends_hold_the_bisections_within_twice_the_width(v):
    """The public path: ends outward of the bisection's and within twice the width, on the typical cases,
    with levels up to 0.999 and the releases at and next to the bounds."""
    rng = np.random.default_rng(7)
    for mech in (
        dpbook.Truncated(1.0, lower=0.0, upper=2.0),
        dpbook.Truncated(0.7, lower=0.0),
        dpbook.Truncated(1e-300, lower=-1e-298, upper=1e-298),
        dpbook.Truncated(1e300, upper=0.0, lower=-np.inf),
    ):
        x = releases(mech, rng, 300)
        vv = None if v is None else np.full(x.shape, v)
        for level in LEVELS:
            fast = intervals._neyman(mech, x, level, vv)
            slow = intervals._neyman(mech, x, level, vv, closed_form=False)
            p = (1.0 - level) / 2.0
            for side, upper in ((0, True), (1, False)):
                w = (0.0 if upper else 1.0) if v is None else v
                width = mech._quantile_in_q(x, p, w, upper).width
                sure = np.isfinite(width)
                outward = (
                    fast[side] <= slow[side] if side == 0 else fast[side] >= slow[side]
                )
                assert outward[sure].all()
                slack = 2.0 * width + 2.0 * np.spacing(np.abs(slow[side]))
                assert (np.abs(fast[side] - slow[side]) <= slack)[sure].all()
                assert sure.mean() > 0.9


def test_a_moved_root_fails_the_check():
    """The check is sharp: the same roots moved by three widths (at least one double) violate it."""
    mech = dpbook.Truncated(1.0, lower=0.0, upper=2.0)
    x = releases(mech, np.random.default_rng(3), 400)
    p = 0.05
    root, width = mech._quantile_in_q(x, p, 1.0, False)
    fin = np.isfinite(root) & np.isfinite(width)
    assert fin.sum() > 20
    assert not violations(mech, x, p, None, False, root, width).any()
    step = np.maximum(3.0 * width, 4.0 * np.spacing(np.abs(root)))
    for moved in (root + step, root - step):
        assert violations(mech, x[fin], p, None, False, moved[fin], width[fin]).all()


def test_a_short_interval_is_not_certified():
    """An interval under two scales takes the law's short path (ratios of log masses), which the proof does not
    cover: its roots are starting points only, and the ends still the bisection's switch points."""
    assert not _long_path(1.0, 0.0, 1.99) and not _long_path(10.0, 0.0, 10.0)
    assert (
        _long_path(1.0, 0.0, 2.0)
        and _long_path(1.0, -np.inf, 0.0)
        and _long_path(1.0, 0.0, 2.6)
    )
    mech = dpbook.Truncated(10.0, lower=0.0, upper=10.0)
    x = releases(mech, np.random.default_rng(1), 50)
    inside = (x > 0.0) & (
        x < 10.0
    )  # (on a bound the transform is exactly 0 or 1 on either path)
    assert np.isnan(mech._quantile_in_q(x, 0.05, 1.0, False).width[inside]).all()


def counts(rng, n):
    out = []
    for _ in range(n):
        scale = 10.0 ** rng.uniform(-3, 6)
        lower = float(rng.integers(-50, 50))
        upper = lower + float(rng.integers(1, 300))
        kind = rng.integers(3)
        lower, upper = (
            (lower, upper)
            if kind == 0
            else ((-np.inf, upper) if kind == 1 else (lower, np.inf))
        )
        out.append(dpbook.DiscreteTruncated(scale, lower=lower, upper=upper))
    return out


def test_count_roots_hold_their_widths_and_the_searchs_integers():
    """Drawn conditioned counts (scales ``1e-3 .. 1e6``): every certified root's claim holds at ``root ± width``,
    the integer ends equal the search's, plain and randomized, and almost every end is decided by the root."""
    rng = np.random.default_rng(2612)
    certified = total = 0
    for mech in counts(rng, 20):
        x = releases(mech, rng, 30)
        level = rng.choice(LEVELS)
        p = (1.0 - level) / 2.0
        for v in (None, 0.0, 0.3, 1.0):
            vv = None if v is None else np.full(x.shape, v)
            fast = intervals._neyman_integer(mech, x, level, vv)
            slow = intervals._neyman_integer(mech, x, level, vv, closed_form=False)
            np.testing.assert_array_equal(fast[0], slow[0])
            np.testing.assert_array_equal(fast[1], slow[1])
            for upper in (False, True):
                w = (0.0 if upper else 1.0) if v is None else v
                root, width = mech._quantile_in_q(x, p, w, upper)
                bad = violations(mech, x, p, v, upper, root, width)
                assert not bad.any(), (mech, x[bad], root[bad], width[bad], v, upper)
                certified += np.isfinite(width).sum()
                total += x.size
    assert certified > 0.9 * total


@pytest.mark.parametrize(
    "mech",
    [
        dpbook.Truncated(1.0, lower=0.0, upper=2.0),
        dpbook.Truncated(0.7, lower=0.0),
        dpbook.DiscreteTruncated(1.0, lower=0, upper=5),
        dpbook.DiscreteTruncated(10.0, lower=0, upper=50),
        dpbook.DiscreteTruncated(0.7, lower=0),
    ],
    ids=repr,
)
@pytest.mark.parametrize("randomize", [False, True])
def test_typical_truncations_do_not_evaluate_the_law(mech, randomize, monkeypatch):
    """Typical releases at a true value on the bound, plain and randomized: every end comes from a certified
    root (for the counts, a zone holding no integer), none from the law."""
    x = np.asarray(mech.sample(0, 4000, rng=11), dtype=float)
    v = np.random.default_rng(12).random(x.shape) if randomize else None
    seen = count_law_evaluations(monkeypatch, mech)
    search = intervals._neyman_integer if mech.integer_valued else intervals._neyman
    search(mech, x, 0.95, v)
    assert seen[0] == 0


def test_the_libm_is_as_accurate_as_the_truncations_proofs_assume():
    """The widths assume ``expm1``, ``log1p`` and ``logaddexp`` within ``E = 4`` ulps too (``exp`` and ``log`` are
    checked in ``tests/inference/test_closed_form_intervals.py``): here against ``decimal`` at 40 digits."""
    decimal.getcontext().prec = 40
    rng = np.random.default_rng(27)
    t = np.concatenate(
        [-(10.0 ** rng.uniform(-300, 2.9, 1500)), -rng.uniform(0, 1, 500)]
    )
    y = np.concatenate([10.0 ** rng.uniform(-300, 300, 1500), rng.uniform(0, 1, 500)])
    d1, d2 = -rng.uniform(0, 800, 1000), -rng.uniform(0, 800, 1000)
    D = decimal.Decimal

    def expm1(a):  # (the series where exp(a) - 1 would cancel at 40 digits)
        a = D(a)
        return (
            a + a * a / 2 + a**3 / 6 + a**4 / 24 if abs(a) < D("1e-9") else a.exp() - 1
        )

    def log1p(a):
        a = D(a)
        return a - a * a / 2 + a**3 / 3 - a**4 / 4 if a < D("1e-9") else (1 + a).ln()

    cases = (
        (np.expm1(t), t, expm1),
        (np.log1p(y), y, log1p),
        (
            np.logaddexp(d1, d2),
            list(zip(d1, d2)),
            lambda a: (D(a[0]).exp() + D(a[1]).exp()).ln(),
        ),
    )
    for got, args, exact in cases:
        for a, g in zip(list(args), got.tolist()):
            a = a if isinstance(a, tuple) else float(a)
            if g == 0.0:
                continue
            err = abs(D(g) - exact(a)) / D(np.spacing(abs(g)))
            assert err <= 4, (a, g, float(err))


# --- Normalized: starting points only (no proved width yet) -------------------------------------------------


def unions(rng, n):
    """Drawn unions of one to three pieces: scale ``10^U(-300, 300)`` (and near 1), pieces and gaps of every
    size relative to it, the outer ends sometimes infinite."""
    out = []
    for _ in range(n):
        scale = 10.0 ** rng.choice([rng.uniform(-300, 300), rng.uniform(-2, 2)])
        start = rng.uniform(-1e3, 1e3) * 10.0 ** rng.choice([-300, 0, 3])
        k = int(rng.integers(1, 4))
        steps = scale * 10.0 ** rng.uniform(-1.5, 1.5, 2 * k - 1)
        ends = start + np.concatenate([[0.0], np.cumsum(steps)])
        if not np.all(np.diff(ends) > 0.0):
            continue
        ends = ends.tolist()
        if rng.random() < 0.3:
            ends[0] = -np.inf
        if rng.random() < 0.3:
            ends[-1] = np.inf
        pieces = list(zip(ends[::2], ends[1::2]))
        out.append(dpbook.Normalized(scale, pieces))
    return out


def union_releases(mech, rng, n):
    """Draws at true values across the hull and beyond, and every finite piece end and its neighbours."""
    lo, hi = mech.domain
    ends = [e for pair in mech.allowed for e in pair if np.isfinite(e)]
    # the whole line has no finite end
    span = [min(ends), max(ends)] if ends else [0.0, 0.0]
    centre = 0.5 * (span[0] + span[1])
    spread = mech.scale * 10.0 + (span[1] - span[0])
    q = np.clip(centre + spread * rng.uniform(-1.5, 1.5, n), -1e300, 1e300)
    x = np.asarray(mech.sample(q, rng=rng), dtype=float)
    near = [
        t for e in ends for t in (e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf))
    ]
    x = np.concatenate([x, near])
    return x[(x >= lo) & (x <= hi)]


@pytest.mark.slow
def test_normalized_roots_are_near_the_bisections_ends():
    """Drawn unions: the closed-form root (a starting point) is within ``1e-9 (b + |end|)`` of the
    bisection's end (the last double where ``P(M <= x) >= p``, the first where ``P(M >= x) >= p``), and an
    infinite root says that the bisection's end is the domain's end; the ends that the intervals search
    from it are switch points of the computed predicate, next to the bisection's."""
    rng = np.random.default_rng(2614)
    finite = total = 0
    for i, mech in enumerate(unions(rng, 16)):
        x = union_releases(mech, rng, 20)
        level = rng.choice(LEVELS)
        p = (1.0 - level) / 2.0
        lo, hi = mech.domain
        for v in ((None, 0.0, 0.3, 1.0)[i % 4],):
            vv = None if v is None else np.full(x.shape, v)
            slow = intervals._neyman(mech, x, level, vv, closed_form=False)
            fast = intervals._neyman(mech, x, level, vv)
            for upper, side in ((False, 1), (True, 0)):
                w = (0.0 if upper else 1.0) if v is None else v
                root = mech._quantile_in_q(x, p, w, upper)
                assert root.shape == x.shape and not np.isnan(root).any()
                end = slow[side]
                fin = np.isfinite(root)
                tol = 1e-9 * (mech.scale + np.abs(end[fin])) + 4.0 * np.spacing(
                    np.abs(x[fin])
                )
                gap = np.abs(np.clip(root[fin], lo, hi) - end[fin])
                assert (gap <= tol).all(), (
                    mech,
                    x[fin][gap > tol],
                    root[fin][gap > tol],
                    end[fin][gap > tol],
                )
                # +inf for the lower tail: the predicate holds everywhere (the end is the domain's top);
                # -inf: nowhere (the intervals then return the domain's bottom)
                inf = ~fin
                expect = (
                    np.where(root[inf] > 0, hi, lo)
                    if not upper
                    else np.where(root[inf] > 0, hi, lo)
                )
                assert (end[inf] == expect).all(), (mech, x[inf], root[inf], end[inf])
                finite += fin.sum()
                total += x.size
                # the searched end (inside the domain): a switch point of the computed predicate
                e = fast[side]
                inside = (e > lo) & (e < hi)
                out = np.nextafter(e, np.inf if side == 1 else -np.inf)
                vi = None if v is None else v
                assert (transform(mech, x[inside], e[inside], vi, upper) >= p).all()
                assert not (
                    transform(mech, x[inside], out[inside], vi, upper) >= p
                ).any()
                assert np.allclose(fast[side], end, rtol=1e-12, atol=1e-12 * mech.scale)
    assert finite > 0.3 * total


def test_a_moved_normalized_root_fails_the_check():
    """The check of the roots is sharp: the roots moved by ``1e-8 (b + |x|)`` are out of its tolerance."""
    mech = dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 4.0)])
    x = union_releases(mech, np.random.default_rng(4), 200)
    slow = intervals._neyman(mech, x, 0.95, None, closed_form=False)
    root = mech._quantile_in_q(x, 0.025, 1.0, False)
    fin = np.isfinite(root)
    assert fin.sum() > 40
    tol = 1e-9 * (1.0 + np.abs(slow[1][fin]))
    assert (np.abs(root[fin] - slow[1][fin]) <= tol).all()
    moved = root[fin] + 1e-8 * (1.0 + np.abs(x[fin]))
    assert (np.abs(moved - slow[1][fin]) > tol).all()
