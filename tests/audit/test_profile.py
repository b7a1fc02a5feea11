"""Tests of :func:`dpbook.pair_profile` (``dpbook/audit/_profile.py``), the exact hockey-stick divergence of a pair.

Every registry row whose description is an exact :class:`dpbook.PrivacyDescription` is checked against
direct numerical integration of the mechanism's own density (``logpdf``, split at the piece ends, the
centres and the roots of ``log p1 - log p2 = ε``) plus its own atoms (``atoms``), and against the identities
a profile must satisfy; the Laplace mechanism against its closed form.
"""

import dataclasses
import math
import re
import warnings

import numpy as np
import pytest
from audit_only import AuditOnly
from registry import ROWS
from scipy import integrate, optimize, stats

import dpbook
from dpbook import pair_loss, pair_profile
from dpbook.audit._profile import _pair_profile_bounds


def _exact_cases():
    out = []
    for row in ROWS:
        for case in row.typical:
            try:
                desc = dpbook.describe(case.build())
            except NotImplementedError:
                continue
            if isinstance(desc, dpbook.PrivacyDescription) and desc.exact:
                # a scale that varies with q is solved at every output: its reference quadrature takes ~10 s
                marks = () if desc.uniform else (pytest.mark.slow,)
                out.append(pytest.param(case, id=f"{row.name}-{case.id}", marks=marks))
    return out


CASES = _exact_cases()


def _finite_discrete_cases():
    out = []
    for row in ROWS:
        for case in row.cases():
            try:
                desc = dpbook.describe(case.build())
            except NotImplementedError:
                continue
            if (
                isinstance(desc, dpbook.DiscreteDescription)
                and desc.exact
                and all(map(math.isfinite, desc.support))
            ):
                out.append(pytest.param(case, id=f"{row.name}-{case.id}"))
    return out


DISCRETE = _finite_discrete_cases()


def _pairs(mech, rng, n):
    """``n`` random pairs of true values near the case's scale (a few on the same side, some far)."""
    desc = dpbook.describe(mech)
    out = []
    for _ in range(n):
        if desc.positive:
            q1 = float(rng.uniform(0.1, 3.0))
            q2 = q1 * math.exp(rng.normal(0.0, 0.7))
        else:
            q1 = float(rng.uniform(-1.0, 3.0))
            q2 = q1 + float(desc.scale(q1)) * rng.normal(0.0, 1.5)
        out.append((q1, q2))
    return out


def _epsilons(mech, q1, q2, rng):
    loss = pair_loss(mech, q1, q2)
    top = loss if math.isfinite(loss) else 6.0
    return np.r_[0.0, np.sort(rng.uniform(0.0, top, 4))]


