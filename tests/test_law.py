"""Laws shaped like scipy.stats: ``mechanism.at(q)`` for every family, checked the way scipy checks its own.

``conform(law)`` runs scipy-style generic checks (as ``scipy.stats``' ``test_continuous_basic`` does):
cdf/ppf and sf/isf round trips (the generalized inverse at point masses), ``cdf + sf = 1`` and the
log versions, the density against the cdf's derivative and its integral against the continuous
mass, point masses against the cdf's jumps, ``mean``/``var``/``std``/``median``/``interval`` against
``expect`` and ``ppf``, and seeded samples against the cdf (each within 5 standard errors).  Where a
family's law is one scipy has, it is compared with scipy itself.  The last tests break a law on
purpose and show that the checks fail.
"""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy import integrate, stats

import dpbook
from dpbook import Law
from dpbook._kernels.arrays import _below, _invert_cdf


def ramp(x):
    return np.maximum(x, 0.0)


CASES = [
    ("laplace", dpbook.Laplace(1.3), (0.0, -2.0)),
    ("bit", dpbook.BIT(1.0, lower=0.0, upper=2.0), (0.5, -0.7, 3.0)),
    ("bit-half-line", dpbook.BIT(0.8, lower=0.0), (0.3,)),
    ("truncated", dpbook.Truncated(1.0, lower=0.0, upper=2.0), (0.5, 2.5)),
    ("truncated-half-line", dpbook.Truncated(0.7, lower=0.0), (0.2,)),
    (
        "translated-ramp",
        dpbook.TranslatedRamp(1.0, dpbook.optimal_ramp_shift(1.0)),
        (0.0, 1.5),
    ),
    (
        "step",
        dpbook.StepPostProcessed(1.0, edges=[0.0, 1.0], values=[0.0, 0.5], shift=0.5),
        (0.3, 2.0),
    ),
    ("optimal-postprocessing", dpbook.optimal_postprocessing(1.0), (0.5,)),
    (
        "postprocessed-ramp",
        dpbook.PostProcessed(1.0, ramp, breakpoints=[0.0], tail=(0.0, 0.0)),
        (0.5,),
    ),
    ("restricted-normal", dpbook.Restricted(stats.norm), (0.5,)),
    ("restricted-laplace", dpbook.Restricted(stats.laplace(scale=1.0)), (0.2,)),
    ("log-laplace", dpbook.LogLaplace(0.3), (1.0, 5.0)),
    ("normalized", dpbook.Normalized(1.0, [(0.0, 1.0), (2.0, 4.0)]), (1.5, -1.0)),
    ("croft", dpbook.CroftLaplace(1.0, 1.0), (0.5, 3.0)),
]
LAWS = [pytest.param(m, q, id=f"{name}-q={q}") for name, m, qs in CASES for q in qs]

P = np.array([1e-9, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1 - 1e-6])
SMALL = np.array([1e-12, 1e-6, 1e-3, 0.05, 0.2, 0.5, 0.8])


def has_density(law):
    try:
        law.pdf(law.median())
    except NotImplementedError:
        return False
    return True


def spread(law):
    s = float(law.isf(0.25) - law.ppf(0.25))
    return s if s > 0 else 1.0


def at_atom(law, x):
    locs = (
        np.array([a for a, m in law.atoms() if m > 0])
        if has_density(law)
        else np.array([0.0])
    )
    return np.isin(x, locs)


# --- the generic checks ----------------------------------------------------------------------------


