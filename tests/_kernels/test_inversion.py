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
from transforms import transform

import dpbook
from dpbook._kernels.inversion import _long_path
from dpbook._kernels.laplace import _g
from dpbook.inference import intervals

LEVELS = (0.5, 0.9, 0.95, 0.99, 0.999)


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


def drawn_sides(rng, lower, upper):
    """``(lower, upper)``, or one of them made infinite, each with probability 1/3."""
    return ((lower, upper), (-np.inf, upper), (lower, np.inf))[rng.integers(3)]


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
        lower, upper = drawn_sides(rng, lower, upper)
        out.append(dpbook.Truncated(scale, lower=lower, upper=upper))
    return out


def releases(mech, rng, n, steps=1):
    """Draws at true values near and far from the bounds, and the bounds and their ``steps`` neighbouring
    doubles inwards."""
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
        if mech.integer_valued:
            near += [e, e, e + (1.0 if e == lo else -1.0)]
            continue
        near.append(e)
        for _ in range(steps):
            near.append(np.nextafter(near[-1], lo + hi - 2 * e))
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
        lower, upper = drawn_sides(rng, lower, upper)
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


# --- Normalized: a closed-form root, its width certified at run time ----------------------------------------

NORMALIZED_LEVELS = (0.5, 0.9, 0.95, 0.99, 0.999, 1.0 - 1e-9)


def unions(rng, n):
    """Drawn unions of one to four pieces: scale ``10^U(-300, 300)`` (and near 1), pieces and gaps of every
    size relative to it, the outer ends sometimes infinite."""
    out = []
    for _ in range(n):
        scale = 10.0 ** rng.choice([rng.uniform(-300, 300), rng.uniform(-2, 2)])
        start = rng.uniform(-1e3, 1e3) * 10.0 ** rng.choice([-300, 0, 3])
        k = int(rng.integers(1, 5))
        steps = scale * 10.0 ** rng.uniform(-1.5, 1.5, 2 * k - 1)
        ends = start + np.concatenate([[0.0], np.cumsum(steps)])
        if not np.all(np.diff(ends) > 0.0):
            continue
        ends = ends.tolist()
        if rng.random() < 0.2:
            ends[0] = -np.inf
        if rng.random() < 0.2:
            ends[-1] = np.inf
        pieces = list(zip(ends[::2], ends[1::2]))
        out.append(dpbook.Normalized(scale, pieces))
    return out


def union_releases(mech, rng, n):
    """Draws at true values across the hull and beyond, every finite piece end and its neighbours, and
    points in the gaps (the middle, and next to their ends)."""
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
    gaps = [
        t
        for (_, a), (b, _) in zip(mech.allowed[:-1], mech.allowed[1:])
        for t in (0.5 * a + 0.5 * b, a + 1e-3 * (b - a), b - 1e-3 * (b - a))
    ]
    x = np.concatenate([x, near, gaps])
    return x[(x >= lo) & (x <= hi)]


def normalized_checks(mech, x, level, v):
    """``(certified, total)`` after checking every root of both ends at the releases ``x``: the computed
    transform on the proved side at ``root ± W`` (:func:`violations`), the ends of the intervals outside the
    bisection's and within ``2W`` (and a double) of them, and the ends searched from the uncertified roots
    (starting points, which ignore ``v``) switch points of the computed predicate."""
    p = (1.0 - level) / 2.0
    lo, hi = mech.domain
    vv = None if v is None else np.full(x.shape, v)
    slow = intervals._neyman(mech, x, level, vv, closed_form=False)
    fast = intervals._neyman(mech, x, level, vv)
    certified = 0
    for upper, side in ((False, 1), (True, 0)):
        w = (0.0 if upper else 1.0) if v is None else v
        root, width = mech._quantile_in_q(x, p, w, upper)
        assert root.shape == width.shape == x.shape and not np.isnan(root).any()
        bad = violations(mech, x, p, v, upper, root, width)
        assert not bad.any(), (mech, x[bad], root[bad], width[bad])
        sure = np.isfinite(width)
        certified += sure.sum()
        end, got = slow[side], fast[side]
        outward = got >= end if side == 1 else got <= end
        assert outward[sure].all(), (mech, x[sure & ~outward])
        slack = 2.0 * width + 2.0 * np.spacing(np.abs(end))
        near = np.abs(got - end) <= np.where(sure, slack, 0.0)
        fin = sure & np.isfinite(root) & (end > lo) & (end < hi)
        assert near[fin].all(), (mech, x[fin & ~near], root[fin & ~near])
        # the ends searched from the starting points: switch points of the computed predicate
        inside = ~sure & (got > lo) & (got < hi)
        out = np.nextafter(got, np.inf if side == 1 else -np.inf)
        vi = None if v is None else v
        assert (transform(mech, x[inside], got[inside], vi, upper) >= p).all()
        assert not (transform(mech, x[inside], out[inside], vi, upper) >= p).any()
    return certified, 2 * x.size