def quad_profile(mech, q1, q2, eps):
    """The reference: ``∫ (p1 - e^ε p2)_+`` by quad in the description's coordinate ``t`` from the mechanism's
    own ``logpdf`` (with the Jacobian ``e^t`` for log outputs), split at the piece ends, the centres and the
    roots of ``log p1 - log p2 = ε`` (brentq), plus ``Σ (m1 - e^ε m2)_+`` over the mechanism's ``atoms``."""
    desc = dpbook.describe(mech)

    def logp(t, q):
        if desc.log_output:
            return float(mech.logpdf(math.exp(t), q)) + t if t < 709 else -math.inf
        return float(mech.logpdf(t, q))

    def f(t):
        return max(math.exp(logp(t, q1)) - math.exp(min(eps + logp(t, q2), 709.0)), 0.0)

    def g(t):
        return logp(t, q1) - logp(t, q2) - eps

    centres = [float(desc.center(q)) for q in (q1, q2)]
    # a support that moves with the centre (bounded noise): its ends are where the integrand jumps
    ends = [c + e for c in centres for e in desc.noise_support if math.isfinite(e)]
    reach = (
        800 if desc.shape == "laplace" else 40
    )  # the densities vanish beyond (e^{-800}, e^{-800})
    far = reach * max(float(desc.scale(q1)), float(desc.scale(q2)))
    total = 0.0
    if eps < math.inf:
        for a, b in desc.pieces:
            pts = sorted({a, b} | {c for c in centres + ends if a < c < b})
            if pts[0] == -math.inf:
                pts[0] = min(pts[1], min(centres)) - far
            if pts[-1] == math.inf:
                pts[-1] = max(pts[-2], max(centres)) + far
            roots = []
            for u, v in zip(pts[:-1], pts[1:]):
                gu, gv = g(u), g(v)
                if np.isfinite(gu) and np.isfinite(gv) and gu * gv < 0:
                    roots.append(
                        optimize.brentq(g, u, v, xtol=1e-300, rtol=1e-15, maxiter=500)
                    )
            pts = sorted(set(pts) | set(roots))
            for u, v in zip(pts[:-1], pts[1:]):
                if u < v:
                    with warnings.catch_warnings():
                        # the estimate is checked below instead
                        warnings.simplefilter("ignore", integrate.IntegrationWarning)
                        val, err = integrate.quad(
                            f, u, v, epsabs=0.0, epsrel=1e-13, limit=1000
                        )
                    assert err <= 1e-11 * max(val, 1e-300) + 1e-300 or err <= 1e-16
                    total += val
    second = {x: float(p) for x, p in mech.atoms(q2)}
    for x, p in mech.atoms(q1):
        p, p2 = float(p), second.get(x, 0.0)
        if p2 == 0:
            total += p
        elif eps < math.inf:
            total += max(p - math.exp(eps) * p2, 0.0)
    return total


@pytest.mark.parametrize("case", CASES)
def test_matches_quadrature(case):
    """Against quadrature over a random pair and random ε, for every exactly described family of the
    registry (more pairs in the slow suite)."""
    _check_quadrature(case, pairs=1, seed=20)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_matches_quadrature_many(case):
    _check_quadrature(case, pairs=3, seed=23)


def _check_quadrature(case, pairs, seed):
    """The computed bracket holds the reference, the value returned is within 1e-9 of it (relative, or
    1e-300 absolute), and the bracket is that narrow too.  Where the laws coincide (both true values where
    the law is frozen) the answer is 0 up to the rounding allowance of a log-ratio that is 0 (below 1e-13)."""
    mech = case.build()
    rng = np.random.default_rng(seed)
    for q1, q2 in _pairs(mech, rng, pairs):
        eps = _epsilons(mech, q1, q2, rng)
        upper, lower = _pair_profile_bounds(mech, q1, q2, eps)
        ref = np.array([quad_profile(mech, q1, q2, e) for e in eps])
        tol = 1e-9 * ref + 1e-300
        assert np.all(lower <= ref + tol), (q1, q2, eps, lower, ref)
        assert np.all(upper >= ref - tol), (q1, q2, eps, upper, ref)
        same = (lower == 0) & (upper <= 1e-13) & (ref <= 1e-13)
        assert np.all((upper - ref <= tol) | same), (q1, q2, eps, upper, ref)
        assert np.all((upper - lower <= 1e-9 * upper + 1e-300) | same)


