"""Rényi divergences, the Rényi-DP curve and RDP composition (``dpbook/audit/_renyi.py``).

``pair_renyi`` is checked against scipy quadrature of ``∫ p1^α p2^(1-α)`` (plus the atoms) over random
parameters of every kind of law, against the Gaussian's and the Laplace's closed forms, at the extremes of
the floats; ``renyi_profile`` against a fine grid of pairs and the pure-DP loss; ``composed_profile``
against Google's ``dp_accounting`` composing the exact Laplace pair, and against ``k ε``.  The last test
checks the published claim that truncation keeps the Rényi DP of the untruncated mechanism.
"""

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from audit.test_profile_peer import _delta, bracket
from dp_accounting.rdp import rdp_privacy_accountant as rdp_module
from scipy import integrate

import dpbook
from dpbook.audit._renyi import (
    _evaluate,
    _renyi_profile_bounds,
    composed_profile,
    pair_renyi,
    renyi_profile,
)

ORDERS = np.array([1.5, 2.0, 3.7, 8.0, 64.0])


def _quad(mech, q1, q2, alpha):
    """``D_α`` by scipy quadrature, split at the pieces' ends and the two centres; the atoms summed."""
    desc = dpbook.describe(mech)
    if isinstance(desc, dpbook.DiscreteDescription):
        k = np.arange(desc.support[0], desc.support[1] + 1)
        l1, l2 = mech.logpmf(k, q1), mech.logpmf(k, q2)
        return float(np.log(np.sum(np.exp(alpha * l1 + (1 - alpha) * l2)))) / (
            alpha - 1
        )

    def f(t):
        return math.exp(alpha * mech.logpdf(t, q1) + (1 - alpha) * mech.logpdf(t, q2))

    total = 0.0
    for lo, hi in desc.pieces:
        cuts = [desc.center(np.array(q)) for q in (q1, q2)]
        edges = sorted({lo, hi, *(float(c) for c in cuts if lo < c < hi)})
        for x, y in zip(edges[:-1], edges[1:]):
            total += integrate.quad(f, x, y, epsabs=0, epsrel=1e-11, limit=400)[0]
    a2 = {float(t): float(m) for t, m in mech.atoms(q2)}
    for t, m1 in mech.atoms(q1):
        total += float(m1) ** alpha * a2[float(t)] ** (1 - alpha)
    return math.log(total) / (alpha - 1)


def _quad_panels(mech, q1, q2, alpha, top):
    """``D_α`` of a law on ``[0, inf)`` by 20-point Gauss–Legendre on 400 panels of ``[0, top]`` (split at the
    centres), one vectorized call of the law (its tail beyond ``top`` is below ``e^{-60}`` of the total)."""
    nodes, weights = np.polynomial.legendre.leggauss(20)
    ends = np.unique(np.r_[np.linspace(0.0, top, 400), q1, q2])
    mid, half = 0.5 * (ends[1:] + ends[:-1]), 0.5 * np.diff(ends)
    t = (mid[:, None] + half[:, None] * nodes).ravel()
    w = (half[:, None] * weights).ravel()
    log_f = alpha * mech.logpdf(t, q1) + (1 - alpha) * mech.logpdf(t, q2)
    return float(np.log(np.sum(w * np.exp(log_f)))) / (alpha - 1)