def check_quantiles(law):
    """ppf is the generalized inverse of cdf, isf of sf; ppf(cdf(x)) = x where the law has density."""
    x = np.asarray(law.ppf(P))
    F, F_below = np.asarray(law.cdf(x)), np.asarray(law.cdf(np.nextafter(x, -np.inf)))
    tol = 1e-9 * np.minimum(P, 1 - P) + 1e-15
    assert np.all(F >= P - tol), (P, F)  # cdf(ppf(p)) >= p ...
    assert np.all(F_below <= P + tol), (
        P,
        F_below,
    )  # ... and ppf(p) is the first such x
    atom = at_atom(law, x)
    assert np.allclose(F[~atom], P[~atom], rtol=1e-9, atol=1e-15)
    y = np.asarray(law.isf(SMALL))
    S, S_below = np.asarray(law.sf(y)), np.asarray(law.sf(np.nextafter(y, -np.inf)))
    tol = 1e-9 * SMALL + 1e-15
    assert np.all(S <= SMALL + tol) and np.all(S_below >= SMALL - tol), (
        SMALL,
        S,
        S_below,
    )
    atom = at_atom(law, y)
    assert np.allclose(S[~atom], SMALL[~atom], rtol=1e-9, atol=1e-15)
    mid = SMALL > 1e-4  # isf(p) = ppf(1 - p) where 1 - p is exact enough
    assert np.allclose(
        y[mid], law.ppf(1 - SMALL[mid]), rtol=1e-9, atol=1e-9 * spread(law)
    )
    inner = x[~at_atom(law, x) & (P > 1e-3) & (P < 1 - 1e-3)]
    assert np.allclose(
        law.ppf(law.cdf(inner)), inner, rtol=1e-8, atol=1e-8 * spread(law)
    )
    a, b = law.support()
    assert (
        law.ppf(0.0) == a
        and law.ppf(1.0) == b
        and law.isf(0.0) == b
        and law.isf(1.0) == a
    )
    with pytest.raises(ValueError, match="p"):
        law.ppf(1.5)


def check_tails(law):
    """cdf + sf = 1, log versions, monotone cdf, limits at the support's ends."""
    a, b = law.support()
    x = np.concatenate(
        [law.ppf(np.linspace(0.001, 0.999, 41)), law.isf(np.array([1e-8, 1e-12]))]
    )
    F, S = np.asarray(law.cdf(x)), np.asarray(law.sf(x))
    assert np.allclose(F + S, 1.0, rtol=0, atol=1e-13)
    assert np.all(np.diff(law.cdf(np.sort(x))) >= -1e-15)
    with np.errstate(divide="ignore"):
        assert np.allclose(law.logcdf(x), np.log(F), rtol=1e-10, atol=1e-13)
        assert np.allclose(law.logsf(x), np.log(S), rtol=1e-10, atol=1e-13)
    assert (
        abs(law.cdf(b) - 1.0) <= 2.3e-16 and abs(law.sf(b)) <= 2.3e-16
    )  # PostProcessed sums to 1 - 1 ulp
    assert law.cdf(_below(a)) == 0.0 and law.sf(_below(a)) == 1.0


def check_density(law):
    """pdf = d cdf/dx away from atoms and kinks; ∫ pdf = 1 - Σ atoms; pmf = the cdf's jumps."""
    a, b = law.support()
    atoms = [(t, m) for t, m in law.atoms() if m > 0]
    for t, m in atoms:
        assert math.isclose(law.pmf(t), m, rel_tol=1e-14)
        assert math.isclose(
            law.cdf(t) - law.cdf(_below(t)), m, rel_tol=1e-9, abs_tol=1e-15
        )
    x = np.asarray(law.ppf(np.array([0.13, 0.37, 0.61, 0.83])))
    x = x[~at_atom(law, x)]
    assert np.all(law.pmf(x) == 0.0)
    h = 1e-6 * spread(law)
    deriv = (np.asarray(law.cdf(x + h)) - np.asarray(law.cdf(x - h))) / (2 * h)
    assert np.allclose(deriv, law.pdf(x), rtol=1e-5), (x, deriv, law.pdf(x))
    with np.errstate(divide="ignore"):
        assert np.allclose(law.logpdf(x), np.log(law.pdf(x)), rtol=1e-12)
    cuts = np.unique(
        [
            a,
            b,
            *law.mechanism._kinks(law.q),
            *(t for t, _ in atoms),
            *(
                law.median()
                + spread(law) * np.array([-64.0, -8.0, -1.0, 1.0, 8.0, 64.0])
            ),
        ]
    )
    cuts = cuts[(cuts >= a) & (cuts <= b)]
    mass = sum(
        integrate.quad(lambda t: float(law.pdf(t)), lo, hi, limit=200, epsabs=1e-14)[0]
        for lo, hi in zip(cuts[:-1], cuts[1:])
    )
    assert math.isclose(
        mass, 1.0 - sum(m for _, m in atoms), rel_tol=1e-9, abs_tol=1e-12
    )
    assert law.pdf(_below(a)) == 0.0 if np.isfinite(a) else True


