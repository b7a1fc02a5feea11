"""The Gaussian mechanism's exact δ(ε) and analytic calibration (dpbook/design/gaussian.py): against the
hockey-stick integral by quadrature, the classical scale, and bad input; Chen & Hale's bounded Gaussian σ
against its condition by brute force and against the exact audit."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from dpbook import (
    GaussianTruncated,
    analytic_gaussian_scale,
    bounded_gaussian_scale,
    gaussian_delta,
    privacy_loss,
    privacy_profile,
)


def hockey_stick(sigma, eps, sensitivity=1.0):
    """``∫ (p1 - e^ε p2)_+`` for ``p1 = N(0, σ²)``, ``p2 = N(Δ, σ²)`` by quadrature, in the standardized output
    ``z`` where ``p1 > e^ε p2`` (``z < μ/2 - ε/μ``), with the integrand ``φ(z)(1 - e^{ε - L(z)})`` (``L`` the
    log-ratio, ``μ²/2 - μz``) written without cancellation."""
    mu = sensitivity / sigma
    top = mu / 2 - eps / mu

    def f(z):
        return (
            math.exp(-z * z / 2)
            / math.sqrt(2 * math.pi)
            * -math.expm1(eps - (mu * mu / 2 - mu * z))
        )

    lo = min(top - 40.0, -40.0)
    cuts = [lo] + [c for c in (top - 10, top - 1, top - 0.1) if lo < c < top] + [top]
    return sum(
        integrate.quad(f, a, b, epsabs=0, epsrel=1e-13, limit=400)[0]
        for a, b in zip(cuts, cuts[1:])
    )


def test_delta_against_the_hockey_stick_integral():
    rng = np.random.default_rng(8)
    for _ in range(200):
        sigma = 10 ** rng.uniform(-2, 2)
        eps = 0.0 if rng.random() < 0.05 else 10 ** rng.uniform(-3, 1.5)
        ref = hockey_stick(sigma, eps)
        if ref > 1e-290:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                got = gaussian_delta(sigma, eps)
            assert math.isclose(got, ref, rel_tol=1e-11), (sigma, eps, got, ref)


def test_delta_is_vectorized_monotone_and_has_its_limits():
    eps = np.r_[0.0, np.geomspace(1e-6, 1e3, 200), np.inf]
    d = gaussian_delta(0.7, eps, sensitivity=1.3)
    assert d.shape == eps.shape and np.all(np.diff(d) <= 0) and d[-1] == 0.0
    assert math.isclose(
        d[0], 2 * stats.norm.cdf(1.3 / 1.4) - 1, rel_tol=1e-14
    )  # ε = 0: total variation
    # only μ = Δ/σ matters
    assert math.isclose(
        gaussian_delta(2.0, 0.5, sensitivity=2.0),
        gaussian_delta(1.0, 0.5),
        rel_tol=1e-15,
    )
    # the extremes of the doubles: no warning, no NaN
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gaussian_delta(1e-300, 1.0) == 1.0  # μ = 1e300: the laws do not overlap
        assert gaussian_delta(1e300, 1.0) == 0.0
        assert math.isclose(
            gaussian_delta(1e300, 0.0), 1e-300 / math.sqrt(2 * math.pi), rel_tol=1e-12
        )
        assert gaussian_delta(1.0, 1e300) == 0.0


def test_tiny_delta_keeps_its_digits():
    """At ε = 30, σ = 1 the plain difference Φ(a) - e^ε Φ(b) keeps about 11 digits; the log-space form all."""
    ref = hockey_stick(1.0, 30.0)
    assert math.isclose(gaussian_delta(1.0, 30.0), ref, rel_tol=1e-12)
    plain = stats.norm.cdf(0.5 - 30) - math.exp(30) * stats.norm.cdf(-0.5 - 30)
    assert not math.isclose(plain, ref, rel_tol=1e-13)


@pytest.mark.parametrize(
    "eps, delta",
    [(1.0, 1e-5), (0.1, 1e-6), (0.5, 1e-10), (5.0, 1e-200), (0.0, 0.1), (3.0, 0.3)],
)
def test_analytic_scale_is_the_smallest_double_that_reaches_delta(eps, delta):
    sigma = analytic_gaussian_scale(eps, delta, sensitivity=2.0)
    assert gaussian_delta(sigma, eps, sensitivity=2.0) <= delta  # never errs low
    below = np.nextafter(sigma, 0.0)
    assert gaussian_delta(below, eps, sensitivity=2.0) > delta * (
        1 - 2.0**-39
    )  # and no larger than needed
    assert math.isclose(hockey_stick(sigma, eps, 2.0), delta, rel_tol=1e-10)


def test_analytic_scale_is_below_the_classical_one():
    """Dwork–Roth's σ = Δ√(2 log(1.25/δ))/ε (ε < 1) is (ε, δ)-DP but larger than needed."""
    for eps in (0.01, 0.5, 0.99):
        for delta in (1e-12, 1e-3):
            classical = math.sqrt(2 * math.log(1.25 / delta)) / eps
            assert gaussian_delta(classical, eps) <= delta
            assert analytic_gaussian_scale(eps, delta) < classical