def _draws(seed, n=3):
    """Random families (scales, ranges) and pairs inside their domain, seeded."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = float(rng.uniform(0.3, 2.0))
        lo = float(rng.uniform(-1.0, 0.0))
        hi = lo + float(rng.uniform(1.0, 3.0))
        mid = lo + 0.4 * (hi - lo)
        pieces = [(lo, mid), (mid + 0.2 * (hi - lo), hi)]
        for mech in (
            dpbook.Laplace(s),
            dpbook.BIT(s, lower=lo, upper=hi),
            dpbook.Truncated(s, lower=lo, upper=hi),
            dpbook.Truncated(s, lower=lo),
            dpbook.Normalized(s, pieces),
            dpbook.Gaussian(s),
            dpbook.GaussianBIT(s, lower=lo, upper=hi),
            dpbook.GaussianTruncated(s, lower=lo, upper=hi),
            dpbook.GaussianTruncated(s, upper=hi),
        ):
            d_lo, d_hi = mech.domain
            d_lo, d_hi = max(d_lo, lo), min(d_hi, hi)
            q1, q2 = rng.uniform(d_lo, d_hi, 2)
            out.append((mech, float(q1), float(q2), float(rng.uniform(1.1, 30.0))))
    return out


@pytest.mark.parametrize("case", _draws(20), ids=lambda c: type(c[0]).__name__)
def test_pair_renyi_matches_quadrature(case):
    mech, q1, q2, alpha = case
    for x, y in ((q1, q2), (q2, q1)):
        ours = pair_renyi(mech, x, y, alpha)
        want = _quad(mech, x, y, alpha)
        # never below the truth (quadrature's own error ~1e-11), and close to it
        assert ours >= want - 1e-10 * (1 + want)
        assert ours == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_pair_renyi_scale_varying_and_log_output():
    """CroftLaplace (a scale that varies with q): quadrature where the integral converges, ``inf`` where the
    tail ``e^{-t (α/s1 - (α-1)/s2)}`` does not decay; LogLaplace (outputs ``e^t``) is the Laplace in ``log q``."""
    mech = dpbook.CroftLaplace(1.0, 1.0)
    desc = dpbook.describe(mech)
    for q1, q2 in ((0.3, 1.2), (1.2, 0.3), (2.0, 2.5)):
        s1, s2 = (float(desc.scale(np.array(q))) for q in (q1, q2))
        for alpha in (1.5, 4.0, 20.0):
            ours = pair_renyi(mech, q1, q2, alpha)
            rate = (
                alpha / s1 - (alpha - 1) / s2
            )  # of the integrand's tail beyond both centres
            if rate <= 0:
                assert ours == math.inf
            else:
                want = _quad_panels(mech, q1, q2, alpha, max(q1, q2) + 60 / rate)
                assert ours == pytest.approx(want, rel=1e-9)
    log = pair_renyi(dpbook.LogLaplace(1.0), 1.0, 2.0, ORDERS)
    np.testing.assert_allclose(
        log, pair_renyi(dpbook.Laplace(1.0), 0.0, math.log(2.0), ORDERS), rtol=1e-12
    )


def test_bounded_noise_has_infinite_renyi_divergence():
    """Geng's truncated Laplacian noise: the support moves with q, so M(q1) lands where M(q2) never does."""
    mech = dpbook.TruncatedLaplaceNoise(1.0, 2.0)
    assert (pair_renyi(mech, 0.0, 0.5, ORDERS) == math.inf).all()
    assert pair_renyi(mech, 0.5, 0.5, 2.0) == 0.0
    assert (renyi_profile(mech, 1.0, ORDERS) == math.inf).all()
    assert composed_profile(mech, 1.0, 5.0, 3) == 1.0


def test_pair_renyi_discrete_sum():
    mech = dpbook.DiscreteTruncated(1.2, lower=0, upper=8)
    for q1, q2 in ((3, 4), (8, 6), (0, 1)):
        ours = pair_renyi(mech, q1, q2, ORDERS)
        want = [_quad(mech, q1, q2, a) for a in ORDERS]
        np.testing.assert_allclose(ours, want, rtol=1e-12)
        assert (ours >= np.array(want) * (1 - 1e-14)).all()


