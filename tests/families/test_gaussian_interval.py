"""Closed-form interval ends of Gaussian and GaussianBIT (``_quantile_in_q``, issue 26 point 1).

The ends are ``x ∓ σ Φ^{-1}(p)`` moved outwards by the proved width of
:func:`dpbook._kernels.inversion._gaussian_root`.  These tests check them against the bisection over the
doubles (outwards, within twice the width) over drawn scales from ``1e-300`` to ``1e300``, the registry's
extreme cases, releases on and next to the bounds, one-sided ranges, levels from 0.5 to ``1 - 1e-9`` and
uniforms ``v`` in ``{None, 0, 0.3, 1}`` and drawn; the computed transform on the proved side at ``root ± W``;
the one assumption of the proof (scipy's ``ndtr`` and ``ndtri`` to the accuracy stated there) against a
60-digit ``decimal`` reference; and the cost in evaluations of the law.
"""

import decimal
from decimal import Decimal

import numpy as np
import pytest
from registry import ROWS
from scipy import special
from spies import count_law_evaluations
from transforms import transform

import dpbook
from dpbook._kernels import inversion
from dpbook._kernels.inversion import Root
from dpbook.inference import intervals

U = 2.0**-53

# --- a 60-digit reference for Φ (decimal: mpmath is not a dependency) ----------------------------------------

CTX = decimal.Context(prec=60)


def _atan_inverse(n, digits):
    x = Decimal(1) / n
    x2, term, total, k = x * x, x, x, 1
    while abs(term) > Decimal(10) ** -(digits + 5):
        term = -term * x2
        k += 2
        total += term / k
    return total


with decimal.localcontext(CTX):
    PI = 16 * _atan_inverse(5, 65) - 4 * _atan_inverse(239, 65)  # Machin
    SQRT_PI, SQRT2 = PI.sqrt(), Decimal(2).sqrt()


def erfc_series(x):
    """``erfc(x) = 1 - (2/√π) e^{-x²} Σ 2^n x^{2n+1}/(2n+1)!!`` (positive terms), at 80 digits: for
    ``0 <= x < 3``, where the cancellation costs at most 4 digits."""
    with decimal.localcontext(CTX) as ctx:
        ctx.prec = 80
        x2 = x * x
        term = total = x
        n = 0
        while term > total * Decimal(10) ** -70:
            n += 1
            term = term * 2 * x2 / (2 * n + 1)
            total += term
        return +(1 - 2 / SQRT_PI * (-x2).exp() * total)


def erfc_fraction(x, terms=400):
    """``erfc(x) = e^{-x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))``, evaluated backwards: for
    ``x >= 3``, where 400 terms give far more than 60 digits."""
    with decimal.localcontext(CTX):
        f = x
        for k in range(terms, 0, -1):
            f = x + Decimal(k) / 2 / f
        return (-x * x).exp() / SQRT_PI / f


def Phi(z):
    """``Φ`` at the double ``z``, as a ``Decimal``."""
    with decimal.localcontext(CTX):
        a = Decimal(float(z)) / SQRT2
        if a <= 0:
            c = erfc_series(-a) if -a < 3 else erfc_fraction(-a)
            return c / 2
        c = erfc_series(a) if a < 3 else erfc_fraction(a)
        return 1 - c / 2


def phi(z):
    with decimal.localcontext(CTX):
        t = Decimal(float(z))
        return (-(t * t) / 2).exp() / (2 * PI).sqrt()


def test_the_reference_agrees_with_itself_and_with_known_values():
    """The series and the continued fraction agree to 50 digits where both apply; Φ(-1) and Φ(0)."""
    with decimal.localcontext(CTX):
        for x in ("2.5", "3", "3.5", "4"):
            a, b = erfc_series(Decimal(x)), erfc_fraction(Decimal(x))
            assert abs(a - b) <= abs(b) * Decimal(10) ** -50
        # Φ(-1) = 0.158655253931457051414767454367962077522087033273395609012605...
        known = Decimal("0.1586552539314570514147674543679620775220870332733956")
        assert abs(Phi(-1.0) - known) <= Decimal(10) ** -50
        assert Phi(0.0) == Decimal("0.5")


