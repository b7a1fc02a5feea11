"""Tests of dpbook/histograms/allocation.py: proportional allocation and the expected misallocation."""

import math

import numpy as np
import pytest
from noise_lattice import noise_lattice

import dpbook
from dpbook import (
    POSTPROCESSINGS,
    DiscreteLaplace,
    Laplace,
    allocate,
    expected_misallocation,
)
from dpbook.histograms import allocation


def test_allocate_shares_the_funds_among_the_eligible():
    rng = np.random.default_rng(0)
    x = rng.normal(5, 6, size=(2000, 4))
    thr = rng.uniform(-2, 8, size=(2000, 1))
    out = np.stack([allocate(row, 50.0, threshold=t[0]) for row, t in zip(x, thr)])
    eligible = (x >= thr) & (x > 0)
    anyone = eligible.any(axis=1)
    np.testing.assert_allclose(out[anyone].sum(1), 50.0, rtol=1e-13)
    assert (out[~anyone] == 0).all() and (~anyone).any()
    assert (out[~eligible] == 0).all()
    i = np.flatnonzero(anyone)[0]
    share = x[i] * eligible[i] / (x[i] * eligible[i]).sum() * 50.0
    np.testing.assert_allclose(out[i], share, rtol=1e-13)
    # vectorized over leading axes, funds per histogram
    batch = allocate(x[:5], np.arange(5.0), threshold=2.0)
    for j in range(5):
        np.testing.assert_allclose(batch[j], allocate(x[j], float(j), threshold=2.0))
    assert allocate([0, 0, 0], 10.0).tolist() == [0.0, 0.0, 0.0]
    assert allocate([10, 30, 2], 100.0, threshold=5).tolist() == [25.0, 75.0, 0.0]


def test_allocate_bad_input():
    with pytest.raises(ValueError, match="funds"):
        allocate([1, 2], -1.0)
    with pytest.raises(ValueError, match="counts"):
        allocate([1, np.nan], 1.0)
    with pytest.raises(ValueError, match="counts"):
        allocate(3.0, 1.0)
    with pytest.raises(ValueError, match="threshold"):
        allocate([1, 2], 1.0, threshold=np.inf)
    with pytest.raises(ValueError, match="funds"):
        allocate([[1, 2], [3, 4]], [1.0, 2.0, 3.0])


def enumerate_misallocation(post, counts, scale, funds, threshold, total):
    c, w, y = noise_lattice(counts, scale)
    x = np.asarray(POSTPROCESSINGS[post](y, total), dtype=float)
    return w @ allocate(x, funds, threshold=threshold) - allocate(
        c, funds, threshold=threshold
    )


@pytest.mark.parametrize("n", [1, 2, 3])
def test_exact_misallocation_against_enumeration(n):
    rng = np.random.default_rng(n)
    for _ in range(3):
        counts = rng.integers(0, 10, size=n)
        scale = float(rng.uniform(0.3, 1.5 if n < 3 else 0.45))
        threshold = float(rng.choice([0, 2, 4.5]))
        total = int(counts.sum())
        for post in POSTPROCESSINGS:
            m = expected_misallocation(
                post, counts, DiscreteLaplace(scale), 100.0, threshold=threshold
            )
            brute = enumerate_misallocation(
                post, counts, scale, 100.0, threshold, total
            )
            assert m.exact and m.se is None and m.error < 1e-9
            np.testing.assert_allclose(m.expected, brute, rtol=0, atol=m.error + 1e-11)


@pytest.mark.parametrize("post", list(POSTPROCESSINGS))
def test_exact_misallocation_against_simulation(post):
    counts, mech = [1, 4, 12], DiscreteLaplace(1.2)
    exact = expected_misallocation(post, counts, mech, 100.0, threshold=3)
    direct = _simulate(post, counts, mech, 100.0, 3, 200_000, seed=5)
    mean, se = direct
    assert (np.abs(exact.expected - mean) < 5 * se).all(), (exact.expected, mean, se)


def _simulate(post, counts, mech, funds, threshold, n, seed):
    c = np.asarray(counts, dtype=float)
    rng = np.random.default_rng(seed)
    y = c + dpbook.discrete_laplace_noise(mech.scale, (n, c.size), rng=rng)
    x = np.asarray(POSTPROCESSINGS[post](y, int(c.sum())), dtype=float)
    dev = allocate(x, funds, threshold=threshold) - allocate(
        c, funds, threshold=threshold
    )
    return dev.mean(0), dev.std(0) / math.sqrt(n)


def test_simulated_misallocation_is_labelled_and_seeded():
    kw = dict(threshold=0, n_sims=20_000, rng=8)
    m = expected_misallocation("simplex", [1, 4, 20], Laplace(2.0), 100.0, **kw)
    again = expected_misallocation("simplex", [1, 4, 20], Laplace(2.0), 100.0, **kw)
    assert (
        not m.exact and m.error is None and np.array_equal(m.expected, again.expected)
    )
    mean, se = _simulate_laplace("simplex", [1, 4, 20], 2.0, 100.0, 0, 200_000, 4)
    assert (np.abs(m.expected - mean) < 5 * np.hypot(m.se, se)).all()
    with pytest.raises(ValueError, match="n_sims"):
        expected_misallocation("simplex", [1, 4, 20], Laplace(2.0), 100.0)
    with pytest.raises(ValueError, match="n_sims"):
        expected_misallocation("raw", [1, 2, 3, 4], DiscreteLaplace(1.0), 10.0)
    with pytest.raises(ValueError, match="funds"):
        expected_misallocation("raw", [1, 2], DiscreteLaplace(1.0), -10.0)
    with pytest.raises(ValueError, match="mechanism"):
        expected_misallocation("raw", [1, 2], DiscreteLaplace(1e5), 10.0)


def _simulate_laplace(post, counts, scale, funds, threshold, n, seed):
    c = np.asarray(counts, dtype=float)
    rng = np.random.default_rng(seed)
    x = np.asarray(
        POSTPROCESSINGS[post](c + rng.laplace(0, scale, (n, c.size)), c.sum())
    )
    dev = allocate(x, funds, threshold=threshold) - allocate(
        c, funds, threshold=threshold
    )
    return dev.mean(0), dev.std(0) / math.sqrt(n)


def test_exported():
    """Each public name is in ``dpbook.__all__`` and ``dpbook.histograms`` (by name: the doctest run may
    import the module file a second time, so object identity is not the check)."""
    for name in allocation.__all__:
        assert name in dpbook.__all__ and name in dpbook.histograms.__all__
        assert type(getattr(dpbook, name)) is type(getattr(allocation, name))
