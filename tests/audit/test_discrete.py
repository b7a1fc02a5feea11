"""The exact auditor on the discrete families (``dpbook.audit._discrete``) and the exact ε of conditioning.

Three independent routes to the same number: the auditor's exhaustive enumeration (every pair of a
finite domain, every output of a finite support, log-ratios from the family's accurate ``log_ratio``),
a brute-force maximum of ``logpmf(k, q1) - logpmf(k, q2)`` written here, and the closed form
:func:`dpbook.discrete_truncated_epsilon`.  On infinite domains the auditor uses the families' worst-pair
theorems; they must agree with the enumeration on finite domains that hold the worst pair.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpbook
from dpbook import (
    DiscreteBIT,
    DiscreteDescription,
    DiscreteLaplace,
    DiscreteTruncated,
    discrete_truncated_epsilon,
    discrete_truncated_scale,
)

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)


def brute_loss(mech, delta, domain, outputs):
    """``max log P(M(q1) = k)/P(M(q2) = k)`` over integer pairs of ``domain`` at most ``delta`` apart and
    ``outputs``."""
    q = np.arange(domain[0], domain[1] + 1.0)
    q1, q2 = np.meshgrid(q, q, indexing="ij")
    near = (np.abs(q1 - q2) <= delta) & (q1 != q2)
    q1, q2 = q1[near], q2[near]
    k = np.asarray(outputs, dtype=float)
    lp1 = np.asarray(mech.logpmf(k[None, :], q1[:, None]))
    lp2 = np.asarray(mech.logpmf(k[None, :], q2[:, None]))
    return float(np.max(lp1 - lp2))


# --- clamping is exactly ε-DP ------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [1e-6, 0.1, 0.7, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("delta", [1, 3, 50])
def test_discrete_laplace_and_clamping_are_exactly_epsilon_dp(eps, delta):
    """At scale Δ/ε the auditor returns ε to the last bits (one rounding of ``Δ · (1/b)``)."""
    b = delta / eps
    for mech in (
        DiscreteLaplace(b),
        DiscreteBIT(b, lower=0),
        DiscreteBIT(b, lower=0, upper=100),
        DiscreteBIT(b, lower=-7, upper=7),
    ):
        r = dpbook.privacy_report(mech, delta)
        gap = min(delta, mech.upper - mech.lower)  # the default domain is the range
        want = eps * gap / delta
        assert abs(r.epsilon - want) <= 2 * np.spacing(want), (mech, r, want)
        assert r.exact and r.kind == "atom" and abs(r.q1 - r.q2) == gap
    # a range shorter than Δ: every pair is neighbours, the loss is the range's width over b
    assert dpbook.privacy_loss(DiscreteBIT(2.0, lower=0, upper=3), 10) == 1.5


def test_clamping_loss_is_the_gap_for_every_pair():
    """The theorem behind the worst pairs: exhaustive over a domain that reaches beyond both bounds."""
    mech = DiscreteBIT(1.7, lower=0, upper=6)
    r = dpbook.privacy_report(mech, 2, domain=(-5, 12))
    assert r.epsilon == pytest.approx(2 / 1.7, rel=1e-15)
    assert brute_loss(mech, 2, (-5, 12), np.arange(0, 7)) == pytest.approx(
        2 / 1.7, rel=1e-13
    )


# --- conditioning: the exact ε, in closed form -------------------------------------------------------------


@SETTINGS
@given(
    b=st.floats(-1, 1.5).map(lambda e: float(10**e)),
    n=st.one_of(st.integers(1, 40), st.just(math.inf)),
    delta=st.integers(1, 6),
)
def test_truncated_epsilon_is_the_exhaustive_audit(b, n, delta):
    mech = DiscreteTruncated(b, lower=0, upper=n)
    closed = discrete_truncated_epsilon(b, lower=0, upper=n, sensitivity=delta)
    top = n if math.isfinite(n) else 60
    exhaustive = dpbook.privacy_report(mech, delta, domain=(0, top))
    assert exhaustive.epsilon == pytest.approx(closed, rel=1e-13, abs=1e-15)
    if math.isfinite(
        n
    ):  # the brute force over every output, independently of the family's log_ratio
        assert brute_loss(mech, delta, (0, n), np.arange(0, n + 1)) == pytest.approx(
            closed, rel=1e-12
        )
        mirror = dpbook.privacy_report(mech, delta)
        assert mirror.epsilon == pytest.approx(closed, rel=1e-13)
    # the default domain (the whole range, infinite when n is): the theorem's corner pair, exactly
    r = dpbook.privacy_report(mech, delta)
    assert r.epsilon == pytest.approx(closed, rel=1e-13) and r.exact
    assert {r.q1, r.q2} in (
        {0.0, float(min(delta, n))},
        {float(n), float(n - min(delta, n))},
    )


def test_truncated_epsilon_values():
    """At b = Δ/ε on {0, 1, ...}: ε + log(1 + e^{-ε/Δ}(1 - e^{-ε})), below the continuous ε + log(2 - e^{-ε})."""
    for eps in (0.1, 0.5, 1.0, 2.0):
        for delta in (1, 2, 10, 1000):
            got = dpbook.privacy_loss(DiscreteTruncated(delta / eps, lower=0), delta)
            want = eps + math.log1p(math.exp(-eps / delta) * -math.expm1(-eps))
            assert got == pytest.approx(want, rel=1e-14)
            continuous = dpbook.privacy_loss(
                dpbook.Truncated(delta / eps, lower=0.0), delta
            )
            assert continuous == pytest.approx(
                eps + math.log(2 - math.exp(-eps)), rel=1e-12
            )
            assert eps < got < continuous
        # as Δ grows the integers get finer than the noise: the continuous value is the limit
        assert discrete_truncated_epsilon(1e9 / eps, sensitivity=1e9) == pytest.approx(
            eps + math.log(2 - math.exp(-eps)), rel=1e-8
        )
    # a range no wider than Δ: exactly n/b; and ε grows with n up to the one-sided value
    assert discrete_truncated_epsilon(2.0, lower=0, upper=3, sensitivity=3) == 1.5
    values = [discrete_truncated_epsilon(1.0, lower=0, upper=n) for n in range(1, 60)]
    assert np.all(np.diff(values[:20]) > 0) and np.all(
        np.diff(values) >= 0
    )  # (equal once α^n is below 1 ulp)
    assert values[10] < values[-1] == discrete_truncated_epsilon(1.0)
    assert (
        discrete_truncated_epsilon(1.0, lower=-np.inf, upper=np.inf, sensitivity=2)
        == 2.0
    )


def test_truncated_epsilon_at_extreme_scales():
    for b in (1e-300, 1e-3, 1e6, 1e12):
        for n in (1, 5, np.inf):
            e = discrete_truncated_epsilon(b, lower=0, upper=n)
            assert np.isfinite(e) and e >= min(1, n) / b * (1 - 1e-15)
    assert discrete_truncated_epsilon(1e-3, lower=0) == 1000.0  # α = 0: nothing added
    b = 1e12  # ε + log(1 + α(1 - α)) with α → 1: 2/b to first order
    assert discrete_truncated_epsilon(b) == pytest.approx(2 / b, rel=1e-11)


def test_smallest_scale():
    for eps in (0.05, 0.5, 1.0, 4.0):
        b = discrete_truncated_scale(eps)
        assert b == pytest.approx(
            1 / math.asinh(math.expm1(eps) / 2), rel=1e-14
        )  # Δ = 1, one-sided
        for kw in (
            {},
            {"upper": 10},
            {"sensitivity": 3},
            {"upper": 5, "sensitivity": 2},
            {"lower": -np.inf, "upper": 0},
        ):
            b = discrete_truncated_scale(eps, **kw)
            assert (
                discrete_truncated_epsilon(b, **kw)
                <= eps
                < discrete_truncated_epsilon(np.nextafter(b, 0), **kw)
            )
            assert dpbook.privacy_loss(
                DiscreteTruncated(
                    b, lower=kw.get("lower", 0), upper=kw.get("upper", np.inf)
                ),
                kw.get("sensitivity", 1),
            ) <= eps * (1 + 1e-15)
    assert (
        discrete_truncated_scale(1.0, upper=2, sensitivity=3) == 2.0
    )  # n <= Δ: n/ε exactly


def test_truncated_epsilon_decreases_in_the_scale():
    """The bisection's premise, checked on a dense grid (proved for one-sided ranges)."""
    scales = np.geomspace(0.05, 200, 400)
    for n in (1, 2, 3, 7, 30, np.inf):
        for delta in (1, 2, 5):
            e = [
                discrete_truncated_epsilon(b, lower=0, upper=n, sensitivity=delta)
                for b in scales
            ]
            assert np.all(np.diff(e) < 0), (n, delta)