@pytest.mark.slow
def test_normalized_roots_hold_their_widths_and_the_bisections_ends():
    """Drawn unions (scales ``1e-300 .. 1e300``, one to four pieces, releases on, next to and between the
    pieces, levels ``0.5 .. 1 - 1e-9``, ``v`` in ``{None, 0, 0.3, 1}``): :func:`normalized_checks`; and
    a good part of the roots is certified."""
    rng = np.random.default_rng(2614)
    certified = total = 0
    for i, mech in enumerate(unions(rng, 40)):
        x = union_releases(mech, rng, 30)
        level = NORMALIZED_LEVELS[i % len(NORMALIZED_LEVELS)]
        c, t = normalized_checks(mech, x, level, (None, 0.0, 0.3, 1.0)[i % 4])
        certified, total = certified + c, total + t
    assert certified > 0.3 * total


TYPICAL_UNIONS = [
    dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 4.0)]),
    dpbook.Normalized(0.5, [(0.0, 1.0), (1.5, 2.0), (3.0, 5.0)]),
    dpbook.Normalized(2.0, [(-10.0, 0.0), (1.0, 10.0)]),
    dpbook.Normalized(1e-3, [(0.0, 0.01), (0.02, 0.03)]),
    dpbook.Normalized(1e6, [(0.0, 1e6)]),
]


@pytest.mark.parametrize("mech", TYPICAL_UNIONS, ids=repr)
@pytest.mark.parametrize("level", [0.5, 0.95, 0.999])
def test_typical_normalized_roots_are_certified(mech, level):
    """Typical unions: :func:`normalized_checks` at releases drawn across the hull, and almost every root is
    certified (the others lie in the flat tail next to the hull's ends)."""
    lo, hi = mech.domain
    rng = np.random.default_rng(31)
    x = np.asarray(mech.sample(rng.uniform(lo, hi, 300), rng=rng), dtype=float)
    for v in (None, 0.3):
        certified, total = normalized_checks(mech, x, level, v)
        assert certified >= 0.95 * total


@pytest.mark.parametrize("mech", TYPICAL_UNIONS[:3], ids=repr)
@pytest.mark.parametrize("randomize", [False, True])
def test_typical_normalized_intervals_cost_at_most_five_evaluations(
    mech, randomize, monkeypatch
):
    """Typical releases, plain and randomized: the ends cost at most 5 evaluations of the law per release
    (the certified ones none)."""
    lo, hi = mech.domain
    x = np.asarray(mech.sample(0.5 * lo + 0.5 * hi, 4000, rng=11), dtype=float)
    v = np.random.default_rng(12).random(x.shape) if randomize else None
    seen = count_law_evaluations(monkeypatch, mech)
    intervals._neyman(mech, x, 0.95, v)
    assert seen[0] <= 5 * x.size