@pytest.mark.parametrize("case", CASES)
def test_profile_identities(case):
    """Nonincreasing in ε; δ(0) is the total variation distance (symmetric in the pair); 0 from the pair's
    loss on and positive just below it; at ε = inf the mass of M(q1) where M(q2) has none."""
    mech = case.build()
    rng = np.random.default_rng(21)
    for q1, q2 in _pairs(mech, rng, 5):
        loss = pair_loss(mech, q1, q2)
        top = loss if math.isfinite(loss) else 8.0
        grid = np.r_[np.linspace(0.0, 1.2 * top, 200), np.inf]
        upper, lower = _pair_profile_bounds(mech, q1, q2, grid)
        assert np.all(np.isfinite(upper[:-1])) and np.all((lower >= 0) & (upper <= 1))
        # nonincreasing: the lower bound at ε never exceeds the upper bound at any smaller ε
        assert np.all(lower[1:] <= np.minimum.accumulate(upper)[:-1])
        tv = _pair_profile_bounds(mech, q2, q1, 0.0)
        assert float(lower[0]) <= float(tv[0]) and float(tv[1]) <= float(upper[0])
        if math.isfinite(loss):
            beyond = np.array([loss, loss * (1 + 1e-12), 2 * loss + 1.0])
            assert np.all(pair_profile(mech, q1, q2, beyond) == 0.0)
            if loss > 1e-6:
                assert (
                    float(_pair_profile_bounds(mech, q1, q2, loss * (1 - 1e-6))[1]) > 0
                )
        second = {x: float(p) for x, p in mech.atoms(q2)}
        alone = sum(float(p) for x, p in mech.atoms(q1) if second.get(x, 0.0) == 0)
        desc = dpbook.describe(mech)
        if desc.noise_support != (-math.inf, math.inf):  # and outside a moving support
            c2 = float(desc.center(q2))
            alone += float(mech.cdf(c2 + desc.noise_support[0], q1))
            alone += float(mech.sf(c2 + desc.noise_support[1], q1))
        assert float(lower[-1]) <= alone <= float(upper[-1])
        assert float(upper[-1]) <= alone * (1 + 1e-12)


@pytest.mark.parametrize(
    "b, q1, q2",
    [(1.0, 0.0, 1.0), (0.3, 2.0, -1.0), (1e-300, 0.0, 3e-300), (1e300, 0.0, 2e300)],
)
def test_laplace_closed_form(b, q1, q2):
    """δ(ε) = 1 - e^{(ε - d)/2} for ε < d = |q1 - q2|/b, else 0: the bracket holds the closed form (itself
    accurate to a few ulps) and is 1e-12 wide, over random ε up to 0.999 d, at scales 1e±300."""
    d = abs(q1 - q2) / b
    eps = np.r_[0.0, np.random.default_rng(22).uniform(0.0, 0.999 * d, 50), d, 2 * d]
    truth = np.where(eps < d, -np.expm1((np.minimum(eps, d) - d) / 2), 0.0)
    upper, lower = _pair_profile_bounds(dpbook.Laplace(b), q1, q2, eps)
    slack = 4 * np.finfo(float).eps * truth
    assert np.all(lower <= truth + slack) and np.all(upper >= truth - slack)
    assert np.all(upper - lower <= 1e-12 * truth / np.maximum(1 - eps / d, 1e-3))


def test_tiny_delta_keeps_its_digits():
    """A shift of 2e-300 scales: δ(0) = 1e-300 to 12 digits; δ just below the loss likewise."""
    assert pair_profile(dpbook.Laplace(1.0), 0.0, 2e-300, 0.0) == pytest.approx(
        1e-300, rel=1e-12
    )
    lap = dpbook.Laplace(1.0)
    assert pair_profile(lap, 0.0, 1.0, 1.0 - 2e-12) == pytest.approx(1e-12, rel=1e-3)
    # a far tail: the Gaussian-shaped law of a clamped normal far beyond its centre
    assert pair_profile(lap, 0.0, 1500.0, 0.0) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize(
    "mech",
    [
        dpbook.Laplace(1e-300),
        dpbook.Laplace(1e300),
        dpbook.BIT(1e-300, lower=0.0, upper=1.0),
        dpbook.BIT(1e300, lower=0.0, upper=1.0),
        dpbook.Truncated(1e300, lower=0.0, upper=1e-300),
        dpbook.Truncated(1e-300, lower=0.0, upper=1e300),
        dpbook.Normalized(1e-300, [(0.0, 1.0), (2.0, 1e300)]),
        dpbook.LogLaplace(1e-300),
        dpbook.LogLaplace(1e300),
        dpbook.Restricted(stats.norm(scale=1e-300)),
        dpbook.Restricted(stats.norm(scale=1e300)),
    ],
    ids=lambda m: re.sub(r"<scipy[^>]*>", f"norm({m.base.kwds})", repr(m))
    if isinstance(m, dpbook.Restricted)
    else repr(m),
)
def test_extremes(mech):
    """Scales 1e±300 and true values to ±1e300: no NaN, no warning (they are errors here), values in [0, 1],
    nonincreasing in ε."""
    eps = np.array([0.0, 1e-300, 1e-15, 0.5, 1.0, 1e6, 1e300, np.inf])
    qs = [1e-300, 0.25, 0.5, 1e300] + (
        [] if dpbook.describe(mech).positive else [-1e300]
    )
    for q1 in qs:
        for q2 in qs:
            upper, lower = _pair_profile_bounds(mech, q1, q2, eps)
            assert not np.isnan(upper).any() and not np.isnan(lower).any()
            assert np.all((0 <= lower) & (lower <= upper) & (upper <= 1))
            assert np.all(lower[1:] <= np.minimum.accumulate(upper)[:-1])