# --- the auditor's machinery ------------------------------------------------------------------------------


def test_a_wrong_theorem_is_caught():
    """A description whose worst pair is wrong (the middle of the range) disagrees with the enumeration."""
    mech = DiscreteTruncated(1.0, lower=0, upper=30)
    right = mech.privacy_description()
    wrong = DiscreteDescription(
        right.log_ratio,
        right.logpmf,
        right.support,
        right.outputs,
        worst_pairs=lambda lo, hi, d: [(15.0, 15.0 + d)],
    )
    from dpbook.audit._discrete import discrete_report

    honest = discrete_report(right, 1, (0, 30))["epsilon"]
    lied = discrete_report(wrong, 1, (0, math.inf))[
        "epsilon"
    ]  # an infinite domain: the theorem is used
    assert honest == pytest.approx(discrete_truncated_epsilon(1.0, upper=30), rel=1e-14)
    assert lied < honest - 1e-3


def test_window_and_refusals():
    mech = DiscreteTruncated(1.0, lower=0)
    # outputs away from 0 only: the ratio there is ε minus... the output 0 is the worst one
    r = dpbook.privacy_report(mech, 1, window=(5, 50))
    assert r.epsilon < discrete_truncated_epsilon(1.0) and r.output >= 5
    assert dpbook.privacy_report(mech, 1, window=(-9, -1)).epsilon == 0.0
    with pytest.raises(ValueError, match="sensitivity"):
        dpbook.privacy_loss(mech, 1.5)
    with pytest.raises(ValueError, match="sensitivity"):
        dpbook.privacy_loss(mech, 0)
    with pytest.raises(ValueError, match="neighbours"):
        dpbook.privacy_loss(mech, 1, neighbours="log")
    no_theorem = DiscreteDescription(
        mech._log_ratio, mech.logpmf, (0, math.inf), mech.privacy_description().outputs
    )
    from dpbook.audit._discrete import discrete_report

    with pytest.raises(ValueError, match="limit"):
        discrete_report(no_theorem, 1, (0, 10**9))
    with pytest.raises(ValueError, match="straddles"):
        dpbook.privacy_loss(
            DiscreteBIT(1.0, lower=0, upper=1), 10**8, domain=(-3 * 10**7, 3 * 10**7)
        )


