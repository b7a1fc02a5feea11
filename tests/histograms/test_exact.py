"""Tests of dpbook/histograms/exact.py: every exact value against brute force (enumeration, quadrature,
Monte Carlo at 5 standard errors), extreme scales, and Zhu et al. (2021)'s sign pattern."""

import math

import numpy as np
import pytest
from noise_lattice import noise_lattice
from scipy import integrate

import dpbook
from dpbook import (
    POSTPROCESSINGS,
    DiscreteLaplace,
    Laplace,
    histogram_moments,
    simulate_histogram_moments,
)
from dpbook.histograms import _engine, exact

POSTS = list(POSTPROCESSINGS)


# --- brute force, written here --------------------------------------------------------------------


def enumerate_moments(post, counts, scale, total):
    """Mean and MSE by summing over every noise vector with |k_i| <= M (product of discrete Laplace pmfs)."""
    c, w, y = noise_lattice(counts, scale)
    x = np.asarray(POSTPROCESSINGS[post](y, total), dtype=float)
    return w @ x, w @ (x - c) ** 2, 1 - w.sum()


def monte_carlo(post, counts, mech, total, n=10**6, seed=0):
    """Mean, MSE and their standard errors from ``n`` seeded releases computed here."""
    c = np.asarray(counts, dtype=float)
    rng = np.random.default_rng(seed)
    if isinstance(mech, Laplace):
        y = c + rng.laplace(0.0, mech.scale, size=(n, c.size))
    else:
        y = c + dpbook.discrete_laplace_noise(mech.scale, (n, c.size), rng=rng)
    x = np.asarray(POSTPROCESSINGS[post](y, total), dtype=float)
    sq = (x - c) ** 2
    return x.mean(0), x.std(0) / math.sqrt(n), sq.mean(0), sq.std(0) / math.sqrt(n)


def laplace_difference_density(d, b):
    return (1 + abs(d) / b) * math.exp(-abs(d) / b) / (4 * b)


def quad_two_cells(post, c, b, total):
    """``E[x]`` and ``E[(x - c)²]`` on two cells by scipy quadrature over ``D = K_1 - K_2``."""
    a = c[0] - c[1] + total

    def x1(d):
        v = (a + d) / 2
        if post == "integer_simplex":
            v = math.floor(v + 0.5)
        return min(max(v, 0.0), total)

    jumps = [2 * j - 1 - a for j in range(int(total) + 2)]
    kinks = sorted(
        {-a, 2 * total - a, 0.0, *(jumps if post == "integer_simplex" else [])}
    )
    edges = [-80 * b, *[p for p in kinks if abs(p) < 80 * b], 80 * b]
    out = []
    for f in (
        lambda d: x1(d),
        lambda d: (x1(d) - c[0]) ** 2,
        lambda d: (total - x1(d) - c[1]) ** 2,
    ):
        s = 0.0
        for lo, hi in zip(edges[:-1], edges[1:]):
            if hi > lo:
                v, _ = integrate.quad(
                    lambda d: f(d) * laplace_difference_density(d, b),
                    lo,
                    hi,
                    epsabs=1e-14,
                    epsrel=1e-12,
                    limit=200,
                )
                s += v
        out.append(s)
    return np.array([out[0], total - out[0]]), np.array(out[1:])


# --- discrete noise: lattice sums against enumeration ---------------------------------------------


@pytest.mark.parametrize(
    "n, cases, top",
    [
        (2, 5, 1.8),
        (3, 2, 0.6),
        pytest.param(3, 6, 0.9, marks=pytest.mark.slow),
    ],
)
def test_discrete_against_enumeration(n, cases, top):
    rng = np.random.default_rng(20 + n + cases)
    for _ in range(cases):
        counts = rng.integers(0, 12, size=n)
        scale = float(rng.uniform(0.2, top))
        total = int(max(0, counts.sum() + rng.integers(-3, 4)))
        for post in POSTS:
            m = histogram_moments(post, counts, DiscreteLaplace(scale), total=total)
            mean, mse, lost = enumerate_moments(post, counts, scale, total)
            assert lost < 1e-15
            assert m.exact and m.se is None
            tol = m.error + 1e-12 * (1 + total**2)
            assert m.error < 1e-10
            np.testing.assert_allclose(m.mean, mean, rtol=0, atol=tol)
            np.testing.assert_allclose(m.mse, mse, rtol=0, atol=tol)
            np.testing.assert_allclose(m.bias, m.mean - counts, rtol=0, atol=1e-15 * 50)