def test_shape_and_vectorization():
    lap = dpbook.Laplace(1.0)
    eps = np.linspace(0.0, 2.0, 12).reshape(3, 4)
    out = pair_profile(lap, 0.0, 1.0, eps)
    assert out.shape == (3, 4)
    assert [
        pair_profile(lap, 0.0, 1.0, float(e)) for e in eps.ravel()
    ] == out.ravel().tolist()
    assert isinstance(pair_profile(lap, 0.0, 1.0, 0.5), float)


@pytest.mark.parametrize("bad", [-0.1, -np.inf, np.nan, "1", [0.1, -1.0], 1j])
def test_bad_epsilon(bad):
    with pytest.raises(ValueError, match="epsilon"):
        pair_profile(dpbook.Laplace(1.0), 0.0, 1.0, bad)


def test_refusals():
    with pytest.raises(ValueError, match="q1"):
        pair_profile(dpbook.Laplace(1.0), np.inf, 1.0, 0.5)
    with pytest.raises(ValueError, match="q2"):
        pair_profile(dpbook.LogLaplace(1.0), 1.0, 0.0, 0.5)
    with pytest.raises(ValueError, match="epsilon"):
        pair_profile(dpbook.Laplace(1.0), 0.0, 1.0, np.zeros(2**23))
    with pytest.raises(NotImplementedError, match="not described exactly"):
        pair_profile(
            dpbook.StepPostProcessed(
                1.0, edges=[0.0, 1.0], values=[0.0, 0.5], shift=0.5
            ),
            0.0,
            1.0,
            0.5,
        )
    # (an infinite support with a kernel_rate: tests/audit/test_profile_coverage.py)
    with pytest.raises(NotImplementedError, match="finite support"):
        pair_profile(_NoKernelRate(), 0.0, 1.0, 0.5)
    with pytest.raises(ValueError, match="q1 must be integers"):
        pair_profile(dpbook.DiscreteBIT(1.0, lower=0, upper=5), 0.5, 1.0, 0.5)
    with pytest.raises(ValueError, match="mechanism"):
        pair_profile("Laplace", 0.0, 1.0, 0.5)


class _NoKernelRate(AuditOnly):
    """The discrete Laplace law on the integers described without its ``kernel_rate`` theorem: an infinite
    support that pair_profile cannot sum."""

    def privacy_description(self):
        desc = dpbook.DiscreteLaplace(1.0).privacy_description()
        return dataclasses.replace(desc, kernel_rate=None)


class _HalfAtom(AuditOnly):
    """A test law: for ``q > 0`` half the mass sits on the atom ``t = 10`` and half is Laplace(q, 1); for
    ``q <= 0`` all of it is Laplace(q, 1).  So ``M(1)`` puts 1/2 where ``M(0)`` has nothing."""

    def privacy_description(self):
        def log_atom(q):
            return np.where(np.asarray(q) > 0, math.log(0.5), -np.inf)

        return dpbook.PrivacyDescription(
            scale=lambda q: np.ones(np.shape(q)),
            atoms=((10.0, log_atom),),
            log_norm=lambda q: np.where(np.asarray(q) > 0, math.log(2.0), 0.0),
        )