def test_bad_input_names_the_parameter():
    for call, name in (
        (lambda: gaussian_delta(0.0, 1.0), "scale"),
        (lambda: gaussian_delta(1.0, -1.0), "epsilon"),
        (lambda: gaussian_delta(1.0, "1"), "epsilon"),
        (lambda: gaussian_delta(1.0, 1.0, sensitivity=np.nan), "sensitivity"),
        (lambda: analytic_gaussian_scale(-1.0, 1e-5), "epsilon"),
        (lambda: analytic_gaussian_scale(1.0, 1.0), "delta"),
        (lambda: analytic_gaussian_scale(1.0, 0.0), "delta"),
        (lambda: analytic_gaussian_scale(1.0, 1e-5, sensitivity=0), "sensitivity"),
    ):
        with pytest.raises(ValueError, match=name):
            call()


# --- Chen & Hale's bounded Gaussian calibration ----------------------------------------------------


def log_c_ratio_brute(sigma, sensitivity, lower, upper, n=401):
    """``sup log C(c')/C(c)`` over a grid of pairs ``|c - c'| <= Δ`` in ``[l, u]``, with scipy's normal cdf
    (``C(c) = Φ((u - c)/σ) - Φ((l - c)/σ)``): a brute-force check of the closed form."""
    c = np.linspace(lower, upper, n)
    log_c = np.log(
        stats.norm.cdf((upper - c) / sigma) - stats.norm.cdf((lower - c) / sigma)
    )
    near = np.abs(c[:, None] - c[None, :]) <= sensitivity * (1 + 1e-12)
    return float(np.max(np.where(near, log_c[None, :] - log_c[:, None], -np.inf)))


def chen_hale_bound(sigma, sensitivity, lower, upper, n=401):
    """The left side of their condition, ``(u - l + Δ/2)Δ/σ² + log ΔC(σ)``, by brute force."""
    return (upper - lower + sensitivity / 2) * sensitivity / sigma**2 + (
        log_c_ratio_brute(sigma, sensitivity, lower, upper, n)
    )


@pytest.mark.parametrize(
    "eps,delta,sensitivity,lower,upper",
    [
        (1.0, 1e-5, 1.0, 0.0, 1.0),
        (1.0, 0.0, 0.1, 0.0, 1.0),
        (0.5, 1e-6, 1.0, 0.0, 10.0),
        (2.0, 1e-3, 1.0, -2.0, 3.0),
        (0.1, 1e-5, 3.0, 0.0, 1.0),  # Δ beyond the range: ΔC at the midpoint
    ],
)
def test_bounded_gaussian_scale_is_the_smallest_sigma_of_the_condition(
    eps, delta, sensitivity, lower, upper
):
    sigma = bounded_gaussian_scale(eps, delta, sensitivity, lower, upper)
    # the grid holds the closed form's pair (l, l + min(Δ, (u - l)/2)): the brute force reaches it
    assert chen_hale_bound(sigma, sensitivity, lower, upper) <= eps * (1 + 1e-9)
    assert chen_hale_bound(sigma * (1 - 1e-7), sensitivity, lower, upper) > eps
    # the condition is free of δ
    assert bounded_gaussian_scale(eps, 0.5, sensitivity, lower, upper) == sigma