@pytest.mark.slow
@pytest.mark.parametrize("n", [2, 3])
def test_discrete_against_monte_carlo(n):
    counts = [0, 4, 15][:n] if n == 3 else [2, 9]
    mech = DiscreteLaplace(3.0)
    for post in ("simplex", "integer_simplex"):
        m = histogram_moments(post, counts, mech)
        mean, se, mse, mse_se = monte_carlo(post, counts, mech, sum(counts))
        assert (np.abs(m.mean - mean) < 5 * se).all()
        assert (np.abs(m.mse - mse) < 5 * mse_se).all()


def test_lattice_laws_sum_to_one_and_match_convolution():
    lam = 1 / 1.3
    d = np.arange(-300, 301.0)
    assert _engine.difference_pmf(d, lam).sum() == pytest.approx(1, abs=1e-14)
    d1, d2 = np.meshgrid(d[200:401], d[200:401], indexing="ij")
    assert _engine.difference_pmf2(d1, d2, lam).sum() == pytest.approx(1, abs=1e-13)
    k = np.arange(-200, 201.0)
    p = np.tanh(lam / 2) * np.exp(-np.abs(k) * lam)
    for a, b in [(0, 0), (3, -2), (5, 5), (-4, 7), (0, 6)]:
        brute = sum(
            p[i] * p[i + a] * p[i + b]
            for i in range(20, 380)
            if 0 <= i + a < k.size and 0 <= i + b < k.size
        )
        got = _engine.difference_pmf2(np.array(float(a)), np.array(float(b)), lam)
        assert got == pytest.approx(brute, rel=1e-12)
    for m in (0, 3, 10):
        tail = 1 - _engine.difference_pmf(np.arange(-m, m + 1.0), lam).sum()
        assert _engine.difference_tail(m, lam) == pytest.approx(tail, rel=1e-9)


# --- Laplace noise -------------------------------------------------------------------------------


def test_laplace_two_cells_against_quadrature():
    rng = np.random.default_rng(3)
    cases = [([1.0, 9.0], 2.0, 10.0), ([0.0, 0.0], 1.0, 0.0), ([4.0, 4.0], 0.3, 8.0)]
    for _ in range(6):
        c = rng.integers(0, 15, size=2).astype(float)
        cases.append(
            (
                c,
                float(rng.choice([0.05, 0.7, 3.0, 40.0])),
                float(max(0, c.sum() + rng.integers(-4, 5))),
            )
        )
    for c, b, total in cases:
        for post in ("simplex", "integer_simplex"):
            m = histogram_moments(post, c, Laplace(b), total=total)
            mean, mse = quad_two_cells(post, c, b, total)
            tol = m.error + 1e-10 * (1 + total**2)
            np.testing.assert_allclose(m.mean, mean, rtol=0, atol=tol)
            np.testing.assert_allclose(m.mse, mse, rtol=0, atol=tol)


@pytest.mark.parametrize(
    "post, draws",
    [
        ("simplex", 10**5),
        pytest.param("simplex", 10**6, marks=pytest.mark.slow),
        pytest.param("integer_simplex", 10**6, marks=pytest.mark.slow),
    ],
)
def test_laplace_three_cells_against_monte_carlo(post, draws):
    cases = [([0.0, 2.0, 8.0], 2.0, None), ([3.0, 0.0, 1.0], 0.7, 6.0)]
    for c, b, total in cases[: 1 if draws < 10**6 else 2]:
        t = sum(c) if total is None else total
        m = histogram_moments(post, c, Laplace(b), total=total)
        assert m.error < 1e-9
        mean, se, mse, mse_se = monte_carlo(post, c, Laplace(b), t, n=draws, seed=4)
        assert (np.abs(m.mean - mean) < 5 * se).all(), (m.mean, mean, se)
        assert (np.abs(m.mse - mse) < 5 * mse_se).all(), (m.mse, mse, mse_se)


