"""Tests of :func:`dpbook.privacy_profile` and :func:`dpbook.epsilon_for_delta` (``dpbook/audit/_profile.py``).

The profile is the supremum of :func:`dpbook.pair_profile` over neighbouring pairs.  It is checked against
the closed forms (Laplace; the Gaussian's analytic δ of Balle and Wang, :func:`dpbook.design.gaussian_delta`),
and against brute force: the largest pair profile over a fine grid of pairs (both directions, on the edge
``|q1 - q2| = Δ`` and inside the band) must never exceed it, and it must not exceed that maximum by more than
the slack it states (``_privacy_profile_bounds``: the distance to the best pair it found).
"""

import math

import numpy as np
import pytest
from scipy import stats

import dpbook
from dpbook import epsilon_for_delta, pair_profile, privacy_loss, privacy_profile
from dpbook.audit import _profile
from dpbook.audit._profile import _pair_profile_bounds, _privacy_profile_bounds
from dpbook.design.gaussian import gaussian_delta


def _small_budget(monkeypatch):
    """A smaller search budget: the bound stays certified (its slack, which the tests read, grows)."""
    monkeypatch.setattr(_profile, "_PROFILE_BUDGET", 192)


@pytest.mark.parametrize("seed", range(4))
def test_laplace_closed_form(seed):
    rng = np.random.default_rng(seed)
    b, delta = float(rng.uniform(0.1, 5.0)), float(rng.uniform(0.1, 3.0))
    eps = np.r_[np.linspace(0.0, 1.2 * delta / b, 23), math.inf]
    got = privacy_profile(dpbook.Laplace(b), delta, eps)
    want = np.where(
        eps < delta / b, -np.expm1(np.minimum(eps - delta / b, 0.0) / 2), 0.0
    )
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)
    assert (got >= want).all()  # never below the truth


@pytest.mark.parametrize("sigma", [0.3, 1.0, 4.0])
def test_gaussian_matches_balle_wang(sigma):
    eps = np.linspace(0.0, 6.0, 25)
    got = privacy_profile(dpbook.Gaussian(sigma), 1.0, eps)
    want = gaussian_delta(sigma, eps, 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    assert (got >= want * (1 - 1e-13)).all()


def _families(rng):
    """Random instances of every covered continuous family (finite and infinite bounds)."""
    b = float(rng.uniform(0.3, 2.0))
    upper = float(rng.uniform(1.0, 4.0))
    gap = float(rng.uniform(0.2, 1.0))
    return [
        (dpbook.BIT(b, upper=upper), None),
        (dpbook.Truncated(b, upper=upper), None),
        (dpbook.Truncated(b), None),
        (dpbook.Normalized(b, [(0.0, 1.0), (1.0 + gap, 3.0)]), None),
        (dpbook.GaussianBIT(b, upper=upper), None),
        (dpbook.GaussianTruncated(b, upper=upper), None),
        (dpbook.TranslatedRamp(b, float(rng.uniform(0.0, 1.0))), None),
        (dpbook.BIT(b, upper=upper), (-math.inf, math.inf)),
    ]


def _brute_force(mech, delta, eps, domain):
    """``(upper, lower)``: the largest of the pair profiles' upper (lower) bounds over a grid of pairs of true
    values at most ``Δ`` apart (both directions).  ``lower`` is below the supremum, the truth."""
    lo, hi = mech.domain if domain is None else domain
    lo = lo if math.isfinite(lo) else -8.0
    hi = hi if math.isfinite(hi) else max(lo, 0.0) + 12.0
    best, floor = np.zeros(eps.shape), np.zeros(eps.shape)
    if hi - lo <= delta:
        pairs = [(lo, hi)]
    else:
        us = np.linspace(lo, hi - delta, 121)
        pairs = [(u, u + delta) for u in us]
        inner = np.linspace(lo, hi, 9)
        pairs += [(x, y) for x in inner for y in inner if 0 < y - x < delta]
    for x, y in pairs:
        for a, b in ((x, y), (y, x)):
            up, low = _pair_profile_bounds(mech, a, b, eps)
            best, floor = np.maximum(best, up), np.maximum(floor, low)
    return best, floor


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2))
def test_brute_force(seed, monkeypatch):
    _small_budget(monkeypatch)
    rng = np.random.default_rng(100 + seed)
    delta = float(rng.uniform(0.3, 1.5))
    for mech, domain in _families(rng):
        loss = privacy_loss(mech, delta, domain=domain)
        top = loss if math.isfinite(loss) else 4.0
        eps = np.r_[0.0, np.sort(rng.uniform(0.0, top, 5)), top]
        upper, lower = _privacy_profile_bounds(mech, delta, eps, domain=domain)
        brute, floor = _brute_force(mech, delta, eps, domain)
        name = type(mech).__name__
        # never below the truth: not below any pair's divergence (its lower bound; a grid pair (u, u + Δ)
        # rounded in floats may be an ulp of u more than Δ apart, worth ~1e-16 of δ)
        assert (upper >= floor * (1 - 1e-12) - 1e-15).all(), (name, upper, floor)
        assert (lower <= upper).all()
        # not above the best pair by more than the stated slack (and the grid's resolution: 1e-3 relative, and
        # 1e-4 of the profile's top near the loss, where δ is small and moves fastest along the edge)
        grid_error = 1e-3 * upper + 1e-4 * upper.max()
        assert (upper - brute <= (upper - lower) + grid_error).all(), (
            name,
            upper,
            lower,
            brute,
        )