def test_log_ratio_is_the_logpmf_difference():
    """The accurate log-ratios (no cancellation) against the plain difference where that is accurate."""
    for mech in (
        DiscreteBIT(2.0, lower=0, upper=9),
        DiscreteTruncated(2.0, lower=0, upper=9),
        DiscreteTruncated(0.3),
        DiscreteLaplace(5.0),
        DiscreteTruncated(50.0, lower=-4, upper=4),
    ):
        k = np.arange(-3.0, 13.0)[:, None]
        k = k[(k >= mech.lower) & (k <= mech.upper)][:, None]
        q1 = np.array([-2.0, 0.0, 3.0, 9.0, 12.0])[None, :]
        for d in (1, 2, 5):
            plain = np.asarray(mech.logpmf(k, q1)) - np.asarray(mech.logpmf(k, q1 + d))
            fine = mech._log_ratio(k, q1, q1 + d)
            assert np.allclose(fine, plain, rtol=1e-12, atol=1e-13)
    # close laws (huge scale): the plain difference keeps few digits, the log-ratio all of them
    b = 1e9
    t = DiscreteTruncated(b, lower=0, upper=10)
    want = 1 / b + math.log1p(
        math.exp(-1 / b)
        * -math.expm1(-1 / b)
        * -math.expm1(-9 / b)
        / -math.expm1(-11 / b)
    )
    assert t._log_ratio(0.0, 0.0, 1.0) == pytest.approx(want, rel=1e-13)
    assert dpbook.privacy_loss(t, 1) == pytest.approx(
        discrete_truncated_epsilon(b, upper=10), rel=1e-13
    )