def test_ndtr_and_ndtri_are_as_accurate_as_the_proof_assumes():
    """The widths assume ``ndtr(a)`` within ``u (K0 + K2 a²)`` of ``Φ(a)`` (relatively) for ``-37 <= a <= 0``,
    within ``K0 u`` above, ``ndtr(a) <= 1e-298`` below ``-37`` and ``>= 1/2`` from 0 up; ``ndtri(y)`` within
    ``KI u (|Φ^{-1}(y)| + 1)`` for ``1e-80 <= y <= 1/2`` (the ``a²``: ``exp(-a²/2)`` of a rounded ``a²``;
    cephes documents 3.4e-14 relative over ``[-13, 0]``).  Measured: about ``1.8 u a²`` and ``2.7 u (t + 1)``."""
    k0, k2, ki = inversion._NDTR_K0, inversion._NDTR_K2, inversion._NDTRI_K
    rng = np.random.default_rng(2026)
    z = np.concatenate(
        [
            rng.uniform(-37.0, 0.0, 700),
            -(10.0 ** rng.uniform(-300, 1.5, 300)),
            rng.uniform(0.0, 9.0, 150),
            10.0 ** rng.uniform(-300, 0, 50),
        ]
    )
    got = special.ndtr(z)
    for a, g in zip(z.tolist(), got.tolist()):
        exact = Phi(a)
        err = abs(Decimal(g) - exact) / exact / Decimal(U)
        assert err <= k0 + k2 * min(a, 0.0) ** 2, (a, float(err))
    far = -np.concatenate([37.0 + 10.0 ** rng.uniform(-12, 3, 200), [np.inf]])
    assert (special.ndtr(far) <= 1e-298).all()
    above = np.concatenate([[0.0, -0.0, 5e-324], 10.0 ** rng.uniform(-320, 1, 300)])
    assert (special.ndtr(above) >= 0.5).all()
    y = np.concatenate(
        [10.0 ** rng.uniform(-80, np.log10(0.5), 400), rng.uniform(0.1, 0.5, 100)]
    )
    for r, t in zip(y.tolist(), special.ndtri(y).tolist()):
        # t - Φ^{-1}(r) to first order (the error is ~1e-14 of t): (Φ(t) - r)/φ(t)
        err = abs((Phi(t) - Decimal(r)) / phi(t)) / Decimal(U)
        assert err <= ki * (abs(t) + 1.0), (r, float(err))


def test_the_normal_facts_of_the_proof():
    """``φ(t)/Φ̄(t) >= max(t, 0.79)`` for ``t >= -0.01`` (the tail's slope), ``φ(a)/Φ(a) <= |a| + 1`` for
    ``a <= 0`` and the Mills ratio ``Φ̄(t)/φ(t) <= 1.2534`` for ``t >= 0``, on a grid, from the reference."""
    for t in np.concatenate([[-0.01, 0.0], np.linspace(0.001, 38.0, 120)]).tolist():
        tail, dens = 1 - Phi(t) if t < 3 else Phi(-t), phi(t)
        assert dens / tail >= Decimal(max(t, 0.79))
        assert dens / Phi(-t) <= Decimal(abs(t) + 1.0)
        if t >= 0:
            assert tail / dens <= Decimal("1.2534")


# --- the ends against the bisection ----------------------------------------------------------------------

LEVELS = (0.5, 0.9, 0.95, 0.99, 1 - 1e-9)


def widths(mech, x, level, v):
    """The proved widths of the low and the high end (NaN where the root is a starting point)."""
    half = (1.0 - level) / 2.0
    one, zero = (1.0, 0.0) if v is None else (v, v)
    out = []
    for w, upper in ((zero, True), (one, False)):
        root = mech._quantile_in_q(x, half, w, upper)
        assert isinstance(root, Root)
        out.append(np.broadcast_to(np.asarray(root.width, dtype=float), x.shape))
    return out


def uniforms(x, rng):
    """``None`` (the plain interval), the constants 0, 0.3 and 1, and drawn uniforms."""
    return [None, np.zeros(x.shape), np.full(x.shape, 0.3), np.ones(x.shape)] + [
        rng.random(x.shape)
    ]