def check_moments(law):
    """mean, var, std, median, interval against expect and ppf; expect's options."""
    m, v = law.mean(), law.var()
    s = spread(law)
    assert math.isclose(law.expect(), m, rel_tol=1e-8, abs_tol=1e-10 * s)
    assert math.isclose(
        law.expect(lambda x: (x - m) ** 2), v, rel_tol=1e-7, abs_tol=1e-10 * s * s
    )
    assert math.isclose(law.expect(lambda x: np.ones_like(x)), 1.0, rel_tol=1e-9)
    assert law.std() == math.sqrt(v)
    assert law.median() == law.ppf(0.5)
    lo, hi = law.interval(0.9)
    assert (lo, hi) == (law.ppf((1 - 0.9) / 2), law.isf((1 - 0.9) / 2))
    t = law.median()
    assert math.isclose(
        law.expect(lambda x: np.ones_like(x), ub=t),
        law.cdf(t),
        rel_tol=1e-8,
        abs_tol=1e-12,
    )
    assert math.isclose(
        law.expect(lambda x: np.ones_like(x), lb=t, ub=np.inf, conditional=True),
        1.0,
        rel_tol=1e-8,
    )


def check_samples(law, n=20_000, seed=7):
    """rvs: in the support, reproducible from an int seed, and distributed as cdf says (5 SE)."""
    x = law.rvs(n, random_state=seed)
    a, b = law.support()
    assert x.shape == (n,) and np.all((x >= a) & (x <= b))
    assert np.array_equal(x, law.rvs(n, random_state=np.random.default_rng(seed)))
    assert np.array_equal(x, law.mechanism.sample(law.q, n, rng=seed))
    assert isinstance(law.rvs(random_state=1), float)
    t = np.concatenate(
        [
            law.ppf(np.array([0.05, 0.2, 0.4, 0.6, 0.8, 0.95])),
            [u for u, _ in law.atoms()] if has_density(law) else [],
        ]
    )
    F = np.asarray(law.cdf(t))
    emp = np.mean(x[:, None] <= t[None, :], axis=0)
    assert np.all(np.abs(emp - F) <= 5 * np.sqrt(F * (1 - F) / n) + 1 / n), (t, emp, F)
    m, sd = law.mean(), law.std()
    assert abs(np.mean(x) - m) <= 5 * sd / math.sqrt(n)


def check_family_agrees(law):
    """The law is the family's vectorized methods at one q."""
    mech, q = law.mechanism, law.q
    x = law.ppf(np.array([0.1, 0.5, 0.9]))
    assert np.array_equal(law.cdf(x), mech.cdf(x, q))
    qs = np.array([q, q + 0.25])
    grid = mech.ppf(np.array([[0.2], [0.7]]), qs)
    assert grid.shape == (2, 2)
    assert grid[1, 1] == mech.at(q + 0.25).ppf(0.7)
    assert law.mean() == mech.mean(q) and law.var() == mech.variance(q)


def conform(law):
    check_quantiles(law)
    check_tails(law)
    if has_density(law):
        check_density(law)
    check_moments(law)
    check_samples(law)
    check_family_agrees(law)


@pytest.mark.parametrize("mech, q", LAWS)
def test_every_family_conforms(mech, q):
    law = mech.at(q)
    assert isinstance(law, Law) and law.q == q
    conform(law)


def test_postprocessed_says_it_has_no_density():
    law = dpbook.PostProcessed(1.0, ramp, breakpoints=[0.0]).at(0.5)
    for method in (law.pdf, law.logpdf, law.pmf):
        with pytest.raises(NotImplementedError):
            method(0.0)
    assert (
        law.ppf(0.2) == 0.0
    )  # the ramp's atom at 0 holds P(Y <= 0) = 0.3033 (numerical ppf)


def test_at_needs_one_valid_true_value():
    with pytest.raises(ValueError, match="q"):
        dpbook.BIT(1.0).at([0.0, 1.0])
    with pytest.raises(ValueError, match="q"):
        dpbook.LogLaplace(0.3).at(-1.0)
    with pytest.raises(ValueError, match="q"):
        dpbook.Laplace(1.0).at(np.nan)
    with pytest.raises(ValueError, match="confidence"):
        dpbook.Laplace(1.0).at(0.0).interval(1.5)
    with pytest.raises(ValueError, match="func"):
        dpbook.Laplace(1.0).at(0.0).expect(3.0)
    assert repr(dpbook.Laplace(1.0).at(0.5)) == "Laplace(scale=1.0).at(0.5)"