@pytest.mark.slow
def test_brute_force_typical():
    """One instance of each covered family at the default budget: the slack stated and measured."""
    rng = np.random.default_rng(7)
    delta = 1.0
    for mech, domain in _families(rng)[:2] + _families(rng)[4:5]:
        eps = np.array([0.0, 0.3, 0.8])
        upper, lower = _privacy_profile_bounds(mech, delta, eps, domain=domain)
        brute, floor = _brute_force(mech, delta, eps, domain)
        assert (upper >= floor * (1 - 1e-12) - 1e-15).all()
        assert (upper - brute <= (upper - lower) + 1e-3 * upper).all()
        assert ((upper - lower) <= 2e-2 * upper).all()  # the documented slack


@pytest.mark.parametrize(
    "mech",
    [
        dpbook.DiscreteBIT(1.0, lower=0, upper=6),
        dpbook.DiscreteTruncated(0.7, lower=0, upper=4),
    ],
    ids=["discrete-bit", "discrete-truncated"],
)
@pytest.mark.parametrize("delta", [1, 2])
def test_discrete_exact(mech, delta):
    lo, hi = (int(v) for v in mech.domain)
    eps = np.array([0.0, 0.2, 0.7, 1.5])
    got = privacy_profile(mech, delta, eps)
    brute = np.zeros(eps.shape)
    for q1 in range(lo, hi + 1):
        for q2 in range(max(lo, q1 - delta), min(hi, q1 + delta) + 1):
            if q1 != q2:
                brute = np.maximum(brute, pair_profile(mech, q1, q2, eps))
    np.testing.assert_array_equal(got, brute)
    loss = privacy_loss(mech, delta)
    assert privacy_profile(mech, delta, loss) == 0.0
    assert privacy_profile(mech, delta, loss * (1 - 1e-9)) > 0.0


@pytest.mark.parametrize(
    "mech",
    [
        dpbook.Laplace(1.0),
        dpbook.BIT(1.0, upper=2.0),
        dpbook.Truncated(1.0, upper=2.0),
        dpbook.GaussianTruncated(1.0, upper=2.0),
    ],
    ids=["laplace", "bit", "truncated", "gaussian-truncated"],
)
def test_zero_from_the_loss_on(mech, monkeypatch):
    _small_budget(monkeypatch)
    loss = privacy_loss(mech, 1.0)
    assert privacy_profile(mech, 1.0, [loss, 2 * loss, math.inf]).tolist() == [0.0] * 3
    assert privacy_profile(mech, 1.0, loss * (1 - 1e-6)) > 0.0


def test_epsilon_for_delta():
    mech = dpbook.Laplace(2.0)
    assert epsilon_for_delta(mech, 1.0, 0.0) == privacy_loss(mech, 1.0)
    assert epsilon_for_delta(mech, 1.0, 1.0) == 0.0
    e = epsilon_for_delta(mech, 1.0, 1e-3)
    assert privacy_profile(mech, 1.0, e) <= 1e-3
    assert e == pytest.approx(0.5 + 2 * math.log1p(-1e-3), rel=1e-9, abs=1e-10)


@pytest.mark.slow
def test_epsilon_for_delta_closed_form():
    mech = dpbook.Laplace(2.0)
    for d in (1e-12, 1e-3, 0.1):
        e = epsilon_for_delta(mech, 1.0, d)
        assert privacy_profile(mech, 1.0, e) <= d  # the upper side: (ε, δ)-DP there
        # 1 - e^{(ε - Δ/b)/2} = δ
        assert e == pytest.approx(0.5 + 2 * math.log1p(-d), rel=1e-9, abs=1e-10)