def check_against_bisection(mech, x, rng, levels=LEVELS, certified=0.0):
    """Each certified end lies outside the bisection's and within twice its width of it; at least a
    fraction ``certified`` of the ends are certified."""
    sure_count = total = 0
    for level in levels:
        for v in uniforms(x, rng):
            fast = intervals._neyman(mech, x, level, v)
            slow = intervals._neyman(mech, x, level, v, closed_form=False)
            for side, (a, b, w) in enumerate(
                zip(fast, slow, widths(mech, x, level, v))
            ):
                sure = np.isfinite(w)
                outward = (a <= b) if side == 0 else (a >= b)
                bad = sure & ~outward
                assert not bad.any(), (level, side, x[bad], a[bad], b[bad], w[bad])
                far = sure & (np.abs(a - b) > 2.0 * w + 2.0 * np.spacing(np.abs(b)))
                assert not far.any(), (level, side, x[far], a[far], b[far], w[far])
                np.testing.assert_array_equal(a[~sure], b[~sure])  # searched on the law
                sure_count += sure.sum()
                total += sure.size
    assert sure_count >= certified * total, sure_count / total


def releases(mech, rng, n):
    """Draws at true values around the bounds and far off them; the bounds and their neighbouring doubles."""
    lo, hi = (float(t) for t in mech.support)
    dom_lo, dom_hi = (float(t) for t in mech.domain)
    centre = 0.0 if not np.isfinite(lo) else (lo if not np.isfinite(hi) else hi)
    spread = mech.scale * 10.0 + (hi - lo if np.isfinite(hi - lo) else 0.0)
    with np.errstate(over="ignore"):
        q = centre + spread * rng.uniform(-1.5, 1.5, n)
    q = np.clip(np.nan_to_num(q, posinf=1e300, neginf=-1e300), -1e300, 1e300)
    q = np.clip(q, max(dom_lo, -1e300), min(dom_hi, 1e300))
    x = np.asarray(mech.sample(q, rng=rng), dtype=float)
    edges = []
    for e, inward in ((lo, np.inf), (hi, -np.inf)):
        if np.isfinite(e):
            edges += [e, e, np.nextafter(e, inward)]
    return np.concatenate([x, np.asarray(edges, dtype=float)])


def drawn_case(seed):
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-300, 300)
    if seed % 4 == 0:
        return dpbook.Gaussian(scale), rng
    lower = rng.uniform(-1e6, 1e6) * 10.0 ** rng.choice([-300, 0, 3, 300])
    width = 10.0 ** rng.uniform(-300, 300)
    upper = lower + width
    if not np.isfinite(upper) or upper == lower:
        upper = lower + abs(lower) + 1.0
    lower = [lower, -np.inf][seed % 3 == 1]
    upper = [upper, np.inf][seed % 3 == 2]
    return dpbook.GaussianBIT(scale, lower=lower, upper=upper), rng


# (950 more seeds were run once, with no failure)
@pytest.mark.parametrize("seed", range(16))
def test_ends_hold_the_bisections_within_twice_the_width(seed):
    mech, rng = drawn_case(seed)
    x = releases(mech, rng, 25)
    check_against_bisection(mech, x, rng, levels=(LEVELS[seed % 5], LEVELS[-1]))


GAUSSIAN_ROWS = [
    pytest.param(case, id=f"{row.name}-{case.id}")
    for row in ROWS
    if row.name in ("gaussian", "gaussian-bit")
    for case in row.cases()
]


@pytest.mark.parametrize("case", GAUSSIAN_ROWS)
def test_the_registry_cases(case):
    """The registry's typical and extreme cases (σ = 1e-300 and 1e300, a range of width 1e-300)."""
    mech = case.build()
    rng = np.random.default_rng([ord(c) for c in case.id])
    x = releases(mech, rng, 40)
    check_against_bisection(mech, x, rng, certified=0.9)


def test_one_sided_ranges_and_releases_next_to_the_bounds():
    """[0, inf) and (-inf, 0]: releases on the bound, one double off it, and a ladder of doubles towards it."""
    rng = np.random.default_rng(7)
    for mech in (
        dpbook.GaussianBIT(0.8, lower=0.0),
        dpbook.GaussianBIT(0.8, lower=-np.inf, upper=0.0),
        dpbook.GaussianBIT(2.0, lower=-1.0, upper=1.0),
    ):
        lo, hi = mech.support
        ladder = [0.0, 5e-324, 1e-300, 1e-16, 1e-8, 1e-3, 0.3, 3.0]
        x = [lo + d for d in ladder if np.isfinite(lo)]
        x += [hi - d for d in ladder if np.isfinite(hi)]
        x = np.array([t for t in x if lo <= t <= hi], dtype=float)
        x = np.concatenate([x, np.nextafter(x, 0.0)])
        check_against_bisection(mech, x, rng, certified=0.85)


