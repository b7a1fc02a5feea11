import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from log_tails import assert_log_tails_match_logs_of_the_law
from scipy import integrate, optimize, stats

import dpbook
from dpbook import Laplace

FAST = settings(max_examples=40, deadline=None)
QUAD = dict(epsabs=0.0, epsrel=1e-13, limit=200)


def ramp_mean_by_quad(q, b, a):
    """E max(q + L_b - a, 0) = ∫_a^∞ (x - a) f_q(x) dx, with f_q's factor at the nearer end pulled out."""
    if q <= a:  # f_q(x) = f_q(a) e^{-(x-a)/b} on [a, ∞)
        val = integrate.quad(lambda s: s * np.exp(-s / b), 0, np.inf, **QUAD)[0]
        return val * Laplace(b).pdf(a, q)
    f = lambda x: (x - a) * Laplace(b).pdf(x, q)
    return (
        integrate.quad(f, a, q, points=[max(a, q - b)], **QUAD)[0]
        + integrate.quad(f, q, np.inf, **QUAD)[0]
    )


@FAST
@given(b=st.floats(0.05, 20.0), t=st.floats(0.0, 700.0), s=st.floats(0.0, 5.0))
def test_translated_ramp_mean_against_quad(b, t, s):
    q, a = t * b, s * b
    mech = dpbook.TranslatedRamp(b, a)
    m = ramp_mean_by_quad(q, b, a)
    assert np.isclose(mech.mean(q), m, rtol=1e-10, atol=1e-13 * q)
    exact = (
        (q - a) + 0.5 * b * np.exp((a - q) / b)
        if q >= a
        else 0.5 * b * np.exp((q - a) / b)
    )
    assert np.isclose(mech.mean(q), exact, rtol=1e-12)


@pytest.mark.parametrize("b,a", [(1.0, 0.0), (1.0, 0.3517), (2.5, 1.0), (0.4, 3.0)])
@pytest.mark.parametrize("q", [0.0, 0.2, 1.0, 4.0])
def test_translated_ramp_law(b, a, q):
    mech = dpbook.TranslatedRamp(b, a)
    ((loc, mass),) = mech.atoms(q)
    assert loc == 0.0 and np.isclose(mass, stats.laplace(q, b).cdf(a), rtol=1e-12)
    dens = lambda x: np.exp(mech.logpdf(x, q))
    mid = max(q - a, 0.0)
    on_half_line = lambda g: sum(
        integrate.quad(g, lo, hi, **QUAD)[0] for lo, hi in [(0, mid), (mid, np.inf)]
    )
    cont = on_half_line(dens)
    assert np.isclose(cont + mass, 1.0, rtol=1e-12)
    second = on_half_line(lambda x: (x - q) ** 2 * dens(x))
    assert np.isclose(mech.mse(q), second + mass * q**2, rtol=1e-10)
    m = mech.mean(q)
    var = on_half_line(lambda x: (x - m) ** 2 * dens(x))
    assert np.isclose(mech.variance(q), var + mass * m**2, rtol=1e-10)
    x = np.array([-1.0, 0.0, 0.5, q, q + 3.0])
    want = [
        0.0
        if v < 0
        else mass + integrate.quad(dens, 0, v, **QUAD)[0]
        if v > 0
        else mass
        for v in x
    ]
    assert np.allclose(mech.cdf(x, q), want, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "b,a,q", [(1.0, 0.3517, 0.0), (1.0, 0.3517, 1.5), (2.0, 1.0, 0.5), (0.5, 0.0, 3.0)]
)
def test_translated_ramp_sampler(b, a, q):
    mech = dpbook.TranslatedRamp(b, a)
    x = mech.sample(q, size=20000, rng=np.random.default_rng(5))
    mass = mech.atoms(q)[0][1]
    zeros = np.sum(x == 0)  # exact binomial check of the point mass
    assert abs(zeros - x.size * mass) < 5 * np.sqrt(x.size * mass * (1 - mass))
    pos = x[x > 0]
    cond_cdf = lambda t: (mech.cdf(t, q) - mass) / (1 - mass)
    assert stats.kstest(pos, cond_cdf).pvalue > 1e-3
    assert abs(x.mean() - mech.mean(q)) < 5 * np.sqrt(mech.variance(q) / x.size)