def test_a_moved_or_narrowed_normalized_root_fails_the_check():
    """The check is sharp: the roots moved by ``3W`` break the claim at most releases, the roots with no
    width at some."""
    mech = dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 4.0)])
    x = union_releases(mech, np.random.default_rng(4), 400)
    root, width = mech._quantile_in_q(x, 0.025, 1.0, False)
    fin = np.isfinite(root) & np.isfinite(width)
    assert fin.sum() > 100
    assert not violations(mech, x, 0.025, None, False, root, width).any()
    wide = np.where(fin, width, np.nan)
    moved = violations(mech, x, 0.025, None, False, root + 3.0 * wide, wide)
    assert moved.sum() > 0.5 * fin.sum()
    # (a tenth of the width still holds here: W is four times a conservative zone, and the computed
    # predicate switches within a few doubles of the root; no width at all does not)
    narrow = violations(mech, x, 0.025, None, False, root, wide * 0.0)
    assert narrow.any()


def test_a_long_or_unbounded_hull_is_not_certified():
    """Over a hull longer than ``512 b`` (or an unbounded one) the roots are starting points only."""
    for mech in (
        dpbook.Normalized(1.0, [(0.0, 1.0), (600.0, 601.0)]),
        dpbook.Normalized(1.0, [(-np.inf, 0.0), (2.0, 4.0)]),
    ):
        x = np.array([0.5, 0.9, 2.5])
        root, width = mech._quantile_in_q(x, 0.025, 1.0, False)
        assert not np.isnan(root).any() and np.isnan(width).all()


def test_exprel_is_as_accurate_as_the_normalized_proof_assumes():
    """The short path of a piece's log-mass uses scipy's ``exprel(-z)`` (``(1 - e^{-z})/z``,
    ``dpbook._kernels.laplace._g``), assumed within ``E = 4`` ulps: here against ``decimal`` at 40
    digits over ``[0, 1]``, subnormal arguments included."""
    decimal.getcontext().prec = 40
    rng = np.random.default_rng(28)
    z = np.concatenate([10.0 ** rng.uniform(-323, 0, 1500), rng.uniform(0, 1, 500)])
    D = decimal.Decimal
    for a, g in zip(z.tolist(), _g(1, z).tolist()):
        d = D(a)
        exact = 1 - d / 2 + d * d / 6 if d < D("1e-12") else (1 - (-d).exp()) / d
        assert abs(D(g) - exact) / D(np.spacing(g)) <= 4, (a, g)


# --- FoldedLaplace: roots with a proved width (one finite bound, or two on the long path) ------------------


def folded_laws(rng, n, kinds=(0, 0, 0, 1, 2, 3)):
    """Drawn folded laws: scale ``10^U(-300, 300)`` (and near 1), widths ``10^U(-1.5, 3.5)`` scales (the
    short path below a quarter scale, the widest past the certified ``2^16``), bounds of every size; kind 0:
    two finite bounds, 1: an upper one, 2: a lower one, 3: none."""
    out = []
    while len(out) < n:
        scale = 10.0 ** rng.choice([rng.uniform(-300, 300), rng.uniform(-2, 2)])
        lower = rng.uniform(-1e3, 1e3) * 10.0 ** rng.choice([-300, 0, 3, 300])
        upper = lower + scale * 10.0 ** rng.uniform(-1.5, 5.5)
        if not np.isfinite(upper) or upper == lower:
            continue
        kind = kinds[rng.integers(len(kinds))]
        pairs = ((lower, upper), (-np.inf, upper), (lower, np.inf), (-np.inf, np.inf))
        lo, hi = pairs[kind]
        out.append(dpbook.FoldedLaplace(scale, lower=lo, upper=hi))
    return out