@pytest.mark.parametrize(
    "mech, q1, q2",
    [
        pytest.param(dpbook.Laplace(1.3), 0.2, 1.4, id="Laplace"),
        pytest.param(dpbook.Truncated(0.7, upper=2.0), 0.0, 1.0, id="Truncated"),
        pytest.param(dpbook.GaussianBIT(0.7, upper=2.0), 0.5, 1.5, id="GaussianBIT"),
        pytest.param(
            dpbook.Normalized(0.6, [(0.0, 1.0), (1.5, 3.0)]), 2.5, 1.5, id="Normalized"
        ),
        pytest.param(dpbook.Gaussian(1.0), 0.0, 1.0, id="Gaussian"),
    ],
)
def test_renyi_is_an_integral_of_hockey_stick_divergences(mech, q1, q2):
    """The identity of renyi_profile's proof, ``∫ p1^α p2^(1-α) = 1 + α(α-1) ∫_0^∞ (e^{(α-1)ε} H_ε(P1||P2) +
    e^{-αε} H_ε(P2||P1)) dε``, with ``H`` from :func:`dpbook.pair_profile` (an independent computation) by
    20-point Gauss–Legendre on 200 panels between 0 and the pair's losses (40 for the Gaussian)."""
    losses = [dpbook.pair_loss(mech, q1, q2), dpbook.pair_loss(mech, q2, q1)]
    top = max(v if math.isfinite(v) else 40.0 for v in losses)
    ends = np.unique(np.r_[np.linspace(0.0, top, 201), [v for v in losses if v < top]])
    nodes, weights = np.polynomial.legendre.leggauss(20)
    mid, half = 0.5 * (ends[1:] + ends[:-1]), 0.5 * np.diff(ends)
    eps = (mid[:, None] + half[:, None] * nodes).ravel()
    w = (half[:, None] * weights).ravel()
    up = np.asarray(dpbook.pair_profile(mech, q1, q2, eps))
    down = np.asarray(dpbook.pair_profile(mech, q2, q1, eps))
    for alpha in (1.5, 3.0, 8.0):
        total = 1 + alpha * (alpha - 1) * np.sum(
            w * (np.exp((alpha - 1) * eps) * up + np.exp(-alpha * eps) * down)
        )
        want = math.log(total) / (alpha - 1)
        # the profiles' kinks inside a panel (a piece end) limit the rule to ~1e-7
        assert pair_renyi(mech, q1, q2, alpha) == pytest.approx(want, rel=1e-6)


def test_closed_forms():
    """Gaussian: ``α Δ²/(2 σ²)``; Laplace (Mironov 2017, Proposition 6):
    ``ε + log(1 + (α - 1)(e^{(1 - 2α)ε} - 1)/(2α - 1))/(α - 1)`` with ``ε = Δ/b``."""
    alpha = np.r_[ORDERS, 1.0 + 1e-6, 1e3, 1e6]
    sigma, q1, q2 = 1.7, 0.3, -0.9
    gauss = pair_renyi(dpbook.Gaussian(sigma), q1, q2, alpha)
    want = alpha * (q1 - q2) ** 2 / (2 * sigma**2)
    # the rounding allowance is a few ulps of log ∫ divided by α - 1: 1e-7 absolute at α = 1 + 1e-6
    tol = 1e-12 * want + 1e-13 / (alpha - 1)
    assert (gauss >= want).all()
    assert (gauss - want <= tol).all()
    # dp_accounting's Laplace RDP (an independent implementation of the same closed form)
    peer = [rdp_module._laplace_rdp(abs(q1 - q2) / 0.8, a) for a in alpha[:5]]
    np.testing.assert_allclose(
        pair_renyi(dpbook.Laplace(0.8), q1, q2, alpha[:5]), peer, rtol=1e-12
    )
    b = 0.8
    eps = abs(q1 - q2) / b
    laplace = eps + np.log1p(
        (alpha - 1) * np.expm1((1 - 2 * alpha) * eps) / (2 * alpha - 1)
    ) / (alpha - 1)
    ours = pair_renyi(dpbook.Laplace(b), q1, q2, alpha)
    assert (ours >= laplace * (1 - 1e-15)).all()
    assert (ours - laplace <= 1e-12 * laplace + 1e-13 / (alpha - 1)).all()
    assert pair_renyi(dpbook.Laplace(b), q1, q2, math.inf) == pytest.approx(eps)


def _decimal_closed_forms(b, delta, alpha):
    """The Laplace's (Mironov 2017, Proposition 6) and the Gaussian's ``D_α`` at 60 digits, from the doubles."""
    with localcontext() as ctx:
        ctx.prec = 60
        b, d, a = Decimal(b), abs(Decimal(delta)), Decimal(alpha)
        eps = d / b
        inner = 1 + (a - 1) * (((1 - 2 * a) * eps).exp() - 1) / (2 * a - 1)
        return eps + inner.ln() / (a - 1), a * d * d / (2 * b * b)