# --- describe and pair_loss on the discrete families -------------------------------------------------


def brute_pair(mech, q1, q2, outputs):
    k = np.asarray(outputs, dtype=float)
    return float(
        np.max(np.asarray(mech.logpmf(k, q1)) - np.asarray(mech.logpmf(k, q2)))
    )


@pytest.mark.parametrize(
    "mech",
    [
        DiscreteLaplace(1.3),
        DiscreteBIT(0.8, lower=0, upper=9),
        DiscreteTruncated(2.0, lower=-2, upper=7),
        DiscreteTruncated(0.6, lower=0),
    ],
)
def test_pair_loss_is_the_largest_log_ratio_over_outputs(mech):
    """Every pair of a grid against a brute-force maximum of ``logpmf`` differences over every output (the
    supports are cut at 80 scales on an infinite side, beyond which the log-ratio is constant)."""
    assert isinstance(dpbook.describe(mech), DiscreteDescription)
    lo, hi = mech.support
    k = np.arange(max(lo, -120), min(hi, 130) + 1.0)
    q = np.arange(-4.0, 12.0)
    q1, q2 = np.meshgrid(q, q, indexing="ij")
    got = dpbook.pair_loss(mech, q1, q2)
    assert got.shape == q1.shape
    want = np.array([[brute_pair(mech, a, b, k) for b in q] for a in q])
    assert np.allclose(got, want, rtol=1e-12, atol=1e-13)
    assert dpbook.pair_loss(mech, 3, 3) == 0.0 and isinstance(
        dpbook.pair_loss(mech, 3, 4), float
    )
    # the audit is the largest pair loss over neighbours
    d = 2
    near = (
        (np.abs(q1 - q2) <= d)
        & (q1 >= lo)
        & (q2 >= lo)
        & (q1 <= min(hi, 11))
        & (q2 <= min(hi, 11))
    )
    dom = (max(lo, -4.0), min(hi, 11.0))
    assert dpbook.privacy_loss(mech, d, domain=dom) == pytest.approx(
        got[near].max(), rel=1e-13
    )


def test_pair_loss_closed_forms_and_window():
    assert dpbook.pair_loss(
        DiscreteLaplace(4.0), [0, 0, 7], [1, 5, -1]
    ) == pytest.approx([0.25, 1.25, 2.0], rel=1e-15)
    t = DiscreteTruncated(1.0, lower=0)
    assert dpbook.pair_loss(t, 0, 1) == pytest.approx(
        discrete_truncated_epsilon(1.0), rel=1e-14
    )
    # a window away from the worst output 0: the best output left is 5, where the log-ratio is below
    inside = dpbook.pair_loss(t, 0, 1, window=(5, 9))
    assert (
        inside == pytest.approx(brute_pair(t, 0, 1, np.arange(5, 10)), rel=1e-13)
        and inside < 0
    )
    assert dpbook.pair_loss(t, 0, 1, window=(-9, -1)) == 0.0


def test_pair_loss_refusals():
    mech = DiscreteBIT(1.0, lower=0, upper=5)
    with pytest.raises(ValueError, match="q1 must be integers"):
        dpbook.pair_loss(mech, 0.5, 1)
    with pytest.raises(ValueError, match="q2"):
        dpbook.pair_loss(mech, 0, math.nan)


def test_pair_loss_goes_through_the_shared_integer_check(monkeypatch):
    from spies import spy_on_integer_array

    seen = spy_on_integer_array(monkeypatch)
    mech = DiscreteBIT(1.0, lower=0, upper=5)
    assert dpbook.pair_loss(mech, 0, 1) > 0 and {"q1", "q2"} <= set(seen)
    message = (
        r"^q2 must be integers for the integer-valued DiscreteBIT, got 1\.0000000001$"
    )
    with pytest.raises(ValueError, match=message):
        dpbook.pair_loss(mech, 0, 1.0000000001)