@pytest.mark.slow
def test_epsilon_for_delta_round_trip(monkeypatch):
    _small_budget(monkeypatch)
    mech = dpbook.Truncated(1.0, upper=2.0)
    loss = privacy_loss(mech, 1.0)
    assert epsilon_for_delta(mech, 1.0, 0.0) == loss
    for d in (1e-4, 0.05):
        e = epsilon_for_delta(mech, 1.0, d)
        assert 0 < e < loss
        assert privacy_profile(mech, 1.0, e) <= d


def test_shape_and_types():
    mech = dpbook.Laplace(1.0)
    assert isinstance(privacy_profile(mech, 1.0, 0.5), float)
    assert privacy_profile(mech, 1.0, np.zeros((2, 3))).shape == (2, 3)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"sensitivity": 0.0}, "sensitivity"),
        ({"sensitivity": -1.0}, "sensitivity"),
        ({"sensitivity": math.nan}, "sensitivity"),
        ({"sensitivity": "1"}, "sensitivity"),
        ({"epsilon": -0.5}, "epsilon"),
        ({"epsilon": [0.1, math.nan]}, "epsilon"),
        ({"epsilon": "x"}, "epsilon"),
        ({"domain": (2.0, 1.0)}, "domain"),
        ({"domain": "ab"}, "domain"),
    ],
)
def test_bad_input(kwargs, name):
    args = {"sensitivity": 1.0, "epsilon": 0.5, "domain": None} | kwargs
    with pytest.raises(ValueError, match=name):
        privacy_profile(
            dpbook.Laplace(1.0),
            args["sensitivity"],
            args["epsilon"],
            domain=args["domain"],
        )


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan, "0.1", True, None])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        epsilon_for_delta(dpbook.Laplace(1.0), 1.0, bad)


@pytest.mark.parametrize(
    ("mech", "reason"),
    [
        (dpbook.Restricted(stats.logistic), "Laplace and normal bases"),
        (dpbook.Restricted(stats.t(df=3)), "Laplace and normal bases"),
    ],
    ids=["restricted-logistic", "restricted-t"],
)
def test_not_covered(mech, reason):
    """Bases that are not Laplace-shaped: no description, as for privacy_loss (the other families are covered:
    tests/audit/test_profile_coverage.py)."""
    with pytest.raises(NotImplementedError, match=reason):
        privacy_profile(mech, 1.0, 0.5)


def test_discrete_infinite_domain():
    """An infinite domain: the law freezes beyond the support's ends (tests/audit/test_profile_coverage.py)."""
    mech = dpbook.DiscreteBIT(1.0, lower=0, upper=5)
    assert privacy_profile(mech, 1, 0.5, domain=(-math.inf, 5)) == privacy_profile(
        mech, 1, 0.5, domain=(-60, 5)
    )


@pytest.mark.parametrize(
    ("mech", "delta"),
    [
        (dpbook.Laplace(1e-300), 1e-300),
        (dpbook.Laplace(1e300), 1e300),
        (dpbook.Truncated(1e300, upper=1e300), 1e300),
        (dpbook.Truncated(1e-300, upper=1e-300), 1e-300),
        (dpbook.BIT(1e-3, upper=1e6), 1.0),
        (dpbook.GaussianBIT(1e5, upper=1.0), 1.0),
    ],
    ids=[
        "laplace-tiny",
        "laplace-huge",
        "trunc-huge",
        "trunc-tiny",
        "bit-wide",
        "gbit-flat",
    ],
)
def test_extremes(mech, delta):
    """Scales and sensitivities at the ends of the doubles: finite values in [0, 1], no warning (pytest
    turns them into errors), 0 from the loss on, and the kernel's closed form where it applies."""
    eps = np.array([0.0, 0.5, 1.0, 3.0, math.inf])
    got = privacy_profile(mech, delta, eps)
    assert np.isfinite(got).all() and (got >= 0).all() and (got <= 1).all()
    assert got[-1] == 0.0
    if isinstance(mech, dpbook.Laplace) or isinstance(mech, dpbook.BIT):
        ratio = delta / mech.scale
        want = np.where(eps < ratio, -np.expm1(np.minimum(eps - ratio, 0.0) / 2), 0.0)
        np.testing.assert_allclose(got, want, rtol=1e-10)
    if isinstance(
        mech, dpbook.GaussianBIT
    ):  # the clamp of a Gaussian: at most Balle–Wang's δ
        assert (got <= gaussian_delta(mech.scale, eps, delta) * (1 + 1e-12)).all()
