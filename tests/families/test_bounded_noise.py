"""Geng et al.'s truncated Laplacian mechanism (dpbook.TruncatedLaplaceNoise): its own formulas and its privacy.

The law's closed forms (cdf, quantiles, E|Z|, E Z²) against quadrature of its own density over random parameters,
the bound-to-scale ratio ``A/λ`` from ``1e-300`` (the uniform law) to ``inf`` (the Laplace law); the sampler against
the exact cdf and against diffprivlib's ``LaplaceBoundedNoise`` (whose ``variance`` is not implemented);
:func:`dpbook.pair_profile` against quadrature of ``(p1 - e^ε p2)_+`` split at every kink and support end, and
:func:`dpbook.privacy_profile` against the largest pair profile over a grid of pairs (brute force).
"""

import math
import warnings

import diffprivlib.mechanisms  # a pinned requirement (requirements.txt)
import numpy as np
import pytest
from goodness import chi2_pvalue
from scipy import integrate, stats

import dpbook
from dpbook import TruncatedLaplaceNoise
from dpbook.audit._profile import _pair_profile_bounds


def silent(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


def _quad(f, cuts):
    """``∫ f`` by quad over the consecutive cuts, each piece's error estimate checked instead of quad's warning
    (which a piece of cancelling terms, near ε's root, may raise at an error far below the tolerance)."""
    total = 0.0
    for x, y in zip(cuts, cuts[1:]):
        if x < y:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", integrate.IntegrationWarning)
                val, err = integrate.quad(f, x, y, epsabs=0, epsrel=1e-13, limit=400)
            assert err <= 1e-11 * abs(val) + 1e-16, (x, y, val, err)
            total += val
    return total


def _params(rng, n):
    """Random ``(λ, A)`` with ``λ`` over six decades and ``A/λ`` over eight."""
    out = []
    for _ in range(n):
        lam = 10 ** rng.uniform(-3, 3)
        out.append((lam, lam * 10 ** rng.uniform(-4, 4)))
    return out


# --- the law -----------------------------------------------------------------------------------------


def test_moments_and_cdf_match_quadrature():
    rng = np.random.default_rng(20261127)
    for lam, a in _params(rng, 40):
        m = TruncatedLaplaceNoise(lam, a)
        q = float(rng.normal(0, 10 * lam))

        def dens(x):
            return math.exp(float(m.logpdf(x, q)))

        cuts = [q - a, q, q + a]
        # the density is 0 outside [q - A, q + A] and integrates to 1 on it
        assert (
            m.logpdf(q + 1.5 * a, q) == -np.inf and m.logpdf(q - 1.5 * a, q) == -np.inf
        )
        assert math.isclose(_quad(dens, cuts), 1.0, rel_tol=1e-11)
        var = _quad(lambda x: (x - q) ** 2 * dens(x), cuts)
        amp = _quad(lambda x: abs(x - q) * dens(x), cuts)
        assert math.isclose(m.variance(q), var, rel_tol=1e-10), (
            lam,
            a,
            m.variance(q),
            var,
        )
        assert math.isclose(m.mse(q), var, rel_tol=1e-10)
        assert math.isclose(m.mean_absolute_noise(), amp, rel_tol=1e-10), (lam, a)
        assert m.bias(q) == 0.0 and m.mean(q) == q
        for x in q + a * rng.uniform(-1, 1, 4):
            ref = _quad(dens, [q - a] + [c for c in (q,) if c < x] + [x])
            # (the support's ends q ± A are rounded: the density times a few ulps of q)
            ulps = 4 * dens(x) * np.spacing(abs(q) + a)
            assert abs(m.cdf(x, q) - ref) <= 1e-10 * ref + ulps, (lam, a, x)
            assert abs(m.sf(x, q) - (1 - ref)) <= 1e-9 * (1 - ref) + ulps + 4e-15
        assert (
            m.cdf(q - a * (1 + 1e-9), q) == 0.0 and m.sf(q + a * (1 + 1e-9), q) == 0.0
        )


def test_quantiles_invert_the_cdf_and_are_symmetric():
    rng = np.random.default_rng(7)
    p = np.array([0.0, 1e-300, 1e-12, 1e-4, 0.1, 0.5, 0.9, 1 - 1e-9, 1.0])
    for lam, a in _params(rng, 25):
        m = TruncatedLaplaceNoise(lam, a)
        x = m.ppf(p, 0.0)
        assert x[0] == -a and x[-1] == a and np.all(np.diff(x) >= 0)
        inner = (p > 0) & (p < 1)
        back = m.cdf(x[inner], 0.0)
        # the cdf at a quantile: p, up to the rounding of x (its density times half an ulp of x)
        slack = np.exp(m.logpdf(x[inner], 0.0)) * np.spacing(np.abs(x[inner]) + a)
        assert np.all(np.abs(back - p[inner]) <= 1e-12 * p[inner] + 4 * slack), (lam, a)
        # Z is symmetric: isf(p) = -ppf(p) (accurate for small p on both sides)
        small = np.array([1e-300, 1e-12, 1e-4, 0.3])
        assert np.allclose(m.isf(small, 0.0), -m.ppf(small, 0.0), rtol=1e-14, atol=0)


@pytest.mark.parametrize("lam", [1e-300, 1.0, 1e300])
def test_limits_of_the_bound_to_scale_ratio(lam):
    """``A/λ`` tiny: the uniform law on ``[-A, A]`` (``E Z² = A²/3``, ``E|Z| = A/2``); ``A/λ`` huge (to ``inf``): the
    Laplace law (``2λ²``, ``λ``); no warning at any of them."""
    for a in (lam * 1e-300, lam * 1e-200, 1e-300, 1e300):
        if not (1e-300 <= a <= 1e300):
            continue
        m = silent(TruncatedLaplaceNoise, lam, a)
        r = a / lam
        var, amp = silent(m.variance, 0.0), silent(m.mean_absolute_noise)
        x = silent(m.ppf, np.array([1e-9, 0.25, 0.5, 0.75]), 0.0)
        assert not (np.isnan(var) or np.isnan(amp) or np.isnan(x).any())
        if r < 1e-100:
            assert math.isclose(var, a * a / 3, rel_tol=1e-14)
            assert math.isclose(amp, a / 2, rel_tol=1e-14)
            assert np.allclose(
                x, a * (2 * np.array([1e-9, 0.25, 0.5, 0.75]) - 1), rtol=1e-12, atol=0
            )
        elif r > 1e100:
            with np.errstate(over="ignore"):
                assert var == np.float64(lam) ** 2 * 2 or math.isclose(
                    var, 2 * lam * lam, rel_tol=1e-14
                )
            assert math.isclose(amp, lam, rel_tol=1e-14)
            ref = stats.laplace.ppf([1e-9, 0.25, 0.5, 0.75], scale=lam)
            assert np.allclose(x, ref, rtol=1e-12, atol=0)


def test_sampler_matches_the_cdf_and_diffprivlib():
    """χ² of 10^6 draws against the exact cdf; diffprivlib's ``LaplaceBoundedNoise`` (the same calibration) has the
    same scale and bound as :func:`dpbook.geng_truncated_laplace`, and its draws (rejection of Laplace draws) pass
    the same test against dpbook's law."""
    m = dpbook.geng_truncated_laplace(0.5, 1e-3, 1.0)
    peer = diffprivlib.mechanisms.LaplaceBoundedNoise(
        epsilon=0.5, delta=1e-3, sensitivity=1.0, random_state=3
    )
    draws_peer = np.array([peer.randomise(0.0) for _ in range(20_000)])
    assert math.isclose(peer._scale, m.scale, rel_tol=1e-15)
    assert math.isclose(peer._noise_bound, m.bound, rel_tol=1e-14)
    assert chi2_pvalue(m, 0.0, draws_peer)[0] > 1e-6
    draws = m.sample(0.0, 10**6, rng=np.random.default_rng([20, 11]))
    assert np.all(np.abs(draws) <= m.bound)
    assert chi2_pvalue(m, 0.0, draws)[0] > 1e-6
    # the far tail, which the χ² cells lump together: P(|Z| > t) within 5 standard errors up to the bound
    for t in m.bound * np.array([0.5, 0.9, 0.99]):
        p = 2 * m.sf(t, 0.0)
        emp = np.mean(np.abs(draws) > t)
        assert abs(emp - p) <= 5 * math.sqrt(p * (1 - p) / draws.size), (t, emp, p)
    # the test sees a scale 2% too large
    wrong = TruncatedLaplaceNoise(1.02 * m.scale, m.bound).sample(0.0, 10**6, rng=1)
    assert chi2_pvalue(m, 0.0, wrong)[0] < 1e-6


def test_bad_input_names_the_parameter():
    for bad in (0.0, -1.0, math.nan, math.inf, "1", True):
        with pytest.raises(ValueError, match="scale"):
            TruncatedLaplaceNoise(bad, 1.0)
        with pytest.raises(ValueError, match="bound"):
            TruncatedLaplaceNoise(1.0, bad)


# --- privacy -----------------------------------------------------------------------------------------


def _quad_profile(m, q1, q2, eps):
    """``∫ (p1 - e^ε p2)_+`` by quad from the mechanism's own ``logpdf``, split at the centres, the four support ends
    and the root of ``log p1 - log p2 = ε`` on the overlap (the log-ratio there is ``(|t - q2| - |t - q1|)/λ``)."""
    a, lam = m.bound, m.scale

    def f(t):
        l1, l2 = float(m.logpdf(t, q1)), float(m.logpdf(t, q2))
        if l1 == -np.inf:
            return 0.0
        return max(math.exp(l1) - (math.exp(eps + l2) if l2 > -np.inf else 0.0), 0.0)

    lo, hi = min(q1, q2), max(q1, q2)
    root = 0.5 * (q1 + q2) + math.copysign(0.5 * lam * eps, q2 - q1) * -1
    cuts = sorted(
        {q1 - a, q1, q1 + a, q2 - a, q2, q2 + a} | ({root} if lo < root < hi else set())
    )
    return _quad(f, cuts)


def test_pair_profile_matches_quadrature():
    rng = np.random.default_rng(2026)
    for lam, a in _params(rng, 30):
        m = TruncatedLaplaceNoise(lam, a)
        q1 = float(rng.normal(0, lam))
        q2 = q1 + float(rng.choice([-1, 1])) * min(a, lam) * 10 ** rng.uniform(-2, 0.5)
        d = abs(q2 - q1) / lam
        eps = np.r_[0.0, np.sort(rng.uniform(0, d, 3)), d * 1.5, np.inf]
        upper, lower = _pair_profile_bounds(m, q1, q2, eps)
        ref = np.array([_quad_profile(m, q1, q2, e) for e in eps[:-1]])
        # at ε = inf: the mass of M(q1) outside the support of M(q2)
        lo2, hi2 = q2 - a, q2 + a
        alone = float(m.cdf(lo2, q1)) + float(m.sf(hi2, q1))
        ref = np.r_[ref, alone]
        tol = 1e-9 * ref + 1e-15
        assert np.all(lower <= ref + tol) and np.all(upper >= ref - tol), (
            lam,
            a,
            q1,
            q2,
            eps,
            lower,
            ref,
            upper,
        )
        assert np.all(upper - lower <= 1e-9 * upper + 1e-300)
        assert np.all(np.diff(upper) <= 1e-15)  # nonincreasing in ε


def test_pair_profile_extremes_are_finite_and_silent():
    for lam, a, q1, q2 in (
        (1e-300, 1e-299, 0.0, 1e-300),
        (1e300, 1e300, 0.0, 1e285),
        (1e-300, 1e300, 0.0, 1e-300),
        (1e300, 1e-300, 0.0, 1e-300),
        (1.0, 1.0, 0.0, 3.0),  # disjoint supports: TV = 1 at every ε
    ):
        m = TruncatedLaplaceNoise(lam, a)
        eps = np.array([0.0, 1e-15, 0.5, 1e6, np.inf])
        up = silent(dpbook.pair_profile, m, q1, q2, eps)
        assert np.all(np.isfinite(up)) and np.all((up >= 0) & (up <= 1)), (lam, a, up)
        assert np.all(np.diff(up) <= 0)
    assert np.all(
        dpbook.pair_profile(TruncatedLaplaceNoise(1.0, 1.0), 0.0, 3.0, eps) == 1.0
    )
    # a bound far below the scale: uniform laws on [-A, A] and [Δ - A, Δ + A]: δ = Δ/(2A) at every ε
    up = dpbook.pair_profile(TruncatedLaplaceNoise(1e300, 1e-300), 0.0, 1e-300, eps)
    assert np.allclose(up, 0.5, rtol=1e-12)


def test_privacy_loss_is_infinite_and_the_profile_is_the_edge_pair():
    m = TruncatedLaplaceNoise(0.7, 2.0)
    report = dpbook.privacy_report(m, 0.5)
    assert report.epsilon == math.inf and report.kind == "support" and report.exact
    # the output named is possible under q1 and impossible under q2
    assert (
        m.logpdf(report.output, report.q1) > -np.inf
        and m.logpdf(report.output, report.q2) == -np.inf
    )
    assert (
        dpbook.pair_loss(m, 0.0, 1e-12) == math.inf
        and dpbook.pair_loss(m, 1.0, 1.0) == 0.0
    )
    # not Δ/λ, the Laplace kernel's loss
    assert dpbook.privacy_loss(m, 1e-9) == math.inf
    eps = np.r_[0.0, np.linspace(0.01, 1.5, 12), np.inf]
    profile = dpbook.privacy_profile(m, 0.5, eps)
    # brute force: the largest pair profile over a grid of pairs at most Δ apart, both directions
    best = np.zeros(eps.shape)
    for q1 in np.linspace(-3, 3, 7):
        for d in (0.05, 0.2, 0.37, 0.5):
            for q2 in (q1 + d, q1 - d):
                best = np.maximum(best, dpbook.pair_profile(m, q1, q2, eps))
    assert np.all(profile >= best * (1 - 1e-12))
    assert np.all(
        profile <= best * (1 + 1e-9) + 1e-300
    )  # attained at |q1 - q2| = Δ: exact
    # a domain shorter than Δ: its two ends
    short = dpbook.privacy_profile(m, 0.5, eps, domain=(0.0, 0.2))
    assert np.allclose(short, dpbook.pair_profile(m, 0.0, 0.2, eps), rtol=1e-12, atol=0)


def test_unsupported_moving_supports_are_refused():
    m = TruncatedLaplaceNoise(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="window"):
        dpbook.privacy_report(m, 1.0, window=(0.0, 1.0))
    desc = dpbook.describe(m)
    import dataclasses

    one_sided = dataclasses.replace(desc, noise_support=(-2.0, math.inf))

    class OneSided(TruncatedLaplaceNoise):
        def privacy_description(self):
            return one_sided

    with pytest.raises(NotImplementedError, match="finite ends"):
        dpbook.privacy_loss(OneSided(1.0, 2.0), 1.0)
    with pytest.raises(NotImplementedError, match="finite ends"):
        dpbook.privacy_profile(OneSided(1.0, 2.0), 1.0, 0.5)
    with pytest.raises(ValueError, match="noise_support"):
        dataclasses.replace(desc, noise_support=(1.0, 1.0))


@pytest.mark.parametrize(
    "scale, bound",
    [
        (1.3, 4.0),
        (2.0, 0.5),
        (1.0, 1.0 / 16),  # the sampler's switch to logarithms
        (1.0, 0.0624),  # just below it: in units of A
        (1.0, 2.0**-25),  # above the switch to the series of log1p(z)/z
        (1.0, 2.0**-27),  # below it: 1 + c|t|/2
        (1e300, 1.0),
        (1e-300, 1e-299),
        (1.0, 1e300),
        (1e300, 1e300),
    ],
)
def test_draws_are_the_quantiles_of_their_uniforms(scale, bound):
    """Each draw lies between the quantiles (``ppf``) of its uniform ``u`` moved by ``2^-52`` either way (the
    uniforms' own grid is ``2^-53``), up to the logarithm's rounding near 0 (``λ 2^-51``).  A Generator's uniforms
    are one stream, so ``rng.random(n)`` of the same seed are the draws' own."""
    m = TruncatedLaplaceNoise(scale, bound)
    n = 40_000
    u = np.random.default_rng(7).random(n)
    draws = m.sample(0.0, n, rng=np.random.default_rng(7))
    low = m.ppf(np.maximum(u - 2.0**-52, 0.0), 0.0)
    high = m.ppf(np.minimum(u + 2.0**-52, 1.0), 0.0)
    slack = np.minimum(scale * 2.0**-51, m.bound * 2.0**-46) + 4 * np.spacing(
        np.maximum(np.abs(low), np.abs(high))
    )
    assert np.all(draws >= low - slack), float(np.max((low - draws) / slack))
    assert np.all(draws <= high + slack), float(np.max((draws - high) / slack))
