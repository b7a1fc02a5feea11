import itertools
import warnings

import numpy as np
import pytest
from scipy import optimize

from dpbook import clamp_counts, integer_simplex, project_simplex, simplex_threshold

# --- independent solvers ------------------------------------------------------------------------


def brute_projection(y, total):
    """The simplex projection by trying every support: on a support S the KKT point is
    y_S - (Σ_S y - total)/|S|, 0 elsewhere; keep the nearest feasible one."""
    n = len(y)
    best, best_d = None, np.inf
    for m in range(1, n + 1):
        for S in itertools.combinations(range(n), m):
            S = list(S)
            x = np.zeros(n)
            x[S] = y[S] - (y[S].sum() - total) / m
            if (x >= 0).all():
                d = np.sum((x - y) ** 2)
                if d < best_d:
                    best, best_d = x, d
    return best


def compositions(total, n):
    """Every vector of n nonnegative integers summing to total (stars and bars)."""
    for bars in itertools.combinations(range(total + n - 1), n - 1):
        edges = (-1,) + bars + (total + n - 1,)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(n))


def brute_integer(y, total):
    """All nearest nonnegative integer vectors with the sum, and the distance."""
    cand = np.array(list(compositions(total, len(y))))
    d = ((cand - y) ** 2).sum(axis=1)
    best = d.min()
    return cand[d <= best * (1 + 1e-12) + 1e-12], best


def kkt_gap(y, total, x, lam):
    """The largest violation of the projection's KKT conditions, relative to max(|y|, total),
    beyond what rounding the n output cells to the float grid must leave (subnormal outputs
    are multiples of 2**-1074)."""
    scale = max(np.abs(y).max(), total)
    grid = len(y) * 2.0**-1074
    on = x > 0
    gaps = [
        -x.min() if x.size else 0.0,
        abs(x.sum() - total),
        np.abs((y - x - lam)[on]).max(initial=0.0),
        max((y[~on] - lam).max(initial=-np.inf), 0.0),
    ]
    return max(max(gaps) - grid, 0.0) / scale if scale > 0 else max(gaps)


# --- clamp_counts -----------------------------------------------------------------------------


def test_clamp_counts():
    y = np.array([[3.5, -0.0, -2.0], [1e300, -1e300, 5e-324]])
    out = clamp_counts(y)
    assert out.tolist() == [[3.5, 0.0, 0.0], [1e300, 0.0, 5e-324]]
    assert (out >= 0).all() and out.dtype == float
    # the nearest nonnegative vector: no other nonnegative vector is closer
    rng = np.random.default_rng(0)
    y = rng.normal(size=50)
    for _ in range(200):
        z = np.abs(rng.normal(size=50)) * rng.integers(0, 2, size=50)
        assert np.sum((clamp_counts(y) - y) ** 2) <= np.sum((z - y) ** 2)


# --- the simplex projection ---------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e-8, 1.0, 1e8, 1e150, 1e300])
def test_project_simplex_kkt(scale):
    rng = np.random.default_rng(int(-np.log10(scale) + 400))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(200):
            n = int(rng.integers(1, 40))
            y = rng.normal(size=n) * rng.uniform(0.1, 1.0) * scale
            y += rng.uniform(-1, 1) * scale * rng.integers(0, 2)  # shifted batches too
            total = float(rng.uniform(0, 3) * scale * rng.integers(0, 2))
            if rng.random() < 0.3:
                total = float(rng.uniform(0, 50) * scale)
            x = project_simplex(y, total)
            lam = float(simplex_threshold(y, total))
            assert x.shape == y.shape
            assert np.isfinite(x).all()
            assert kkt_gap(y, total, x, lam) <= 1e-12, (y, total)


