"""Every family's privacy profile: :func:`dpbook.profile_bounds` over the registry (``dpbook/audit/_profile.py``).

Each row of ``tests/registry.py`` gets a profile, checked at a few ε against what is known independently:

* never below the truth: not below the exact divergence of any pair of a grid of neighbouring true values
  (:func:`dpbook.pair_profile`'s lower bound, where the description is exact) nor below the divergence of
  any half-line event of outputs computed from the family's own law functions (``cdf``/``sf``: every family,
  the post-processings included, whose descriptions are their bases');
* exactly 0 from the audited loss on (when finite);
* the flags match the row's ``audit`` trait: ``'exact'`` answers are δ(ε) itself up to rounding (or, for a
  search over the edge that ends at its budget, within the slack ``privacy_profile`` documents);
  ``'post-processing'`` answers are the base's profile, a bound (``exact=False``, ``lower = 0``);
  ``'certified'`` answers are bounds; ``'unsupported'`` raises ``NotImplementedError``;
* finite values in ``[0, 1]`` without a warning at the extremes of the registry.

Closed forms: the discrete Laplace pair (geometric sums), the log-Laplace profile (the Laplace profile at
the largest log-distance), the discrete Laplace profile (its pair at ``Δ``).
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import dpbook
from dpbook import pair_profile, privacy_loss, privacy_profile, profile_bounds
from dpbook.audit import _profile
from dpbook.audit._profile import _pair_profile_bounds

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from registry import ROWS  # noqa: E402

#: the slack privacy_profile documents for a search over the edge that ends at its budget (absolute)
_SEARCH_SLACK = 2e-3

#: cases whose edge search stays loose at the default budget (a domain of 1e4 scales of 1e-300, or 1e149
#: scales of 1e-150: the search ends at its budget with the bound 1): expected to fail the slack check until
#: the search is refined
_LOOSE = {
    ("truncated", "b=1e-300,[0,1]"),
    ("gaussian-truncated", "s=1e-150,[0,1]"),
}

_CASES = [
    pytest.param(row, case, id=f"{row.name}-{case.id}")
    for row in ROWS
    for case in row.cases()
]


def _top(loss):
    return loss if math.isfinite(loss) and loss > 0 else 3.0


def _epsilons(loss):
    top = _top(loss)
    eps = [0.0, 0.3 * top, 0.9 * top]
    if math.isfinite(loss):
        eps += [loss, 2 * loss]
    return np.array(eps + [math.inf])


def _pairs(mech, row, case, domain):
    """Neighbouring true values (both orders) of a grid around the case's true values, inside the domain."""
    delta = case.sensitivity
    lo, hi = mech.domain if domain is None else domain
    us = set()
    for q in case.qs:
        for u in (q - delta, q - 0.5 * delta, q):
            us.add(float(u))
    if math.isfinite(lo) and math.isfinite(hi):
        us |= set(np.linspace(lo, max(lo, hi - delta), 9).tolist())
    out = []
    for u in sorted(us):
        if row.neighbours == "log":  # |log q1 - log q2| <= Δ
            if u <= 0:
                continue
            partners = [u * math.exp(delta), u * math.exp(0.5 * delta)]
        elif row.integer_valued:
            u = float(round(u))
            partners = [u + delta, u + max(1.0, math.floor(delta / 2))]
        else:
            partners = [u + delta, u + 0.5 * delta]
        for v in partners:
            # neighbours in floats (a grid point q - Δ rounded may lie more than Δ from q)
            far = (
                abs(math.log(v) - math.log(u)) > delta
                if row.neighbours == "log"
                else abs(v - u) > delta
            )
            if lo <= u <= hi and lo <= v <= hi and u != v and not far:
                out += [(u, v), (v, u)]
    return out