def test_optimal_shift_and_constants():
    assert dpbook.optimal_ramp_shift(1.0) == pytest.approx(0.3517337112, abs=1e-10)
    assert dpbook.bias_lower_bound(1.0) == pytest.approx(0.2784645428, abs=1e-10)
    for b in [0.1, 1.0, 7.0]:
        a = dpbook.optimal_ramp_shift(b)
        assert np.isclose(
            0.5 * b * np.exp(-a / b), a, rtol=1e-14
        )  # the defining equation of Thm 4.1
        assert dpbook.ramp_worst_bias(a, b) == pytest.approx(a, rel=1e-14)
        # the Prop. 5 constant is the max over q of q / (1 + e^{q/b}), attained at q/b = 1 + W(1/e)
        res = optimize.minimize_scalar(
            lambda q: -q / (1 + np.exp(q / b)),
            bounds=(0, 10 * b),
            method="bounded",
            options={"xatol": 1e-12 * b},
        )
        assert np.isclose(-res.fun, dpbook.bias_lower_bound(b), rtol=1e-12)
        assert np.isclose(res.x / b, 1 + dpbook.bias_lower_bound(1.0), rtol=1e-5)


def numerical_worst_bias(mech, b):
    """sup_q |bias| by brute force: a grid to 40b, refined around the best point, plus the far end."""
    qs = np.linspace(0, 40 * b, 2001)
    vals = np.abs(mech.bias(qs))
    k = int(np.argmax(vals))
    lo, hi = qs[max(k - 1, 0)], qs[min(k + 1, qs.size - 1)]
    res = optimize.minimize_scalar(
        lambda q: -abs(mech.bias(q)),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return max(vals.max(), -res.fun, abs(mech.bias(1e4 * b)))


@pytest.mark.parametrize("b", [0.5, 1.0, 3.0])
@pytest.mark.parametrize("s", [0.0, 0.1, 0.3517337112, 0.6, 1.5])
def test_theorem_4_1(b, s):
    mech = dpbook.TranslatedRamp(b, s * b)
    assert np.isclose(mech.max_abs_bias(), max(0.5 * b * np.exp(-s), s * b), rtol=1e-14)
    assert np.isclose(numerical_worst_bias(mech, b), mech.max_abs_bias(), rtol=1e-10)
    assert np.all(
        np.diff(mech.bias(np.linspace(0, 10 * b, 200))) < 0
    )  # decreasing in q (proof of Thm 4.1)


def test_optimal_shift_minimizes_worst_bias():
    b = 1.3
    alphas = np.linspace(0, 2 * b, 20001)
    worst = np.array([dpbook.ramp_worst_bias(a, b) for a in alphas])
    a_star = dpbook.optimal_ramp_shift(b)
    assert abs(alphas[np.argmin(worst)] - a_star) <= alphas[1] - alphas[0]
    assert worst.min() >= a_star * (1 - 1e-12)
    assert dpbook.ramp_worst_bias(0.0, b) == b / 2  # the plain ramp
    # the same from the numerically maximized bias of each ramp, not the closed form
    grid = a_star + b * np.linspace(-0.05, 0.05, 21)
    numeric = [numerical_worst_bias(dpbook.TranslatedRamp(b, a), b) for a in grid]
    assert int(np.argmin(numeric)) == 10 and np.isclose(min(numeric), a_star, rtol=1e-9)


# --- general post-processing -------------------------------------------------------------


def ramp(x):
    return np.maximum(x, 0.0)


def softplus(t, a=0.0):
    return lambda x: t * np.logaddexp(0.0, (x - a) / t)


def piecewise_linear(x):
    """0 below 0.2, slope 0.5 up to 1.2, then the identity shifted by 0.7."""
    return np.where(x < 0.2, 0.0, np.where(x < 1.2, 0.5 * (x - 0.2), x - 0.7))


@settings(max_examples=20, deadline=None)
@given(
    b=st.floats(0.1, 10.0),
    t=st.floats(0.0, 700.0),
    s=st.one_of(st.just(0.0), st.floats(1e-3, 3.0)),
)
def test_postprocessed_matches_translated_ramp(b, t, s):
    """(A shift far below one ulp of q cannot be seen by a float phi, hence s = 0 or s >= 1e-3.)"""
    q, a = t * b, s * b
    gen = dpbook.PostProcessed(b, lambda x: np.maximum(x - a, 0.0), breakpoints=[a])
    mech = dpbook.TranslatedRamp(b, a)
    terms = max(
        a, 0.5 * b * np.exp(-abs(q - a) / b)
    )  # the bias is a difference of these two terms
    assert np.isclose(gen.bias(q), mech.bias(q), rtol=1e-10, atol=1e-12 * terms)
    assert np.isclose(gen.mean(q), mech.mean(q), rtol=1e-10)
    assert np.isclose(gen.variance(q), mech.variance(q), rtol=1e-9)
    assert np.isclose(gen.mse(q), mech.mse(q), rtol=1e-9)


@pytest.mark.parametrize("q", [0.0, 0.5, 3.0, 50.0])
def test_postprocessed_against_own_quad(q):
    b = 1.5
    phi = softplus(0.4, 0.3)
    gen = dpbook.PostProcessed(b, phi)
    f = lambda x: phi(x) * Laplace(b).pdf(x, q)
    m = sum(
        integrate.quad(f, lo, hi, **QUAD)[0] for lo, hi in [(-np.inf, q), (q, np.inf)]
    )
    assert np.isclose(gen.mean(q), m, rtol=1e-10)
    assert np.isclose(gen.bias(q), m - q, rtol=1e-9, atol=1e-12 * q)
    g = lambda x: (phi(x) - m) ** 2 * Laplace(b).pdf(x, q)
    v = sum(
        integrate.quad(g, lo, hi, **QUAD)[0] for lo, hi in [(-np.inf, q), (q, np.inf)]
    )
    assert np.isclose(gen.variance(q), v, rtol=1e-9)
    assert np.isclose(gen.mse(q), v + (m - q) ** 2, rtol=1e-9)


def test_postprocessed_cdf_and_sampler():
    b = 1.0
    cases = [
        (
            dpbook.PostProcessed(b, ramp, breakpoints=[0.0]),
            dpbook.TranslatedRamp(b, 0.0),
        ),
        (
            dpbook.PostProcessed(
                b, lambda x: np.maximum(x - 0.4, 0.0), breakpoints=[0.4]
            ),
            dpbook.TranslatedRamp(b, 0.4),
        ),
    ]
    x = np.array([-1.0, 0.0, 0.3, 1.0, 2.5, 9.0])
    for gen, mech in cases:
        for q in [0.0, 1.2]:
            assert np.allclose(gen.cdf(x, q), mech.cdf(x, q), rtol=1e-10, atol=1e-13)
    # a non-monotone phi: |x| has cdf P(|Y| <= x) = F(x) - F(-x)
    absval = dpbook.PostProcessed(b, np.abs, breakpoints=[0.0])
    y = np.array([0.0, 0.2, 1.0, 3.0])
    assert np.allclose(
        absval.cdf(y, 0.7),
        stats.laplace(0.7, b).cdf(y) - stats.laplace(0.7, b).cdf(-y),
        rtol=1e-10,
    )
    gen = dpbook.PostProcessed(b, piecewise_linear, breakpoints=[0.2, 1.2])
    for q in [0.0, 2.0]:
        s = gen.sample(q, size=4000, rng=np.random.default_rng(2))
        pos = s[s > 0]
        mass = gen.cdf(0.0, q)
        assert np.isclose(mass, stats.laplace(q, b).cdf(0.2), rtol=1e-10)
        assert abs(np.sum(s == 0) - s.size * mass) < 5 * np.sqrt(
            s.size * mass * (1 - mass)
        )
        assert (
            stats.kstest(pos, lambda t: (gen.cdf(t, q) - mass) / (1 - mass)).pvalue
            > 1e-3
        )
        assert abs(s.mean() - gen.mean(q)) < 5 * np.sqrt(gen.variance(q) / s.size)


def test_certified_worst_bias_of_ramps():
    for b in [0.5, 2.0]:
        r = dpbook.PostProcessed(b, ramp, breakpoints=[0.0], tail=(0.0, 0.0))
        assert r.max_abs_bias() == pytest.approx(b / 2, rel=1e-12)
        plain = dpbook.PostProcessed(
            b, ramp, breakpoints=[0.0]
        ).certify_max_abs_bias()  # no tail: grid to 40b
        assert plain.value == pytest.approx(b / 2, rel=1e-12)
        assert (
            plain.lower <= b / 2 * (1 + 1e-12)
            and plain.upper >= b / 2
            and plain.upper - plain.lower < 1e-6 * b
        )
        for s in [0.1, 0.3517337112, 0.9]:
            a = s * b
            tr = dpbook.PostProcessed(
                b, lambda x, a=a: np.maximum(x - a, 0.0), breakpoints=[a], tail=(a, a)
            )
            cert = tr.certify_max_abs_bias()
            assert cert.tail_exact
            assert cert.value == pytest.approx(dpbook.ramp_worst_bias(a, b), rel=1e-12)
            assert cert.upper - cert.lower < 1e-6 * b


def test_certificate_brackets_the_truth_and_can_fail():
    """For a softplus the bracket must contain a brute-force maximum; a coarse step widens it."""
    b = 1.0
    gen = dpbook.PostProcessed(b, softplus(0.5, 0.2))
    fine = gen.certify_max_abs_bias(q_max=10.0)
    qs = np.linspace(0, 10.0, 41)
    k = int(np.argmax(np.abs(gen.bias(qs))))
    res = optimize.minimize_scalar(
        lambda q: -abs(gen.bias(q)),
        bounds=(qs[max(k - 1, 0)], qs[k + 1]),
        method="bounded",
    )
    brute = max(-res.fun, abs(gen.bias(qs[k])))
    assert fine.lower <= fine.upper and brute <= fine.upper * (1 + 1e-12)
    assert fine.upper - fine.lower < 1e-4
    coarse = gen.certify_max_abs_bias(q_max=10.0, step=0.5)
    assert coarse.upper - coarse.lower > 10 * (fine.upper - fine.lower)
    assert coarse.upper >= fine.lower


@pytest.mark.parametrize(
    "name,phi,bps,tail",
    [
        ("ramp", ramp, [0.0], (0.0, 0.0)),
        ("ramp-0.2", lambda x: np.maximum(x - 0.2, 0.0), [0.2], (0.2, 0.2)),
        (
            "ramp-a*",
            lambda x: np.maximum(x - dpbook.optimal_ramp_shift(1.0), 0.0),
            [dpbook.optimal_ramp_shift(1.0)],
            (dpbook.optimal_ramp_shift(1.0), dpbook.optimal_ramp_shift(1.0)),
        ),
        ("softplus0.3", softplus(0.3), [], None),
        ("softplus-shifted", softplus(0.2, 0.3), [], None),
        ("piecewise", piecewise_linear, [0.2, 1.2], (1.2, 0.7)),
        (
            "zero-then-identity",
            lambda x: np.where(x < 0.5, 0.0, x - 0.25),
            [0.5],
            (0.5, 0.25),
        ),
    ],
)
def test_prop5_lower_bound_holds(name, phi, bps, tail):
    b = 1.0
    cert = dpbook.PostProcessed(
        b, phi, breakpoints=bps, tail=tail
    ).certify_max_abs_bias()
    assert cert.upper >= cert.value >= dpbook.bias_lower_bound(b)
    assert cert.upper - cert.lower < 1e-3


def test_bad_inputs():
    for bad in [0, -1, np.nan, np.inf]:
        with pytest.raises(ValueError, match="scale"):
            dpbook.TranslatedRamp(bad, 0.0)
        with pytest.raises(ValueError, match="scale"):
            dpbook.optimal_ramp_shift(bad)
        with pytest.raises(ValueError, match="scale"):
            dpbook.bias_lower_bound(bad)
        with pytest.raises(ValueError, match="scale"):
            dpbook.PostProcessed(bad, ramp)
    for bad in [-0.1, np.nan, np.inf]:
        with pytest.raises(ValueError, match="shift"):
            dpbook.TranslatedRamp(1.0, bad)
        with pytest.raises(ValueError, match="shift"):
            dpbook.ramp_worst_bias(bad, 1.0)
    with pytest.raises(ValueError, match="phi"):
        dpbook.PostProcessed(1.0, lambda x: x)  # negative values
    with pytest.raises(ValueError, match="phi"):
        dpbook.PostProcessed(1.0, lambda x: np.where(x > 3, np.nan, 1.0))
    with pytest.raises(ValueError, match="phi"):
        dpbook.PostProcessed(1.0, "ramp")
    with pytest.raises(ValueError, match="tail"):
        dpbook.PostProcessed(1.0, ramp, tail=(0.0, 0.5))  # ramp is x - 0, not x - 0.5
    with pytest.raises(ValueError, match="tail"):
        dpbook.PostProcessed(1.0, ramp, tail=3.0)
    with pytest.raises(ValueError, match="breakpoints"):
        dpbook.PostProcessed(1.0, ramp, breakpoints=[np.nan])
    with pytest.raises(ValueError, match="q"):
        dpbook.TranslatedRamp(1.0, 0.2).bias(np.nan)
    with pytest.raises(ValueError, match="q_max"):
        dpbook.PostProcessed(1.0, ramp).max_abs_bias(q_max=-1.0)
    with pytest.raises(ValueError, match="step"):
        dpbook.PostProcessed(1.0, ramp).max_abs_bias(step=0.0)


# --- the members of V_+ used in Chapter 9 (dpbook.postprocessing: translated_ramp_phi, softplus_phi,
# piecewise_linear_phi) ------------------------------------------------------------------------------

from dpbook import piecewise_linear_phi, softplus_phi, translated_ramp_phi  # noqa: E402


def test_phi_families_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="shift"):
        translated_ramp_phi(-1.0)
    with pytest.raises(ValueError, match="width"):
        softplus_phi(0.3, 0.0)
    with pytest.raises(ValueError, match="slope"):
        piecewise_linear_phi(1.0, 1.0, 0.1)
    with pytest.raises(ValueError, match="offset"):
        piecewise_linear_phi(0.1, 3.0, 0.2)