@pytest.mark.parametrize("scale", [1e-318, 1e-312, 1e305, 1e307])
def test_project_simplex_at_the_ends_of_the_float_range(scale):
    # sums of 40 cells of 1e307 overflow, and cells of 1e-312 are subnormal (few digits):
    # the threshold is computed on values divided by a power of two near the largest one
    rng = np.random.default_rng(int(abs(np.log10(scale))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(100):
            n = int(rng.integers(20, 60))
            y = rng.uniform(-1, 1, size=n) * 1.7 * scale
            total = float(rng.uniform(0, 1.7) * scale)
            x = project_simplex(y, total)
            lam = float(simplex_threshold(y, total))
            assert np.isfinite(x).all() and np.isfinite(lam)
            assert kkt_gap(y, total, x, lam) <= 1e-12, (y, total)


def test_project_simplex_against_brute_force_and_scipy():
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(1, 7))
        y = rng.normal(size=n) * rng.uniform(0.1, 10)
        total = float(rng.uniform(0, 10))
        x = project_simplex(y, total)
        assert np.allclose(x, brute_projection(y, total), rtol=0, atol=1e-12 * 30)
    for _ in range(20):
        n = int(rng.integers(2, 8))
        y = rng.normal(size=n) * 3
        total = float(rng.uniform(0.5, 6))
        res = optimize.minimize(
            lambda x: np.sum((x - y) ** 2),
            np.full(n, total / n),
            jac=lambda x: 2 * (x - y),
            bounds=[(0, None)] * n,
            constraints=[{"type": "eq", "fun": lambda x: x.sum() - total}],
            method="SLSQP",
            options={"ftol": 1e-11, "maxiter": 500},
        )
        assert res.success
        assert np.allclose(project_simplex(y, total), res.x, atol=1e-6)


def test_project_simplex_special_cases_and_batches():
    assert project_simplex([5.0, -3.0, 2.0], 0.0).tolist() == [0.0, 0.0, 0.0]
    assert float(simplex_threshold([5.0, -3.0, 2.0], 0.0)) == 5.0
    assert project_simplex([-7.0], 4.0).tolist() == [4.0]
    assert project_simplex([0.0, 0.0], 0.0).tolist() == [0.0, 0.0]
    # a point of the simplex is its own projection
    assert np.allclose(project_simplex([0.2, 0.0, 0.8], 1.0), [0.2, 0.0, 0.8])
    # translation: y + c projects to the same point
    y = np.array([1.3, -0.4, 2.2, 0.1])
    assert np.allclose(project_simplex(y + 17.0, 2.5), project_simplex(y, 2.5))
    # batches (and broadcasting of total) agree with one histogram at a time
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(3, 4, 6)) * 4
    T = rng.uniform(0, 9, size=(4,))
    X = project_simplex(Y, T)
    lam = simplex_threshold(Y, T)
    assert X.shape == (3, 4, 6) and lam.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert np.allclose(X[i, j], project_simplex(Y[i, j], T[j]), atol=1e-14)
            assert np.isclose(lam[i, j], simplex_threshold(Y[i, j], T[j]))
    # one histogram, several totals
    assert project_simplex([1.0, 2.0], [[0.0], [1.0], [3.0]]).shape == (3, 1, 2)
    assert simplex_threshold([1.0, 2.0], 1.0).shape == ()


def test_project_simplex_million_cells():
    rng = np.random.default_rng(3)
    y = rng.normal(5, 30, size=10**6)
    x = project_simplex(y, 4e6)
    assert abs(x.sum() - 4e6) <= 1e-9 * 4e6
    assert (x >= 0).all()