def test_laplace_clamp_and_raw_are_the_one_count_families():
    c = np.array([0.0, 1.5, 7.0])
    m = histogram_moments("clamp", c, Laplace(2.0))
    bit = dpbook.BIT(2.0, lower=0.0, upper=np.inf)
    np.testing.assert_array_equal(m.bias, np.asarray(bit.mean(c)) - c)
    np.testing.assert_array_equal(m.mse, bit.mse(c))
    mean, se, mse, mse_se = monte_carlo("clamp", c, Laplace(2.0), None)
    assert (np.abs(m.mean - mean) < 5 * se).all() and (
        np.abs(m.mse - mse) < 5 * mse_se
    ).all()
    r = histogram_moments("raw", [1, 2], DiscreteLaplace(2.0))
    assert (
        r.bias.tolist() == [0.0, 0.0]
        and r.mse.tolist() == [DiscreteLaplace(2.0).variance(0)] * 2
    )


# --- extreme scales -------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-300, 1e-12])
@pytest.mark.parametrize("mech_type", [Laplace, DiscreteLaplace])
def test_tiny_scales_release_the_counts(scale, mech_type):
    for counts in ([1, 9], [0, 2, 8]):
        for post in POSTS:
            m = histogram_moments(post, counts, mech_type(scale))
            np.testing.assert_allclose(m.mean, counts, rtol=0, atol=1e-10)
            np.testing.assert_allclose(m.mse, 0.0, rtol=0, atol=1e-10)


def test_huge_laplace_scales():
    for b in (1e6, 1e12, 1e90):  # two cells: closed forms, against quadrature
        for post in ("simplex", "integer_simplex"):
            m = histogram_moments(post, [1.0, 9.0], Laplace(b))
            mean, mse = quad_two_cells(post, [1.0, 9.0], b, 10.0)
            np.testing.assert_allclose(m.mean, mean, rtol=0, atol=1e-9 + m.error)
            np.testing.assert_allclose(m.mse, mse, rtol=1e-9, atol=m.error)


def test_huge_laplace_scale_three_cells():
    m = histogram_moments("simplex", [0.0, 2.0, 8.0], Laplace(1e6))  # three cells: MC
    mean, se, mse, mse_se = monte_carlo("simplex", [0.0, 2.0, 8.0], Laplace(1e6), 10.0)
    assert (np.abs(m.mean - mean) < 5 * se).all() and (
        np.abs(m.mse - mse) < 5 * mse_se
    ).all()
    with pytest.raises(
        ValueError, match="mechanism"
    ):  # noise that swamps the total in doubles
        histogram_moments("simplex", [0.0, 2.0, 8.0], Laplace(1e12))
    with pytest.raises(ValueError, match="mechanism"):
        histogram_moments("simplex", [1.0, 9.0], Laplace(1e101))


def test_huge_discrete_scales_are_refused_before_allocating():
    with pytest.raises(ValueError, match="mechanism.*simulated"):
        histogram_moments("simplex", [1, 2, 3], DiscreteLaplace(1e6))
    m = histogram_moments(
        "clamp", [1, 2, 3], DiscreteLaplace(1e12)
    )  # closed forms need no lattice
    assert np.isfinite(m.mse).all()


# --- the simulation and the API -------------------------------------------------------------------


@pytest.mark.parametrize("post", POSTS)
@pytest.mark.parametrize("mech", [Laplace(1.5), DiscreteLaplace(1.5)])
def test_simulation_covers_the_exact_values(mech, post):
    for counts in ([1, 9], [0, 2, 3]):
        m = histogram_moments(post, counts, mech)
        s = simulate_histogram_moments(post, counts, mech, n_sims=50_000, rng=9)
        assert not s.exact and s.error is None
        assert (np.abs(s.bias - m.bias) <= 5 * s.se).all()
        assert (np.abs(s.mse - m.mse) <= 5 * s.mse_se).all()
        again = simulate_histogram_moments(post, counts, mech, n_sims=50_000, rng=9)
        assert np.array_equal(again.bias, s.bias)


def test_simulation_is_vectorized_over_histograms():
    counts = np.array([[1, 9, 0, 4], [5, 5, 5, 5]])
    s = simulate_histogram_moments("simplex", counts, Laplace(1.0), n_sims=1000, rng=1)
    assert s.bias.shape == (2, 4) and s.se.shape == (2, 4)
    np.testing.assert_allclose(s.bias.sum(-1), 0.0, atol=1e-9)  # the total is kept