@pytest.mark.parametrize(
    "kw, params",
    [
        (translated_ramp_phi(), {}),
        (translated_ramp_phi(0.7), {"shift": 0.7}),
        (softplus_phi(0.3, 0.2), {}),
        (
            piecewise_linear_phi(1.2, 3.0, 0.1),
            {"shift": 1.2, "slope": 3.0, "offset": 0.1},
        ),
        (
            piecewise_linear_phi(0.5, 1.5, 0.5),
            {"shift": 0.5, "slope": 1.5, "offset": 0.5},
        ),
    ],
)
def test_phi_families_are_nonnegative_with_their_declared_tail_and_kinks(kw, params):
    x = np.linspace(-50.0, 50.0, 20001)
    y = kw["phi"](x)
    assert y.shape == x.shape and np.all(np.isfinite(y)) and np.all(y >= 0)
    if kw["tail"] is not None:
        x0, c = kw["tail"]
        right = x >= x0
        assert np.allclose(y[right], x[right] - c, rtol=0, atol=1e-12)
    if "slope" in params:
        a, x1 = kw["breakpoints"]
        assert np.all(y[x <= a] == 0)
        assert (
            abs(kw["phi"](x1) - (x1 - params["offset"])) < 1e-12
        )  # continuous where the pieces meet
        middle = (x > a) & (x < x1)
        assert np.allclose(np.diff(y[middle]) / np.diff(x[middle]), params["slope"])