def test_bad_input():
    for f in (project_simplex, simplex_threshold):
        with pytest.raises(ValueError, match=r"total must be >= 0, got -1\.0"):
            f([1.0, 2.0], -1.0)
        with pytest.raises(ValueError, match="total must not contain NaN"):
            f([1.0, 2.0], np.nan)
        with pytest.raises(ValueError, match="total must be finite, got inf"):
            f([1.0, 2.0], np.inf)
        with pytest.raises(ValueError, match="noisy must not contain NaN"):
            f([1.0, np.nan], 1.0)
        with pytest.raises(ValueError, match="noisy must be finite"):
            f([1.0, -np.inf], 1.0)
        with pytest.raises(
            ValueError, match=r"noisy must have at least one cell.*\(0,\)"
        ):
            f([], 1.0)
        with pytest.raises(
            ValueError, match=r"noisy must have at least one cell.*\(\)"
        ):
            f(3.0, 1.0)
        with pytest.raises(ValueError, match="noisy must be real numbers"):
            f(["1", "2"], 1.0)
        with pytest.raises(ValueError, match=r"total must broadcast.*\(3,\)"):
            f(np.ones((2, 4)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="noisy must be finite"):
        clamp_counts([np.inf])
    with pytest.raises(ValueError, match="noisy must have at least one cell"):
        clamp_counts(np.ones((2, 0)))
    with pytest.raises(ValueError, match=r"total must be integers.*got 1\.5"):
        integer_simplex([1.0, 2.0], 1.5)
    with pytest.raises(ValueError, match="total must be >= 0, got -2"):
        integer_simplex([1.0, 2.0], -2)
    with pytest.raises(
        ValueError, match=r"total must be integers with \|total\| <= 2\*\*53"
    ):
        integer_simplex([1.0, 2.0], 2.0**60)
    with pytest.raises(ValueError, match="noisy must be finite"):
        integer_simplex([1.0, np.inf], 2)
    with pytest.raises(ValueError, match="noisy must have at least one cell"):
        integer_simplex([], 2)


# --- the nearest integer vector -----------------------------------------------------------------


def test_integer_simplex_against_brute_force():
    rng = np.random.default_rng(4)
    for n in (1, 2, 3, 4):
        for total in range(13):
            for _ in range(6):
                y = rng.uniform(-3, total + 3, size=n) * rng.uniform(0.2, 1.5)
                x = integer_simplex(y, total)
                best, d = brute_integer(y, total)
                assert len(best) == 1  # random reals: no tie
                assert x.dtype == np.int64
                assert x.tolist() == best[0].tolist(), (y, total)


def test_integer_simplex_tie_rule():
    # dyadic inputs with ties: the result is the lexicographically largest nearest vector
    rng = np.random.default_rng(5)
    seen_tie = 0
    for _ in range(400):
        n = int(rng.integers(2, 5))
        total = int(rng.integers(0, 9))
        y = rng.integers(-4, 2 * total + 4, size=n) / 2.0
        best, _ = brute_integer(y, total)
        seen_tie += len(best) > 1
        expected = max(map(tuple, best))
        assert tuple(integer_simplex(y, total).tolist()) == expected, (y, total)
    assert seen_tie > 50
    assert integer_simplex([0.5, 0.5], 1).tolist() == [1, 0]
    assert integer_simplex([2.5, 0.5, 1.5], 2).tolist() == [2, 0, 0]
    assert integer_simplex([0.0, 0.0, 0.0], 2).tolist() == [1, 1, 0]


def test_integer_simplex_batches_and_invariants():
    rng = np.random.default_rng(6)
    Y = rng.normal(3, 4, size=(5, 7, 9))
    T = rng.integers(0, 60, size=(7,))
    X = integer_simplex(Y, T)
    assert X.dtype == np.int64 and X.shape == (5, 7, 9)
    assert (X >= 0).all()
    assert (X.sum(axis=-1) == T).all()
    for i in range(5):
        for j in range(7):
            assert X[i, j].tolist() == integer_simplex(Y[i, j], int(T[j])).tolist()
    assert integer_simplex([3.0, 4.0], 0).tolist() == [0, 0]
    assert integer_simplex([-5.0], 3).tolist() == [3]
    # an integer point of the simplex is its own nearest vector
    assert integer_simplex([2.0, 0.0, 5.0], 7).tolist() == [2, 0, 5]
    # within one unit of the continuous projection, cell by cell
    Y = rng.normal(10, 30, size=(100, 50))
    T = rng.integers(0, 2000, size=100)
    X = integer_simplex(Y, T)
    assert (np.abs(X - project_simplex(Y, T)) < 1 + 1e-9).all()


def test_integer_simplex_large_totals_keep_the_sum():
    rng = np.random.default_rng(7)
    for total in (10**12, 2**52, 2**53):
        y = rng.normal(total / 1000, total / 10**4, size=1000)
        x = integer_simplex(y, total)
        assert int(x.sum()) == total and (x >= 0).all()
    y = rng.normal(5, 30, size=10**6)
    x = integer_simplex(y, 4 * 10**6)
    assert int(x.sum()) == 4 * 10**6


@pytest.mark.parametrize("shift", [-0.7, 0.7, -3.0])
def test_integer_simplex_restores_the_sum_after_a_rounded_threshold(monkeypatch, shift):
    # the final correction only acts when rounding in λ leaves Σ⌊p⌋ off the total (huge totals);
    # force that by shifting λ and check the sum is restored with nonnegative cells
    from dpbook.histograms import postprocess

    exact = postprocess._scaled_threshold

    def shifted(y, t):
        lam, s = exact(y, t)
        return lam + shift / s, s

    monkeypatch.setattr(postprocess, "_scaled_threshold", shifted)
    rng = np.random.default_rng(8)
    Y = rng.normal(4, 3, size=(50, 6))
    T = rng.integers(0, 40, size=50)
    X = integer_simplex(Y, T)
    assert (X >= 0).all() and (X.sum(axis=-1) == T).all()


def test_random_ties_favour_no_position():
    # two equally near vectors on every row: [1, 0] and [0, 1]; "first" always gives the first
    y = np.full((4000, 2), 0.5)
    first = integer_simplex(y, 1)
    assert (first[:, 0] == 1).all()
    rand = integer_simplex(y, 1, ties="random", rng=11)
    assert (rand.sum(axis=-1) == 1).all() and ((rand == 0) | (rand == 1)).all()
    share = rand[:, 0].mean()  # Binomial(4000, 1/2) / 4000: sd 0.0079
    assert abs(share - 0.5) < 5 * 0.5 / np.sqrt(4000)
    # away from ties the random order changes nothing
    z = np.random.default_rng(2).normal(3.0, 4.0, size=(500, 7))
    assert (
        integer_simplex(z, 20, ties="random", rng=3) == integer_simplex(z, 20)
    ).all()


def test_tie_rule_is_checked():
    with pytest.raises(
        ValueError, match="ties must be 'first' or 'random', got 'last'"
    ):
        integer_simplex([0.5, 0.5], 1, ties="last")
    with pytest.raises(ValueError, match="rng is read with ties='random' only"):
        integer_simplex([0.5, 0.5], 1, rng=1)