# --- against scipy itself, where the laws coincide -----------------------------------------------

X = np.array([-40.0, -3.0, -0.5, 0.0, 0.2, 1.0, 2.5, 7.0, 40.0])
Q = np.array([1e-300, 1e-12, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-9])


def same(a, b, rtol=1e-12):
    assert np.allclose(a, b, rtol=rtol, atol=0), (a, b)


@pytest.mark.parametrize("q, b", [(0.0, 1.0), (1.7, 0.4), (-3.0, 2.5)])
def test_laplace_is_scipy_laplace(q, b):
    law, ref = dpbook.Laplace(b).at(q), stats.laplace(loc=q, scale=b)
    for name in ("pdf", "logpdf", "cdf", "sf", "logcdf", "logsf"):
        same(getattr(law, name)(X), getattr(ref, name)(X))
    same(law.ppf(Q), ref.ppf(Q))
    same(law.isf(Q), ref.isf(Q))
    assert law.support() == ref.support()
    same(
        [law.mean(), law.var(), law.std(), law.median()],
        [ref.mean(), ref.var(), ref.std(), ref.median()],
    )
    same(law.interval(0.8), ref.interval(0.8))
    same(law.expect(lambda x: x**2), ref.expect(lambda x: x**2), rtol=1e-9)
    same(
        law.expect(lambda x: np.exp(-x * x), lb=q, ub=q + b, conditional=True),
        ref.expect(lambda x: np.exp(-x * x), lb=q, ub=q + b, conditional=True),
        rtol=1e-9,
    )


@pytest.mark.parametrize("q, b", [(1.0, 0.3), (5.0, 0.45), (0.02, 0.8)])
def test_log_laplace_is_scipy_loglaplace(q, b):
    """``q e^{L_b}`` is scipy's ``loglaplace`` with ``c = 1/b`` and scale ``q``."""
    law, ref = dpbook.LogLaplace(b).at(q), stats.loglaplace(c=1.0 / b, scale=q)
    x = q * np.array([1e-3, 0.2, 0.9, 1.0, 1.3, 4.0, 50.0])
    for name in ("pdf", "logpdf", "cdf", "sf"):
        same(getattr(law, name)(x), getattr(ref, name)(x), rtol=1e-10)
    same(law.ppf(Q[1:]), ref.ppf(Q[1:]), rtol=1e-10)
    same(law.isf(Q[1:]), ref.isf(Q[1:]), rtol=1e-10)
    same(law.mean(), ref.mean(), rtol=1e-12)
    if b < 0.5:
        same(law.var(), ref.var(), rtol=1e-10)
    else:
        assert law.var() == math.inf and ref.var() == math.inf


def exact_truncated_cdf(x, q, b, lo, hi):
    """The truncated Laplace cdf in 40-digit decimal arithmetic."""
    getcontext().prec = 40

    def F(t):
        if t == -math.inf:
            return Decimal(0)
        if t == math.inf:
            return Decimal(1)
        z = (Decimal(t) - Decimal(q)) / Decimal(b)
        return z.exp() / 2 if z < 0 else 1 - (-z).exp() / 2

    return np.array([float((F(t) - F(lo)) / (F(hi) - F(lo))) for t in x])


@pytest.mark.parametrize(
    "q, b, lo, hi",
    [(0.5, 1.0, 0.0, 2.0), (3.0, 0.7, -1.0, 1.5), (0.2, 2.0, 0.0, np.inf)],
)
def test_truncation_is_scipy_truncate(q, b, lo, hi):
    """Truncation is ``scipy.stats.truncate`` of the Laplace law (scipy's new distribution infrastructure).

    scipy evaluates this truncated law by numerical quadrature, to about 1e-7 relative (found here);
    dpbook's closed forms agree with a 40-digit evaluation to a few ulp, so scipy is checked at 3e-7.
    """
    ref = stats.truncate(b * stats.make_distribution(stats.laplace)() + q, lb=lo, ub=hi)
    law = dpbook.Truncated(b, lower=lo, upper=hi).at(q)
    x = np.linspace(lo, min(hi, lo + 6 * b), 13)[1:-1]
    same(law.cdf(x), exact_truncated_cdf(x, q, b, lo, hi), rtol=1e-15)
    same(law.pdf(x), ref.pdf(x), rtol=1e-10)
    same(law.cdf(x), ref.cdf(x), rtol=3e-7)
    same(law.sf(x), ref.ccdf(x), rtol=3e-7)
    p = np.array([0.01, 0.3, 0.5, 0.8, 0.99])
    same(law.ppf(p), ref.icdf(p), rtol=3e-7)
    same(law.isf(p), ref.iccdf(p), rtol=3e-7)
    same([law.mean(), law.var()], [ref.mean(), ref.variance()], rtol=3e-7)
    one = dpbook.Normalized(b, [(lo, hi)]).at(q)  # one feasible interval: the same law
    same(one.cdf(x), law.cdf(x), rtol=1e-13)
    same(one.ppf(p), law.ppf(p), rtol=1e-13)