@pytest.mark.parametrize(
    "shift, slope, offset",
    [(0.5, 1.5, 0.5), (1.23533731, 3.34256629, 0.07404727), (0.0, 7.0, 0.0)],
)
def test_piecewise_linear_phi_at_one_float_is_the_array_answer(shift, slope, offset):
    """The quadratures call ``φ`` at one float (a Python float or a numpy one) at a time; that path returns the
    same double as the array path, at and around both kinks too."""
    kw = piecewise_linear_phi(shift, slope, offset)
    a, x1 = kw["breakpoints"]
    x = np.concatenate(
        [
            np.random.default_rng(7).uniform(-3.0, 6.0, 2000),
            [
                a,
                x1,
                np.nextafter(a, -1),
                np.nextafter(x1, -1),
                np.nextafter(x1, 9),
                -0.0,
            ],
        ]
    )
    whole = kw["phi"](x)
    one = np.array([kw["phi"](float(v)) for v in x])
    numpy_one = np.array([kw["phi"](v) for v in x])  # np.float64 elements
    assert np.array_equal(one, whole) and np.array_equal(numpy_one, whole)


def test_softplus_tends_to_the_translated_ramp():
    x = np.linspace(-5.0, 5.0, 1001)
    ramp = translated_ramp_phi(0.4)["phi"](x)
    for w, tol in [(0.1, 0.1 * np.log(2) + 1e-12), (0.01, 0.01 * np.log(2) + 1e-12)]:
        soft = softplus_phi(0.4, w)["phi"](x)
        assert np.all(soft >= ramp - 1e-12) and np.max(soft - ramp) <= tol