# --- the proof's claim itself ------------------------------------------------------------------------------


def proved_side(mech, x, level, v, factor=1.0):
    """Just beyond ``root ± W`` (``W`` times ``factor``) inside the domain the computed transform is on the side of
    ``α/2`` that the width promises: the lower tail ``< α/2`` above the zone and ``>= α/2`` below it, the upper
    tail the other way round.  Returns the number of points checked and of those on the wrong side."""
    half = (1.0 - level) / 2.0
    lo, hi = mech.domain
    checked = wrong = 0
    for upper in (False, True):
        w = (0.0 if upper else 1.0) if v is None else v
        root = mech._quantile_in_q(x, half, w, upper)
        r, width = np.broadcast_arrays(root.root, root.width)
        sure = np.isfinite(width) & np.isfinite(r)
        for sign in (-1.0, 1.0):
            # the first double strictly outside [root - W, root + W] (the zone is closed)
            q = np.nextafter(r + sign * factor * width, sign * np.inf)
            inside = sure & (q >= lo) & (q <= hi) & np.isfinite(q)
            idx = np.flatnonzero(inside)
            if not idx.size:
                continue
            vv = None if v is None else np.broadcast_to(v, x.shape)[idx]
            t = transform(mech, x[idx], q[idx], vv, upper)
            # lower tail: fails above the zone (sign +); upper tail: fails below it (sign -)
            fails = (sign > 0) != upper
            wrong += int(np.sum((t >= half) if fails else (t < half)))
            checked += idx.size
    return checked, wrong


@pytest.mark.parametrize("seed", range(12))
def test_the_transform_is_on_the_proved_side_at_root_plus_minus_width(seed):
    """Drawn cases (in some the whole zone lies outside a narrow domain: nothing to check there), and
    the typical cases, where nearly every root is checked."""
    mech, rng = drawn_case(100 + seed)
    if seed < 2:
        mech = (dpbook.Gaussian(1.3), dpbook.GaussianBIT(1.0, lower=0.0, upper=2.0))[
            seed
        ]
    x = releases(mech, rng, 200)
    checked = 0
    for level in (0.5, 0.95, 1 - 1e-9):
        for v in uniforms(x, rng):
            n, wrong = proved_side(mech, x, level, v)
            assert wrong == 0
            checked += n
    if seed < 2:
        assert checked > 5 * x.size  # of 3 levels x 5 uniforms x 4 points a release


def decided_ends(mech, x, level, v):
    """The roots decided without a width (``±inf``, or ``top`` for the upper tail at ``x = top``) against
    the transform as the intervals compute it at the domain's ends and next to the root.  Returns the
    number of such roots."""
    half = (1.0 - level) / 2.0
    lo, hi = (float(t) for t in mech.domain)
    seen = 0
    for upper in (False, True):
        w = (0.0 if upper else 1.0) if v is None else v
        root = mech._quantile_in_q(x, half, w, upper)
        r, width = np.broadcast_arrays(root.root, root.width)
        for i in np.flatnonzero(width == 0.0):
            vi = None if v is None else np.broadcast_to(v, x.shape)[i]
            at = [t for t in (lo, hi, r[i]) if np.isfinite(t)]
            holds = {t: transform(mech, x[i], t, vi, upper) >= half for t in at}
            if r[i] == np.inf:  # lower tail: holds on the whole domain; upper: nowhere
                assert all(holds.values()) if not upper else not any(holds.values())
            elif r[i] == -np.inf:  # lower tail: nowhere; upper: on the whole domain
                assert not any(holds.values()) if not upper else all(holds.values())
            else:  # the upper tail's end is this double: it holds there, not below
                assert upper and holds[r[i]]
                assert (
                    not transform(mech, x[i], np.nextafter(r[i], lo), vi, upper) >= half
                )
            seen += 1
    return seen


