"""Tests of dpbook.families.step, dpbook.design.least_bias and dpbook.design.least_count_bias: exact
step-function formulas, the verification, the linear program."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import dpbook
from dpbook import (
    Laplace,
    StepPostProcessed,
    dp_bias_lower_bound,
    laplace_cell_masses,
    min_bias_postprocessing,
    optimal_postprocessing,
    verify_bias,
    verify_mse,
)

W1E = 0.2784645427610738  # W(1/e), checked against bias_lower_bound below


@st.composite
def step_functions(draw):
    b = draw(st.floats(0.1, 10.0))
    n = draw(st.integers(1, 6))
    gaps = draw(st.lists(st.floats(0.05, 3.0), min_size=n - 1, max_size=n - 1))
    start = draw(st.floats(-5.0, 3.0))
    edges = b * (start + np.concatenate([[0.0], np.cumsum(gaps)]))
    values = b * np.array(draw(st.lists(st.floats(0.0, 10.0), min_size=n, max_size=n)))
    shift = edges[-1] - b * draw(st.floats(0.0, 5.0))
    q = b * draw(
        st.one_of(
            st.floats(0.0, 12.0), st.floats(12.0, 700.0), st.sampled_from([0.0, 700.0])
        )
    )
    return b, edges, values, shift, q


def _quad(g, q, edges, b):
    """∫ g(x) f_q(x) dx, split at q and at every edge."""
    cuts = np.unique(
        np.concatenate([[-np.inf, q, np.inf], edges, q + b * np.array([-30.0, 30.0])])
    )
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            val, _ = integrate.quad(
                lambda x: g(x) * Laplace(b).pdf(x, q),
                lo,
                hi,
                epsabs=1e-300,
                epsrel=1e-13,
                limit=200,
            )
            total += val
    return total


@settings(max_examples=60, deadline=None)
@given(step_functions())
def test_step_bias_matches_quadrature(args):
    b, edges, values, shift, q = args
    mech = StepPostProcessed(b, edges, values, shift)
    expected = _quad(lambda x: mech.phi(x) - x, q, edges, b)
    got = StepPostProcessed(b, edges, values, shift).bias(q)
    assert got == mech.bias(q)
    assert abs(got - expected) <= 1e-10 * max(abs(expected), b)


@settings(max_examples=60, deadline=None)
@given(step_functions())
def test_step_mse_matches_quadrature(args):
    b, edges, values, shift, q = args
    mech = StepPostProcessed(b, edges, values, shift)
    expected = _quad(lambda x: (mech.phi(x) - q) ** 2, q, edges, b)
    got = StepPostProcessed(b, edges, values, shift).mse(q)
    assert abs(got - expected) <= 1e-10 * max(expected, b * b)
    assert abs(mech.variance(q) - (got - mech.bias(q) ** 2)) <= 1e-12 * max(got, b * b)


def test_cell_masses_keep_relative_precision_in_both_tails():
    b, edges = 1.0, np.array([-1.0, 0.0, 1.0, 2.0])
    m = laplace_cell_masses(np.array([-600.0, 0.5, 600.0]), edges, b)
    tail = dpbook.Laplace(b).sf(2.0, np.array([-600.0, 0.5, 600.0]))
    assert np.allclose(m.sum(axis=-1) + tail, 1.0, atol=1e-15)
    # far right of every cell: mass of (0, 1] at q = 600 is (e - 1) e^{-600} / 2
    assert math.isclose(m[2, 2], 0.5 * (math.e - 1) * math.exp(-600.0), rel_tol=1e-12)
    assert math.isclose(
        m[0, 3], 0.5 * (1 - 1 / math.e) * math.exp(-601.0), rel_tol=1e-12
    )


def test_no_warning_or_nan_at_extremes():
    mech = StepPostProcessed(1.0, [0.0, 1.0], [0.0, 2.0], 0.5)
    q = np.array([0.0, 1e-9, 700.0, 1e6])
    for f in (mech.bias, mech.mse, mech.variance):
        assert np.all(np.isfinite(f(q)))
    assert abs(mech.bias(1e6) + 0.5) < 1e-9


@pytest.mark.parametrize("q", [0.0, 0.7, 3.0])
def test_sampler_matches_cdf_and_mean(q):
    rng = np.random.default_rng(20261121)
    mech = StepPostProcessed(1.3, [-0.5, 0.4, 1.1, 2.0], [0.3, 0.0, 1.05, 0.8], 0.9)
    x = mech.sample(q, size=40_000, rng=rng)
    # the continuous part (x > s - shift) by KS against the conditional cdf; the atoms by an exact chi-square
    s, d = mech.edges[-1], mech.shift
    cont = x[x > s - d]
    base = mech.cdf(s - d, q)
    cond = stats.kstest(cont, lambda t: (mech.cdf(t, q) - base) / (1 - base))
    assert cond.pvalue > 1e-3
    atoms = mech.atoms(q)
    observed = [np.sum(x == v) for v, _ in atoms] + [cont.size]
    expected = [p * x.size for _, p in atoms] + [(1 - base) * x.size]
    assert math.isclose(sum(expected), x.size, rel_tol=1e-12)
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    se = x.std() / math.sqrt(x.size)
    assert abs(x.mean() - mech.mean(q)) < 5 * se
    assert abs(np.mean((x - q) ** 2) - mech.mse(q)) < 5 * np.std(
        (x - q) ** 2
    ) / math.sqrt(x.size)


def test_logpdf_is_the_shifted_laplace_beyond_the_last_edge():
    mech = StepPostProcessed(2.0, [0.0, 1.0], [0.5, 0.0], 0.4)
    x = np.array([0.0, 0.7, 3.0])
    got = mech.logpdf(x, 1.5)
    assert got[0] == -np.inf
    assert np.allclose(got[1:], dpbook.Laplace(2.0).logpdf(x[1:] + 0.4, 1.5))


def test_translated_ramp_as_a_step_function_verifies_to_theorem_4_1():
    b = 1.7
    for alpha in (0.0, dpbook.optimal_ramp_shift(b), 1.2 * b):
        mech = StepPostProcessed(b, [alpha], [0.0], alpha)
        v = verify_bias(mech, step=b / 1000)
        exact = dpbook.ramp_worst_bias(alpha, b)
        assert abs(v.value - exact) < 1e-12 * b
        assert exact <= v.upper < exact + 1e-5 * b
        q = np.linspace(0, 5 * b, 11)
        assert np.allclose(
            mech.bias(q), dpbook.TranslatedRamp(b, alpha).bias(q), atol=1e-13 * b
        )


def test_verification_brackets_an_independent_certificate():
    rng = np.random.default_rng(7)
    b = 1.0
    edges = np.linspace(-2.0, 4.0, 13)
    values = rng.uniform(0.0, 4.0, edges.size)
    mech = StepPostProcessed(b, edges, values, 1.0)
    v = verify_bias(mech, step=0.002)
    s = edges[-1]
    phi = lambda x: np.where(x >= s, x - 1.0, mech.phi(x))  # noqa: E731 (phi differs at x = s only)
    pp = dpbook.PostProcessed(b, phi, breakpoints=edges, tail=(s, 1.0))
    cert = pp.certify_max_abs_bias(q_max=edges[-1] + 10 * b, step=0.002)
    assert v.value <= cert.upper + 1e-9 and cert.lower <= v.upper + 1e-9
    assert abs(v.value - cert.value) < 1e-6
    assert v.upper - v.value < 1e-3


@pytest.mark.parametrize("offset, shift", [(0.3, 0.0), (0.5, 0.2), (1.0, 0.0)])
def test_mse_verification_tail_is_exact(offset, shift):
    # phi lags below x - shift on the grid, so the MSE peaks beyond the last edge, at an interior point
    edges = np.linspace(-3.0, 2.0, 26)
    mid = np.concatenate([[edges[0]], 0.5 * (edges[:-1] + edges[1:])])
    mech = StepPostProcessed(1.0, edges, np.maximum(mid - shift - offset, 0.0), shift)
    v = verify_mse(mech, step=0.01, q_max=2.0)
    far = np.linspace(2.0, 60.0, 58001)
    mse = mech.mse(far)
    assert 2.0 < v.argmax < 60.0
    assert mse.max() - 1e-12 <= v.value <= mse.max() + 1e-8
    assert abs(v.argmax - far[np.argmax(mse)]) < 2e-3


def test_optimal_postprocessing_attains_the_proposition_5_bound():
    for b in (0.5, 1.0, 3.0):
        opt = optimal_postprocessing(b)
        lower = dpbook.bias_lower_bound(b)
        assert math.isclose(lower, W1E * b, rel_tol=1e-14)
        v = verify_bias(opt, step=b / 2000, q_max=20 * b)
        assert abs(v.value - lower) < 1e-12 * b
        assert v.upper < lower * (1 + 1e-5)
        q = np.linspace(0, opt.edges[-1], 50)
        assert np.allclose(
            opt.bias(q), b * np.exp((q - opt.edges[-1]) / b) - q, atol=1e-13 * b
        )
        assert abs(verify_mse(opt).value - (2 + W1E**2) * b * b) < 1e-12 * b * b


@pytest.fixture(scope="module")
def coarse_lp():
    return min_bias_postprocessing(
        scale=1.0,
        x_range=(-6.0, 12.0),
        cell=0.25,
        q_max=24.0,
        q_step=0.5,
        tame=None,
        check_step=0.005,
    )


@pytest.fixture(scope="module")
def fine_lp():
    return min_bias_postprocessing(
        scale=1.0, x_range=(-6.0, 12.0), cell=0.2, q_max=24.0, q_step=0.02
    )


def _independent_worst_bias(mech, q_max=40.0, n=40001):
    return max(np.abs(mech.bias(np.linspace(0.0, q_max, n))).max(), abs(mech.shift))


def test_coarse_grid_lets_the_program_cheat_and_the_verification_catches_it(coarse_lp):
    r = coarse_lp
    # the objective undercuts the proven lower bound: it cannot be a worst-case bias
    assert r.objective < dpbook.bias_lower_bound(1.0)
    assert r.bias.value > r.objective + 0.1
    assert (
        r.bias.value
        <= _independent_worst_bias(r.mechanism) + 1e-12
        <= r.bias.upper + 1e-12
    )


def test_returned_value_is_the_verified_one(fine_lp):
    r = fine_lp
    independent = _independent_worst_bias(r.mechanism)
    # the grid value can only miss the finer grid's maximum by the certified slack (here < 1e-4 b),
    # far less than the gap between the program's objective and the truth
    assert r.bias.value <= independent + 1e-12 <= r.bias.upper + 1e-12
    assert independent - r.bias.value < 1e-4 < independent - r.objective
    assert r.bias.value == verify_bias(r.mechanism, step=0.005).value
    assert r.bias.value >= r.objective - 1e-9
    # a valid worst-case bias obeys Proposition 5, and the tamed program gets within 0.2% of it
    assert (
        dpbook.bias_lower_bound(1.0)
        <= r.bias.value
        < 1.002 * dpbook.bias_lower_bound(1.0)
    )
    assert r.mse.value < 3.0
    assert r.mse.value >= np.max(r.mechanism.mse(np.linspace(0, 30, 3001))) - 1e-12


def test_dp_bias_lower_bound_is_the_best_integer_step():
    for eps in (0.05, 0.3, 1.0, 2.5, 10.0):
        k = np.arange(1, 2000)
        brute = np.max(k / (1 + np.exp(np.minimum(k * eps, 700))))
        assert math.isclose(dp_bias_lower_bound(eps, 1.0), brute, rel_tol=1e-12)
        assert dp_bias_lower_bound(eps, 1.0) * eps <= W1E + 1e-15
    assert abs(dp_bias_lower_bound(1e-4, 1e-4) - W1E) < 1e-6


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: StepPostProcessed(-1.0, [0.0], [0.0], 0.0).bias(0.0), "scale"),
        (
            lambda: StepPostProcessed(1.0, [1.0, 0.0], [0.0, 0.0], 0.0).bias(0.0),
            "edges",
        ),
        (lambda: StepPostProcessed(1.0, [0.0], [0.0, 1.0], 0.0).bias(0.0), "values"),
        (lambda: StepPostProcessed(1.0, [0.0], [-1.0], 0.0).bias(0.0), "values"),
        (lambda: StepPostProcessed(1.0, [0.0], [0.0], 1.0).bias(0.0), "shift"),
        (lambda: StepPostProcessed(1.0, [0.0], [0.0], 0.0).bias(np.nan), "q"),
        (lambda: verify_bias("ramp"), "mech"),
        (lambda: verify_bias(optimal_postprocessing(1.0), q_max=0.5), "q_max"),
        (lambda: verify_bias(optimal_postprocessing(1.0), step=0.0), "step"),
        (lambda: min_bias_postprocessing(scale=1.0, x_range=(1.0, 0.0)), "lower"),
        (lambda: min_bias_postprocessing(scale=1.0, x_range=(0.0, np.inf)), "x_range"),
        (lambda: min_bias_postprocessing(scale=1.0, cell=0.0), "cell"),
        (lambda: min_bias_postprocessing(scale=1.0, q_step=-1.0), "q_step"),
        (lambda: optimal_postprocessing(0.0), "scale"),
        (lambda: dp_bias_lower_bound(0.0, 1.0), "epsilon"),
        (lambda: dp_bias_lower_bound(1.0, np.inf), "sensitivity"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