def test_mass_where_the_other_has_none():
    """``δ(inf)`` is the atom's 1/2; below it the atom's 1/2 plus ``∫ (p1/2 - e^ε p2)_+`` by quadrature."""
    mech = _HalfAtom()
    eps = np.array([0.0, 0.3, 1.0, np.inf])
    upper, lower = _pair_profile_bounds(mech, 1.0, 0.0, eps)

    def f(t, e):
        return max(
            0.25 * math.exp(-abs(t - 1)) - math.exp(e) * 0.5 * math.exp(-abs(t)), 0.0
        )

    ref = [
        0.5
        + sum(
            integrate.quad(f, u, v, args=(e,), epsabs=0.0, epsrel=1e-13)[0]
            for u, v in ((-60.0, 0.0), (0.0, 1.0), (1.0, 60.0))
        )
        for e in eps[:-1]
    ] + [0.5]
    assert np.all(lower <= np.array(ref) * (1 + 1e-12))
    assert np.all(upper >= np.array(ref) * (1 - 1e-12))
    assert np.all(upper - lower <= 1e-12)
    assert pair_profile(mech, 0.0, 1.0, np.inf) == 0.0


@pytest.mark.parametrize("case", DISCRETE)
def test_discrete_matches_brute_force(case):
    """An integer-valued law with a finite support: against ``Σ_k (m1 - e^ε m2)_+`` from the mechanism's own
    ``pmf`` over its support (brute force, independent of the description), with the identities: 0 from the
    pair's loss on, positive just below it, nonincreasing, δ(0) symmetric."""
    mech = case.build()
    lo, hi = dpbook.describe(mech).support
    k = np.arange(lo, hi + 1.0)
    rng = np.random.default_rng(24)
    for _ in range(4):
        q1, q2 = (float(v) for v in rng.integers(lo - 2, hi + 3, 2))
        p1, p2 = np.asarray(mech.pmf(k, q1)), np.asarray(mech.pmf(k, q2))
        loss = pair_loss(mech, q1, q2)
        top = loss if math.isfinite(loss) else 8.0
        eps = np.r_[0.0, np.sort(rng.uniform(0.0, top, 30)), np.inf]
        upper, lower = _pair_profile_bounds(mech, q1, q2, eps)
        with np.errstate(over="ignore"):
            ref = np.array(
                [np.sum(np.maximum(p1 - np.exp(e) * p2, 0.0)) for e in eps[:-1]]
                + [np.sum(p1[p2 == 0])]
            )
        # the brute force's own rounding: it sums differences of masses (1e-14 absolute for the nearly equal
        # laws of a scale of 1e15, where the description's accurate log-ratio keeps every digit)
        with np.errstate(over="ignore"):
            tol = 1e-12 * ref + 1e-14 * (1 + np.exp(np.minimum(eps, 700.0)))
        assert np.all(lower <= ref + tol) and np.all(upper >= ref - tol), (q1, q2)
        assert np.all(upper - lower <= 1e-9 * upper + 1e-300)
        assert np.all(lower[1:] <= np.minimum.accumulate(upper)[:-1])
        tv = _pair_profile_bounds(mech, q2, q1, 0.0)
        assert float(lower[0]) <= float(tv[0]) and float(tv[1]) <= float(upper[0])
        if math.isfinite(loss) and q1 != q2:
            assert pair_profile(mech, q1, q2, [loss, 2 * loss]).tolist() == [0.0, 0.0]
            if loss > 1e-6:
                assert (
                    float(_pair_profile_bounds(mech, q1, q2, loss * (1 - 1e-6))[1]) > 0
                )