def test_the_ends_decided_at_the_bounds():
    """Releases on the bounds, plain and randomized (``v`` from 0 to 1, ``v`` below ``α/2``), σ from
    ``1e-300`` to ``1e300``: every end decided without a width is the law's."""
    rng = np.random.default_rng(31)
    seen = 0
    for scale in (1e-300, 1e-3, 0.8, 1.0, 30.0, 1e300):
        for lower, upper in (
            (0.0, 2.0),
            (0.0, np.inf),
            (-np.inf, 0.0),
            (-1e300, 1e300),
        ):
            mech = dpbook.GaussianBIT(scale, lower=lower, upper=upper)
            x = np.array([t for t in (lower, upper) if np.isfinite(t)] * 6)
            for level in (0.5, 0.95, 1 - 1e-9):
                v = np.concatenate([[0.0, 1.0, 1e-12, 0.5], rng.random(x.size - 4)])
                for vv in (None, v, rng.random(x.size) * (1.0 - level)):
                    seen += decided_ends(mech, x, level, vv)
    assert seen > 500


def test_arrays_of_probabilities_and_uniforms_are_the_scalars_each():
    """``p`` and ``v`` as arrays (the general hook): each element as the scalar call gives it, the
    uncertified ``p`` (above 1/2, below ``1e-80``) included."""
    mech = dpbook.GaussianBIT(0.7, lower=-1.0, upper=2.0)
    rng = np.random.default_rng(3)
    x = np.concatenate([[-1.0, -1.0, 2.0, 2.0], rng.uniform(-1.0, 2.0, 12)])
    p = np.concatenate(
        [
            [0.4, 0.01, 0.4, 0.01, 0.7, 1e-100, 1e-300, 0.5],
            10.0 ** rng.uniform(-12, np.log10(0.5), 8),
        ]
    )
    v = rng.random(x.size)
    for upper in (False, True):
        both = mech._quantile_in_q(x, p, v, upper)
        for i in range(x.size):
            one = mech._quantile_in_q(x[i], p[i], v[i], upper)
            np.testing.assert_array_equal(both.root[i], one.root)
            np.testing.assert_array_equal(both.width[i], one.width)
        assert np.isnan(both.width[4:7]).all()  # not certified: the search decides


# --- the cost ------------------------------------------------------------------------------------------------

TYPICAL = {
    "Gaussian": dpbook.Gaussian(1.3),
    "GaussianBIT [0, 2]": dpbook.GaussianBIT(1.0, lower=0.0, upper=2.0),
    "GaussianBIT [0, inf)": dpbook.GaussianBIT(0.8, lower=0.0),
}


@pytest.mark.parametrize("name", sorted(TYPICAL))
@pytest.mark.parametrize("randomize", [False, True])
def test_typical_releases_do_not_evaluate_the_law(name, randomize, monkeypatch):
    """Typical releases, the atoms of the clamped family included: no evaluation of the law at all (the
    bisection it replaces: some 60 a release and end)."""
    mech = TYPICAL[name]
    n = 4000
    x = np.asarray(mech.sample(0.5, n, rng=11), dtype=float)
    v = np.random.default_rng(12).random(x.shape) if randomize else None
    seen = count_law_evaluations(monkeypatch, mech)
    if randomize:
        dpbook.randomized_interval(mech, x, v, 0.95)
    else:
        dpbook.confidence_interval(mech, x, 0.95)
    assert seen[0] == 0
    intervals._neyman(mech, x, 0.95, v, closed_form=False)
    assert seen[0] / n / 2 > 40


def test_an_uncertified_end_is_searched_at_a_few_evaluations():
    """Where a root has no width (here: the lower tail at the top bound with ``v < α/2`` and ``σ`` far below
    the bound's spacing, where the transform there is ``v + (1 - v) Φ(...)``) the end is searched from the root
    on the law, and agrees with the bisection."""
    mech = dpbook.GaussianBIT(1e-300, lower=0.0, upper=1.0)
    x = np.array([1.0, 0.5, 0.0])
    v = np.array([0.01, 0.5, 0.5])
    top = mech._quantile_in_q(x, 0.025, v, False)
    assert np.isnan(top.width[0]) and np.isfinite(top.width[1:]).all()
    fast = intervals._neyman(mech, x, 0.95, v)
    slow = intervals._neyman(mech, x, 0.95, v, closed_form=False)
    np.testing.assert_array_equal(fast[1][0], slow[1][0])
