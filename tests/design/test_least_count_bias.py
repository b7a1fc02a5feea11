"""Tests of dpbook.families.step, dpbook.design.least_bias and dpbook.design.least_count_bias: exact
step-function formulas, the verification, the linear program."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# --- counts: the discrete analogue (Chapter 21) ---------------------------------------------------
from scipy import optimize

import dpbook
from dpbook import (
    CountPostProcessed,
    clamped_sum_bias,
    dp_bias_lower_bound,
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
        assert (
            abs(-d + alpha ** (q - T) * (beta_T + d) - brute)
            <= 1e-11 * max(post.scale, abs(d), 1.0) ** 2
        )
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
        assert math.isclose(
            rounded.mse(q), real.mse(q) + math.fsum(p * f * (1 - f)), rel_tol=1e-12
        )
        n = 200_000
        draws = rounded.sample(q, size=n, rng=7 + q)
        assert draws.dtype == np.int64 and draws.min() >= 0
        err = draws - q
        assert abs(err.mean() - real.bias(q)) < 5 * err.std() / math.sqrt(n)
        sq = err.astype(float) ** 2
        assert abs(sq.mean() - rounded.mse(q)) < 5 * sq.std() / math.sqrt(n)


@pytest.mark.parametrize(
    "b", [0.05, 0.3, 0.7, 1.0, 1.134, 1.135, 2.0, 5.0, 17.0, 60.0, 300.0]
)
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
    assert np.allclose(
        star.bias(q), B * alpha ** (-q) - q, rtol=0, atol=1e-12 * max(1.0, b)
    )
    far = np.array([t, t + 1, t + 5, 10 * t, 10**6 * max(1, int(b))])
    assert np.allclose(
        star.bias(far), -B, rtol=0, atol=1e-12 * max(1.0, b) * max(1.0, b)
    )
    v = verify_count_bias(star)
    assert abs(v.value - B) <= 1e-12 * max(
        1.0, b
    )  # absolute: at b = 0.05, B ~ 2e-9 is all cancellation
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


@pytest.mark.slow
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
        assert verify_count_bias(
            CountPostProcessed(b, np.zeros(s), min(d, s))
        ).value > B * (1 + 1e-6)


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
    return optimize.linprog(
        cost, A_ub=A, b_ub=rhs, bounds=[(0, None)] * (n + 1), method="highs"
    ).fun


@pytest.mark.parametrize("b", [0.5, 1.0, 3.0, 8.0])
def test_a_program_without_the_tail_form_finds_the_same_value(b):
    # a relaxation in q (only q <= Q) over every φ: a lower bound, equal to B* once Q >= t
    res = least_count_bias(b)
    for Q in (res.threshold, res.threshold + 10, int(6 * b) + 10):
        assert abs(_aggregated_lower_program(b, Q) - res.value) <= 1e-7 * max(1.0, b)
    if (
        res.threshold > 1
    ):  # the broken input: with Q < t the program cannot see the worst case
        assert _aggregated_lower_program(b, res.threshold - 1) < res.value - 1e-6


def test_the_program_over_output_laws_has_the_same_value():
    # integer outputs as a law P(φ(k) = j), j = 0..J: the linear program in those probabilities
    b, T, J = 2.0, 7, 14
    res = least_count_bias(b, integer=True, window=T)
    q = np.arange(T + 1, dtype=float)
    k = np.arange(T)
    P = math.tanh(0.5 / b) * np.exp(-np.abs(k[None, :] - q[:, None]) / b)
    # tail k >= T: φ(k) = k - d as before (d a free real, its mean only matters); φ = 0 below 0
    p_ge = np.array(
        [
            _brute(CountPostProcessed(b, [0.0] * T, 0.0), qq, lambda v, kk: kk >= T)
            for qq in q
        ]
    )
    m1 = np.array(
        [
            _brute(
                CountPostProcessed(b, [0.0] * T, 0.0),
                qq,
                lambda v, kk: (kk - qq) * (kk >= T),
            )
            for qq in q
        ]
    )
    const = m1 - q * (1 - p_ge)
    j = np.arange(J + 1)
    nx = T * (J + 1)  # x[k, j] = P(φ(k) = j)
    means = np.kron(
        P, j[None, :]
    )  # β(q) = Σ_k Σ_j j x[k, j] P(K = k - q) - d p_ge + const
    G = np.hstack([means, -p_ge[:, None]])
    ones = np.ones((T + 1, 1))
    A_ub = np.vstack(
        [
            np.hstack([G, -ones]),
            np.hstack([-G, -ones]),
            np.r_[np.zeros(nx), 1.0, -1.0][None, :],
            np.r_[np.zeros(nx), -1.0, -1.0][None, :],
        ]
    )
    b_ub = np.concatenate([-const, const, [0.0, 0.0]])
    A_eq = np.hstack([np.kron(np.eye(T), np.ones((1, J + 1))), np.zeros((T, 2))])
    cost = np.zeros(nx + 2)
    cost[-1] = 1.0
    lp = optimize.linprog(
        cost,
        A_ub=A_ub,
        b_ub=b_ub,
        A_eq=A_eq,
        b_eq=np.ones(T),
        bounds=[(0, 1)] * nx + [(None, T), (0, None)],
        method="highs",
    )
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
        (lambda: CountPostProcessed(1.0, [0.0], 0.0).sample([1, -2]), "q"),
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


@pytest.mark.parametrize(
    "b, total, n", [(0.5, 0, 1), (1.0, 3, 4), (2.0, 10, 7), (5.0, 40, 12), (3.0, 0, 30)]
)
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
        assert math.isclose(
            clamped_sum_bias(b, 0, 1),
            float(dpbook.DiscreteBIT(b, lower=0).bias(0)),
            rel_tol=1e-12,
        )


def test_clamped_sum_bias_simulates():
    b, total, n, reps = 5.0, 60, 60, 40_000
    rng = np.random.default_rng(3)
    S = total + dpbook.DiscreteLaplace(b).sample(
        np.zeros((reps, n), dtype=np.int64), rng=rng
    ).sum(axis=1)
    err = np.maximum(S, 0) - total
    assert abs(err.mean() - clamped_sum_bias(b, total, n)) < 5 * err.std() / math.sqrt(
        reps
    )


def test_geometric_tail_pieces_match_the_discrete_laplace_law():
    from dpbook.families.count_postprocessing import _dl_tail

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
            assert math.isclose(
                m1[i], math.fsum(pmf[keep] * k[keep]), rel_tol=1e-11, abs_tol=1e-300
            )
            assert math.isclose(
                m2[i],
                math.fsum(pmf[keep] * k[keep] ** 2.0),
                rel_tol=1e-11,
                abs_tol=1e-300,
            )


def test_step_post_processing_log_tails_are_exact_and_computed_in_logs():
    """``logcdf``/``logsf`` of a step post-processing: deep tails finite and exact, and equal to ``log(cdf)``,
    ``log(sf)`` wherever those do not underflow (the atoms and the linear tail included)."""
    deep = dpbook.StepPostProcessed(1e-5, edges=[0.0], values=[0.0], shift=0.0)
    half = math.log(0.5)
    assert deep.logcdf(2.0, 3.0) == pytest.approx(
        half - 1e5, rel=1e-15
    )  # the linear tail below x = 2
    assert deep.logsf(4.0, 3.0) == pytest.approx(half - 1e5, rel=1e-15)
    assert deep.logcdf(0.0, 3.0) == pytest.approx(
        half - 3e5, rel=1e-15
    )  # the atom at 0, 3e5 scales down
    assert deep.logsf(0.0, -3.0) == pytest.approx(half - 3e5, rel=1e-15)
    mech = dpbook.StepPostProcessed(
        1.0, edges=[-0.5, 0.3, 1.0], values=[0.0, 0.2, 0.7], shift=0.4
    )
    xs = np.array([-1.0, 0.0, 0.1, 0.2, 0.5, 0.7, 0.8, 1.0, 3.0, 10.0])
    for q in (-2.0, 0.0, 0.5, 3.0):
        cdf = np.asarray(mech.cdf(xs, q))
        with np.errstate(divide="ignore"):
            want_cdf, want_sf = np.log(cdf), np.log1p(-cdf)
        assert np.allclose(mech.logcdf(xs, q), want_cdf, rtol=1e-12, atol=1e-15)
        ok = cdf < 0.5  # there 1 - cdf loses nothing
        assert np.allclose(
            np.asarray(mech.logsf(xs, q))[ok], want_sf[ok], rtol=1e-12, atol=1e-15
        )