@pytest.mark.parametrize("q", [0.0, 0.5, 2.0])
def test_restricted_normal_is_scipy_truncnorm(q):
    law, ref = dpbook.Restricted(stats.norm).at(q), stats.truncnorm(-q, np.inf, loc=q)
    x = np.array([0.0, 0.1, 0.5, 1.0, 3.0, 6.0])
    for name in ("pdf", "cdf", "sf"):
        same(getattr(law, name)(x), getattr(ref, name)(x), rtol=1e-10)
    p = np.array([0.01, 0.5, 0.9, 0.999])
    same(law.ppf(p), ref.ppf(p), rtol=1e-10)
    same(law.isf(p), ref.isf(p), rtol=1e-9)
    same([law.mean(), law.var()], [ref.mean(), ref.var()], rtol=1e-9)


@pytest.mark.parametrize("q", [-0.5, 0.4, 1.9, 3.0])
def test_clamping_is_scipy_laplace_with_its_tails_on_the_bounds(q):
    lo, hi, b = 0.0, 2.0, 0.8
    law, ref = dpbook.BIT(b, lower=lo, upper=hi).at(q), stats.laplace(loc=q, scale=b)
    same(law.pmf(lo), ref.cdf(lo))
    same(law.pmf(hi), ref.sf(hi))
    x = np.array([0.1, 0.9, 1.99])
    same(law.pdf(x), ref.pdf(x))
    same(law.cdf(x), ref.cdf(x))
    p = np.array([0.05, 0.5, 0.95])
    same(law.ppf(p), np.clip(ref.ppf(p), lo, hi))
    ramp_law = dpbook.TranslatedRamp(b, 0.3).at(
        q
    )  # max(q + L - α, 0) = clamping at 0 of (q - α) + L
    same(ramp_law.cdf(x), dpbook.BIT(b, lower=0.0).at(q - 0.3).cdf(x))


# --- the numerical inversion -----------------------------------------------------------------------


def test_invert_cdf_is_exact_to_the_last_bit():
    """Bisection over the ordered doubles returns the first double where the predicate holds."""
    target = np.array([-1e300, -2.5, -0.0, 5e-324, 1.0, 3.7e250])
    x = _invert_cdf(lambda x, t: x >= t, target, -np.inf, np.inf)
    assert np.array_equal(x, target + 0.0)
    p = np.array([0.1, 0.5, 0.9])
    x = _invert_cdf(lambda x, t: stats.norm.cdf(x) >= t, p, -np.inf, np.inf)
    assert np.all(stats.norm.cdf(x) >= p) and np.all(
        stats.norm.cdf(np.nextafter(x, -np.inf)) < p
    )


def test_generic_ppf_lands_on_atoms():
    """StepPostProcessed has no closed-form quantile: the inversion returns each atom on its whole jump."""
    mech = dpbook.StepPostProcessed(1.0, edges=[0.0, 1.0], values=[0.0, 0.5], shift=0.5)
    law = mech.at(0.3)
    m0, m1 = law.pmf(0.0), law.pmf(0.5)
    p = np.array([1e-12, m0 / 2, m0, m0 * (1 + 1e-9), m0 + m1 / 2, m0 + m1])
    assert np.array_equal(law.ppf(p), [0.0, 0.0, 0.0, 0.5, 0.5, 0.5])


# --- the checks fail on broken laws ---------------------------------------------------------------