def test_bad_input():
    with pytest.raises(ValueError, match="counts.*simulate_histogram_moments"):
        histogram_moments("simplex", [1, 2, 3, 4], Laplace(1.0))
    with pytest.raises(ValueError, match="counts"):
        histogram_moments("simplex", [[1, 2], [3, 4]], Laplace(1.0))
    with pytest.raises(ValueError, match="total"):
        histogram_moments("integer_simplex", [1, 2], Laplace(1.0), total=2.5)
    with pytest.raises(ValueError, match="total"):
        histogram_moments("simplex", [1, 2], Laplace(1.0), total=-1)
    with pytest.raises(ValueError, match="mechanism"):
        histogram_moments("simplex", [1, 2], dpbook.BIT(1.0, lower=0.0, upper=1.0))
    with pytest.raises(ValueError, match="post"):
        histogram_moments("nearest", [1, 2], Laplace(1.0))
    with pytest.raises(ValueError, match="n_sims"):
        simulate_histogram_moments("raw", [1, 2], Laplace(1.0), n_sims=1, rng=0)


def test_exported():
    """Each public name is in ``dpbook.__all__`` and ``dpbook.histograms`` (by name: the doctest run may
    import the module file a second time, so object identity is not the check)."""
    for name in exact.__all__:
        assert name in dpbook.__all__ and name in dpbook.histograms.__all__
        assert type(getattr(dpbook, name)) is type(getattr(exact, name))


# --- Zhu, Van Hentenryck & Fioretto (2021): the simplex projection moves counts toward the middle ---


def _zhu_counts(n):
    return np.array([1] + [10] * (n - 2) + [100])


@pytest.mark.slow
def test_zhu_sign_pattern_and_growth_with_cells():
    """Projecting onto the simplex of the true total biases the smallest count up and the largest down,
    exactly on 3 cells and at 5 SE on 10 and 50; the smallest count's bias grows with the number of cells
    (toward the clamp's bias), while the largest count's (shared among more cells) shrinks."""
    mech = Laplace(2.0)
    small = []
    large = []
    m3 = histogram_moments("simplex", _zhu_counts(3), mech)
    assert m3.bias[0] > 0 > m3.bias[-1]
    d3 = histogram_moments("simplex", _zhu_counts(3), DiscreteLaplace(2.0))
    assert d3.bias[0] > 0 > d3.bias[-1]
    small.append((m3.bias[0], 0.0))
    large.append((m3.bias[-1], 0.0))
    for n in (10, 50):
        s = simulate_histogram_moments(
            "simplex", _zhu_counts(n), mech, n_sims=10**6, rng=n
        )
        assert s.bias[0] > 5 * s.se[0]
        assert s.bias[-1] < -5 * s.se[-1]
        small.append((s.bias[0], s.se[0]))
        large.append((s.bias[-1], s.se[-1]))
    for (b1, s1), (b2, s2) in zip(small[:-1], small[1:]):
        assert b2 - b1 > 5 * math.hypot(s1, s2)
    for (b1, s1), (b2, s2) in zip(large[:-1], large[1:]):
        assert b2 - b1 > 5 * math.hypot(s1, s2)  # less negative per cell
    clamp = dpbook.BIT(2.0, lower=0.0, upper=np.inf).bias(1.0)
    assert small[-1][0] < clamp


@pytest.mark.slow
def test_zhu_many_small_cells_and_one_large():
    """With many small cells and one large, the pattern keeps its signs but the sizes move the other way:
    each small cell's upward bias shrinks with the number of cells and the large cell pays more."""
    mech = Laplace(2.0)
    rows = [histogram_moments("simplex", [1, 1, 100], mech)]
    for n in (10, 50):
        counts = [1] * (n - 1) + [100]
        rows.append(
            simulate_histogram_moments("simplex", counts, mech, n_sims=10**6, rng=n)
        )
    se = [np.zeros(2)] + [s.se[[0, -1]] for s in rows[1:]]
    bias = [r.bias[[0, -1]] for r in rows]
    for b, s in zip(bias, se):
        assert b[0] > 5 * s[0] and b[1] < -5 * s[1]
    for (b1, s1), (b2, s2) in zip(zip(bias, se), zip(bias[1:], se[1:])):
        assert b1[0] - b2[0] > 5 * math.hypot(s1[0], s2[0])  # small cells: less
        assert b1[1] - b2[1] > 5 * math.hypot(s1[1], s2[1])  # the large cell: more