def test_rounding_allowance_brackets_the_truth():
    """``lower <= D_α <= upper`` against the closed forms at 60 digits over random pairs and orders, and the
    bracket is narrow (a few ulps of ``log ∫``, divided by ``α - 1``)."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        b = float(rng.uniform(0.1, 10.0))
        q1, q2 = (float(v) for v in rng.uniform(-5.0, 5.0, 2))
        alpha = float(1.0 + rng.choice([1e-3, 1.0, 100.0]) * rng.uniform(0.05, 2.0))
        lap, gauss = _decimal_closed_forms(b, q1 - q2, alpha)
        for mech, want in ((dpbook.Laplace(b), lap), (dpbook.Gaussian(b), gauss)):
            ((up, low),) = _evaluate(
                dpbook.describe(mech), [(q1, q2)], np.array([alpha]), ""
            )
            assert Decimal(float(low[0])) <= want <= Decimal(float(up[0])), (
                mech,
                q1,
                q2,
                alpha,
            )
            assert up[0] - low[0] <= 1e-12 * float(want) + 1e-13 / (alpha - 1)


def test_extremes_no_overflow():
    """Scales of 1e±300 and true values far out: finite, nonnegative, no warning (pytest turns them into
    errors), and scale-free where the law is a translation."""
    want = pair_renyi(dpbook.Laplace(1.0), 0.0, 1.0, ORDERS)
    for s in (1e-300, 1e300):
        got = pair_renyi(dpbook.Laplace(s), 0.0, s, ORDERS)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        got = pair_renyi(dpbook.Gaussian(s), 0.0, s, ORDERS)
        np.testing.assert_allclose(got, ORDERS / 2, rtol=1e-12)
    for mech, q1, q2 in (
        (dpbook.Truncated(1e-300, lower=0.0, upper=1.0), 0.0, 1.0),
        (dpbook.Truncated(1e300, lower=0.0, upper=1.0), 0.0, 1.0),
        (dpbook.BIT(1e-300, lower=0.0, upper=1e300), 1e300, 0.0),
        (dpbook.GaussianTruncated(1e-300, lower=0.0, upper=1.0), 1.0, 0.0),
        (dpbook.GaussianTruncated(1e300, lower=0.0, upper=1.0), 1.0, 0.0),
        (dpbook.GaussianBIT(1e300, lower=-1e300, upper=1e300), 1e300, -1e300),
        (dpbook.Normalized(1e-300, [(0.0, 1e-300), (1.0, 2.0)]), 2.0, 0.0),
    ):
        got = np.asarray(pair_renyi(mech, q1, q2, np.r_[ORDERS, 1e12, math.inf]))
        assert not np.isnan(got).any()
        assert (got >= 0).all()
        assert (got[1:] >= got[:-1] * (1 - 1e-12)).all()  # nondecreasing in α
    # scale-free: a truncation at 1e-300 scales is the same law as at scale 1 (the far end 1e300 scales out)
    tiny = pair_renyi(
        dpbook.Truncated(1e-300, lower=0.0, upper=1.0), 0.0, 1e-300, ORDERS
    )
    one = pair_renyi(dpbook.Truncated(1.0, lower=0.0), 0.0, 1.0, ORDERS)
    np.testing.assert_allclose(tiny, one, rtol=1e-12)
    tiny = pair_renyi(
        dpbook.GaussianTruncated(1e-300, lower=0.0, upper=1.0), 1e-300, 0.0, ORDERS
    )
    one = pair_renyi(dpbook.GaussianTruncated(1.0, lower=0.0), 1.0, 0.0, ORDERS)
    np.testing.assert_allclose(tiny, one, rtol=1e-12)


FAMILIES = [
    pytest.param(dpbook.Truncated(0.7, lower=0.0, upper=2.0), 0.8, id="Truncated"),
    pytest.param(dpbook.BIT(0.8, lower=0.0, upper=2.0), 1.0, id="BIT"),
    pytest.param(
        dpbook.Normalized(0.6, [(0.0, 1.0), (1.5, 3.0)]), 1.0, id="Normalized"
    ),
    pytest.param(
        dpbook.GaussianTruncated(0.6, lower=0.0, upper=2.0), 1.0, id="GaussianTruncated"
    ),
    pytest.param(dpbook.GaussianBIT(0.7, lower=0.0, upper=2.0), 1.0, id="GaussianBIT"),
]


def _pairs(mech, pairs, orders):
    """``D_α`` (upper bounds) of many pairs in one vectorized call, shaped ``(pairs, orders)``."""
    out = _evaluate(dpbook.describe(mech), pairs, orders, type(mech).__name__)
    return np.array([up for up, _ in out])


@pytest.mark.parametrize("mech, delta", FAMILIES)
def test_renyi_profile_above_every_pair(mech, delta):
    """The profile is at least ``D_α`` of every pair of a fine grid of neighbours (the band, not just the
    edge), up to the pairs' own rounding allowance, and the best pair the search found is at least as bad."""
    upper, lower = _renyi_profile_bounds(mech, delta, ORDERS)
    assert (lower <= upper).all()
    lo, hi = mech.domain
    grid = np.linspace(lo, hi, 41)
    pairs = [(x, y) for x in grid for y in grid if 0 < abs(x - y) <= delta + 1e-12]
    best = _pairs(mech, pairs, ORDERS).max(axis=0)
    assert (best <= upper * (1 + 1e-12)).all()
    assert (best <= lower * (1 + 1e-9)).all()