def test_every_phi_family_respects_the_prop5_constant():
    bound = dpbook.bias_lower_bound(1.0)
    for kw in (
        translated_ramp_phi(),
        translated_ramp_phi(dpbook.optimal_ramp_shift(1.0)),
        piecewise_linear_phi(1.0, 2.0, 0.2),
        piecewise_linear_phi(1.3, 4.0, 0.05),
    ):
        assert dpbook.PostProcessed(1.0, **kw).certify_max_abs_bias().lower >= bound
    assert (
        abs(dpbook.PostProcessed(1.0, **translated_ramp_phi()).max_abs_bias() - 0.5)
        < 1e-9
    )


def test_near_optimal_piecewise_linear_claim_of_chapter_9():
    """Chapter 9: this φ has B(φ) < 0.27848 b, within 1.2e-5 b of b W(1/e)."""
    for b in (1.0, 2.5):
        kw = piecewise_linear_phi(1.23533731 * b, 3.34256629, 0.07404727 * b)
        cert = dpbook.PostProcessed(b, **kw).certify_max_abs_bias(
            q_max=60.0 * b, step=0.002 * b
        )
        assert dpbook.bias_lower_bound(b) <= cert.lower <= cert.upper < 0.27848 * b


def test_translated_ramp_log_tails_exact():
    """``logcdf``/``logsf`` are BIT's at ``q - α`` in log space: the Laplace log-tail ``log(1/2) - d/b`` deep in
    a tail (``log(cdf)`` is ``-inf`` there), the atom at 0 is ``P(q + L <= α)``, and they equal
    ``log(cdf)``/``log(sf)`` where those do not underflow."""
    half = np.log(0.5)
    mech = dpbook.TranslatedRamp(1e-5, 0.5)
    assert np.isclose(mech.logcdf(2.0, 3.0), half - 5e4, rtol=1e-12, atol=0)
    assert np.isclose(mech.logsf(4.0, 3.0), half - 1.5e5, rtol=1e-12, atol=0)
    assert np.isclose(
        mech.logcdf(0.0, 3.0), half - 2.5e5, rtol=1e-12, atol=0
    )  # the atom at 0
    assert np.isclose(
        mech.logsf(0.0, 0.1), half - 4e4, rtol=1e-12, atol=0
    )  # P(M > 0) = P(q + L > α)
    assert mech.logcdf(-1.0, 3.0) == -np.inf and mech.logsf(-1.0, 0.1) == 0.0
    unit = dpbook.TranslatedRamp(1.0, 0.7)
    xs = np.linspace(-1.0, 6.0, 36)
    assert_log_tails_match_logs_of_the_law(unit, xs, (0.0, 0.5, 2.0, 5.0))