def folded_check(mech, x, level, v):
    """For one law, level and ``v``: no certified claim fails at ``root ± width``; the ends hold the
    bisection's, certified ones within twice the width (and a double) of them, searched ones next to
    them.  Returns ``(certified, total)`` ends."""
    p = (1.0 - level) / 2.0
    vv = None if v is None else np.full(x.shape, v)
    fast = intervals._neyman(mech, x, level, vv)
    slow = intervals._neyman(mech, x, level, vv, closed_form=False)
    certified = 0
    grain = mech.scale + np.abs(x)
    for side, upper in ((0, True), (1, False)):
        w = (0.0 if upper else 1.0) if v is None else v
        root, width = mech._quantile_in_q(x, p, w, upper)
        bad = violations(mech, x, p, v, upper, root, width)
        assert not bad.any(), (mech, level, v, upper, x[bad], root[bad], width[bad])
        sure = np.isfinite(width)
        a, b = fast[side], slow[side]
        outward = (a <= b) if side == 0 else (a >= b)
        assert outward[sure].all(), (mech, level, v, x[sure & ~outward])
        slack = 2.0 * width + 2.0 * np.spacing(np.abs(b))
        assert (np.abs(a - b) <= slack)[sure].all(), (mech, level, v)
        # searched from a starting point: the bisection's end, to a few doubles where the computed tail
        # is not monotone
        assert (np.abs(a - b) <= 2.0**-44 * grain)[~sure].all(), (mech, level, v)
        certified += sure.sum()
    return certified, 2 * x.size


@pytest.mark.parametrize(
    ("seed", "n", "levels"),
    [
        (2626, 2, (0.5, 1 - 1e-9)),
        pytest.param(2627, 12, (0.5, 0.95, 1 - 1e-9), marks=pytest.mark.slow),
    ],
)
def test_folded_roots_hold_their_widths_and_the_bisections_ends(seed, n, levels):
    """Drawn folded laws (scales ``1e-300 .. 1e300``, one, two or no finite bounds), releases on, next to and
    far from the bounds, levels ``0.5 .. 1 - 1e-9``, ``v`` in ``{None, 0, 0.3, 1}``: every certified claim
    holds at ``root ± width`` (:func:`violations`), the ends hold the bisection's within twice the width,
    and with one finite bound, or two between a quarter scale and ``2^16`` scales apart (and wide against
    the spacing of the doubles there), most ends are certified."""
    rng = np.random.default_rng(seed)
    certified = total = 0
    first = dpbook.FoldedLaplace(1.0, lower=0.0, upper=1.0)  # the typical law
    for mech in [first, *folded_laws(rng, n)]:
        x = releases(mech, rng, 24, steps=2)
        ends = [abs(t) for t in (mech.lower, mech.upper) if np.isfinite(t)]
        width = mech.upper - mech.lower
        if len(ends) == 2:  # (the spacing: else the domain is a few doubles)
            grain = 2.0**20 * np.spacing(max(ends))
            long_path = 0.3 <= width / mech.scale <= 6e4 and width > grain
        else:
            long_path = len(ends) == 1 and 2.0**-1000 <= mech.scale <= 2.0**1000
        for level in levels:
            for v in (None, 0.0, 0.3, 1.0):
                sure, count = folded_check(mech, x, level, v)
                if long_path:
                    certified, total = certified + sure, total + count
    assert total > 0 and certified > 0.9 * total


@pytest.mark.parametrize("upper", [1.0, np.inf])
def test_a_moved_folded_root_fails_the_check(upper):
    """The check is sharp: the typical laws' roots moved by three widths (at least four doubles) violate it,
    on both sides of the releases and at both tails."""
    mech = dpbook.FoldedLaplace(1.0, lower=0.0, upper=upper)
    x = releases(mech, np.random.default_rng(3), 4000, steps=2)
    p = 0.25
    finite = 0
    for upper, w in ((False, 1.0), (True, 0.0)):
        root, width = mech._quantile_in_q(x, p, w, upper)
        fin = np.isfinite(root) & np.isfinite(width)
        finite += fin.sum()
        v = None
        assert not violations(mech, x, p, v, upper, root, width).any()
        step = np.maximum(3.0 * width, 4.0 * np.spacing(np.abs(root)))
        for moved in (root + step, root - step):
            assert violations(mech, x[fin], p, v, upper, moved[fin], width[fin]).all()
    assert finite > 20