class PerturbedCdf(dpbook.BIT):
    """BIT with its cdf off by at most 2.5e-7: a bug of the size a wrong constant in a tail term makes."""

    def cdf(self, x, q):
        F = np.asarray(super().cdf(x, q))
        return F + 1e-6 * F * (1 - F)


class ScaledDensity(dpbook.Truncated):
    def logpdf(self, x, q):
        return np.asarray(super().logpdf(x, q)) + np.log1p(1e-6)


class WideSampler(dpbook.Laplace):
    """Laplace draws with a 5% larger scale than the law's."""

    def _sample(self, q, shape, rng):
        return rng.laplace(q, 1.05 * self.scale, size=shape)


def test_the_checks_fail_on_a_perturbed_cdf():
    law = PerturbedCdf(1.0, lower=0.0, upper=2.0).at(0.5)
    with pytest.raises(AssertionError):
        check_quantiles(law)
    with pytest.raises(AssertionError):
        check_tails(law)


def test_the_checks_fail_on_a_density_that_does_not_integrate():
    with pytest.raises(AssertionError):
        check_density(ScaledDensity(1.0, lower=0.0, upper=2.0).at(0.5))


def test_the_checks_fail_on_a_wrong_sampler():
    with pytest.raises(AssertionError):
        check_samples(WideSampler(1.0).at(0.0), n=200_000)


def test_the_checks_pass_on_the_unbroken_parents():
    conform(dpbook.BIT(1.0, lower=0.0, upper=2.0).at(0.5))
    check_density(dpbook.Truncated(1.0, lower=0.0, upper=2.0).at(0.5))
    check_samples(dpbook.Laplace(1.0).at(0.0), n=200_000)


# --- one public API ------------------------------------------------------------------------------


def test_public_api_is_explicit_and_documented():
    """``dpbook.__all__`` is explicit, every name in it exists, and the API reference documents each one."""
    import pathlib
    import re

    names = dpbook.__all__
    assert len(names) == len(set(names)) and all(hasattr(dpbook, n) for n in names)
    for old in (
        "bit_bias",
        "bit_point_masses",
        "truncated_cdf",
        "truncated_ppf",
        "normalized_ppf",
        "step_bias",
    ):
        assert not hasattr(dpbook, old), old
    assert not hasattr(dpbook.BIT, "point_masses")
    page = (pathlib.Path(__file__).parent.parent / "book" / "api.md").read_text(
        encoding="utf-8"
    )
    documented = set(
        re.findall(r"^\.\. auto(?:class|function|data):: (\w+)", page, flags=re.M)
    )
    assert documented == set(names), (set(names) - documented, documented - set(names))
    init = (pathlib.Path(dpbook.__file__)).read_text(encoding="utf-8")
    assert "import *" not in init


@pytest.mark.parametrize(
    "rng",
    [
        None,
        0,
        42,
        np.int64(7),
        np.random.default_rng(1),
        np.random.SeedSequence(3),
        np.random.PCG64(5),
    ],
)
def test_rng_accepts_what_spec_7_allows(rng):
    x = dpbook.BIT(1.0, lower=0.0, upper=1.0).sample(0.5, 3, rng=rng)
    assert x.shape == (3,)


def test_int_seeds_reproduce_and_bad_rngs_are_refused():
    mech = dpbook.Truncated(1.0, lower=0.0, upper=1.0)
    assert np.array_equal(mech.sample(0.5, 5, rng=42), mech.sample(0.5, 5, rng=42))
    assert np.array_equal(
        mech.sample(0.5, 5, rng=42), mech.sample(0.5, 5, rng=np.random.default_rng(42))
    )
    for bad in (-1, 0.5, True, "1", np.random.RandomState(0)):
        with pytest.raises(ValueError, match="rng"):
            mech.sample(0.5, 5, rng=bad)


def test_optional_parameters_are_keyword_only():
    # positional calls spelled with *args, which the notebook migration script leaves alone
    for make, args in (
        (dpbook.BIT, (1.0, 0.0, 1.0)),
        (dpbook.Truncated, (1.0, 0.0)),
        (dpbook.CroftLaplace, (1.0, 1.0, 0.0)),
        (dpbook.Laplace(1.0).sample, (0.0, 3, 42)),
        (dpbook.tree_levels, ([0.5, 0.5], 2)),
        (dpbook.consistent_tree, ([[1.0], [0.5, 0.5]], 2)),
    ):
        with pytest.raises(TypeError):
            make(*args)