@pytest.mark.parametrize("mech, delta", FAMILIES)
def test_divergence_grows_as_the_pair_moves_apart(mech, delta):
    """The edge reduction's lemma: ``D_α(q1 || q2)`` is nondecreasing as ``q2`` moves away from ``q1``."""
    lo, hi = mech.domain
    for q1 in np.linspace(lo, hi, 5):
        for side in (lo, hi):
            q2 = np.linspace(q1, side, 60)[1:]
            if q2.size == 0 or q1 == side:
                continue
            d = _pairs(mech, [(q1, q) for q in q2], ORDERS)
            assert (np.diff(d, axis=0) >= -1e-12 * (1 + d[1:])).all()


def test_large_orders_tend_to_the_pure_loss():
    for mech, delta in (
        (dpbook.Laplace(1.3), 1.0),
        (dpbook.BIT(0.8, lower=0.0, upper=2.0), 1.0),
        (dpbook.DiscreteTruncated(1.2, lower=0, upper=8), 1),
    ):
        loss = dpbook.privacy_loss(mech, delta)
        eps = renyi_profile(mech, delta, [1e2, 1e4, 1e6, math.inf])
        assert eps[-1] == loss
        assert (eps <= loss * (1 + 1e-12)).all()
        assert abs(eps[2] - loss) < 1e-4 * loss
        assert (np.diff(eps) >= 0).all()
    # one pair: D_α <= D_inf = pair_loss at every order, and close to it at 1e6
    pair = pair_renyi(
        dpbook.Truncated(0.7, lower=0.0, upper=2.0), 0.0, 1.0, [1e6, 1e12]
    )
    loss = dpbook.pair_loss(dpbook.Truncated(0.7, lower=0.0, upper=2.0), 0.0, 1.0)
    assert (pair <= loss).all() and pair[0] >= loss * (1 - 1e-4)
    # a search's slack at large orders: the lower bound closes on the loss, the upper is at most the loss
    for mech in (
        dpbook.Truncated(0.7, lower=0.0, upper=2.0),
        dpbook.Normalized(0.6, [(0.0, 1.0), (1.5, 3.0)]),
    ):
        loss = dpbook.privacy_loss(mech, 1.0)
        upper, lower = _renyi_profile_bounds(mech, 1.0, [2.0, 1e4, 1e6])
        assert (upper <= loss).all() and (np.diff(upper) >= 0).all()
        assert lower[2] >= loss * (1 - 1e-4)


def test_exact_families():
    """Laplace, the Gaussian and a clamp's kernel cap: the profile is the kernel's closed form."""
    alpha = ORDERS
    np.testing.assert_allclose(
        renyi_profile(dpbook.Gaussian(2.0), 1.0, alpha), alpha / 8, rtol=1e-12
    )
    lap = pair_renyi(dpbook.Laplace(1.0), 0.0, 1.0, alpha)
    np.testing.assert_allclose(
        renyi_profile(dpbook.Laplace(1.0), 1.0, alpha), lap, rtol=1e-12
    )
    # a clamp is a post-processing: at most the Laplace's, approached far from the clamp
    clamp = renyi_profile(dpbook.BIT(1.0, upper=3.0), 1.0, alpha)
    np.testing.assert_allclose(clamp, lap, rtol=1e-12)