def test_bounded_gaussian_condition_falls_as_sigma_grows():
    """The bisection over σ needs the left side to fall with σ: both of its terms do."""
    for sensitivity, lower, upper in (
        (1.0, 0.0, 1.0),
        (0.1, 0.0, 1.0),
        (2.0, 0.0, 5.0),
    ):
        sigmas = np.geomspace(1e-2, 1e2, 60)
        left = [chen_hale_bound(s, sensitivity, lower, upper, 101) for s in sigmas]
        assert np.all(np.diff(left) < 0)


@pytest.mark.parametrize(
    "eps,sensitivity,upper",
    [
        (1.0, 1.0, 1.0),
        pytest.param(0.5, 1.0, 1.0, marks=pytest.mark.slow),
        pytest.param(1.0, 0.1, 1.0, marks=pytest.mark.slow),
        pytest.param(2.0, 1.0, 5.0, marks=pytest.mark.slow),
    ],
)
def test_chen_hale_sigma_is_pure_dp_by_the_exact_audit(eps, sensitivity, upper):
    """Their claim, checked exactly: the law :class:`GaussianTruncated` at their σ has a pure loss at most ε
    (so its profile is 0 at ε, below every δ), and with room: the exact loss is 0.3 to 0.6 of ε."""
    sigma = bounded_gaussian_scale(eps, 1e-5, sensitivity, 0.0, upper)
    mech = GaussianTruncated(sigma, lower=0.0, upper=upper)
    loss = privacy_loss(mech, sensitivity)
    assert loss <= eps
    assert 0.2 * eps < loss < 0.7 * eps  # how loose their two bounds are
    assert privacy_profile(mech, sensitivity, eps) == 0.0


def test_the_log_delta_branch_of_the_reference_code_is_not_eps_delta_dp():
    """The first author's code has a branch for δ > 0 that subtracts ``log δ`` from the denominator; at the σ it
    gives, the exact δ(ε) is far above δ (a finding; dpbook does not offer that branch)."""
    eps, delta, lower, upper = 1.0, 1e-5, 0.0, 1.0

    def excess(s):
        return s * s * (
            eps - log_c_ratio_brute(s, 1.0, lower, upper) - math.log(delta)
        ) - (upper - lower + 0.5)

    sigma = optimize.brentq(excess, 1e-2, 10.0, xtol=1e-12)
    got = privacy_profile(GaussianTruncated(sigma, lower=lower, upper=upper), 1.0, eps)
    assert got > 0.5 > delta


def test_bounded_gaussian_scale_bad_input_names_the_parameter():
    for call, name in (
        (lambda: bounded_gaussian_scale(0.0, 1e-5, 1.0, 0.0, 1.0), "epsilon"),
        (lambda: bounded_gaussian_scale(1.0, -1e-5, 1.0, 0.0, 1.0), "delta"),
        (lambda: bounded_gaussian_scale(1.0, 1.0, 1.0, 0.0, 1.0), "delta"),
        (lambda: bounded_gaussian_scale(1.0, 1e-5, 0.0, 0.0, 1.0), "sensitivity"),
        (lambda: bounded_gaussian_scale(1.0, 1e-5, 1.0, 1.0, 0.0), "lower"),
        (lambda: bounded_gaussian_scale(1.0, 1e-5, 1.0, 0.0, math.inf), "finite range"),
        (lambda: bounded_gaussian_scale(1.0, 1e-5, 1.0, -1e308, 1e308), "overflows"),
    ):
        with pytest.raises(ValueError, match=name):
            call()