def _half_line_floor(mech, pairs, eps, width):
    """The largest ``P1(A) - e^ε P2(A)`` over half-lines ``A`` of outputs (ends on a grid ``width`` around the true
    values), from the family's law functions: a lower bound of the pair's divergence (up to the law's
    rounding, allowed for by the caller; at typical parameters, where no probability underflows)."""
    best = np.zeros(eps.shape)
    grow = np.exp(np.minimum(eps, 700.0))
    for q1, q2 in pairs:
        xs = np.unique(
            np.concatenate([q + width * np.linspace(-12, 12, 97) for q in (q1, q2)])
        )
        if getattr(mech, "integer_valued", False):
            xs = np.unique(np.floor(xs))
        for f in (mech.cdf, mech.sf):
            f1 = np.asarray(f(xs, q1), dtype=float)[:, None]
            f2 = np.asarray(f(xs, q2), dtype=float)[:, None]
            with np.errstate(invalid="ignore"):
                val = np.where(np.isinf(eps), 0.0, f1 - grow * f2)
            best = np.maximum(best, np.max(val, axis=0))
    return best


def _check(row, case, bounds, eps, loss):
    upper, lower, exact = (np.asarray(v) for v in bounds)
    assert np.isfinite(upper).all() and np.isfinite(lower).all()
    assert ((0 <= lower) & (lower <= upper) & (upper <= 1)).all(), (upper, lower)
    assert (exact == (upper - lower <= _profile._EXACT_RTOL * upper)).all()
    if math.isfinite(loss):  # exactly 0 from the audited loss on
        assert (upper[eps >= loss] == 0).all(), (upper, eps, loss)
    live = upper > 0
    if row.audit == "post-processing":
        assert (lower == 0).all() and not exact[live].any()
    elif row.audit == "certified":
        assert not exact[live].any()


@pytest.mark.parametrize(("row", "case"), _CASES)
def test_every_family(row, case, monkeypatch):
    """Soundness and flags for every registry case, with a small search budget (the bounds stay certified;
    the slack at the default budget: test_every_family_slack)."""
    monkeypatch.setattr(_profile, "_PROFILE_BUDGET", 48)
    mech = case.build() if row.audit != "unsupported" else None
    if row.audit == "unsupported":
        with pytest.raises(NotImplementedError, match="Laplace and normal bases"):
            profile_bounds(case.build(), case.sensitivity, 0.5)
        return
    domain = case.audit.get("domain")
    if case.audit_error is not None:
        with pytest.raises(ValueError, match=case.audit_error):
            profile_bounds(mech, case.sensitivity, 0.5, domain=domain)
        return
    loss = privacy_loss(mech, case.sensitivity, domain=domain)
    eps = _epsilons(loss)
    bounds = profile_bounds(mech, case.sensitivity, eps, domain=domain)
    _check(row, case, bounds, eps, loss)
    upper = bounds.upper
    pairs = _pairs(mech, row, case, domain)
    assert (
        pairs or row.cases()[0] is not case
    )  # a typical case always has pairs to compare with
    desc = dpbook.describe(mech)
    if desc.exact:  # never below the exact divergence of a pair (its lower bound)
        for q1, q2 in pairs:
            _, low = _pair_profile_bounds(mech, q1, q2, eps)
            # (pair_profile's lower bound is not reliable for a δ of 1e-301 next to laws on [0, 1e-300]:
            # tests/audit/test_profile_coverage.py's report; nothing of that size is a privacy number)
            assert (upper >= low - 1e-295).all(), (q1, q2, upper, low)
    if case in row.typical:
        # every family, post-processings included: not below a half-line event of its own law
        floor = _half_line_floor(mech, pairs[:4], eps, case.scale_of_x)
        assert (upper >= floor - 1e-9).all(), (upper, floor)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("row", "case"),
    [p for p in _CASES if p.values[0].audit == "exact" and p.values[1].exact],
)
def test_every_family_slack(row, case):
    """At the default budget an ``'exact'`` row's answer is δ(ε) up to rounding, or (a search over the edge that
    ends at its budget) within the slack privacy_profile documents."""
    if case.audit_error is not None:
        return
    if (row.name, case.id) in _LOOSE:
        pytest.xfail(
            "the edge search ends at its budget with the bound 1 (documented in _LOOSE)"
        )
    mech = case.build()
    domain = case.audit.get("domain")
    loss = privacy_loss(mech, case.sensitivity, domain=domain)
    eps = _epsilons(loss)
    bounds = profile_bounds(mech, case.sensitivity, eps, domain=domain)
    _check(row, case, bounds, eps, loss)
    slack = bounds.upper - bounds.lower
    assert (bounds.exact | (slack <= _SEARCH_SLACK)).all(), (bounds, slack)