def test_bad_input():
    mech = dpbook.Laplace(1.0)
    for bad in (1.0, 0.5, float("nan"), "2", [2.0, 1.0], True):
        with pytest.raises(ValueError, match="order"):
            pair_renyi(mech, 0.0, 1.0, bad)
        with pytest.raises(ValueError, match="order"):
            renyi_profile(mech, 1.0, bad)
    with pytest.raises(ValueError, match="sensitivity"):
        renyi_profile(mech, 0.0, 2.0)
    with pytest.raises(ValueError, match="domain"):
        renyi_profile(mech, 1.0, 2.0, domain=(1.0, 0.0))
    with pytest.raises(ValueError, match="q1"):
        pair_renyi(mech, float("inf"), 1.0, 2.0)
    with pytest.raises(ValueError, match="mechanism"):
        pair_renyi("Laplace", 0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="k"):
        composed_profile(mech, 1.0, 1.0, 0)
    with pytest.raises(ValueError, match="epsilon"):
        composed_profile(mech, 1.0, -1.0, 2)
    with pytest.raises(ValueError, match="orders"):
        composed_profile(mech, 1.0, 1.0, 2, orders=[0.5])
    with pytest.raises(NotImplementedError):
        renyi_profile(dpbook.CroftLaplace(1.0, 1.0), 1.0, 2.0)


def test_composition_above_dp_accounting_and_below_k_epsilon():
    """``k`` Laplace releases: the RDP bound is never below dp_accounting's composition of the exact pair
    (its optimistic PLD, a lower bound of the truth), vanishes from ``k ε`` on, and certifies a δ far below 1
    at half of ``k ε``, where pure DP's composition certifies nothing."""
    b, k = 1.0, 10
    mech = dpbook.Laplace(b)
    optimistic, _ = bracket(mech, 0.0, 1.0, bins=2000, h=1e-3)
    eps = np.linspace(0.0, 1.2 * k, 25)
    truth_low = _delta(optimistic.self_compose(k, tail_mass_truncation=0.0), eps)
    ours = np.asarray(composed_profile(mech, 1.0, eps, k))
    assert (ours >= truth_low - 1e-13).all()
    assert (ours[eps >= k] == 0).all()
    assert (ours <= 1).all()
    # the bound is useful: below 0.15 at 0.7 k ε (pure DP's composition: 1 there), within 3 times the
    # truth where the truth is between 1e-3 and 0.1 (measured at most 2.4 times)
    assert composed_profile(mech, 1.0, 0.7 * k, k) < 0.15
    i = np.flatnonzero((truth_low > 1e-3) & (truth_low < 0.1))
    assert i.size >= 3
    assert (ours[i] <= 3 * truth_low[i]).all()
    # many releases of a small ε: δ = 1e-6 is reached at 0.6 k ε (ε = 0.1 per release, k = 100)
    small = dpbook.Laplace(10.0)
    assert composed_profile(small, 1.0, 6.0, 100) < 1e-6


