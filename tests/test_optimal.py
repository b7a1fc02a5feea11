"""Tests of dpbook.optimal: exact step-function formulas, the verification, the linear program."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import dpbook
from dpbook.laplace import Laplace
from dpbook.optimal import StepPostProcessed, dp_bias_lower_bound, laplace_cell_masses, min_bias_postprocessing, optimal_postprocessing, verify_bias, verify_mse

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
    q = b * draw(st.one_of(st.floats(0.0, 12.0), st.floats(12.0, 700.0), st.sampled_from([0.0, 700.0])))
    return b, edges, values, shift, q


def _quad(g, q, edges, b):
    """∫ g(x) f_q(x) dx, split at q and at every edge."""
    cuts = np.unique(np.concatenate([[-np.inf, q, np.inf], edges, q + b * np.array([-30.0, 30.0])]))
    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            val, _ = integrate.quad(lambda x: g(x) * Laplace(b).pdf(x, q), lo, hi,
                                    epsabs=1e-300, epsrel=1e-13, limit=200)
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
    tail = dpbook.laplace.Laplace(b).sf(2.0, np.array([-600.0, 0.5, 600.0]))
    assert np.allclose(m.sum(axis=-1) + tail, 1.0, atol=1e-15)
    # far right of every cell: mass of (0, 1] at q = 600 is (e - 1) e^{-600} / 2
    assert math.isclose(m[2, 2], 0.5 * (math.e - 1) * math.exp(-600.0), rel_tol=1e-12)
    assert math.isclose(m[0, 3], 0.5 * (1 - 1 / math.e) * math.exp(-601.0), rel_tol=1e-12)


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
    assert abs(np.mean((x - q) ** 2) - mech.mse(q)) < 5 * np.std((x - q) ** 2) / math.sqrt(x.size)


def test_logpdf_is_the_shifted_laplace_beyond_the_last_edge():
    mech = StepPostProcessed(2.0, [0.0, 1.0], [0.5, 0.0], 0.4)
    x = np.array([0.0, 0.7, 3.0])
    got = mech.logpdf(x, 1.5)
    assert got[0] == -np.inf
    assert np.allclose(got[1:], dpbook.laplace.Laplace(2.0).logpdf(x[1:] + 0.4, 1.5))


def test_translated_ramp_as_a_step_function_verifies_to_theorem_4_1():
    b = 1.7
    for alpha in (0.0, dpbook.optimal_ramp_shift(b), 1.2 * b):
        mech = StepPostProcessed(b, [alpha], [0.0], alpha)
        v = verify_bias(mech, step=b / 1000)
        exact = dpbook.ramp_worst_bias(alpha, b)
        assert abs(v.value - exact) < 1e-12 * b
        assert exact <= v.upper < exact + 1e-5 * b
        q = np.linspace(0, 5 * b, 11)
        assert np.allclose(mech.bias(q), dpbook.TranslatedRamp(b, alpha).bias(q), atol=1e-13 * b)


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
        assert np.allclose(opt.bias(q), b * np.exp((q - opt.edges[-1]) / b) - q, atol=1e-13 * b)
        assert abs(verify_mse(opt).value - (2 + W1E**2) * b * b) < 1e-12 * b * b


@pytest.fixture(scope="module")
def coarse_lp():
    return min_bias_postprocessing(scale=1.0, x_range=(-6.0, 12.0), cell=0.25, q_max=24.0, q_step=0.5, tame=None,
                                   check_step=0.005)


@pytest.fixture(scope="module")
def fine_lp():
    return min_bias_postprocessing(scale=1.0, x_range=(-6.0, 12.0), cell=0.2, q_max=24.0, q_step=0.02)


def _independent_worst_bias(mech, q_max=40.0, n=40001):
    return max(np.abs(mech.bias(np.linspace(0.0, q_max, n))).max(), abs(mech.shift))


def test_coarse_grid_lets_the_program_cheat_and_the_verification_catches_it(coarse_lp):
    r = coarse_lp
    # the objective undercuts the proven lower bound: it cannot be a worst-case bias
    assert r.objective < dpbook.bias_lower_bound(1.0)
    assert r.bias.value > r.objective + 0.1
    assert r.bias.value <= _independent_worst_bias(r.mechanism) + 1e-12 <= r.bias.upper + 1e-12


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
    assert dpbook.bias_lower_bound(1.0) <= r.bias.value < 1.002 * dpbook.bias_lower_bound(1.0)
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
        (lambda: StepPostProcessed(1.0, [1.0, 0.0], [0.0, 0.0], 0.0).bias(0.0), "edges"),
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


# --- counts: the discrete analogue (Chapter 20) ---------------------------------------------------
from scipy import optimize

from dpbook.optimal import (
    clamped_sum_bias,
    CountPostProcessed,
    least_count_bias,
    optimal_count_postprocessing,
    optimal_count_threshold_rules,
    verify_count_bias,
)


def _brute(post, q, g, reach=None):
    """Σ_k g(φ(k), k) P(K = k - q) by direct summation over |k - q| <= reach (the rest < 1e-300)."""
    b = post.scale
    reach = int(750 * b) + 50 if reach is None else reach
    k = np.arange(int(q) - reach, int(q) + reach + 1)
    p = math.tanh(0.5 / b) * np.exp(-np.abs(k - q) / b)
    return math.fsum(p * g(np.asarray(post.phi(k)), k))


@st.composite
def count_maps(draw):
    b = draw(st.floats(0.05, 8.0))
    T = draw(st.integers(1, 8))
    values = draw(st.lists(st.floats(0.0, 20.0), min_size=T, max_size=T))
    shift = T - draw(st.floats(0.0, 10.0))
    q = draw(st.one_of(st.integers(0, 30), st.integers(30, 2000)))
    return CountPostProcessed(b, values, shift), q


@settings(max_examples=60, deadline=None)
@given(count_maps())
def test_count_bias_and_mse_match_brute_force_sums(args):
    post, q = args
    bias = _brute(post, q, lambda v, k: v - q)
    mse = _brute(post, q, lambda v, k: (v - q) ** 2)
    scale = max(post.scale, abs(post.shift), 1.0)
    assert abs(post.bias(q) - bias) <= 1e-12 * scale * scale
    assert abs(post.mean(q) - (q + bias)) <= 1e-12 * (q + scale * scale)
    assert abs(post.mse(q) - mse) <= 1e-11 * max(mse, scale * scale)


@settings(max_examples=30, deadline=None)
@given(count_maps())
def test_count_tail_formula_and_verification_are_exact(args):
    post, _ = args
    T, d = post.window, post.shift
    alpha = math.exp(-1 / post.scale)
    beta_T = post.bias(T)
    for q in (T + 1, T + 3, T + 40):
        brute = _brute(post, q, lambda v, k: v - q)
        assert abs(-d + alpha ** (q - T) * (beta_T + d) - brute) <= 1e-11 * max(post.scale, abs(d), 1.0) ** 2
    v = verify_count_bias(post)
    grid = np.abs(post.bias(np.arange(T + 200)))
    assert v.value >= grid.max() - 1e-12 * max(1.0, grid.max())
    assert v.value <= max(grid.max(), abs(d)) * (1 + 1e-12)


def test_randomized_rounding_keeps_the_mean_and_adds_its_variance():
    real = CountPostProcessed(1.5, [0.3, 0.0, 2.7, 3.5], 0.4)
    rounded = CountPostProcessed(1.5, [0.3, 0.0, 2.7, 3.5], 0.4, integer=True)
    for q in (0, 2, 9):
        assert rounded.bias(q) == real.bias(q)
        k = np.arange(q - 600, q + 601)
        p = math.tanh(0.5 / 1.5) * np.exp(-np.abs(k - q) / 1.5)
        f = np.asarray(real.phi(k)) % 1.0
        assert math.isclose(rounded.mse(q), real.mse(q) + math.fsum(p * f * (1 - f)), rel_tol=1e-12)
        n = 200_000
        draws = rounded.sample(q, size=n, rng=7 + q)
        assert draws.dtype == np.int64 and draws.min() >= 0
        err = draws - q
        assert abs(err.mean() - real.bias(q)) < 5 * err.std() / math.sqrt(n)
        sq = err.astype(float) ** 2
        assert abs(sq.mean() - rounded.mse(q)) < 5 * sq.std() / math.sqrt(n)


@pytest.mark.parametrize("b", [0.05, 0.3, 0.7, 1.0, 1.134, 1.135, 2.0, 5.0, 17.0, 60.0, 300.0])
def test_least_count_bias_is_the_group_privacy_floor_and_is_attained(b):
    res = least_count_bias(b)
    floor = dp_bias_lower_bound(1 / b, 1.0)
    assert math.isclose(res.value, floor, rel_tol=1e-12)
    # the program (exact: no truncation) agrees with the theorem; its map verifies to the same value
    assert abs(res.program_value - res.value) <= 1e-9 * max(1.0, b)
    assert abs(res.verified - res.value) <= 1e-9 * max(1.0, b)
    # the closed-form optimum: bias B α^{-q} - q up to t, exactly -B from t on
    star, t, B = res.optimum, res.threshold, res.value
    alpha = math.exp(-1 / b)
    q = np.arange(t + 1)
    assert np.allclose(star.bias(q), B * alpha ** (-q) - q, rtol=0, atol=1e-12 * max(1.0, b))
    far = np.array([t, t + 1, t + 5, 10 * t, 10**6 * max(1, int(b))])
    assert np.allclose(star.bias(far), -B, rtol=0, atol=1e-12 * max(1.0, b) * max(1.0, b))
    v = verify_count_bias(star)
    assert abs(v.value - B) <= 1e-12 * max(1.0, b)  # absolute: at b = 0.05, B ~ 2e-9 is all cancellation
    assert star.values[-1] >= 0 and star.values[:-1].max(initial=0.0) == 0.0


def test_the_threshold_value_is_nonnegative_exactly_when_t_beats_t_plus_1():
    # c(t) >= 0  <=>  g(t) >= g(t + 1), g(t) = t/(1 + e^{t/b}); at the argmax both hold, one step
    # further both fail (the broken input: the map built at t + 1 has c < 0)
    for b in np.geomspace(0.05, 500, 60):
        alpha = math.exp(-1 / b)
        g = lambda t: t / (1 + math.exp(t / b))
        for t in range(1, int(3 * b) + 3):
            B = g(t)
            c = (t - B) / (1 - alpha) - alpha / (1 - alpha) ** 2
            if abs(g(t) - g(t + 1)) > 1e-9 * g(t):
                assert (c >= 0) == (g(t) >= g(t + 1)), (b, t)


def test_plain_threshold_rules_are_optimal_exactly_when_listed():
    # φ = (k - d) 1{k >= s}: the worst-case bias is 1-Lipschitz in d and at least |d|, so a grid
    # of d in [-2B, 2B] with step h is within h/2 of the best rule that could come near B; where
    # the list is empty the best plain rule is clearly worse
    for b in (0.5, 0.8, 1.5, 2.0):
        assert optimal_count_threshold_rules(b) == []
        B = least_count_bias(b).value
        ds, h = np.linspace(-2 * B, 2 * B, 800, retstep=True)
        best = min(
            verify_count_bias(CountPostProcessed(b, np.zeros(s), d)).value
            for s in range(1, int(3 * b) + 10)
            for d in ds[ds <= s]
        )
        assert best - h / 2 > 1.005 * least_count_bias(b).value
    for b in (1.0, 3.0, 5.0, 10.0, 40.0):
        rules = optimal_count_threshold_rules(b)
        B = least_count_bias(b).value
        assert rules
        for rule in rules:
            assert abs(verify_count_bias(rule).value - B) <= 1e-12 * max(1.0, b)
        # the broken input: one more step of threshold (with its own d) is not optimal
        s = rules[-1].window + 1
        alpha = math.exp(-1 / b)
        d = s + alpha / (1 - alpha) - B * (1 + alpha) * alpha ** (-s)
        assert verify_count_bias(CountPostProcessed(b, np.zeros(s), min(d, s))).value > B * (1 + 1e-6)


@pytest.mark.parametrize("b", [0.3, 1.0, 2.0, 5.0, 12.0])
def test_a_least_bias_map_unbiased_from_a_small_count_on(b):
    res = least_count_bias(b)
    u, start = res.unbiased, res.unbiased_from
    assert u is not None and start is not None and u.shift == 0.0
    assert verify_count_bias(u).value <= res.value * (1 + 1e-7) + 1e-15
    far = np.arange(start, start + 60)
    assert np.max(np.abs(u.bias(far))) <= 1e-12 * max(1.0, b)
    assert abs(u.bias(start - 1)) > 1e-9 * max(1.0, b)  # and not from one count earlier
    # the closed-form optimum is biased by exactly -B* at those counts (the check above can fail)
    assert np.allclose(res.optimum.bias(far), -res.value, rtol=1e-12)


def _aggregated_lower_program(b, Q):
    """min τ over ALL φ >= 0 with |β(q)| <= τ only for q = 0..Q: φ(0) absorbs k <= 0 and φ(Q)
    absorbs k >= Q exactly (for 0 <= q <= Q, P(K = k - q) is geometric in k on both sides)."""
    q = np.arange(Q + 1)[:, None]
    k = np.arange(Q + 1)[None, :]
    M = math.tanh(0.5 / b) * np.exp(-np.abs(k - q) / b)
    n = Q + 1
    A = np.vstack([np.hstack([M, -np.ones((n, 1))]), np.hstack([-M, -np.ones((n, 1))])])
    rhs = np.concatenate([q.ravel(), -q.ravel()]).astype(float)
    cost = np.zeros(n + 1)
    cost[-1] = 1.0
    return optimize.linprog(cost, A_ub=A, b_ub=rhs, bounds=[(0, None)] * (n + 1), method="highs").fun


@pytest.mark.parametrize("b", [0.5, 1.0, 3.0, 8.0])
def test_a_program_without_the_tail_form_finds_the_same_value(b):
    # a relaxation in q (only q <= Q) over every φ: a lower bound, equal to B* once Q >= t
    res = least_count_bias(b)
    for Q in (res.threshold, res.threshold + 10, int(6 * b) + 10):
        assert abs(_aggregated_lower_program(b, Q) - res.value) <= 1e-7 * max(1.0, b)
    if res.threshold > 1:  # the broken input: with Q < t the program cannot see the worst case
        assert _aggregated_lower_program(b, res.threshold - 1) < res.value - 1e-6


def test_the_program_over_output_laws_has_the_same_value():
    # integer outputs as a law P(φ(k) = j), j = 0..J: the linear program in those probabilities
    b, T, J = 2.0, 7, 14
    res = least_count_bias(b, integer=True, window=T)
    q = np.arange(T + 1, dtype=float)
    k = np.arange(T)
    P = math.tanh(0.5 / b) * np.exp(-np.abs(k[None, :] - q[:, None]) / b)
    # tail k >= T: φ(k) = k - d as before (d a free real, its mean only matters); φ = 0 below 0
    p_ge = np.array([_brute(CountPostProcessed(b, [0.0] * T, 0.0), qq, lambda v, kk: kk >= T) for qq in q])
    m1 = np.array([_brute(CountPostProcessed(b, [0.0] * T, 0.0), qq, lambda v, kk: (kk - qq) * (kk >= T)) for qq in q])
    const = m1 - q * (1 - p_ge)
    j = np.arange(J + 1)
    nx = T * (J + 1)  # x[k, j] = P(φ(k) = j)
    means = np.kron(P, j[None, :])  # β(q) = Σ_k Σ_j j x[k, j] P(K = k - q) - d p_ge + const
    G = np.hstack([means, -p_ge[:, None]])
    ones = np.ones((T + 1, 1))
    A_ub = np.vstack([np.hstack([G, -ones]), np.hstack([-G, -ones]),
                      np.r_[np.zeros(nx), 1.0, -1.0][None, :], np.r_[np.zeros(nx), -1.0, -1.0][None, :]])
    b_ub = np.concatenate([-const, const, [0.0, 0.0]])
    A_eq = np.hstack([np.kron(np.eye(T), np.ones((1, J + 1))), np.zeros((T, 2))])
    cost = np.zeros(nx + 2)
    cost[-1] = 1.0
    lp = optimize.linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(T),
                          bounds=[(0, 1)] * nx + [(None, T), (0, None)], method="highs")
    assert abs(lp.fun - res.value) <= 1e-8


def test_least_bias_map_simulates_to_its_exact_bias():
    star = optimal_count_postprocessing(3.0, integer=True)
    n = 200_000
    for q in (0, 2, 4, 12):
        err = star.sample(q, size=n, rng=100 + q) - q
        assert abs(err.mean() - star.bias(q)) < 5 * err.std() / math.sqrt(n)


def test_counts_no_warning_or_nan_at_extremes():
    for b in (1e-3, 0.05, 1e4, 1e6):
        star = optimal_count_postprocessing(b)
        q = np.array([0.0, 1.0, 1e6 * b, 1e15])
        for f in (star.bias, star.mean, star.mse):
            out = np.asarray(f(q))
            assert np.isfinite(out).all()
        assert star.values[-1] >= 0


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: CountPostProcessed(0.0, [0.0], 0.0), "scale"),
        (lambda: CountPostProcessed(1.0, [], 0.0), "values"),
        (lambda: CountPostProcessed(1.0, [-1.0], 0.0), "values"),
        (lambda: CountPostProcessed(1.0, [0.0], 1.5), "shift"),
        (lambda: CountPostProcessed(1.0, [0.0], 0.0, integer=1), "integer"),
        (lambda: CountPostProcessed(1.0, [0.0], 0.0).bias(-1), "q"),
        (lambda: CountPostProcessed(1.0, [0.0], 0.0).bias(0.5), "q"),
        (lambda: CountPostProcessed(1.0, [0.0], 0.0).phi(0.5), "k"),
        (lambda: CountPostProcessed(1.0, [0.0], 0.0).sample([1, 2]), "q"),
        (lambda: verify_count_bias("clamp"), "post"),
        (lambda: least_count_bias(-1.0), "scale"),
        (lambda: least_count_bias(5000.0), "scale"),
        (lambda: least_count_bias(2.0, window=3), "window"),
        (lambda: least_count_bias(2.0, window=10**6), "window"),
        (lambda: least_count_bias(2.0, integer="yes"), "integer"),
        (lambda: optimal_count_postprocessing(np.nan), "scale"),
        (lambda: optimal_count_postprocessing(1e7), "scale"),
        (lambda: optimal_count_threshold_rules(1e4), "scale"),
        (lambda: clamped_sum_bias(0.0, 1, 1), "scale"),
        (lambda: clamped_sum_bias(1.0, -1, 1), "total"),
        (lambda: clamped_sum_bias(1.0, 1.5, 1), "total"),
        (lambda: clamped_sum_bias(1.0, 1, 0), "n"),
    ],
)
def test_counts_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("b, total, n", [(0.5, 0, 1), (1.0, 3, 4), (2.0, 10, 7), (5.0, 40, 12), (3.0, 0, 30)])
def test_clamped_sum_bias_matches_the_convolved_law(b, total, n):
    law = dpbook.DiscreteLaplace(b)
    reach = int(60 * b) + 20
    k = np.arange(-reach, reach + 1)
    pmf = np.asarray(law.pmf(k, 0))
    summed = np.array([1.0])
    for _ in range(n):
        summed = np.convolve(summed, pmf)
    s = total + np.arange(-n * reach, n * reach + 1)
    brute = math.fsum(summed * np.maximum(-s, 0))
    assert abs(clamped_sum_bias(b, total, n) - brute) <= 1e-12 * max(1.0, brute)
    if total == 0 and n == 1:  # one release of a zero count: clamping's bias α/(1 - α²)
        assert math.isclose(clamped_sum_bias(b, 0, 1), float(dpbook.DiscreteBIT(b, lower=0).bias(0)), rel_tol=1e-12)


def test_clamped_sum_bias_simulates():
    b, total, n, reps = 5.0, 60, 60, 40_000
    rng = np.random.default_rng(3)
    S = total + dpbook.DiscreteLaplace(b).sample(np.zeros((reps, n), dtype=np.int64), rng=rng).sum(axis=1)
    err = np.maximum(S, 0) - total
    assert abs(err.mean() - clamped_sum_bias(b, total, n)) < 5 * err.std() / math.sqrt(reps)


def test_geometric_tail_pieces_match_the_discrete_laplace_law():
    from dpbook.optimal import _dl_tail

    for b in (0.05, 1.0, 7.0, 300.0):
        law = dpbook.DiscreteLaplace(b)
        s = np.array([-2000, -40, -3, -1, 0, 1, 2, 5, 60, 4000])
        p_ge, p_lt, m1, m2 = _dl_tail(s, b)
        assert np.allclose(p_ge, law.sf(s - 1, 0), rtol=1e-12, atol=0)
        assert np.allclose(p_lt, law.cdf(s - 1, 0), rtol=1e-12, atol=0)
        k = np.arange(-int(800 * b) - 50, int(800 * b) + 51)
        pmf = np.asarray(law.pmf(k, 0))
        for i, si in enumerate(s):
            keep = k >= si
            assert math.isclose(m1[i], math.fsum(pmf[keep] * k[keep]), rel_tol=1e-11, abs_tol=1e-300)
            assert math.isclose(m2[i], math.fsum(pmf[keep] * k[keep] ** 2.0), rel_tol=1e-11, abs_tol=1e-300)


def test_step_post_processing_log_tails_are_exact_and_computed_in_logs():
    """``logcdf``/``logsf`` of a step post-processing: deep tails finite and exact, and equal to ``log(cdf)``,
    ``log(sf)`` wherever those do not underflow (the atoms and the linear tail included)."""
    deep = dpbook.StepPostProcessed(1e-5, edges=[0.0], values=[0.0], shift=0.0)
    half = math.log(0.5)
    assert deep.logcdf(2.0, 3.0) == pytest.approx(half - 1e5, rel=1e-15)   # the linear tail below x = 2
    assert deep.logsf(4.0, 3.0) == pytest.approx(half - 1e5, rel=1e-15)
    assert deep.logcdf(0.0, 3.0) == pytest.approx(half - 3e5, rel=1e-15)   # the atom at 0, 3e5 scales down
    assert deep.logsf(0.0, -3.0) == pytest.approx(half - 3e5, rel=1e-15)
    mech = dpbook.StepPostProcessed(1.0, edges=[-0.5, 0.3, 1.0], values=[0.0, 0.2, 0.7], shift=0.4)
    xs = np.array([-1.0, 0.0, 0.1, 0.2, 0.5, 0.7, 0.8, 1.0, 3.0, 10.0])
    for q in (-2.0, 0.0, 0.5, 3.0):
        cdf = np.asarray(mech.cdf(xs, q))
        with np.errstate(divide="ignore"):
            want_cdf, want_sf = np.log(cdf), np.log1p(-cdf)
        assert np.allclose(mech.logcdf(xs, q), want_cdf, rtol=1e-12, atol=1e-15)
        ok = cdf < 0.5   # there 1 - cdf loses nothing
        assert np.allclose(np.asarray(mech.logsf(xs, q))[ok], want_sf[ok], rtol=1e-12, atol=1e-15)