# --- closed forms --------------------------------------------------------------------------------------


def _discrete_laplace_pair(b, d, eps):
    """``H_ε(0, d)`` of the discrete Laplace mechanism, ``d >= 1``: the outputs ``k <= 0`` hold ``1/(1 + α)`` under
    ``q = 0`` with log-ratio ``d/b`` (a geometric sum), the outputs ``0 < k < d`` one by one; above, the
    log-ratio is ``<= 0``."""
    alpha = math.exp(-1 / b)
    out = []
    for e in eps:
        total = 0.0
        if e < d / b:
            total += -math.expm1(e - d / b) / (1 + alpha)
        for k in range(1, d):
            r = (d - 2 * k) / b
            if e < r:
                p1 = (1 - alpha) / (1 + alpha) * alpha**k
                total += p1 * -math.expm1(e - r)
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("seed", range(4))
def test_discrete_laplace_geometric_sums(seed):
    rng = np.random.default_rng(seed)
    b = float(rng.uniform(0.2, 6.0))
    d = int(rng.integers(1, 6))
    mech = dpbook.DiscreteLaplace(b)
    eps = np.r_[0.0, np.sort(rng.uniform(0.0, 1.1 * d / b, 7)), math.inf]
    want = _discrete_laplace_pair(b, d, eps)
    q = int(rng.integers(-(10**6), 10**6))
    for q1, q2 in (
        (q, q + d),
        (q + d, q),
    ):  # symmetric kernel: both orders alike, anywhere
        got = pair_profile(mech, q1, q2, eps)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
        assert (got >= want * (1 - 1e-14)).all()
    bounds = profile_bounds(mech, d, eps)  # the worst pair: Δ apart
    np.testing.assert_allclose(bounds.upper, want, rtol=1e-12, atol=1e-300)
    assert bounds.exact.all()
    # on a domain narrower than Δ the widest pair in it
    narrow = profile_bounds(mech, d + 3, eps, domain=(5, 5 + d))
    np.testing.assert_allclose(narrow.upper, want, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize(
    "mech",
    [
        dpbook.DiscreteTruncated(0.8, lower=0),
        dpbook.DiscreteBIT(1.3, lower=-2),
        dpbook.DiscreteTruncated(2.0, upper=3, lower=-np.inf),
        dpbook.CountPostProcessed(1.0, values=[0.0, 0.4, 1.7], shift=0.5),
    ],
    ids=["truncated-half-line", "bit-half-line", "truncated-left", "count-post"],
)
def test_infinite_support_pairs_brute_force(mech):
    """Pairs of a law on an infinite support: the closed-form tails against a plain sum over a window holding
    all but ``1e-30`` of both laws (for the post-processing: its base, the discrete Laplace law)."""
    desc = dpbook.describe(mech)
    eps = np.array([0.0, 0.2, 0.5, 1.1, 2.5])
    k = np.arange(-400.0, 401.0)
    for q1, q2 in ((0, 1), (1, 0), (3, 5), (-3, -1), (6, 2)):
        p1 = np.exp(np.asarray(desc.logpmf(k, q1), dtype=float))
        p2 = np.exp(np.asarray(desc.logpmf(k, q2), dtype=float))
        brute = np.array([np.sum(np.maximum(p1 - math.exp(e) * p2, 0.0)) for e in eps])
        got = _profile._discrete_bounds(desc, q1, q2, eps, "m")
        assert (got[1] <= brute + 1e-15).all() and (brute <= got[0] + 1e-15).all()
        np.testing.assert_allclose(got[0], brute, rtol=1e-12, atol=1e-14)


def test_infinite_support_finite_domain():
    """A half-line support on a finite domain: every pair enumerated, each summed in closed form."""
    mech = dpbook.DiscreteTruncated(0.9, lower=0)
    eps = np.array([0.0, 0.4, 1.0])
    got = profile_bounds(mech, 2, eps, domain=(0, 6))
    want = np.zeros(eps.shape)
    for q1 in range(7):
        for q2 in range(max(0, q1 - 2), min(6, q1 + 2) + 1):
            if q1 != q2:
                want = np.maximum(want, pair_profile(mech, q1, q2, eps))
    np.testing.assert_array_equal(got.upper, want)
    assert got.exact.all()


@pytest.mark.parametrize(
    "mech",
    [
        dpbook.DiscreteTruncated(0.9, lower=0),  # (its worst pairs: far from the end)
        pytest.param(dpbook.DiscreteBIT(0.7, lower=-3), marks=pytest.mark.slow),
        pytest.param(
            dpbook.DiscreteTruncated(1.2, upper=3, lower=-np.inf),
            marks=pytest.mark.slow,
        ),
        dpbook.DiscreteBIT(1.0, lower=0, upper=5),
    ],
    ids=["truncated-half-line", "bit-half-line", "truncated-left", "bit-finite"],
)
def test_infinite_domain_with_an_end(mech):
    """A finite end of the support on an infinite domain: the pairs near the ends and the bounds beyond them
    (``_discrete_far_profile``) give the profile of every pair of a finite domain reaching ``50 b`` beyond the
    ends (where the law is the kernel's, or frozen, to ``e^{-50}``), exactly."""
    eps = np.array([0.0, 0.3, 0.8, 1.5, math.inf])
    lo, hi = mech.support
    reach = math.ceil(50 * mech.scale)
    wide = (max(lo, -5.0) - reach, min(hi, 5.0) + reach)
    want = profile_bounds(mech, 2, eps, domain=wide)
    for domain in (None, (-math.inf, math.inf)):
        got = profile_bounds(mech, 2, eps, domain=domain)
        np.testing.assert_allclose(got.upper, want.upper, rtol=1e-12, atol=0)
        assert (got.upper >= want.lower).all() and got.exact.all()


@pytest.mark.parametrize("seed", range(3))
def test_log_laplace_is_laplace_in_log(seed):
    rng = np.random.default_rng(10 + seed)
    b = float(rng.uniform(0.1, 2.0))
    k = float(rng.uniform(0.05, 2.0))
    mech = dpbook.LogLaplace(b)
    eps = np.r_[0.0, np.sort(rng.uniform(0.0, 3.0 / b, 6)), math.inf]

    def laplace(dist):
        return np.where(
            eps < dist / b, -np.expm1(np.minimum(eps - dist / b, 0.0) / 2), 0.0
        )

    # the default relation |log q1 - log q2| <= K: the Laplace profile at K, on any domain
    got = profile_bounds(mech, k, eps)
    np.testing.assert_allclose(got.upper, laplace(k), rtol=1e-10, atol=1e-300)
    assert got.exact.all()
    got = profile_bounds(mech, k, eps, neighbours="relative")
    np.testing.assert_allclose(got.upper, laplace(math.log1p(k)), rtol=1e-10)
    # additive neighbours: the largest log-distance, at the low end of the domain
    lo = float(rng.uniform(0.1, 5.0))
    for hi, dist in (
        (math.inf, math.log1p(k / lo)),
        (lo + 0.5 * k, math.log1p(0.5 * k / lo)),
    ):
        got = profile_bounds(mech, k, eps, domain=(lo, hi), neighbours="additive")
        want = laplace(dist)
        np.testing.assert_allclose(got.upper, want, rtol=1e-10, atol=1e-300)
        assert (got.upper >= want * (1 - 1e-13)).all() and got.exact.all()
        assert (got.lower <= got.upper).all()
        # no pair of the band exceeds it (brute force over a grid of pairs, both orders)
        top = min(hi, lo + 20 * k)
        for u in np.linspace(lo, top - 0.5 * k, 7):
            for v in (u + 0.5 * k, min(u + k, top)):
                for q1, q2 in ((u, v), (v, u)):
                    low = _pair_profile_bounds(mech, q1, q2, eps)[1]
                    assert (low <= got.upper).all()
    # a domain reaching 0 holds the point mass at 0: δ = 1 at every ε
    got = profile_bounds(mech, k, eps, domain=(0.0, 3.0), neighbours="additive")
    assert (got.upper == 1).all() and got.exact.all()


@pytest.mark.slow
def test_croft_certified():
    """Croft's scale varies with the true value: a certified upper bound, the best edge pair below it."""
    mech = dpbook.CroftLaplace(1.0, 1.0)
    eps = np.array([0.0, 0.5, 1.0, 2.0, math.inf])
    got = profile_bounds(mech, 1.0, eps, domain=(0.0, 2.0))
    assert not got.exact[:-1].any() and got.exact[-1]
    assert (got.lower <= got.upper).all() and (got.upper < 1).all()
    assert (got.lower[:2] > 0.1).all()
    # randomized response at the windowed loss is a floor of the bound's first term: at ε = 0 the bound is
    # at least RR's (e^1 - 1)/(e^1 + 1) for Croft's ε = 1 (its loss over outputs near the data)
    assert got.upper[0] >= math.tanh(0.5) - 1e-12
    # an infinite domain: no tail bound, the trivial bound 1 (and the pairs still below it)
    wide = profile_bounds(mech, 1.0, eps)
    assert (wide.upper[:-1] == 1).all() and (wide.lower <= wide.upper).all()


def test_post_processing_bounds_its_base():
    """A post-processing's answer is its base's profile, flagged as a bound."""
    base = dpbook.Laplace(1.0)
    eps = np.array([0.0, 0.3, 0.99, 1.0])
    for mech in (
        dpbook.PostProcessed(1.0, np.abs, breakpoints=(0.0,)),
        dpbook.StepPostProcessed(1.0, edges=[0.0, 1.0], values=[0.0, 0.5], shift=0.5),
        dpbook.FoldedLaplace(1.0, lower=0.0, upper=1.0),
        dpbook.Rounded(base),
    ):
        got = profile_bounds(mech, 1.0, eps)
        np.testing.assert_array_equal(got.upper, privacy_profile(base, 1.0, eps))
        assert (got.lower == 0).all()
        assert got.exact.tolist() == [False, False, False, True]


def test_scalar_and_types():
    got = profile_bounds(dpbook.DiscreteLaplace(1.0), 1, 0.5)
    assert isinstance(got, dpbook.ProfileBounds)
    assert isinstance(got.upper, float) and isinstance(got.exact, bool)
    with pytest.raises(ValueError, match="neighbours"):
        profile_bounds(dpbook.DiscreteLaplace(1.0), 1, 0.5, neighbours="log")
    with pytest.raises(ValueError, match="neighbours"):
        profile_bounds(dpbook.Laplace(1.0), 1, 0.5, neighbours="nope")
    with pytest.raises(NotImplementedError, match="log q"):
        profile_bounds(dpbook.Laplace(1.0), 1, 0.5, neighbours="log")


@pytest.mark.parametrize(
    ("mech", "delta", "domain"),
    [
        (dpbook.DiscreteLaplace(1e-300), 1, None),
        (dpbook.DiscreteLaplace(1e6), 1, None),
        (dpbook.DiscreteLaplace(1e6), 10**4, None),
        (dpbook.DiscreteTruncated(1e-300, lower=0), 3, (0, 10)),
        (dpbook.LogLaplace(1e-300), 1e-300, None),
        (dpbook.LogLaplace(1e300), 1.0, (1e-300, 1e300)),
        (dpbook.CroftLaplace(1e-15, 1.0), 1.0, (0.0, 2.0)),
    ],
    ids=[
        "dlap-tiny",
        "dlap-huge",
        "dlap-huge-wide",
        "dtrunc-tiny",
        "loglap-tiny",
        "loglap-huge",
        "croft-tiny",
    ],
)
def test_extremes(mech, delta, domain):
    eps = np.array([0.0, 1e-300, 0.5, 1.0, 3.0, 1e6, math.inf])
    got = profile_bounds(mech, delta, eps, domain=domain)
    assert np.isfinite(got.upper).all() and np.isfinite(got.lower).all()
    assert ((0 <= got.lower) & (got.lower <= got.upper) & (got.upper <= 1)).all()
    assert got.upper[-1] == 0.0