@pytest.mark.parametrize(
    ("bounds", "q"),
    [((0.0, 1.0), 0.3), ((0.0, 1.0), 0.0), ((0.0, np.inf), 0.2), ((-np.inf, 2.0), 1.0)],
)
@pytest.mark.parametrize("randomize", [False, True])
def test_typical_folded_intervals_do_not_evaluate_the_law(
    bounds, q, randomize, monkeypatch
):
    """The typical laws (the registry's: ``b = 1`` on ``[0, 1]``, the benchmark's row, ``b = 0.8`` on ``[0,
    inf)``, ``b = 1`` on ``(-inf, 2]``) at a true value inside and on a bound, plain and randomized, at every
    level: every end comes from a certified root, none from the law."""
    lower, upper = bounds
    scale = 0.8 if np.isinf(upper) else 1.0
    mech = dpbook.FoldedLaplace(scale, lower=lower, upper=upper)
    x = np.asarray(mech.sample(q, 4000, rng=11), dtype=float)
    v = np.random.default_rng(12).random(x.shape) if randomize else None
    seen = count_law_evaluations(monkeypatch, mech)
    for level in (0.5, 0.95, 0.99, 1 - 1e-9):
        intervals._neyman(mech, x, level, v)
    assert seen[0] == 0


def test_scipys_exprel_is_as_accurate_as_the_folded_proof_assumes():
    """The folded law's ``lm`` (``dpbook.families.folded``) reads ``log(exprel(-z))`` for ``z <= 1/2``; the
    width of :func:`dpbook._kernels.inversion._folded_root` takes scipy's ``exprel`` (its source:
    ``expm1(x)/x``, 1 below ``1e-16``) within ``E + 1 = 5`` ulps: checked against ``decimal`` at 40 digits."""
    from scipy import special

    decimal.getcontext().prec = 40
    rng = np.random.default_rng(5)
    z = -np.concatenate([10.0 ** rng.uniform(-20, -0.3, 3000), [0.5, 1e-17]])
    D = decimal.Decimal
    for a, g in zip(z.tolist(), special.exprel(z).tolist()):
        t = D(a)
        exact = (
            1 + t / 2 + t * t / 6 + t**3 / 24
            if abs(t) < D("1e-9")
            else (t.exp() - 1) / t
        )
        assert abs(D(g) - exact) / D(np.spacing(g)) <= 5, (a, g)


def test_folded_roots_and_starting_points_solve_the_closed_forms():
    """The roots (certified or not) and the starting points (:func:`_folded_start`, used where the width is not
    proved) solve the law's closed forms (with ``sinh``/``cosh`` at moderate arguments) on both sides of
    the release: ``P_r(M <= x) = p``, resp. ``P_r(M > x) = p``."""
    from dpbook._kernels.inversion import _folded_start

    b, lower, upper = 0.1, -0.2, 1.1
    mech = dpbook.FoldedLaplace(b, lower=lower, upper=upper)
    w = upper - lower
    x = np.linspace(lower, upper, 41)[1:-1]
    sides = []
    for p in (0.01, 0.2, 0.45):
        for upper_side in (False, True):
            certified = mech._quantile_in_q(x, p, 1.0 - upper_side, upper_side).root
            start = _folded_start(x, p, upper_side, b, lower, upper)
            for r in (certified, start):
                fin = np.isfinite(r)
                y, q = x[fin] - lower, r[fin] - lower
                below = y <= q
                cdf = np.where(
                    below,
                    np.sinh(y / b) * np.cosh((w - q) / b),
                    np.sinh(w / b) - np.cosh(q / b) * np.sinh((w - y) / b),
                ) / np.sinh(w / b)
                tail = 1.0 - cdf if upper_side else cdf
                sides.append(below)
                np.testing.assert_allclose(tail, p, rtol=1e-10)
    sides = np.concatenate(sides)
    assert sides.sum() >= 20 and (~sides).sum() >= 20  # both sides of the release