def test_conversion_matches_dp_accounting():
    """The conversion is dp_accounting's ``compute_delta`` fed the same orders and ``k ε(α)`` (it also takes a
    bound through the KL divergence, not active at these δ), and ``k = 1`` never beats the exact profile."""
    mech, k = dpbook.Gaussian(4.0), 10
    orders = np.r_[1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    rdp = k * np.asarray(renyi_profile(mech, 1.0, orders))
    for eps in (1.0, 2.0, 3.0, 4.0):
        want, _ = rdp_module.compute_delta(orders, rdp, eps)
        ours = composed_profile(mech, 1.0, eps, k, orders=orders)
        assert ours == pytest.approx(want, rel=1e-10)
    eps = np.linspace(0.0, 2.0, 9)
    for mech in (dpbook.Laplace(1.0), dpbook.BIT(1.0, lower=0.0, upper=3.0)):
        exact = np.asarray(dpbook.privacy_profile(mech, 1.0, eps))
        bound = np.asarray(composed_profile(mech, 1.0, eps, 1))
        assert (bound >= exact).all()
        assert (bound[eps < 1] > exact[eps < 1]).any()  # the conversion loses a little


def test_truncation_claim_one_case_each():
    """The claim below, one case each (the full check is slow): the truncated Laplace on [0, 5] exceeds the
    Laplace's Rényi DP (certified lower bound above it); the truncated Gaussian on [0, 1.5] stays below."""
    alpha = np.array([8.0, 64.0])
    _, lower = _renyi_profile_bounds(
        dpbook.Truncated(1.0, lower=0.0, upper=5.0), 1.0, alpha
    )
    assert (lower > pair_renyi(dpbook.Laplace(1.0), 0.0, 1.0, alpha)).all()
    mech = dpbook.GaussianTruncated(1.0, lower=0.0, upper=1.5)
    upper, _ = _renyi_profile_bounds(mech, 1.0, alpha)
    assert (upper <= alpha / 2).all()


@pytest.mark.slow  # 7 s
def test_truncation_keeps_renyi_dp_claim():
    """The claim (the abstract at https://www.zhuanzhiai.com/paper/c4813cb8e07f18fa5024fe701d5912e0; title
    and authors not in the stored text): "For a given truncation interval [a, b], the truncated Gaussian
    mechanism ensures the same Renyi Differential Privacy (RDP) as the untruncated mechanism, regardless of
    the values chosen for the truncation interval [a, b]. Similarly, the truncated Laplace mechanism, for
    specified interval [a, b], maintains the same RDP as the untruncated mechanism."  Checked with the
    truncated-and-normalized laws (``Truncated``, ``GaussianTruncated``; true values in the range), ``Δ = 1``,
    scale 1, against ``renyi_profile``'s certified bounds: the claim *fails* at an order where the lower
    bound exceeds the untruncated mechanism's ε(α), and *holds* where the upper bound does not.

    * Laplace: fails at every order 1.5 ... 64 on [0, 5] and on [0, inf); on [0, 1.5] it holds for α <= 4
      and fails for α >= 8; on [0, 1] (the range no longer than Δ) it holds.
    * Gaussian: holds on [0, 5], [0, 1.5] and (scale 0.3) [0, 1] — the truncation lowers the RDP; on
      [0, inf) the far pairs attain the untruncated ``α/2`` and the certified bound is within 3% of it.
    """
    alpha = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 64.0])
    laplace = pair_renyi(dpbook.Laplace(1.0), 0.0, 1.0, alpha)
    cases = [  # (family, orders where it fails (lower > untruncated), where it holds (upper <= it))
        (dpbook.Truncated(1.0, lower=0.0, upper=5.0), alpha, []),
        (dpbook.Truncated(1.0, lower=0.0), alpha, []),
        (dpbook.Truncated(1.0, lower=0.0, upper=1.5), alpha[3:], alpha[:3]),
        (dpbook.Truncated(1.0, lower=0.0, upper=1.0), [], alpha),
    ]
    for mech, fails, holds in cases:
        upper, lower = _renyi_profile_bounds(mech, 1.0, alpha)
        for a, up, low, ref in zip(alpha, upper, lower, laplace):
            if a in fails:
                assert low > ref, (mech, a, low, ref)
            if a in holds:
                assert up <= ref, (mech, a, up, ref)
    for mech in (
        dpbook.GaussianTruncated(1.0, lower=0.0, upper=5.0),
        dpbook.GaussianTruncated(1.0, lower=0.0, upper=1.5),
        dpbook.GaussianTruncated(0.3, lower=0.0, upper=1.0),
    ):
        upper, _ = _renyi_profile_bounds(mech, 1.0, alpha)
        assert (upper <= alpha / (2 * mech.scale**2)).all(), mech
    upper, lower = _renyi_profile_bounds(
        dpbook.GaussianTruncated(1.0, lower=0.0), 1.0, alpha
    )
    np.testing.assert_allclose(lower, alpha / 2, rtol=1e-9)
    assert (upper <= 1.03 * alpha / 2).all()
